#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Produces the measurement table of docs/traffic-engineering.md.
#   bash benchmarks/te/run_te_table.sh BUILD_DIR TOPOLOGY_DIR OUT_DIR [FILE...]
# (FILE...: only these topology files, in this order; POP_LP=0 in the environment skips POP over
# the LP; EXTRA=0 skips the concurrent-flow / min-max-utilization part.)
# BUILD_DIR holds a Release build of popalloc-te (examples/popalloc-te) with CLP. For every
# topology file in TOPOLOGY_DIR and scale factor in {1, 8, 64}, the gravity model (seed 0, 4
# edge-disjoint paths, total-flow objective) is solved by: the LP (CLP), the price solver, POP
# k = 4 and 16 over the price solver, POP k = 4 and 16 over the LP; then concurrent-flow and
# min-max-utilization by LP and price solver on the two smallest networks. One JSON per run in
# OUT_DIR; make_table.py turns them into the markdown tables.
set -eu
BIN="$1/examples/popalloc-te"
TOPO="$2"
OUT="$3"
shift 3
mkdir -p "$OUT"
if [[ $# -gt 0 ]]; then files=("$@"); else files=("$TOPO"/*.graphml "$TOPO"/*.json); fi
run() {  # run NAME ARGS...
  local name="$1"
  shift
  echo "$name: popalloc-te $*" >>"$OUT/commands.txt"
  "$BIN" "$@" --quiet --output "$OUT/$name.json"
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
[[ "${EXTRA:-1}" == 0 ]] && exit 0
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
echo "done" >>"$OUT/commands.txt"
