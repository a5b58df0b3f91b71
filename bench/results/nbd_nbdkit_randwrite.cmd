../shared/peers/fio-nbd nbdkit-memory randwrite 4k 32 1 10
