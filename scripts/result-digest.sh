#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prints one digest line per solve of a fixed set (dense and bundle problems, every utility, the
# instance families, POP, warm start, each program's default run, MPI with 2 ranks when built), so
# that a change meant to keep behaviour can be checked bit for bit:
#
#   bash scripts/result-digest.sh build/test > before.txt   # on the old commit
#   bash scripts/result-digest.sh build/test > after.txt    # on the new one
#   diff before.txt after.txt
#
# Digests cover the allocation files and the JSON results with wall-clock fields and the command
# line removed. They depend on the compiler and its flags, so compare builds made the same way.
set -euo pipefail
BUILD="$(cd "${1:?usage: result-digest.sh BUILD_DIR}" && pwd)"
BIN="$BUILD/examples"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

# The JSON minus fields that measure time or name the command; numbers keep every digit.
canonical_json() {
  python3 - "$1" <<'EOF'
import json, sys
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items()
                if not any(s in k for s in ("seconds", "wall", "elapsed", "command_line"))}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
print(json.dumps(strip(json.load(open(sys.argv[1]))), sort_keys=True))
EOF
}

digest() { # digest <name> <files...>
  local name="$1" f sum=""
  shift
  for f in "$@"; do
    if [[ "$f" == *.json ]]; then
      sum+="$(canonical_json "$f" | sha256sum | cut -c1-16) "
    else
      sum+="$(sha256sum <"$f" | cut -c1-16) "
    fi
  done
  printf '%-40s %s\n' "$name" "$sum"
}

run() { # run <name> <program> <args...>: the program writes out.json (and maybe out.csv)
  local name="$1" program="$2"
  shift 2
  rm -f out.json out.csv
  "$BIN/$program" "$@" >/dev/null 2>&1 || { printf '%-40s exit %d\n' "$name" $?; return 0; }
  local files=(out.json)
  [[ -f out.csv ]] && files+=(out.csv)
  digest "$name" "${files[@]}"
}

for family in uniform classes generations sparse; do
  for utility in log linear target-priority power:0.5; do
    run "solve $family $utility" popalloc-solve --generate 3000,8 --family "$family" \
      --utility "$utility" --seed 3 --output out.json --allocation out.csv
  done
done
run "solve 1e5 generations target-priority" popalloc-solve --generate 100000,8 \
  --family generations --utility target-priority --seed 2 --output out.json --allocation out.csv
run "solve 2e4 generations target-priority" popalloc-solve --generate 20000,8 --family generations \
  --utility target-priority --seed 2 --output out.json --allocation out.csv
run "solve pop 4" popalloc-solve --generate 20000,8 --family classes --pop 4 --output out.json \
  --allocation out.csv
"$BIN/popalloc-solve" --generate 5000,6 --family classes --seed 5 --write-instance inst \
  --output base.json >/dev/null 2>&1
run "solve warm start" popalloc-solve --jobs inst.jobs.csv --resources inst.resources.csv \
  --warm-start base.json --output out.json --allocation out.csv
run "solve default (embedded)" popalloc-solve --output out.json --allocation out.csv
run "schedule default" popalloc-schedule --output out.json
run "schedule proportional pop 2" popalloc-schedule --policy proportional-fairness --pop 2 \
  --output out.json
run "simulate default" popalloc-simulate --output out.json
run "te default (bundle)" popalloc-te --output out.json
run "te pop 2" popalloc-te --pop 2 --output out.json
run "lb default" popalloc-lb --rounds 30 --output out.json

if [[ -x "$BUILD/tests/mpi/popalloc_mpi_check" ]] && command -v mpiexec >/dev/null; then
  rm -f out.json out.csv
  if OMP_NUM_THREADS=1 mpiexec -n 2 --oversubscribe --allow-run-as-root "$BIN/popalloc-solve" \
    --generate 20000,8 --family classes --output out.json --allocation out.csv >/dev/null 2>&1; then
    digest "solve mpi -np 2" out.json out.csv
  else
    printf '%-40s failed\n' "solve mpi -np 2"
  fi
fi
