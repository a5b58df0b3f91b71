#!/bin/bash
# cpu.sh JAR LABEL ROUND: raid serve of /tmp/snx's 5 members; fio randwrite 2x16 8 s; IOPS, p50 and the serve JVM's CPU seconds
JAR=$1; M=""; for i in 0 1 2 3 4; do M="$M nbd+unix:///?socket=/tmp/snx/m$i.sock"; done
rm -f /tmp/snx/raid.sock
java -jar $JAR serve --socket /tmp/snx/raid.sock $M 2>/tmp/snx/serve.log &
P=$!
for _ in $(seq 100); do grep -q "serving nbd" /tmp/snx/serve.log && break; sleep 0.1; done
fio --name=w --ioengine=nbd --uri="nbd+unix:///raid?socket=/tmp/snx/raid.sock" --rw=randwrite --bs=4k --iodepth=16 --numjobs=2 --time_based --runtime=3 --size=1G --group_reporting >/dev/null 2>&1
t0=$(awk '{print $14+$15}' /proc/$P/stat); cs0=$(grep -h ctxt /proc/$P/task/*/status | awk '{s+=$2} END {print s}')
fio --name=w --ioengine=nbd --uri="nbd+unix:///raid?socket=/tmp/snx/raid.sock" --rw=randwrite --bs=4k --iodepth=${QD:-16} --numjobs=2 --time_based --runtime=8 --size=1G --group_reporting --output-format=json --output=/tmp/snx/f.json >/dev/null 2>&1
t1=$(awk '{print $14+$15}' /proc/$P/stat); cs1=$(grep -h ctxt /proc/$P/task/*/status | awk '{s+=$2} END {print s}')
kill -TERM $P; wait $P
python3 - $2 $3 $t0 $t1 $cs0 $cs1 <<'PY'
import json,sys
j=json.load(open("/tmp/snx/f.json"))["jobs"][0]["write"]
label,rnd,t0,t1,c0,c1=sys.argv[1],sys.argv[2],*map(int,sys.argv[3:7])
ios=j["total_ios"]
print(json.dumps({"label":label,"round":int(rnd),"iops":round(j["iops"]),"p50_us":round(j["clat_ns"]["percentile"]["50.000000"]/1000),"p99_us":round(j["clat_ns"]["percentile"]["99.000000"]/1000),"serve_cpu_us_per_write":round((t1-t0)*10000/ios,1),"ctx_switches_per_write":round((c1-c0)/ios,2),"load1":float(open("/proc/loadavg").read().split()[0])}))
PY
