B=/tmp/lbm/lb_after2
for k in 1 4 16; do
  echo "load $(cut -d' ' -f1-3 /proc/loadavg) flow 16384 k=$k" >> loads.txt
  $B --shards 16384 --servers 2048 --pop $k --threads 2 --verbose --output flow_16384_k$k.json > flow_16384_k$k.txt 2>&1
done
for k in 1 4 16; do
  for r in flow core; do
    echo "load $(cut -d' ' -f1-3 /proc/loadavg) $r 1024 k=$k" >> loads.txt
    $B --relaxation $r --pop $k --threads 2 --verbose --output ${r}_1024_k$k.json > ${r}_1024_k$k.txt 2>&1
  done
done
for k in 16 4; do
  echo "load $(cut -d' ' -f1-3 /proc/loadavg) core 16384 k=$k" >> loads.txt
  $B --relaxation core --shards 16384 --servers 2048 --pop $k --threads 2 --verbose --output core_16384_k$k.json > core_16384_k$k.txt 2>&1
done
echo done >> loads.txt
