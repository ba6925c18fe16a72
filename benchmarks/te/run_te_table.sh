#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Produces the measurement table of docs/traffic-engineering.md.
#   bash benchmarks/te/run_te_table.sh BUILD_DIR TOPOLOGY_DIR OUT_DIR [FILE...]
# FILE...: only these topology files, in this order. Environment:
#   POP_LP=0        skip POP over the LP
#   EXTRA=0         skip the concurrent-flow / min-max-utilization part
#   TIME_LIMIT=S    wall-clock limit per run in seconds (default 0: none); a run that reaches it
#                   is stopped and OUT_DIR/NAME.timeout records the limit, so the table reports
#                   "time limit after S s" instead of an empty cell
#   ONLY_MISSING=1  skip runs that already have OUT_DIR/NAME.json (or NAME.timeout with a limit
#                   at least TIME_LIMIT): fills the gaps of an interrupted run
# BUILD_DIR holds a Release build of popalloc-te (examples/popalloc-te) with CLP. For every
# topology file in TOPOLOGY_DIR and scale factor in {1, 8, 64}, the gravity model (seed 0, 4
# edge-disjoint paths, total-flow objective) is solved by: the LP (CLP), the price solver, POP
# k = 4 and 16 over the price solver, POP k = 4 and 16 over the LP; then concurrent-flow and
# min-max-utilization by LP and price solver on the two smallest networks. One JSON per run in
# OUT_DIR; make_table.py turns them into the markdown tables. OUT_DIR/commands.txt lists every
# run's command with OMP_NUM_THREADS and the load average before it.
set -eu
BIN="$1/examples/popalloc-te"
TOPO="$2"
OUT="$3"
shift 3
LIMIT="${TIME_LIMIT:-0}"
mkdir -p "$OUT"
if [[ $# -gt 0 ]]; then files=("$@"); else files=("$TOPO"/*.graphml "$TOPO"/*.json); fi
echo "# $(date -u '+%F %T') UTC, $(getconf _NPROCESSORS_ONLN) CPUs, OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}," \
  "TIME_LIMIT=$LIMIT, nice $(nice)" >>"$OUT/commands.txt"
run() {  # run NAME ARGS...
  local name="$1"
  shift
  if [[ "${ONLY_MISSING:-0}" == 1 ]]; then
    [[ -f "$OUT/$name.json" ]] && return 0
    if [[ -f "$OUT/$name.timeout" ]]; then
      local old
      old="$(cut -d' ' -f1 "$OUT/$name.timeout")"
      [[ "$LIMIT" != 0 && "$old" -ge "$LIMIT" ]] && return 0
    fi
  fi
  local load
  load="$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "$name: [load $load] popalloc-te $*" >>"$OUT/commands.txt"
  rm -f "$OUT/$name.timeout"
  local start status=0
  start="$(date +%s.%N)"
  if [[ "$LIMIT" != 0 ]]; then
    timeout --signal=TERM --kill-after=10 "$LIMIT" "$BIN" "$@" --quiet --output "$OUT/$name.json" ||
      status=$?
  else
    "$BIN" "$@" --quiet --output "$OUT/$name.json" || status=$?
  fi
  if [[ "$status" == 124 || "$status" == 137 ]]; then
    # A stopped run writes no JSON (outputs are atomic); record the limit and the wall time.
    awk -v l="$LIMIT" -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%s %.1f\n", l, e - s }' \
      >"$OUT/$name.timeout"
    echo "$name: time limit ($LIMIT s)" >>"$OUT/commands.txt"
  elif [[ "$status" != 0 ]]; then
    echo "$name: exit status $status" >&2
    exit "$status"
  fi
}
for file in "${files[@]}"; do
  topo="$(basename "${file%.*}")"
  for scale in 1 8 64; do
    common=(--topology "$file" --traffic gravity --scale "$scale" --seed 0 --paths 4)
    run "$topo-$scale-lp" "${common[@]}" --solver lp
    run "$topo-$scale-price" "${common[@]}" --solver price
    for k in 4 16; do
      run "$topo-$scale-pop$k-price" "${common[@]}" --solver price --pop "$k"
      if [[ "${POP_LP:-1}" != 0 ]]; then
        run "$topo-$scale-pop$k-lp" "${common[@]}" --solver lp --pop "$k"
      fi
    done
  done
done
if [[ "${EXTRA:-1}" != 0 ]]; then
  for topo in b4-teavar Uninett2010; do
    file="$(ls "$TOPO/$topo".*)"
    for scale in 1 8 64; do
      for objective in concurrent-flow min-max-utilization; do
        common=(--topology "$file" --traffic gravity --scale "$scale" --seed 0 --paths 4
                --objective "$objective")
        run "$topo-$scale-$objective-lp" "${common[@]}" --solver lp
        run "$topo-$scale-$objective-price" "${common[@]}" --solver price
      done
    done
  done
fi
echo "# done $(date -u '+%F %T') UTC" >>"$OUT/commands.txt"
