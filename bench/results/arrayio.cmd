java -jar raid-bench/target/benchmarks.jar ArrayIoBench -wi 2 -w 1 -i 3 -r 1 -f 1 -prof gc
