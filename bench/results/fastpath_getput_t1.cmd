java -jar raid-bench/target/benchmarks.jar CounterBench.(getPut|floorSection|floorCount)$ -t 1 -f 3 -wi 3 -w 1 -i 5 -r 1 -prof gc
