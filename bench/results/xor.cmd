java -jar raid-bench/target/benchmarks.jar XorBench.parity -p chunk=4096,65536,1048576 -p members=4,8 -wi 2 -w 1 -i 5 -r 1 -f 3 -prof gc
