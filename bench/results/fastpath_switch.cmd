java -jar raid-bench/target/benchmarks.jar CounterBench.switchUnderLoad -p mode=PERCPU,PERCPU_SHARED -f 3 -wi 3 -w 1 -i 5 -r 1
