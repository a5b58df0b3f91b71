raid bench --rw randread --bs 4k --target raw,array --numjobs 2 --disks 4 --runtime 3 --ramp 1 --warmup 2 --repeat 1 (array percpu / raw)
raid bench --rw randwrite --bs 4k --target raw,array --numjobs 2 --disks 4 --runtime 3 --ramp 1 --warmup 2 --repeat 1 (array percpu / raw)
raid bench --rw write --bs 1536k --chunk 512k --target raw-members,array --numjobs 2 --disks 4 --runtime 3 --ramp 1 --warmup 2 --repeat 1 (array percpu / raw-members)
