raid serve --backend memory --disks 4 --size 1G --socket S; ../shared/peers/fio-nbd URI randwrite 4k 32 1 10 raidfive
