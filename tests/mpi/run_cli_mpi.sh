#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End-to-end tests of `mpirun -np R popalloc-solve` (docs/mpi.md):
#   run_cli_mpi.sh POPALLOC_SOLVE SCRATCH_DIR MPIEXEC [MPIEXEC FLAGS...]
# - --generate under -np 1, 2, 3: the same objective, bound and prices bit for bit as the
#   single-process run (CPU-order sums, the default) and as each other; gathered and per-rank
#   allocations equal to the single-process allocation row for row; --mpi-sums exact: bit for
#   bit across rank counts, certificates consistent with the single-process run;
# - each rank generates only its slice, and the slices make the single-process instance;
# - per-rank input files ({rank}) and one file shared by all ranks give the same answer;
# - input errors on one rank stop every rank with exit status 2 and name the rank.
# (A killed rank: tests/mpi/run_failure.sh kill.)
# python3 does the JSON/CSV checks; without it the test is skipped (exit 77).
set -u
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"
solve=$1
scratch=$2
shift 2
mpiexec=("$@")
command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }
rm -rf "$scratch" && mkdir -p "$scratch" && cd "$scratch" || exit 1
export OMP_NUM_THREADS=1

CLI_SHOW_PASSES=1
mpi() {  # mpi NP ARGS...: popalloc-solve under the launcher, 120 s at most; output in last.log
  local np=$1
  shift
  timeout --kill-after=10 120 "${mpiexec[@]}" -np "$np" "$solve" "$@" >last.log 2>&1
  status=$?
}
py() { python3 - "$@" <<'PY'
import json, sys, csv
cmd, args = sys.argv[1], sys.argv[2:]
def load(p):
    with open(p) as f: return json.load(f)
def rel(a, b):
    return abs(a - b) / max(abs(a), abs(b), 1e-300)
if cmd == "bitwise":  # same objective, bound, prices, iterations, status
    a, b = load(args[0]), load(args[1])
    bad = [k for k in ("status", "objective", "dual_bound", "iterations", "prices", "n_jobs") if a[k] != b[k]]
    if bad: print("differ:", bad, [(a[k], b[k]) for k in bad]); sys.exit(1)
elif cmd == "consistent":  # two valid certificates: each objective <= the other's bound
    a, b = load(args[0]), load(args[1])
    slack = 1e-12 * abs(b["dual_bound"])
    print("objectives %r %r, bounds %r %r" % (a["objective"], b["objective"], a["dual_bound"], b["dual_bound"]))
    if a["objective"] > b["dual_bound"] + slack or b["objective"] > a["dual_bound"] + slack:
        sys.exit(1)
elif cmd == "ranks":
    r = load(args[0])
    if r.get("mpi_ranks") != int(args[1]) or r["n_jobs"] != int(args[2]): print(r); sys.exit(1)
elif cmd == "same_rows":  # CSV files (header skipped after the first) concatenated == reference
    def rows(p):
        with open(p) as f: return f.read().splitlines()[1:]
    ref = rows(args[0]); got = []
    for p in args[1:]: got += rows(p)
    if ref != got: print("rows differ: %d vs %d" % (len(ref), len(got))); sys.exit(1)
PY
}

# ---- --generate: rank-count independence -----------------------------------------------------
gen=(--generate 12000,6 --seed 5 --tolerance 1e-6 --quiet)  # 6 CPU chunks
for utility in log target-priority; do  # linear: tests/mpi/mpi_check.cpp
  "$solve" "${gen[@]}" --utility "$utility" --output single.$utility.json \
    --allocation single.$utility.csv >single.log 2>&1
  check "$utility: single process solves" test $? -eq 0
  mpi 1 "${gen[@]}" --utility "$utility" --output np1.$utility.json --allocation np1.$utility.csv
  check "$utility: -np 1 solves" test "$status" -eq 0
  mpi 2 "${gen[@]}" --utility "$utility" --output np2.$utility.json --allocation np2.$utility.csv
  check "$utility: -np 2 solves (gathered allocation)" test "$status" -eq 0
  mpi 3 "${gen[@]}" --utility "$utility" --output np3.$utility.json --allocation "np3.$utility.{rank}.csv"
  check "$utility: -np 3 solves (allocation per rank)" test "$status" -eq 0
  check "$utility: -np 1 = one process bit for bit" py bitwise np1.$utility.json single.$utility.json
  check "$utility: -np 2 = one process bit for bit" py bitwise np2.$utility.json single.$utility.json
  check "$utility: -np 3 = one process bit for bit" py bitwise np3.$utility.json single.$utility.json
  check "$utility: result records 3 ranks and all jobs" py ranks np3.$utility.json 3 12000
  check "$utility: gathered allocation = one process" cmp -s np2.$utility.csv single.$utility.csv
  check "$utility: per-rank allocations = one process" py same_rows single.$utility.csv \
    np3.$utility.0.csv np3.$utility.1.csv np3.$utility.2.csv
done
# Exact sums (for more than 256 ranks): rank-count independent, same optimum as one process.
mpi 1 "${gen[@]}" --mpi-sums exact --output exact1.json
mpi 3 "${gen[@]}" --mpi-sums exact --output exact3.json
check "--mpi-sums exact: -np 3 solves" test "$status" -eq 0
check "--mpi-sums exact: -np 3 = -np 1 bit for bit" py bitwise exact3.json exact1.json
check "--mpi-sums exact: -np 3 consistent with one process" py consistent exact3.json single.log.json

# ---- Each rank generates its slice; the slices are the single-process instance ---------------
"$solve" --generate 5000,4 --seed 9 --write-instance whole --max-iterations 1 --quiet >/dev/null 2>&1
mpi 3 --generate 5000,4 --seed 9 --write-instance "part.{rank}" --output gen.np3.json --quiet
check "-np 3 --write-instance part.{rank}" test "$status" -eq 0
check "generated slices = single-process instance" py same_rows whole.jobs.csv \
  part.0.jobs.csv part.1.jobs.csv part.2.jobs.csv
check "every rank has the same resources" cmp -s whole.resources.csv part.2.resources.csv

# ---- Input files: one per rank, or one for all ----------------------------------------------
"$solve" --jobs whole.jobs.csv --resources whole.resources.csv --output files.single.json --quiet >/dev/null 2>&1
mpi 3 --jobs "part.{rank}.jobs.csv" --resources "part.{rank}.resources.csv" --output files.np3.json --quiet
check "-np 3 with per-rank files solves" test "$status" -eq 0
check "per-rank files = generated shards bit for bit" py bitwise files.np3.json gen.np3.json
check "per-rank files = one process bit for bit" py bitwise files.np3.json files.single.json
mpi 2 --jobs whole.jobs.csv --resources whole.resources.csv --output files.np2.json --quiet
check "one file shared by 2 ranks = 3 per-rank files bit for bit" py bitwise files.np2.json files.np3.json

# ---- Input errors stop every rank with status 2, naming the rank ------------------------------
cp part.1.jobs.csv bad.1.jobs.csv
cp part.0.jobs.csv bad.0.jobs.csv
cp part.2.jobs.csv bad.2.jobs.csv
sed -i '3s/^\([^,]*\),[^,]*,/\1,nan,/' bad.1.jobs.csv
mpi 3 --jobs "bad.{rank}.jobs.csv" --resources whole.resources.csv --quiet
check "bad file on rank 1: exit 2" test "$status" -eq 2
check "bad file on rank 1: the message names rank 1 and the line" grep -q "rank 1: bad.1.jobs.csv:3" last.log
mpi 2 --generate 100,2 --write-instance same --quiet
check "--write-instance without {rank}: exit 2" test "$status" -eq 2
check "--write-instance without {rank}: explained" grep -q "needs {rank}" last.log

# ---- A write failure on one rank leaves every old output in place and no temporary file -------
for layout in "keep.{rank}.csv" keep.csv; do
  printf 'old\n' >keep.json
  printf 'old\n' >keep.0.csv
  printf 'old\n' >keep.1.csv
  printf 'old\n' >keep.csv
  export POPALLOC_SOLVE_TEST_FAIL_WRITE=1
  mpi 2 --generate 2000,4 --output keep.json --allocation "$layout" --quiet
  unset POPALLOC_SOLVE_TEST_FAIL_WRITE
  check "write failure on rank 1 ($layout): exit 2" test "$status" -eq 2
  check "write failure on rank 1 ($layout): the message names rank 1" \
    grep -q "rank 1: cannot write the outputs" last.log
  check "write failure on rank 1 ($layout): RESULT.json untouched" grep -qx old keep.json
  check "write failure on rank 1 ($layout): allocations untouched" \
    test "$(cat keep.0.csv keep.1.csv keep.csv)" = "$(printf 'old\nold\nold')"
  check "write failure on rank 1 ($layout): no temporary file left" \
    test -z "$(find . -maxdepth 1 -name 'keep*.tmp*')"
done
mpi 2 --generate 2000,4 --output keep.json --allocation "keep.{rank}.csv" --quiet
check "without the failure both ranks write (exit $status)" test "$status" -eq 0
check "without the failure: RESULT.json and the allocations replaced" \
  test "$(head -c 1 keep.json)$(head -n 1 keep.1.csv)" = "{id,resource,fraction"

summary cli-mpi
