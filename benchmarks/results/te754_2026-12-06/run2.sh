while pgrep -f "bash run.sh" > /dev/null; do sleep 5; done
T=/tmp/te754/te
for scale in 64 256; do
common="--topology /tmp/te754/gen754.json --traffic gravity --scale $scale --seed 0 --paths 4"
for cfg in "price 1" "price 4" "price 16" "price 64"; do
  set -- $cfg
  echo "$(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg) start scale $scale $1 pop $2" >> log.txt
  OMP_NUM_THREADS=1 /usr/bin/time -v timeout 660 $T $common --solver $1 --pop $2 --time-limit 600 --output s${scale}_$1_pop$2.json > s${scale}_$1_pop$2.out 2> s${scale}_$1_pop$2.err
  echo "$(date +%T) rc=$? end scale $scale $1 pop $2" >> log.txt
done
done
