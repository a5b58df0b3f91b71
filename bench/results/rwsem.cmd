java -jar raid-bench/target/benchmarks.jar RwSemaphoreWriterBench -wi 2 -w 1 -i 3 -r 2 -f 1
