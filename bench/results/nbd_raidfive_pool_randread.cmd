raid serve --backend memory --disks 4 --size 1G --socket S --executor pool; ../shared/peers/fio-nbd URI randread 4k 32 1 10 raidfive_pool
