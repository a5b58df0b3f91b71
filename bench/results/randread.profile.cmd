raid bench --rw randread --bs 4k --numjobs 2 --disks 4 --target array (java -XX:StartFlightRecording=...,settings=profile; jfr print --events jdk.ExecutionSample)
