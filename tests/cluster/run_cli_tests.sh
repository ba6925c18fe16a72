#!/usr/bin/env bash
# End-to-end tests of popalloc-schedule: output contract, golden-like checks and bad input.
# Usage: run_cli_tests.sh PROGRAM DATA_DIR SCRATCH_DIR. Exit 77 (skipped) without python3.
set -u
prog="$1"; data="$2"; scratch="$3"
command -v python3 > /dev/null || { echo "python3 not found: skipped"; exit 77; }
rm -rf "$scratch"; mkdir -p "$scratch"
fail=0
check() { # description, command...
  local what="$1"; shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi
}
expect_code() { # code, stderr pattern, args...
  local code="$1" pattern="$2"; shift 2
  "$prog" "$@" > "$scratch/out.txt" 2> "$scratch/err.txt"
  local got=$?
  if [ "$got" -ne "$code" ] || ! grep -q -- "$pattern" "$scratch/err.txt"; then
    echo "FAIL: '$*' exited $got (expected $code) with: $(cat "$scratch/err.txt")"; fail=1
  else
    echo "ok: '$*' -> $code: $(head -c 200 "$scratch/err.txt")"
  fi
}

# 1. The output contract on Gavel's trace, every policy.
for policy in max-min-fairness proportional-fairness max-throughput min-makespan finish-time-fairness; do
  out="$scratch/$policy.json"
  check "$policy runs" "$prog" --throughputs "$data/simulation_throughputs.json" \
    --cluster v100:8,p100:8,k80:8 --trace "$data/traces/max_min_fairness.trace" \
    --policy "$policy" --output "$out" --quiet
  check "$policy output contract" python3 - "$out" "$policy" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["policy"] == sys.argv[2], r["policy"]
assert isinstance(r["objective"], float) and isinstance(r["seconds"], float)
jobs = r["jobs"]
assert len(jobs) == 96 and [j["id"] for j in jobs] == list(range(96))
used = {"v100": 0.0, "p100": 0.0, "k80": 0.0}
for j in jobs:
    a = j["allocation"]
    assert set(a) == set(used), a
    assert all(x >= 0 for x in a.values()) and sum(a.values()) <= 1 + 1e-9
    for t, x in a.items():
        used[t] += j["scale_factor"] * x
    assert j["effective_throughput"] >= 0
for t, u in used.items():
    assert u <= 8 * (1 + 1e-9), (t, u)
if sys.argv[2] == "max-min-fairness":
    m = min(j["normalized_throughput"] for j in jobs)
    assert abs(m - r["objective"]) <= 1e-9 * m, (m, r["objective"])
PY
done

# 2. Generated jobs, POP with comparison, agnostic, default run, same seed same output.
check "generated + POP + compare" "$prog" --cluster 16:16:16 --jobs 300 --seed 4 --pop 4 \
  --compare-full --output "$scratch/pop.json" --quiet
check "POP fields" python3 -c "
import json; r = json.load(open('$scratch/pop.json'))
p = r['pop']; assert p['k'] == 4 and 0.5 < p['mean_effective_throughput_ratio'] <= 1.01, p
assert len(r['jobs']) == 300"
check "agnostic" "$prog" --jobs 50 --heterogeneity-agnostic --policy min-makespan --quiet
# SLO floors: 64 jobs on 96 GPUs can all meet their deadlines (and lose throughput for it);
# 64 jobs on 24 GPUs cannot, so the floors are dropped as in Gavel.
check "SLO floors met" "$prog" --jobs 64 --slo --policy max-throughput --cluster 32:32:32 \
  --output "$scratch/slo.json" --quiet
check "SLO floors dropped" "$prog" --jobs 64 --slo --policy max-throughput --cluster 8:8:8 \
  --output "$scratch/slo_dropped.json" --quiet
check "no SLO floors" "$prog" --jobs 64 --slo --no-slo-floors --policy max-throughput \
  --cluster 32:32:32 --output "$scratch/slo_off.json" --quiet
check "SLO fields" python3 - "$scratch/slo.json" "$scratch/slo_dropped.json" "$scratch/slo_off.json" <<'PY'
import json, sys
met, dropped, off = (json.load(open(f)) for f in sys.argv[1:])
assert met["slo"]["jobs"] == 64 and met["slo"]["floors_dropped"] is False, met["slo"]
assert met["slo"]["worst_shortfall"] <= 1e-5, met["slo"]
assert dropped["slo"]["floors_dropped"] is True and dropped["slo"]["worst_shortfall"] > 0
assert "slo" not in off
assert met["objective"] < off["objective"] * (1 - 1e-4), (met["objective"], off["objective"])
PY
check "default run" "$prog" --quiet
"$prog" --jobs 40 --seed 9 --output "$scratch/a.json" --quiet > /dev/null
"$prog" --jobs 40 --seed 9 --output "$scratch/b.json" --quiet > /dev/null
check "same seed, same allocation" python3 -c "
import json; a = json.load(open('$scratch/a.json')); b = json.load(open('$scratch/b.json'))
assert [j['allocation'] for j in a['jobs']] == [j['allocation'] for j in b['jobs']]"
check "cost-normalised max-throughput" "$prog" --jobs 30 --policy max-throughput \
  --gpu-cost v100:3.06,p100:1.46,k80:0.9 --quiet

# 3. Bad input: exit 2 with file:line or the offending value, output untouched.
printf 'A3C\tc\td\t--n\t0\t100\t1\t1\t-1\t0\nA3C\tc\t100\n' > "$scratch/bad.trace"
printf '{"k80": {"(A3C, 1)": {"null": 1}}}' > "$scratch/bad.json"
echo keep > "$scratch/keep.json"
expect_code 2 "bad.trace:2: expected 10 tab-separated columns" --trace "$scratch/bad.trace" --output "$scratch/keep.json"
check "output untouched after an error" grep -q keep "$scratch/keep.json"
expect_code 2 "bad.json:1: malformed job key" --throughputs "$scratch/bad.json"
expect_code 2 "unknown GPU type 'a100'" --cluster a100:4
expect_code 2 "GPU type 'v100' appears twice" --cluster v100:4,v100:2
expect_code 2 "must be positive" --cluster v100:0
expect_code 2 "unknown policy" --policy las
expect_code 2 "cannot open" --trace "$scratch/missing.trace"
expect_code 2 "either --trace or --jobs" --trace "$data/traces/small_test.trace" --jobs 4
expect_code 2 "expected a whole number" --jobs many
expect_code 2 "unknown option" --frobnicate
expect_code 2 "needs --pop K" --compare-full
expect_code 2 "no price for GPU type" --policy max-throughput --gpu-cost v100:1
expect_code 2 "SLO floors are on throughput" --jobs 8 --slo --policy max-throughput \
  --gpu-cost v100:3,p100:2,k80:1

exit $fail
