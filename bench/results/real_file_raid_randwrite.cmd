raid bench --backend file --direct --dir bench/scratch/members --rw randwrite --bs 4k --iodepth 32 --numjobs 2 --disks 4 --size 3g --runtime 8 --repeat 1
