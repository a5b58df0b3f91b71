../shared/peers/fio-tmpfs randwrite 4k 2 3
