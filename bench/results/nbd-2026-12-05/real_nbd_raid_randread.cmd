fio --ioengine=nbd --uri=(raid serve --socket S, on the array) --rw=randread --bs=4k --iodepth=1 --runtime=6 (4 members: nbdkit --filter=delay memory 4G rdelay=2ms wdelay=2ms)
