../shared/peers/fio-file bench/scratch randread 4k 32 2 8
