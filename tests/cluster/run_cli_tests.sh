#!/usr/bin/env bash
# End-to-end tests of popalloc-schedule: output contract, golden-like checks, the scheduler-state
# round trip (--write-state, --state, --allocation) and bad input.
# Usage: run_cli_tests.sh PROGRAM DATA_DIR SCRATCH_DIR. Exit 77 (skipped) without python3.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"
prog="$1"; data="$2"; scratch="$3"
command -v python3 > /dev/null || { echo "python3 not found: skipped"; exit 77; }
rm -rf "$scratch"; mkdir -p "$scratch"
CLI_SHOW_PASSES=1
expect_code() { # code, stderr pattern, args...
  local code="$1" pattern="$2"; shift 2
  "$prog" "$@" > "$scratch/out.txt" 2> "$scratch/err.txt"
  local got=$?
  if [ "$got" -ne "$code" ] || ! grep -q -- "$pattern" "$scratch/err.txt"; then
    fail "'$*' exited $got (expected $code) with: $(cat "$scratch/err.txt")"
  else
    pass; echo "ok: '$*' -> $code: $(head -c 200 "$scratch/err.txt")"
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
p = r['pop']; assert r['pop_parts'] == 4 and 0.5 < p['mean_effective_throughput_ratio'] <= 1.01, p
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
# The flags popalloc-simulate shares, in both spellings: --multi-gpu is the default here.
"$prog" --jobs 40 --seed 9 --multi-gpu --output "$scratch/multi.json" --quiet > /dev/null
"$prog" --jobs 40 --seed 9 --single-gpu --output "$scratch/single.json" --quiet > /dev/null
"$prog" --jobs 40 --seed 9 --water-filling --output "$scratch/wf.json" --quiet > /dev/null
check "--multi-gpu is the default, --single-gpu gives scale factor 1, --water-filling too" python3 -c "
import json; a, m, s, w = (json.load(open('$scratch/%s.json' % n)) for n in ('a', 'multi', 'single', 'wf'))
assert [j['allocation'] for j in a['jobs']] == [j['allocation'] for j in m['jobs']]
assert {j['scale_factor'] for j in s['jobs']} == {1} and len({j['scale_factor'] for j in m['jobs']}) > 1
assert w['water_filling'] and a['water_filling'] and w['objective'] == a['objective']
assert a['objective'] <= a['dual_bound'] and a['tolerance'] == 1e-6
assert abs(a['relative_gap'] - (a['dual_bound'] - a['objective']) / a['dual_bound']) <= 1e-12"
check "cost-normalised max-throughput" "$prog" --jobs 30 --policy max-throughput \
  --gpu-cost v100:3.06,p100:1.46,k80:0.9 --quiet

# 2b. A live scheduler's state: the trace run's jobs written with --write-state and read back with
# --state give the same allocation, bit for bit, in the JSON and in Gavel's layout (--allocation).
for policy in max-min-fairness min-makespan finish-time-fairness; do
  check "$policy: trace run writes its state" "$prog" --throughputs "$data/simulation_throughputs.json" \
    --cluster v100:4,p100:4,k80:4 --trace "$data/traces/small_test.trace" --policy "$policy" \
    --output "$scratch/trace.json" --allocation "$scratch/trace.gavel.json" \
    --write-state "$scratch/state.json" --quiet
  check "$policy: the state run" "$prog" --state "$scratch/state.json" --policy "$policy" \
    --output "$scratch/state_run.json" --allocation "$scratch/state_run.gavel.json" --quiet
  check "$policy: same allocation from the state as from the trace" python3 - "$scratch" <<'PY'
import json, sys
d = sys.argv[1]
t, s = (json.load(open(f"{d}/{n}.json")) for n in ("trace", "state_run"))
tg, sg = (json.load(open(f"{d}/{n}.gavel.json")) for n in ("trace", "state_run"))
assert t["objective"] == s["objective"], (t["objective"], s["objective"])
assert tg == sg and len(tg) == len(t["jobs"]) > 0
assert {str(j["id"]): j["allocation"] for j in t["jobs"]} == tg
assert s["inputs"] == {"state": f"{d}/state.json"}, s["inputs"]
st = json.load(open(f"{d}/state.json"))
assert st["cluster"] == {"v100": 4, "p100": 4, "k80": 4} and len(st["jobs"]) == len(t["jobs"])
PY
done
# A state as a live scheduler writes it: two jobs, remaining steps, a type left out (cannot run).
cat > "$scratch/live.json" <<'JSON'
{"cluster": {"v100": 1, "k80": 2},
 "jobs": [{"id": 17, "throughputs": {"v100": 4.0, "k80": 1.0}, "total_steps": 1000, "remaining_steps": 400},
          {"id": 23, "throughputs": {"k80": 2.0}, "scale_factor": 2, "priority_weight": 2, "total_steps": 100}]}
JSON
check "live state, min-makespan" "$prog" --state "$scratch/live.json" --policy min-makespan \
  --allocation "$scratch/live.gavel.json" --quiet
check "live state: Gavel layout keyed by the state's ids" python3 -c "
import json; a = json.load(open('$scratch/live.gavel.json'))
assert set(a) == {'17', '23'} and set(a['17']) == {'v100', 'k80'}, a
# job 17: 400 steps at 4/s on the v100 take 100 s; job 23 finishes 100 steps at 2/s with half
# of the k80 pair in the same 100 s.
assert a['23']['v100'] == 0 and abs(a['23']['k80'] - 0.5) < 1e-4, a
assert a['17']['v100'] > 0.999, a"
printf '{"cluster": {"v100": 2},\n "jobs": [{"id": 1, "throughputs": {"a100": 1}}]}' > "$scratch/bad_state.json"
expect_code 2 "bad_state.json:2: job 1: GPU type 'a100' is not in" --state "$scratch/bad_state.json"
printf '{"cluster": {"v100": 2},\n "jobs": [{"id": 1, "throughputs": {"v100": 1}},\n {"id": 1, "throughputs": {"v100": 2}}]}' > "$scratch/bad_state.json"
expect_code 2 "bad_state.json:3: job id 1 appears twice" --state "$scratch/bad_state.json"
printf '{"cluster": {"v100": 2}, "jobs": [{"id": 1, "throughputs": {"v100": -1}}]}' > "$scratch/bad_state.json"
expect_code 2 "bad_state.json:1: job 1: throughput on 'v100' must be a finite number >= 0" --state "$scratch/bad_state.json"
printf '{"cluster": {"v100": 2}, "jobs": [{"id": 1, "throughput": {"v100": 1}}]}' > "$scratch/bad_state.json"
expect_code 2 "unknown key \"throughput\" in a job" --state "$scratch/bad_state.json"
expect_code 2 "cannot be combined with --state" --state "$scratch/live.json" --trace x.trace

# 2c. Space sharing (Gavel's packed max-min fairness) on Gavel's trace and throughputs: valid
# against the schema, pairs within every job's time and every type's GPUs, and a minimum at least
# that of the same run without sharing; without --throughputs the shipped table is found.
schemas="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../schemas" && pwd)"
tp="$data/simulation_throughputs.json"
check "space sharing runs" "$prog" --throughputs "$tp" --cluster v100:8,p100:8,k80:8 \
  --trace "$data/traces/max_min_fairness.trace" --space-sharing --output "$scratch/packed.json" --quiet
check "the same run without sharing" "$prog" --throughputs "$tp" --cluster v100:8,p100:8,k80:8 \
  --trace "$data/traces/max_min_fairness.trace" --output "$scratch/unpacked.json" --quiet
check "space sharing with the shipped throughputs" "$prog" --cluster v100:8,p100:8,k80:8 \
  --trace "$data/traces/max_min_fairness.trace" --space-sharing --output "$scratch/shipped.json" --quiet
check "space sharing: pairs, times, capacities, objective" python3 - "$scratch" "$schemas" <<'PY'
import json, sys
d, schemas = sys.argv[1:3]
p, u, sh = (json.load(open(f"{d}/{n}.json")) for n in ("packed", "unpacked", "shipped"))
try:
    import jsonschema
    schema = json.load(open(f"{schemas}/popalloc-schedule.schema.json"))
    for r in (p, u):
        jsonschema.validate(r, schema, cls=jsonschema.Draft202012Validator)
except ImportError:
    print("python3 jsonschema not found: schema validation skipped")
assert p["space_sharing"] is True and u["space_sharing"] is False and "pairs" not in u
assert p["water_filling"] is False and p["pair_threshold"] == 1 and p["status"] == "converged"
assert p["objective"] <= p["dual_bound"] <= p["objective"] * (1 + 1e-9), (p["objective"], p["dual_bound"])
assert p["objective"] >= u["objective"], (p["objective"], u["objective"])
print(f"packed min {p['objective']:.6f} vs unpacked {u['objective']:.6f}, {len(p['pairs'])} pairs")
jobs = {j["id"]: j for j in p["jobs"]}
assert len(jobs) == 96 and len(p["pairs"]) > 0
time = {i: sum(j["allocation"].values()) for i, j in jobs.items()}
used = {t: sum(j["scale_factor"] * j["allocation"][t] for j in jobs.values()) for t in p["cluster"]}
for q in p["pairs"]:
    a, b = jobs[q["first"]], jobs[q["second"]]
    assert q["first"] != q["second"] and a["scale_factor"] == b["scale_factor"], q
    assert 0 < q["fraction"] <= 1 and q["first_throughput"] > 0 and q["second_throughput"] > 0, q
    time[q["first"]] += q["fraction"]
    time[q["second"]] += q["fraction"]
    used[q["gpu_type"]] += a["scale_factor"] * q["fraction"]
assert max(time.values()) <= 1 + 1e-9, max(time.values())
for t, n in p["cluster"].items():
    assert used[t] <= n * (1 + 1e-9), (t, used[t], n)
m = min(j["normalized_throughput"] for j in p["jobs"])
assert abs(m - p["objective"]) <= 1e-9 * m, (m, p["objective"])
assert sh["inputs"]["throughputs"].endswith("gavel/simulation_throughputs.json"), sh["inputs"]
assert sh["objective"] == p["objective"] and sh["pairs"] == p["pairs"]
PY
check "space sharing with water filling" "$prog" --throughputs "$tp" --cluster v100:8,p100:8,k80:8 \
  --trace "$data/traces/max_min_fairness.trace" --space-sharing --water-filling \
  --output "$scratch/packed_wf.json" --quiet
check "space sharing with water filling: same minimum, no job below it" python3 - "$scratch" <<'PY'
import json, sys
p, w = (json.load(open(f"{sys.argv[1]}/{n}.json")) for n in ("packed", "packed_wf"))
assert w["water_filling"] is True and w["status"] == "converged" and w["water_filling_levels"] >= 1
assert abs(w["objective"] - p["objective"]) <= 1e-9 * p["objective"], (w["objective"], p["objective"])
assert w["objective"] <= w["dual_bound"] <= w["objective"] * (1 + 1e-9)
levels = sorted(j["normalized_throughput"] for j in w["jobs"])
assert levels[0] >= w["objective"] * (1 - 1e-9)
print(f"water filling: {w['water_filling_levels']} levels, median level {levels[len(levels) // 2]:.4f}")
PY
check "space sharing, min makespan" "$prog" --throughputs "$tp" --cluster v100:8,p100:8,k80:8 \
  --trace "$data/traces/max_min_fairness.trace" --space-sharing --policy min-makespan \
  --output "$scratch/packed_ms.json" --quiet
check "the same makespan without sharing" "$prog" --throughputs "$tp" --cluster v100:8,p100:8,k80:8 \
  --trace "$data/traces/max_min_fairness.trace" --policy min-makespan --output "$scratch/unpacked_ms.json" --quiet
check "space sharing, min makespan: certified, never above the unpacked makespan" python3 - "$scratch" <<'PY'
import json, sys
p, u = (json.load(open(f"{sys.argv[1]}/{n}.json")) for n in ("packed_ms", "unpacked_ms"))
assert p["policy"] == "min-makespan" and p["status"] == "converged" and p["space_sharing"], p["status"]
assert p["dual_bound"] <= p["objective"] <= p["dual_bound"] * (1 + 1e-9), (p["objective"], p["dual_bound"])
assert p["objective"] <= u["objective"] * (1 + 1e-9), (p["objective"], u["objective"])
print(f"makespan {p['objective'] / 3600:.2f} h with sharing, {u['objective'] / 3600:.2f} h without")
PY
check "space sharing, finish-time fairness" "$prog" --throughputs "$tp" --cluster v100:8,p100:8,k80:8 \
  --trace "$data/traces/max_min_fairness.trace" --space-sharing --policy finish-time-fairness \
  --output "$scratch/packed_ftf.json" --quiet
check "the same finish-time fairness without sharing" "$prog" --throughputs "$tp" \
  --cluster v100:8,p100:8,k80:8 --trace "$data/traces/max_min_fairness.trace" \
  --policy finish-time-fairness --output "$scratch/unpacked_ftf.json" --quiet
check "space sharing, finish-time fairness: certified, never above the unpacked rho" python3 - "$scratch" <<'PY'
import json, sys
p, u = (json.load(open(f"{sys.argv[1]}/{n}.json")) for n in ("packed_ftf", "unpacked_ftf"))
assert p["policy"] == "finish-time-fairness" and p["status"] == "converged" and p["space_sharing"]
assert p["dual_bound"] <= p["objective"] <= p["dual_bound"] * (1 + 1e-6), (p["objective"], p["dual_bound"])
assert p["objective"] <= u["objective"] * (1 + 1e-6), (p["objective"], u["objective"])
assert p["pairs"], "no pair shared"
print(f"max rho {p['objective']:.4f} with sharing, {u['objective']:.4f} without")
PY
check "space sharing: max-throughput, POP, pair threshold" "$prog" --jobs 40 --seed 2 --single-gpu \
  --space-sharing --policy max-throughput --pop 2 --pair-threshold 1.5 --output "$scratch/packed_mt.json" --quiet
check "space sharing: max-throughput output" python3 -c "
import json; r = json.load(open('$scratch/packed_mt.json'))
assert r['policy'] == 'max-throughput' and r['pop_parts'] == 2 and r['pair_threshold'] == 1.5
assert r['dual_bound'] is None and all(0 < q['fraction'] <= 1 for q in r['pairs'])"
check "space sharing: max-throughput with SLO floors" "$prog" --jobs 40 --seed 4 --single-gpu --slo \
  --cluster v100:12,p100:12,k80:12 --space-sharing --policy max-throughput --output "$scratch/packed_slo.json" --quiet
check "the same SLO floors without sharing" "$prog" --jobs 40 --seed 4 --single-gpu --slo \
  --cluster v100:12,p100:12,k80:12 --policy max-throughput --output "$scratch/unpacked_slo.json" --quiet
check "space sharing, SLO floors: met, certified, never below the unpacked throughput" python3 - "$scratch" <<'PY'
import json, sys
p, u = (json.load(open(f"{sys.argv[1]}/{n}.json")) for n in ("packed_slo", "unpacked_slo"))
assert p["status"] == "converged" and p["space_sharing"], p["status"]
assert p["slo"]["jobs"] == u["slo"]["jobs"] > 0, (p["slo"], u["slo"])
assert not p["slo"]["floors_dropped"] and not u["slo"]["floors_dropped"], (p["slo"], u["slo"])
assert p["slo"]["worst_shortfall"] <= 1e-9, p["slo"]
assert p["objective"] <= p["dual_bound"] <= p["objective"] * (1 + 1e-9), (p["objective"], p["dual_bound"])
assert p["objective"] >= u["objective"] * (1 - 1e-4), (p["objective"], u["objective"])
print(f"{p['slo']['jobs']} floors met; throughput {p['objective']:.2f} with sharing, {u['objective']:.2f} without")
PY
check "space sharing: packed FIFO" "$prog" --jobs 40 --seed 2 --single-gpu --cluster v100:4,p100:4,k80:4 \
  --space-sharing --policy fifo --pair-threshold 1.2 --output "$scratch/packed_fifo.json" --quiet
check "space sharing: packed FIFO output" python3 -c "
import json; r = json.load(open('$scratch/packed_fifo.json'))
assert r['policy'] == 'fifo' and r['pair_threshold'] == 1.2 and r['pairs'], r.get('pairs')
assert all(q['fraction'] == 1 for q in r['pairs'])
busy = [j['id'] for j in r['jobs'] if sum(j['allocation'].values()) > 0]
paired = [q[k] for q in r['pairs'] for k in ('first', 'second')]
assert len(set(busy + paired)) == len(busy) + len(paired), 'a job in two places'"
expect_one_line() { # code, stderr pattern, args...: as expect_code, and the error is one line
  expect_code "$@"
  [ "$(wc -l < "$scratch/err.txt")" -eq 1 ] || fail "not one line: $(cat "$scratch/err.txt")"
}
expect_one_line 2 "--space-sharing runs --policy max-min-fairness, min-makespan, finish-time-fairness, max-throughput or fifo, not proportional-fairness" \
  --space-sharing --policy proportional-fairness
expect_one_line 2 "class LP too large to solve densely .*split the jobs with POP" --jobs 300 \
  --cluster v100:64,p100:64,k80:64 --space-sharing --policy min-makespan
expect_one_line 2 "--space-sharing cannot be combined with --heterogeneity-agnostic" \
  --space-sharing --heterogeneity-agnostic
expect_one_line 2 "cannot be combined with --gpu-cost" --space-sharing --policy max-throughput \
  --gpu-cost v100:3,p100:2,k80:1
expect_one_line 2 "cannot be combined with --state" --space-sharing --state "$scratch/live.json"
expect_one_line 2 "--pair-threshold needs --space-sharing" --pair-threshold 1.5
expect_one_line 2 "cannot be combined with --allocation" --space-sharing --allocation "$scratch/x.json"
expect_one_line 2 "--pair-threshold must be >= 0" --space-sharing --pair-threshold -1

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
expect_code 2 "--jobs: 'many' is not an integer" --jobs many
expect_code 2 "unknown option" --frobnicate
expect_code 2 "cannot be combined" --single-gpu --multi-gpu
expect_code 2 "cannot be combined" --water-filling --no-water-filling
expect_code 2 "needs --pop K" --compare-full
expect_code 2 "no price for GPU type" --policy max-throughput --gpu-cost v100:1
expect_code 2 "SLO floors are on throughput" --jobs 8 --slo --policy max-throughput \
  --gpu-cost v100:3,p100:2,k80:1

summary cluster-cli
