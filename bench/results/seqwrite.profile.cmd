raid bench --rw write --bs 1536k --chunk 512k --numjobs 2 --disks 4 --target array (java -XX:StartFlightRecording=...,settings=profile; jfr print --events jdk.ExecutionSample)
