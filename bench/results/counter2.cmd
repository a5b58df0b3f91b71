java -jar raid-bench/target/benchmarks.jar CounterBench -t 2 -wi 2 -w 1 -i 3 -r 1 -f 3 -prof gc
