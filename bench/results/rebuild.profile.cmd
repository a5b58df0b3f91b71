RebuildBench --disks 4 --member-size 1g --repeat 1 (java -XX:StartFlightRecording=...,settings=profile; samples of the raid-recover thread)
