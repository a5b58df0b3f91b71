java -jar raid-bench/target/benchmarks.jar LayoutBench.mapChunk -p members=4 -p algorithm=left-symmetric,parity-last -wi 2 -w 1 -i 3 -r 1 -f 1
