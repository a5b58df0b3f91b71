raid bench --rw randread --bs 4k --numjobs 2 --disks 4 --target array --counters fastpath --runtime 3 --ramp 1 --warmup 2 --repeat 3
