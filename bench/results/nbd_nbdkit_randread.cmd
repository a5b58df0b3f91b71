../shared/peers/fio-nbd nbdkit-memory randread 4k 32 1 10
