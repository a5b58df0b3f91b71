fio --ioengine=nbd --uri=(one such export) --rw=randwrite --bs=4k --iodepth=1 --runtime=6
