T=/tmp/te754/te
common="--topology /tmp/te754/gen754.json --traffic gravity --scale 16 --seed 0 --paths 4"
for cfg in "price 1" "price 4" "price 16" "price 64" "lp 1"; do
  set -- $cfg
  echo "$(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg) start $1 pop $2" >> log.txt
  OMP_NUM_THREADS=1 /usr/bin/time -v timeout 660 $T $common --solver $1 --pop $2 --time-limit 600 --output $1_pop$2.json > $1_pop$2.out 2> $1_pop$2.err
  echo "$(date +%T) rc=$? end $1 pop $2" >> log.txt
done
