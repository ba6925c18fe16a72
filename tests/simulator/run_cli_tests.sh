#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End-to-end tests of popalloc-simulate:
#   bash tests/simulator/run_cli_tests.sh /path/to/popalloc-simulate SCRATCH_DIR
# Runs every case even after a failure and ends with "cli: N passed, M failed"; the exit status
# is 1 if any case failed, 77 (CTest SKIP_RETURN_CODE) without python3, 2 on bad usage.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"

if [[ $# -ne 2 ]]; then
  echo "usage: $0 POPALLOC_SIMULATE_BINARY SCRATCH_DIR" >&2
  exit 2
fi
BIN="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
if [[ ! -x "$BIN" ]]; then
  echo "cli: $1 is not an executable" >&2
  exit 2
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "cli: python3 not found, skipping"
  exit 77
fi
# Gavel's table and the schemas, from the source tree this script is in.
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DATA="$HERE/../../data/gavel"
SCHEMAS="$HERE/../../schemas"
mkdir -p "$2"
WORK="$(mktemp -d "$2/cli.XXXXXX")"
cd "$WORK" || exit 2

CLI_FAIL_SHOWS_STDERR=1
absent() { [[ ! -e "$1" ]]; }

# ---- Inputs: a 2-type throughput table (V100 twice as fast as K80) and traces ----------------
cat >tp.json <<'JSON'
{"k80": {"('A', 1)": {"null": 1.0, "('A', 1)": [0.5, 0.5]}, "('A', 2)": {"null": 1.8},
         "('A', 4)": {"null": 3.2}, "('A', 8)": {"null": 6.0}},
 "v100": {"('A', 1)": {"null": 2.0, "('A', 1)": [1.0, 1.0]}, "('A', 2)": {"null": 3.6},
          "('A', 4)": {"null": 6.4}, "('A', 8)": {"null": 12.0}}}
JSON
# One job of 7200 steps alone on v100:1,k80:1: it runs on the V100 at 2 steps/s, 720 steps per
# round, 10 full rounds: JCT exactly 3600 s = 1 h.
printf 'A\tcmd\tdir\t--num_steps\t0\t7200\t1\t1\t-1.000000\t0\n' >one.trace
# Two jobs, the second after a long idle gap (t = 100000 s).
printf 'A\tcmd\tdir\t--num_steps\t0\t720\t1\t1\t-1\t0\nA\tcmd\tdir\t--num_steps\t0\t720\t1\t1\t-1\t100000\n' >gap.trace
printf 'A\tcmd\tdir\t--num_steps\t0\t720\t1\t1\n' >short.trace
printf 'B\tcmd\tdir\t--num_steps\t0\t720\t1\t1\t-1\t0\n' >unknown.trace
printf 'A\tcmd\tdir\t--num_steps\t0\tmany\t1\t1\t-1\t0\n' >steps.trace

cat >helper.py <<'PYTHON'
import csv, json, math, sys

def summary(path):
    with open(path) as f:
        return json.load(f)

cmd = sys.argv[1]
if cmd == "keys":
    d = summary(sys.argv[2])
    need = ["jobs_total", "jobs_finished", "avg_jct_hours", "p50_jct_hours", "p99_jct_hours",
            "makespan_hours", "gpu_utilization", "avg_policy_seconds"]
    missing = [k for k in need if k not in d]
    sys.exit(1 if missing else 0)
elif cmd == "field":  # field FILE KEY EXPECTED [TOL]
    d = summary(sys.argv[2])
    value, expected = d[sys.argv[3]], float(sys.argv[4])
    tol = float(sys.argv[5]) if len(sys.argv) > 5 else 1e-9
    sys.exit(0 if abs(value - expected) <= tol * max(1.0, abs(expected)) else 1)
elif cmd == "csv":  # csv FILE N_ROWS: every job listed once, consistent with its status
    rows = list(csv.DictReader(open(sys.argv[2])))
    if len(rows) != int(sys.argv[3]) or [int(r["id"]) for r in rows] != list(range(len(rows))):
        sys.exit(1)
    for r in rows:
        if r["status"] == "finished":
            jct = (float(r["finish_seconds"]) - float(r["arrival_seconds"])) / 3600
            if abs(jct - float(r["jct_hours"])) > 1e-9 * max(1, jct):
                sys.exit(1)
            if abs(float(r["steps_done"]) - float(r["total_steps"])) > 1e-6:
                sys.exit(1)
        elif r["status"] not in ("unfinished", "not_arrived", "unrunnable") or r["jct_hours"]:
            sys.exit(1)
    sys.exit(0)
elif cmd == "conserved":  # conserved SUMMARY CSV: finished + unfinished == total, matches CSV
    d = summary(sys.argv[2])
    rows = list(csv.DictReader(open(sys.argv[3])))
    finished = sum(r["status"] == "finished" for r in rows)
    ok = (d["jobs_finished"] + d["jobs_unfinished"] == d["jobs_total"] == len(rows)
          and finished == d["jobs_finished"])
    sys.exit(0 if ok else 1)
PYTHON

# ---- The demo run with no arguments ---------------------------------------------------------
run
check "no arguments: exit 0" exited 0
check "no arguments: summary line" grep -q "jobs finished" out.txt

# ---- Known outcome: one job alone ----------------------------------------------------------
run --throughputs tp.json --cluster v100:1,k80:1 --trace one.trace --policy max-min-fairness \
  --output one.json --per-job one.csv --quiet
check "one job: exit 0" exited 0
check "one job: contract keys" python3 helper.py keys one.json
check "one job: finished" python3 helper.py field one.json jobs_finished 1
check "one job: JCT = steps / T_v100 = 1 h" python3 helper.py field one.json avg_jct_hours 1.0
check "one job: p99 = 1 h" python3 helper.py field one.json p99_jct_hours 1.0
check "one job: utilization 1/2" python3 helper.py field one.json gpu_utilization 0.5
check "one job: CSV" python3 helper.py csv one.csv 1
check "one job: all time on the V100" grep -q ',3600,0$' one.csv

# Agnostic variant: the same job may land on the K80 (half as fast) in some rounds, never faster.
run --throughputs tp.json --cluster v100:1,k80:1 --trace one.trace --policy max-min-fairness \
  --heterogeneity-agnostic --output agn.json --quiet
check "agnostic: exit 0" exited 0
check "agnostic: JCT in [1 h, 2 h]" python3 -c "
import json; d = json.load(open('agn.json')); assert 1 - 1e-9 <= d['avg_jct_hours'] <= 2 + 1e-9"

# ---- Idle gap between arrivals ---------------------------------------------------------------
run --throughputs tp.json --cluster v100:1,k80:1 --trace gap.trace --policy max-min-fairness \
  --output gap.json --per-job gap.csv --quiet
check "idle gap: exit 0" exited 0
check "idle gap: both finished" python3 helper.py field gap.json jobs_finished 2
check "idle gap: JCT 360 s each" python3 helper.py field gap.json avg_jct_hours 0.1
check "idle gap: makespan" python3 helper.py field gap.json makespan_hours "$(python3 -c 'print(100360/3600)')"
check "idle gap: conserved" python3 helper.py conserved gap.json gap.csv

# ---- Generated workload, every policy, POP; nothing lost --------------------------------------
for policy in max-min-fairness proportional-fairness max-throughput min-makespan \
  finish-time-fairness isolated fifo; do
  run --throughputs tp.json --cluster v100:4,k80:4 --arrival-rate 20 --jobs 30 --seed 3 \
    --policy "$policy" --output gen.json --per-job gen.csv --quiet
  check "generated $policy: exit 0" exited 0
  check "generated $policy: all 30 finished" python3 helper.py field gen.json jobs_finished 30
  check "generated $policy: CSV" python3 helper.py csv gen.csv 30
done
run --throughputs tp.json --cluster v100:4,k80:4 --arrival-rate 20 --jobs 30 --seed 3 \
  --policy max-min-fairness --pop 2 --multi-gpu --output pop.json --per-job pop.csv --quiet
check "POP-2 multi-GPU: exit 0" exited 0
check "POP-2 multi-GPU: conserved" python3 helper.py conserved pop.json pop.csv
run --throughputs tp.json --cluster v100:4,k80:4 --arrival-rate 20 --jobs 40 --seed 3 \
  --policy max-min-fairness --max-hours 2 --output cut.json --per-job cut.csv --quiet
check "time limit: exit 0" exited 0
check "time limit: unfinished reported" python3 -c "
import json; d = json.load(open('cut.json')); assert d['jobs_unfinished'] > 0"
check "time limit: conserved" python3 helper.py conserved cut.json cut.csv
check "time limit: CSV" python3 helper.py csv cut.csv 40
run --throughputs tp.json --cluster v100:4,k80:4 --arrival-rate 20 --jobs 40 --seed 3 \
  --policy max-min-fairness --window 10:20 --output win.json --quiet
check "window: 10 measured" python3 helper.py field win.json jobs_measured 10

# ---- Cold policy calls: no warm start, the same schedule to the policy's tolerance ------------
run --throughputs tp.json --cluster v100:4,k80:4 --arrival-rate 20 --jobs 40 --seed 3 \
  --policy max-min-fairness --output warm.json --quiet
check "warm policy: exit 0" exited 0
run --throughputs tp.json --cluster v100:4,k80:4 --arrival-rate 20 --jobs 40 --seed 3 \
  --policy max-min-fairness --cold-policy --output cold.json --quiet
check "cold policy: exit 0" exited 0
check "cold policy: no call warm-started, the same outcome" python3 -c "
import json
w, c = json.load(open('warm.json')), json.load(open('cold.json'))
assert w['policy_calls'] > 2 and w['policy_calls_warm_started'] > 0, w
assert c['policy_calls'] == w['policy_calls'] and c['policy_calls_warm_started'] == 0, c
assert c['jobs_finished'] == w['jobs_finished'] == 40, c
assert abs(c['avg_jct_hours'] - w['avg_jct_hours']) <= 1e-2 * w['avg_jct_hours'], (w, c)"

# ---- Water filling over a long stream: the class LP's lifts keep every bound consistent -------
# (a class whose best level lies just above the current one once made the lift's temporary cap
# exceed its own bound, and restoring the bound failed after 70-100 simulated hours)
run --throughputs "$DATA/simulation_throughputs.json" --cluster v100:36,p100:36,k80:36 \
  --arrival-rate 5.6 --jobs 2000 --seed 0 --max-hours 100 --water-filling --output wf100.json --quiet
check "water filling, 100 h of Gavel's stream: exit 0" exited 0
check "water filling, 100 h: every policy call converged" python3 -c "
import json; r = json.load(open('wf100.json'))
assert r['water_filling'] and r['policy_calls'] > 100 and r['policy_calls_not_converged'] == 0, r"

# ---- Space sharing (Gavel's packed policies) on Gavel's table: every job finishes ------------
run --throughputs "$DATA/simulation_throughputs.json" --cluster v100:4,p100:4,k80:4 \
  --arrival-rate 20 --jobs 30 --seed 3 --space-sharing --output packed.json --per-job packed.csv --quiet
check "space sharing: exit 0" exited 0
check "space sharing: CSV" python3 helper.py csv packed.csv 30
run --throughputs "$DATA/simulation_throughputs.json" --cluster v100:4,p100:4,k80:4 \
  --arrival-rate 20 --jobs 30 --seed 3 --output unpacked.json --quiet
check "without space sharing: exit 0" exited 0
run --cluster v100:4,p100:4,k80:4 --arrival-rate 20 --jobs 30 --seed 3 --space-sharing \
  --policy max-throughput --pop 2 --output packed_mt.json --quiet
check "space sharing, max-throughput, POP-2, the shipped table: exit 0" exited 0
run --throughputs "$DATA/simulation_throughputs.json" --cluster v100:4,p100:4,k80:4 \
  --arrival-rate 20 --jobs 30 --seed 3 --space-sharing --water-filling --output packed_wf.json --quiet
check "space sharing with water filling: exit 0" exited 0
run --throughputs "$DATA/simulation_throughputs.json" --cluster v100:4,p100:4,k80:4 \
  --arrival-rate 20 --jobs 30 --seed 3 --space-sharing --policy fifo --output packed_fifo.json --quiet
check "space sharing, packed FIFO: exit 0" exited 0
check "space sharing: summaries" python3 - "$SCHEMAS" <<'PY'
import json, sys
p, u, mt, wf, ff = (json.load(open(f"{n}.json"))
                    for n in ("packed", "unpacked", "packed_mt", "packed_wf", "packed_fifo"))
try:
    import jsonschema
    schema = json.load(open(f"{sys.argv[1]}/popalloc-simulate.schema.json"))
    for r in (p, u, mt, wf, ff):
        jsonschema.validate(r, schema, cls=jsonschema.Draft202012Validator)
except ImportError:
    print("python3 jsonschema not found: schema validation skipped")
assert wf["water_filling"] is True and p["water_filling"] is False
for r in (p, mt, wf):
    assert r["status"] == "finished" and r["jobs_finished"] == r["jobs_total"] == 30, r
    assert r["space_sharing"] is True and r["pairs_allocated"] > 0, r
    assert r["policy_calls"] > 0 and r["policy_calls_warm_started"] == r["core_solves"] == 0, r
    assert 0 < r["gpu_utilization"] <= 1 and 0 < r["avg_jct_hours"] <= r["makespan_hours"], r
assert ff["policy"] == "fifo" and ff["status"] == "finished" and ff["jobs_finished"] == 30, ff
assert ff["space_sharing"] is True and ff["policy_calls"] > 0, ff
assert mt["policy"] == "max-throughput" and mt["pop_parts"] == 2
assert mt["inputs"]["throughputs"].endswith("gavel/simulation_throughputs.json"), mt["inputs"]
assert u["space_sharing"] is False and "pairs_allocated" not in u and u["jobs_finished"] == 30
PY
expect_one_line() {  # expect_one_line NAME MESSAGE ARGS...: exit 2 with a one-line error
  local name="$1" message="$2"
  shift 2
  run "$@"
  check "$name: exit 2" exited 2
  check "$name: message" stderr_has "$message"
  check "$name: one line" test "$(wc -l <err.txt)" -eq 1
}
expect_one_line "space sharing with min-makespan" \
  "--space-sharing runs --policy max-min-fairness, max-throughput or fifo, not min-makespan" \
  --space-sharing --policy min-makespan
expect_one_line "space sharing with a cold policy" \
  "--cold-policy is for the policies without --space-sharing" --space-sharing --cold-policy
expect_one_line "space sharing with agnostic" \
  "--space-sharing cannot be combined with --heterogeneity-agnostic" --space-sharing \
  --heterogeneity-agnostic

# ---- Errors: exit 2, a clear message, no output written -----------------------------------------
expect_error() {  # expect_error NAME MESSAGE ARGS...
  local name="$1" message="$2"
  shift 2
  rm -f err.json
  run --output err.json "$@"
  check "$name: exit 2" exited 2
  check "$name: message" stderr_has "$message"
  check "$name: no output" absent err.json
}
expect_error "missing throughputs" "missing.json: cannot open" --throughputs missing.json \
  --cluster v100:1 --trace one.trace --policy max-min-fairness
printf '{"v100": {"(A, 1)": {"null": 1}}}' >bad.json
expect_error "malformed throughput key" "bad.json:1: malformed job key" --throughputs bad.json \
  --cluster v100:1 --trace one.trace
expect_error "unknown GPU type" "unknown GPU type 'a100'" --throughputs tp.json \
  --cluster a100:4 --trace one.trace
expect_error "bad cluster count" "must be positive" --throughputs tp.json --cluster v100:-1 \
  --trace one.trace
expect_error "unknown policy" "unknown policy 'lottery'" --throughputs tp.json --cluster v100:1 \
  --trace one.trace --policy lottery
expect_error "short trace line" "short.trace:1: expected 10 tab-separated columns" \
  --throughputs tp.json --cluster v100:1 --trace short.trace
expect_error "unknown job type" "unknown.trace:1: job ('B', 1) is not in the throughput table" \
  --throughputs tp.json --cluster v100:1 --trace unknown.trace
expect_error "non-numeric steps" "steps.trace:1: total_steps" --throughputs tp.json \
  --cluster v100:1 --trace steps.trace
expect_error "negative rate" "--arrival-rate must be > 0" --throughputs tp.json \
  --cluster v100:1 --arrival-rate -3 --jobs 10
expect_error "zero jobs" "--jobs must be >= 1" --throughputs tp.json --cluster v100:1 --jobs 0
expect_error "trace and generator" "--seed is for generated jobs" --throughputs tp.json \
  --cluster v100:1 --trace one.trace --seed 4
expect_error "bad round length" "--round-seconds must be > 0" --round-seconds 0
expect_error "NaN round length" "is not a finite number" --round-seconds nan
expect_error "bad window" "--window FIRST:LAST needs FIRST < LAST" --window 5:5
expect_error "window beyond the jobs" "--window LAST is beyond" --jobs 10 --window 5:50
expect_error "bad POP" "--pop must be >= 1" --pop 0
expect_error "unknown option" "unknown option '--frobnicate'" --frobnicate
expect_error "missing value" "option --policy needs a value" --policy
expect_error "unwritable output dir" "cannot write to directory" --per-job /nonexistent/dir/x.csv

summary cli
