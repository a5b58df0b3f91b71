java -cp raid-cli/target/raid.jar org.raidfive.bench.RebuildBench --disks 4 --member-size 1g --repeat 3
