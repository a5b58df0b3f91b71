raid bench --rw write --bs 1536k --chunk 512k --numjobs 2 --disks 4 --target raw-members,array --runtime 3 --ramp 1 --warmup 2 --repeat 3
