../shared/peers/fio-file bench/scratch randwrite 4k 32 2 8
