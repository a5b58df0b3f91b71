../shared/peers/fio-tmpfs randread 4k 2 3
