fio --ioengine=nbd --uri=(one such export) --rw=read --bs=256k --iodepth=8 --runtime=6
