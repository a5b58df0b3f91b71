java -jar <ba7f268 raid-bench with this benchmark class>/benchmarks.jar RwSemaphoreWriterBench -wi 2 -w 1 -i 3 -r 2 -f 1
