#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End-to-end tests of the popalloc-solve example, and of what all five programs share (output
# files written through links and to devices, outputs that would overwrite an input, runaway
# runs refused up front):
#   bash tests/cli/run_cli_tests.sh /path/to/popalloc-solve SCRATCH_DIR \
#        [/path/to/popalloc-schedule /path/to/popalloc-simulate /path/to/popalloc-te /path/to/popalloc-lb]
# Runs every case even after a failure and ends with the line "cli: N passed, M failed"; the exit
# status is 1 if any case failed, 77 (CTest SKIP_RETURN_CODE) without python3, 2 on bad usage.
# Uses python3 (standard library only) to parse JSON and check the CSV outputs. Compares the
# linear objective with COIN-OR CLP's `clp` program when it is installed.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [[ $# -ne 2 && $# -ne 6 ]]; then
  echo "usage: $0 POPALLOC_SOLVE_BINARY SCRATCH_DIR [SCHEDULE SIMULATE TE LB]" >&2
  exit 2
fi
BIN="$(absolute "$1")"
if [[ ! -x "$BIN" ]]; then
  echo "cli: $1 is not an executable" >&2
  exit 2
fi
OTHERS=()
if [[ $# -eq 6 ]]; then
  for program in "$3" "$4" "$5" "$6"; do
    if [[ ! -x "$program" ]]; then
      echo "cli: $program is not an executable" >&2
      exit 2
    fi
    OTHERS+=("$(absolute "$program")")
  done
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "cli: python3 not found, skipping"
  exit 77
fi
mkdir -p "$2"
WORK="$(mktemp -d "$2/cli.XXXXXX")"
cd "$WORK" || exit 2

# Conditions for check (tests/cli/lib.sh has the common ones), about the last run.
result_status_is() { [[ "$(python3 helper.py field "$1" status)" == "$2" ]]; }
result_readable() { python3 helper.py field "$1" n_jobs >/dev/null; }

# ---- Python helpers (JSON parsing, output validation, LP export) --------------------------------
cat >helper.py <<'PYTHON'
import csv, json, math, sys

def load_result(path):
    with open(path) as f:
        return json.load(f)  # fails on NaN/Infinity tokens too: they are not JSON

def capacities(resources_csv):
    with open(resources_csv) as f:
        return {row["name"]: float(row["capacity"]) for row in csv.DictReader(f)}

def cmd_result(path, utility, resources_csv):
    r = load_result(path)
    errors = []
    for key in ["status", "objective", "dual_bound", "relative_gap", "iterations",
                "sample_iterations", "seconds",
                "n_jobs", "n_resources", "prices", "max_capacity_violation"]:
        if key not in r:
            errors.append("missing key " + key)
    if errors:
        return errors
    if r["status"] not in ("converged", "iteration_limit"):
        errors.append("status " + r["status"])
    gap = r["relative_gap"]
    if utility == "target-priority":
        if not isinstance(gap, (int, float)):
            errors.append("relative_gap is not a number: %r" % (gap,))
    elif not (isinstance(gap, (int, float)) and gap < 1e-3):
        errors.append("relative_gap %r is not < 1e-3" % (gap,))
    caps = capacities(resources_csv)
    if not (r["max_capacity_violation"] <= 1e-9 * min(caps.values())):
        errors.append("max_capacity_violation %r" % r["max_capacity_violation"])
    if set(r["prices"]) != set(caps):
        errors.append("prices are not keyed by the resources")
    if r["n_resources"] != len(caps):
        errors.append("n_resources %r" % r["n_resources"])
    if not all(isinstance(p, (int, float)) and p >= 0 for p in r["prices"].values()):
        errors.append("prices are not numbers >= 0")
    return errors

def cmd_allocation(allocation_csv, jobs_csv, resources_csv):
    caps = capacities(resources_csv)
    with open(jobs_csv) as f:
        jobs = [row["id"] for row in csv.DictReader(f)]
    job_set = set(jobs)
    per_job, per_resource, errors = {}, {name: 0.0 for name in caps}, []
    with open(allocation_csv) as f:
        reader = csv.reader(f)
        if next(reader) != ["id", "resource", "fraction"]:
            return ["bad header"]
        for row in reader:
            job, resource, fraction = row[0], row[1], float(row[2])
            if job not in job_set or resource not in caps:
                errors.append("unknown job or resource in %r" % row)
                continue
            if not (0.0 < fraction <= 1.0):
                errors.append("fraction out of (0,1]: %r" % row)
            per_job[job] = per_job.get(job, 0.0) + fraction
            per_resource[resource] += fraction
    errors += ["job %s uses %r > 1" % (j, s) for j, s in per_job.items() if s > 1 + 1e-9]
    errors += ["resource %s uses %r > capacity %r" % (name, used, caps[name])
               for name, used in per_resource.items() if used > caps[name] * (1 + 1e-9)]
    if not per_job:
        errors.append("empty allocation")
    return errors

def cmd_same_objective(a, b):
    x, y = load_result(a)["objective"], load_result(b)["objective"]
    if abs(x - y) <= 1e-9 * max(abs(x), abs(y), 1e-300):
        return []
    return ["objectives differ: %r vs %r" % (x, y)]

def cmd_not_more_iterations(warm, cold):
    w, c = load_result(warm), load_result(cold)
    errors = []
    if w["status"] != "converged":
        errors.append("warm start status " + w["status"])
    if w["iterations"] > c["iterations"]:
        errors.append("warm start took %d iterations, cold %d" % (w["iterations"], c["iterations"]))
    return errors

def cmd_sample_start(on, off):
    # A cold start from a sample's prices: fewer passes over all jobs, the same optimum to the
    # tolerance (both certified to 1e-4).
    a, b = load_result(on), load_result(off)
    errors = []
    if a["status"] != "converged" or b["status"] != "converged":
        errors.append("statuses %s, %s" % (a["status"], b["status"]))
    if not (a["sample_iterations"] > 0 and b["sample_iterations"] == 0):
        errors.append("sample_iterations %r, %r" % (a["sample_iterations"], b["sample_iterations"]))
    if not a["iterations"] < b["iterations"]:
        errors.append("iterations %r with the sample, %r without" % (a["iterations"], b["iterations"]))
    if not (a["objective"] <= b["dual_bound"] and b["objective"] <= a["dual_bound"]):
        errors.append("objectives %r, %r outside the other's bound" % (a["objective"], b["objective"]))
    return errors

def cmd_pop_close(pop, full, resources_csv):
    # POP on a granular instance: objective within 1% of the full solve, bound of the full problem.
    p, f = load_result(pop), load_result(full)
    errors = []
    if p.get("pop_parts") != 4:
        errors.append("pop_parts %r" % (p.get("pop_parts"),))
    caps = capacities(resources_csv)
    if not (p["max_capacity_violation"] <= 0.0):
        errors.append("max_capacity_violation %r" % p["max_capacity_violation"])
    if set(p["prices"]) != set(caps):
        errors.append("prices are not keyed by the resources")
    scale = max(abs(f["objective"]), 1.0)
    if not (p["objective"] >= f["objective"] - 0.01 * scale):
        errors.append("POP objective %r not within 1%% of the full %r" % (p["objective"], f["objective"]))
    if not (p["dual_bound"] >= f["objective"]):
        errors.append("POP dual bound %r below the full objective %r" % (p["dual_bound"], f["objective"]))
    if not (isinstance(p["relative_gap"], (int, float)) and 0.0 <= p["relative_gap"] < 0.01):
        errors.append("POP relative_gap %r" % (p["relative_gap"],))
    return errors

def cmd_field(path, key):
    print(load_result(path)[key])
    return []

def cmd_near(path, key, value, tolerance):
    got = load_result(path)[key]
    if isinstance(got, (int, float)) and abs(got - float(value)) <= float(tolerance):
        return []
    return ["%s %r, expected %s within %s" % (key, got, value, tolerance)]

def cmd_prices_only(result, out):
    with open(out, "w") as f:
        json.dump(load_result(result)["prices"], f, indent=1)
    return []

def cmd_write_mps(jobs_csv, resources_csv, out):
    # max sum_ij w_i A_ij x_ij  s.t.  sum_j x_ij <= 1,  sum_i x_ij <= R_j,  x >= 0
    caps = capacities(resources_csv)
    names = list(caps)
    with open(jobs_csv) as f:
        jobs = list(csv.DictReader(f))
    lines = ["NAME POPALLOC FREE", "ROWS", " N  OBJ"]  # FREE: long numbers and names
    lines += [" L  J%d" % i for i in range(len(jobs))]
    lines += [" L  R%d" % j for j in range(len(names))]
    lines.append("COLUMNS")
    for i, job in enumerate(jobs):
        weight = float(job.get("weight") or 1.0)
        for j, name in enumerate(names):
            a = float(job.get(name) or 0.0)
            if a > 0:
                var = "X%d_%d" % (i, j)
                lines.append("    %s OBJ %.17g J%d 1" % (var, weight * a, i))
                lines.append("    %s R%d 1" % (var, j))
    lines.append("RHS")
    lines += ["    RHS J%d 1" % i for i in range(len(jobs))]
    lines += ["    RHS R%d %.17g" % (j, caps[name]) for j, name in enumerate(names)]
    lines.append("ENDATA")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    return []

def cmd_matches_lp(result, clp_output):
    optimum = None
    with open(clp_output) as f:
        for line in f:
            if line.startswith("Optimal objective"):
                optimum = float(line.split()[2])
    if optimum is None:
        return ["no optimal objective in the clp output"]
    r = load_result(result)
    scale = max(abs(optimum), 1.0)
    errors = []
    if r["objective"] > optimum + 1e-6 * scale:
        errors.append("objective %r above the LP optimum %r" % (r["objective"], optimum))
    if r["dual_bound"] < optimum - 1e-6 * scale:
        errors.append("dual bound %r below the LP optimum %r" % (r["dual_bound"], optimum))
    if optimum - r["objective"] > 2e-4 * scale:
        errors.append("objective %r too far below the LP optimum %r" % (r["objective"], optimum))
    return errors

if __name__ == "__main__":
    problems = globals()["cmd_" + sys.argv[1]](*sys.argv[2:])
    for problem in problems:
        print("  " + problem)
    sys.exit(1 if problems else 0)
PYTHON
py() { python3 helper.py "$@"; }

# ---- Usage ----------------------------------------------------------------------------------------
run --help
check "--help exits 0" exited 0
check "--help documents --jobs" stdout_has "--jobs"
check "--help documents --generate" stdout_has "--generate"
run --version
check "--version exits 0" exited 0
check "--version names the program" stdout_has "popalloc-solve"
# --verbose: progress at every iteration from the start (normally only after the first second).
run --generate 2000,6 --seed 7 --verbose
check "--verbose: exit 0" exited 0
check "--verbose: progress from the first iteration" grep -q "iteration *1 " err.txt
run --generate 2000,6 --seed 7
check "no progress within the first second" test ! -s err.txt

# ---- Every utility on a generated instance --------------------------------------------------------
for utility in linear log power:0.5 target-priority; do
  name="${utility%%:*}"
  run --generate 2000,6 --seed 7 --utility "$utility" --write-instance "$name" \
    --output "$name.json" --allocation "$name.alloc.csv" --quiet
  check "$utility: exit status 0 (got $rc: $(head -c 300 err.txt))" exited 0
  check "$utility: --quiet prints nothing" nothing_printed
  check "$utility: result JSON" py result "$name.json" "$utility" "$name.resources.csv"
  check "$utility: allocation rows are feasible" \
    py allocation "$name.alloc.csv" "$name.jobs.csv" "$name.resources.csv"
done

# ---- Round trip: generated instance -> CSV -> solve gives the same result ------------------------
for name in log linear; do
  run --jobs "$name.jobs.csv" --resources "$name.resources.csv" --utility "$name" \
    --output "$name.files.json" --write-instance "$name.again" --quiet
  check "$name round trip: exit status 0" exited 0
  check "$name round trip: same objective" py same_objective "$name.json" "$name.files.json"
  check "$name round trip: the inputs named" python3 -c "
import json, sys; r = json.load(open('$name.files.json'))
assert r['inputs'] == {'jobs': '$name.jobs.csv', 'resources': '$name.resources.csv'}, r['inputs']
assert r['command_line'][1:3] == ['--jobs', '$name.jobs.csv'], r['command_line']"
  check "$name round trip: rewritten jobs file is identical" cmp -s "$name.jobs.csv" "$name.again.jobs.csv"
  check "$name round trip: rewritten resources file is identical" \
    cmp -s "$name.resources.csv" "$name.again.resources.csv"
done

# ---- Summary line, limits -------------------------------------------------------------------------
run --generate 2000,6 --seed 7
check "default utility: exit 0" exited 0
check "summary line on stdout" stdout_has "status "
run --generate 2000,6 --seed 7 --utility log --max-iterations 1 --output limit.json --quiet
check "iteration limit: exit 0" exited 0
check "iteration limit: status iteration_limit" result_status_is limit.json iteration_limit
run --generate 2000,6 --seed 7 --utility log --time-limit 1e-9 --output time.json --quiet
check "time limit: exit 0" exited 0
check "time limit: status time_limit" result_status_is time.json time_limit
run --generate 2000,6 --seed 7 --utility log --pop 1 --backend cpu --threads 1 --tolerance 1e-3 --quiet
check "--pop 1 --backend cpu --threads 1 --tolerance 1e-3 accepted" exited 0

# ---- POP --------------------------------------------------------------------------------------------
run --generate 20000,6 --seed 3 --utility log --write-instance pop --output pop_full.json --quiet
check "POP reference: full solve exit 0" exited 0
run --generate 20000,6 --seed 3 --utility log --pop 4 --output pop4.json --allocation pop4.csv --quiet
check "--pop 4: exit 0" exited 0
check "--pop 4: objective within 1% of the full solve, valid bound" \
  py pop_close pop4.json pop_full.json pop.resources.csv
check "--pop 4: allocation feasible" py allocation pop4.csv pop.jobs.csv pop.resources.csv
run --jobs pop.jobs.csv --resources pop.resources.csv --utility log --pop 4 --seed 3 \
  --output pop4_files.json --quiet
check "--pop 4 --seed with input files: accepted" exited 0

# ---- Warm start (linear: the utility whose cold solve converges reliably) -------------------------
run --jobs linear.jobs.csv --resources linear.resources.csv --utility linear \
  --warm-start linear.json --output warm.json --quiet
check "warm start from a RESULT.json: exit 0" exited 0
check "warm start: converged in no more iterations than cold" \
  py not_more_iterations warm.json linear.json
py prices_only linear.json prices.json >/dev/null
run --generate 2000,6 --seed 7 --utility linear --warm-start prices.json --output warm2.json --quiet
check "warm start from a bare prices object" py not_more_iterations warm2.json linear.json

# ---- Sample start (cold start of a large problem) ------------------------------------------------
run --generate 100000,16 --seed 2 --utility linear --output sample_on.json --quiet
run --generate 100000,16 --seed 2 --utility linear --no-sample-start --output sample_off.json --quiet
check "sample start: fewer full passes, same optimum" py sample_start sample_on.json sample_off.json

# ---- Outputs are replaced atomically --------------------------------------------------------------
echo SENTINEL >existing.json
run --generate 200,3 --output existing.json --quiet
check "an existing output file is replaced" result_readable existing.json
run --generate 200,3 --output no/such/dir/result.json --quiet
check "output in a missing directory: exit 2" exited 2
check "output in a missing directory: named in the message" stderr_has "no/such/dir/result.json"

# ---- Input errors: exit 2, FILE:LINE in the message, outputs untouched ----------------------------
# expect_error NAME LOCATION ARGS...: exit status 2, stderr contains LOCATION, out.json keeps its
# sentinel content, new.csv is not created and no temporary file is left behind.
expect_error() {
  local name="$1" location="$2"
  shift 2
  echo SENTINEL >out.json
  rm -f new.csv
  run "$@" --output out.json --allocation new.csv
  local problems=""
  [[ $rc -eq 2 ]] || problems+=" exit status $rc;"
  grep -qF -- "$location" err.txt || problems+=" message lacks '$location': $(head -c 300 err.txt);"
  [[ "$(cat out.json)" == SENTINEL ]] || problems+=" out.json was modified;"
  [[ ! -e new.csv ]] || problems+=" new.csv was created;"
  compgen -G "*.tmp.*" >/dev/null && problems+=" temporary file left;"
  if [[ -z "$problems" ]]; then pass; else fail "$name:$problems"; fi
}

printf 'name,capacity\ngpu,2\ncpu,3\n' >res.csv
# bad_jobs NAME LOCATION CONTENT [extra args]: a jobs file with CONTENT against res.csv
bad_jobs() {
  local name="$1" location="$2" content="$3"
  shift 3
  printf '%b' "$content" >bad.jobs.csv
  expect_error "$name" "$location" --jobs bad.jobs.csv --resources res.csv "$@"
}
bad_jobs "empty jobs file" "bad.jobs.csv:1:" ''
bad_jobs "blank jobs file" "bad.jobs.csv:1:" '\n\n'
bad_jobs "missing id column" "bad.jobs.csv:1:" 'weight,gpu\n1,2\n'
bad_jobs "unknown column (resource not in RESOURCES.csv)" "bad.jobs.csv:1:" 'id,gpu,tpu\na,1,2\n'
bad_jobs "duplicate column" "bad.jobs.csv:1:" 'id,gpu,gpu\na,1,2\n'
bad_jobs "non-numeric throughput" "bad.jobs.csv:3:" 'id,gpu,cpu\na,1,2\nb,x1,2\n'
bad_jobs "number with trailing text" "bad.jobs.csv:2:" 'id,gpu\na,1.5x\n'
bad_jobs "empty number field" "bad.jobs.csv:2:" 'id,gpu,cpu\na,,1\n'
bad_jobs "NaN throughput" "bad.jobs.csv:2:" 'id,gpu\na,nan\n'
bad_jobs "infinite throughput" "bad.jobs.csv:3:" 'id,gpu\na,1\nb,inf\n'
bad_jobs "overflowing throughput" "bad.jobs.csv:2:" 'id,gpu\na,1e999\n'
bad_jobs "negative throughput" "bad.jobs.csv:2:" 'id,gpu\na,-1\n'
bad_jobs "negative weight" "bad.jobs.csv:3:" 'id,weight,gpu\na,1,1\nb,-2,1\n' --utility linear
bad_jobs "zero weight with log" "bad.jobs.csv:2:" 'id,weight,gpu\na,0,1\n' --utility log
bad_jobs "negative target" "bad.jobs.csv:2:" 'id,target,gpu\na,-1,1\n' --utility target-priority
bad_jobs "duplicate id" "bad.jobs.csv:4:" 'id,gpu\na,1\nb,1\na,1\n'
bad_jobs "empty id" "bad.jobs.csv:2:" 'id,gpu\n,1\n'
bad_jobs "ragged row (too few fields)" "bad.jobs.csv:3:" 'id,gpu,cpu\na,1,2\nb,1\n'
bad_jobs "ragged row (too many fields)" "bad.jobs.csv:2:" 'id,gpu\na,1,2\n'
bad_jobs "no jobs" "bad.jobs.csv:1:" 'id,gpu,cpu\n'
bad_jobs "target missing for target-priority" "bad.jobs.csv:1:" 'id,gpu\na,1\n' \
  --utility target-priority
bad_jobs "job without usable resource under log" "bad.jobs.csv:3:" 'id,gpu\na,1\nb,0\n' --utility log
bad_jobs "unterminated quote" "bad.jobs.csv:2:" 'id,gpu\n"a,1\n'
bad_jobs "zero demand" "bad.jobs.csv:3:" 'id,demand,gpu\na,2,1\nb,0,1\n'
bad_jobs "negative demand" "bad.jobs.csv:2:" 'id,demand,gpu\na,-1,1\n'
bad_jobs "infinite demand" "bad.jobs.csv:2:" 'id,demand,gpu\na,inf,1\n'
bad_jobs "duplicate demand column" "bad.jobs.csv:1:" 'id,demand,demand,gpu\na,1,1,1\n'
bad_jobs "demand column of an unknown resource" "'tpu' is not a resource" 'id,demand:tpu,gpu\na,2,1\n'
bad_jobs "duplicate demand:<resource> column" "bad.jobs.csv:1:" 'id,demand:gpu,demand:gpu,gpu\na,1,1,1\n'
bad_jobs "zero demand:<resource>" "bad.jobs.csv:3:" 'id,demand:gpu,gpu\na,2,1\nb,0,1\n'
bad_jobs "NaN demand:<resource>" "bad.jobs.csv:2:" 'id,demand:cpu,gpu\na,nan,1\n'
expect_error "missing jobs file" "missing.jobs.csv" --jobs missing.jobs.csv --resources res.csv

# Per-resource demands, hand-solved. One job, a (throughput 4, demand:a 2, capacity 1) and b
# (throughput 1): x_a <= 1/2, so the linear optimum is 4 / 2 + 1 / 2 = 2.5 (4 without it).
printf 'name,capacity\na,1\nb,1\n' >demand.res.csv
printf 'id,demand:a,a,b\nj,2,4,1\n' >demand.jobs.csv
run --jobs demand.jobs.csv --resources demand.res.csv --utility linear --tolerance 1e-6 \
  --output demand.json --write-instance demand.again --quiet
check "demand:<resource>: exit 0 (got $rc: $(head -c 300 err.txt))" exited 0
check "demand:<resource>: the hand-solved optimum 2.5" py near demand.json objective 2.5 1e-5
check "demand:<resource>: --write-instance writes every resource's demand" \
  grep -qx "id,demand:a,demand:b,a,b" <(head -n 1 demand.again.jobs.csv)
run --jobs demand.again.jobs.csv --resources demand.again.resources.csv --utility linear \
  --tolerance 1e-6 --output demand.again.json --quiet
check "demand:<resource>: the rewritten files give the same objective" \
  py same_objective demand.json demand.again.json
# Beside demand:a, the job's `demand` (2) holds on b: x_b <= 1/2, optimum 0.5 (1 if b took 1).
printf 'id,demand,demand:a,a,b\nj,2,1,0,1\n' >demand.mixed.jobs.csv
run --jobs demand.mixed.jobs.csv --resources demand.res.csv --utility linear --tolerance 1e-6 \
  --output demand.mixed.json --quiet
check "demand and demand:<resource>: the others take demand (optimum 0.5)" \
  py near demand.mixed.json objective 0.5 1e-5

printf 'id,gpu,cpu\na,1,2\n' >good.jobs.csv
# bad_resources NAME LOCATION CONTENT: good.jobs.csv against a resources file with CONTENT
bad_resources() {
  printf '%b' "$3" >bad.res.csv
  expect_error "$1" "$2" --jobs good.jobs.csv --resources bad.res.csv
}
bad_resources "empty resources file" "bad.res.csv:1:" ''
bad_resources "resources without capacity column" "bad.res.csv:1:" 'name\ngpu\ncpu\n'
bad_resources "unknown resources column" "bad.res.csv:1:" 'name,capacity,price\ngpu,1,2\n'
bad_resources "no resources" "bad.res.csv:1:" 'name,capacity\n'
bad_resources "negative capacity" "bad.res.csv:3:" 'name,capacity\ngpu,2\ncpu,-3\n'
bad_resources "non-numeric capacity" "bad.res.csv:2:" 'name,capacity\ngpu,two\ncpu,3\n'
bad_resources "duplicate resource" "bad.res.csv:4:" 'name,capacity\ngpu,2\ncpu,3\ngpu,1\n'
bad_resources "ragged resources row" "bad.res.csv:2:" 'name,capacity\ngpu\ncpu,3\n'
bad_resources "resource named like a demand column" "reserved" 'name,capacity\ngpu,2\ndemand:x,3\n'
bad_resources "carriage return inside a resource name" "bad.res.csv:3: resource name" \
  'name,capacity\ngpu,2\ncpu\r,3\n'
# Resources without a jobs column are fine (throughput 0 for every job).
printf 'name,capacity\ngpu,2\ncpu,3\nfpga,4\n' >more.res.csv
run --jobs good.jobs.csv --resources more.res.csv --utility log --quiet
check "a resource without a jobs column is accepted" exited 0

# bad_prices NAME LOCATION CONTENT: warm start from a JSON file with CONTENT
bad_prices() {
  printf '%b' "$3" >bad.prices.json
  expect_error "$1" "$2" --jobs good.jobs.csv --resources res.csv --warm-start bad.prices.json
}
bad_prices "warm start: unknown resource" "bad.prices.json:4:" '{\n "gpu": 1,\n "cpu": 2,\n "tpu": 3\n}\n'
bad_prices "warm start: missing resource" "bad.prices.json:1:" '{"prices": {"gpu": 1}}\n'
bad_prices "warm start: malformed JSON" "bad.prices.json:3:" '{\n "gpu": 1,\n "cpu" 2\n}\n'
bad_prices "warm start: trailing comma" "bad.prices.json:3:" '{"gpu": 1,\n "cpu": 2,\n}\n'
bad_prices "warm start: null price" "bad.prices.json:2:" '{"status": "converged", "prices": {\n"gpu": null, "cpu": 1}}\n'
bad_prices "warm start: negative price" "bad.prices.json:1:" '{"gpu": -1, "cpu": 1}\n'
bad_prices "warm start: price beyond the value range" "bad.prices.json:2:" '{"gpu": 1,\n "cpu": 1e308}\n'
bad_prices "warm start: empty file" "bad.prices.json:1:" ''
bad_prices "warm start: not an object" "bad.prices.json:1:" '[1, 2]\n'

# Usage errors: exit 2 with a message, nothing written.
expect_error "unknown option" "--frobnicate" --generate 10,2 --frobnicate
expect_error "--pop 0 is refused" "--pop" --generate 10,2 --pop 0
expect_error "unknown utility" "unknown utility" --generate 10,2 --utility quadratic
expect_error "power utility out of range" "power:ALPHA" --generate 10,2 --utility power:1.5
expect_error "--generate 0,5" "--generate N" --generate 0,5
expect_error "--jobs without --resources" "--resources" --jobs good.jobs.csv
expect_error "non-numeric tolerance" "--tolerance" --generate 10,2 --tolerance small
expect_error "option given twice" "twice" --generate 10,2 --quiet --quiet
if grep -q thrust <("$BIN" --version); then
  run --generate 200,3 --backend thrust --quiet
  check "--backend thrust works in a Thrust build" exited 0
else
  expect_error "--backend thrust without Thrust" "-DPOPALLOC_ENABLE_THRUST=ON" --generate 10,2 --backend thrust
fi

# ---- Instance families (--family, docs/instance-families.md) ------------------------------------
run --help
check "--help lists the instance families" stdout_has "each job can use only 1-3 resources"
run --generate 2000,6 --seed 7 --family generations --write-instance generations --quiet
check "--family generations: exit 0" exited 0
check "--family generations is the default generator" cmp -s generations.jobs.csv linear.jobs.csv
run --generate 3000,4 --seed 2 --family classes:tight --utility target-priority \
  --write-instance classes --output classes.json --allocation classes.alloc.csv --quiet
check "--family classes:tight: exit 0 (got $rc: $(head -c 300 err.txt))" exited 0
check "--family classes:tight: result JSON" py result classes.json target-priority classes.resources.csv
check "--family classes:tight: allocation rows are feasible" \
  py allocation classes.alloc.csv classes.jobs.csv classes.resources.csv
run --generate 1000,3 --seed 3 --family gavel:far --utility linear --write-instance gavel \
  --output gavel.json --quiet
check "--family gavel:far: exit 0 (got $rc: $(head -c 300 err.txt))" exited 0
check "--family gavel: GPU types and a demand column" \
  grep -qx "id,weight,target,demand,k80,p100,v100" <(head -n 1 gavel.jobs.csv)
run --jobs gavel.jobs.csv --resources gavel.resources.csv --utility linear \
  --output gavel.files.json --write-instance gavel.again --quiet
check "--family gavel: files with demand give the same objective" \
  py same_objective gavel.json gavel.files.json
check "--family gavel: rewritten jobs file (demand column) is identical" \
  cmp -s gavel.jobs.csv gavel.again.jobs.csv
run --family paper:loose:reachable --utility target-priority --max-iterations 3 --threads 2 \
  --output paper.json --quiet
check "--family without --generate: default size (exit $rc: $(head -c 300 err.txt))" exited 0
check "--family without --generate: 1000000 jobs" \
  [ "$(python3 -c 'import json; print(int(json.load(open("paper.json"))["n_jobs"]))')" = 1000000 ]
expect_error "--family: unknown name" "unknown instance family 'nope'" --generate 10,2 --family nope
expect_error "--family: unknown name lists the families" "generations, uniform, classes, gavel" \
  --generate 10,2 --family nope
expect_error "--family: unknown variant" "unknown variant 'tigth'" --generate 10,2 --family classes:tigth
expect_error "--family gavel with M = 4" "'gavel' has exactly 3 resources" --generate 10,4 --family gavel
expect_error "--family with --jobs" "--family only applies to --generate" \
  --jobs gavel.jobs.csv --resources gavel.resources.csv --family gavel

# ---- The certificate's gap and its scale (--gap, RESULT.json, summary line) ---------------------
# Every target reachable: the optimum and the bound are exactly 0, and the objective measure's
# scale is its floor, 1e-6 x the weighted target sum.
run --generate 3000,4 --family uniform:reachable --utility target-priority --output reach.json
check "reachable targets: exit 0 (got $rc: $(head -c 300 err.txt))" exited 0
check "summary line shows the absolute gap and the named scale" \
  grep -qE 'dual bound 0  gap [0-9.e+-]+ = [0-9.e+-]+ x [0-9.e+-]+ \(1e-6 x idle range\)' out.txt
check "reachable targets: RESULT.json gap fields" python3 - reach.json <<'PYTHON'
import json, sys
r = json.load(open(sys.argv[1]))
ok = (r["status"] == "converged" and r["dual_bound"] == 0 and r["trivial_bound"] == 0
      and r["gap_measure"] == "objective" and r["gap_scale_name"] == "1e-6 x idle range"
      and abs(r["absolute_gap"] - (r["dual_bound"] - r["objective"])) <= 1e-12
      and abs(r["relative_gap"] * r["gap_scale"] - r["absolute_gap"]) <= 1e-12)
sys.exit(0 if ok else 1)
PYTHON
run --generate 3000,4 --family classes --utility target-priority --gap anchored --output anchored.json --quiet
check "--gap anchored: exit 0" exited 0
check "--gap anchored: measured against the idle range" python3 - anchored.json <<'PYTHON'
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r["gap_measure"] == "anchored" and r["gap_scale_name"] == "idle range"
         and r["dual_bound"] <= r["trivial_bound"] else 1)
PYTHON
run --generate 3000,4 --utility log --output log.json --quiet
check "log: automatic is anchored on the elasticity (the weight sum)" python3 - log.json <<'PYTHON'
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r["gap_measure"] == "anchored" and r["gap_scale_name"] in ("elasticity", "objective")
         else 1)
PYTHON
expect_error "--gap: unknown measure" "--gap: unknown measure 'relative'" --generate 10,2 --gap relative

# ---- Reading speed (informational): 200000 x 8 instance ------------------------------------------
run --generate 200000,8 --write-instance speed --max-iterations 1 --quiet
run --jobs speed.jobs.csv --resources speed.resources.csv --benchmark-read
check "read benchmark runs" exited 0
echo "cli: $(cat out.txt)"

# ---- Linear utility against an exact LP solved by COIN-OR CLP (when installed) --------------------
if command -v clp >/dev/null 2>&1; then
  run --generate 300,4 --seed 3 --utility linear --write-instance lp --output lp.json --quiet
  py write_mps lp.jobs.csv lp.resources.csv lp.mps >/dev/null
  clp lp.mps -maximize -dualsimplex >clp.txt 2>&1
  check "linear objective and dual bound bracket CLP's LP optimum" py matches_lp lp.json clp.txt
else
  echo "cli: clp not found, LP comparison skipped"
fi

# ---- Hostile and careless use: every program ------------------------------------------------------
# runp PROGRAM ARGS...: like run, for any program, stopped after 60 s (a regression must fail the
# case, not hang the suite).
runp() {
  local program="$1"
  shift
  timeout 60 "$program" "$@" >out.txt 2>err.txt
  rc=$?
}
# refused NAME PATTERN PROGRAM ARGS...: exit status 2 with PATTERN in the message.
refused() {
  local name="$1" pattern="$2"
  shift 2
  runp "$@"
  if [[ $rc -eq 2 ]] && grep -qF -- "$pattern" err.txt; then
    pass
  else
    fail "$name: exit $rc, $(head -c 300 err.txt)"
  fi
}
no_temporaries() { ! compgen -G "${1:-.}/*.tmp.*" >/dev/null; }
# Caps the address space of this (sub)shell so that a regression that reads /dev/zero into memory
# fails its case instead of the machine; AddressSanitizer builds reserve terabytes and are exempt.
limit_memory() { grep -qa AddressSanitizer "$BIN" || ulimit -v 8000000; }
json_file() { python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null; }
# The JSON document at the end of stdout (some programs print a summary line before it).
json_at_end_of_stdout() {
  python3 - <<'PYTHON'
import json
lines = open("out.txt").read().split("\n")
start = lines.index("{")
json.loads("\n".join(lines[start:]))
PYTHON
}

PROGRAMS=(solve)
if ((${#OTHERS[@]} == 4)); then
  SCHEDULE="${OTHERS[0]}" SIMULATE="${OTHERS[1]}" TE="${OTHERS[2]}" LB="${OTHERS[3]}"
  PROGRAMS+=(schedule simulate te lb)
else
  echo "cli: popalloc-schedule, -simulate, -te and -lb not given: their checks are skipped"
fi
# quick NAME OUTPUT [ARGS...]: a short run of program NAME writing its --output to OUTPUT.
quick() {
  local name="$1" output="$2"
  shift 2
  case "$name" in
    solve) runp "$BIN" --generate 50,3 --quiet --output "$output" "$@" ;;
    schedule) runp "$SCHEDULE" --jobs 8 --quiet --output "$output" "$@" ;;
    simulate) runp "$SIMULATE" --jobs 10 --arrival-rate 10 --quiet --output "$output" "$@" ;;
    te) runp "$TE" --quiet --output "$output" "$@" ;;
    lb) runp "$LB" --shards 32 --servers 4 --rounds 3 --skip 1 --quiet --output "$output" "$@" ;;
  esac
}

for name in "${PROGRAMS[@]}"; do
  dir="hostile_$name"
  mkdir -p "$dir"
  # Through a symbolic link: the target is written, the link stays.
  echo OLD >"$dir/keep.json"
  ln -sf keep.json "$dir/link.json"
  quick "$name" "$dir/link.json"
  check "$name: output through a symlink: exit 0 (got $rc: $(head -c 200 err.txt))" exited 0
  check "$name: output through a symlink: the link is kept" test -L "$dir/link.json"
  check "$name: output through a symlink: its target is written" json_file "$dir/keep.json"
  check "$name: output through a symlink: no temporary file" no_temporaries "$dir"
  # A character device is written, not replaced by a regular file (/dev/null itself when this
  # user cannot make a device node).
  device=/dev/null
  if mknod -m 666 "$dir/null" c 1 3 2>/dev/null; then device="$dir/null"; fi
  quick "$name" "$device"
  check "$name: --output $device: exit 0 (got $rc: $(head -c 200 err.txt))" exited 0
  check "$name: --output $device: still a character device" test -c "$device"
  # A read-only file is refused, before any work.
  echo PRECIOUS >"$dir/frozen.json"
  chmod 444 "$dir/frozen.json"
  quick "$name" "$dir/frozen.json"
  check "$name: read-only output: exit 2 (got $rc)" exited 2
  check "$name: read-only output: named in the message" stderr_has "read-only"
  check "$name: read-only output: unchanged" grep -qx PRECIOUS "$dir/frozen.json"
  # "-" is stdout.
  quick "$name" -
  check "$name: --output -: exit 0 (got $rc: $(head -c 200 err.txt))" exited 0
  check "$name: --output -: the JSON is on stdout" json_at_end_of_stdout
  check "$name: --output -: no file called '-'" test ! -e -
  # An empty name is a usage error, not "write nothing".
  quick "$name" ""
  check "$name: --output '': exit 2 (got $rc)" exited 2
  check "$name: --output '': says so" stderr_has "--output needs a file name"
  # One tolerance range for every program.
  quick "$name" "$dir/r.json" --tolerance 0.5
  check "$name: --tolerance 0.5: exit 2 (got $rc)" exited 2
  check "$name: --tolerance 0.5: gives the range" stderr_has "(0, 0.1)"
done

# A FIFO is written directly: the reader gets the whole result, the FIFO stays a FIFO.
mkfifo result.fifo
timeout 30 cat result.fifo >fifo.got &
reader=$!
run --generate 50,3 --quiet --output result.fifo
wait "$reader"
check "solve: --output FIFO: exit 0" exited 0
check "solve: --output FIFO: the reader got the JSON" json_file fifo.got
check "solve: --output FIFO: still a FIFO" test -p result.fifo

# ---- An output that is an input or another output: exit 2 before any work, input intact ---------
# same_file NAME PATTERN FILE PROGRAM ARGS...: refused, and FILE keeps its content.
same_file() {
  local name="$1" pattern="$2" file="$3"
  shift 3
  cp "$file" same.before
  refused "$name" "$pattern" "$@"
  check "$name: $file unchanged" cmp -s "$file" same.before
}
run --generate 40,3 --write-instance same --quiet
ln -f same.jobs.csv same.hard.csv
ln -sf same.jobs.csv same.soft.csv
same_file "solve: --output is --jobs" "is the same file as the input --jobs" same.jobs.csv \
  "$BIN" --jobs same.jobs.csv --resources same.resources.csv --output same.jobs.csv
same_file "solve: --output is a hard link to --jobs" "same file" same.jobs.csv \
  "$BIN" --jobs same.jobs.csv --resources same.resources.csv --output same.hard.csv
same_file "solve: --allocation is a symlink to --jobs" "same file" same.jobs.csv \
  "$BIN" --jobs same.jobs.csv --resources same.resources.csv --allocation same.soft.csv
same_file "solve: --write-instance P over --output P.jobs.csv" "same file" same.jobs.csv \
  "$BIN" --generate 40,3 --write-instance same --output same.jobs.csv
same_file "solve: --resources is --write-instance's file" "same file" same.resources.csv \
  "$BIN" --jobs same.jobs.csv --resources same.resources.csv --write-instance same
refused "solve: --output x --allocation ./x" "same file" "$BIN" --generate 40,3 --output x.json \
  --allocation ./x.json
check "solve: --output x --allocation ./x: nothing written" test ! -e x.json
printf '{"r0": 1, "r1": 1, "r2": 1}\n' >same.prices.json
same_file "solve: --output is --warm-start" "same file" same.prices.json \
  "$BIN" --generate 40,3 --warm-start same.prices.json --output same.prices.json
if ((${#OTHERS[@]} == 4)); then
  printf 'A\tc\td\t-n\t0\t100\t1\t1\t-1\t0\nB\tc\td\t-n\t0\t200\t1\t1\t-1\t10\n' >t.trace
  printf '{"v100": {"(%sA%s, 1)": {"null": 2}, "(%sB%s, 1)": {"null": 3}}}\n' "'" "'" "'" "'" \
    >t.json
  same_file "schedule: --output is --trace" "same file" t.trace \
    "$SCHEDULE" --throughputs t.json --cluster v100:4 --trace t.trace --output t.trace
  same_file "schedule: --output is --throughputs" "same file" t.json \
    "$SCHEDULE" --throughputs t.json --cluster v100:4 --trace t.trace --output t.json
  same_file "simulate: --output is --trace" "same file" t.trace \
    "$SIMULATE" --throughputs t.json --cluster v100:4 --trace t.trace --output t.trace
  refused "simulate: --per-job is --output" "same file" "$SIMULATE" --output sim.json \
    --per-job ./sim.json
  printf '{"directed": true, "nodes": [{"id": 0}, {"id": 1}, {"id": 2}],\n "links": [\n' >ring.json
  printf '{"source": 0, "target": 1, "capacity": 10},\n{"source": 1, "target": 2, "capacity": 10},\n' \
    >>ring.json
  printf '{"source": 2, "target": 0, "capacity": 10}]}\n' >>ring.json
  same_file "te: --output is --topology" "same file" ring.json \
    "$TE" --topology ring.json --output ring.json
  refused "te: --flows is --output" "same file" "$TE" --output te.out --flows te.out
  refused "te: --export-mps is --output" "same file" "$TE" --output te.out --export-mps ./te.out
  check "te: nothing written" test ! -e te.out
fi

# ---- A signal in popalloc-solve's write phase (the hook raises it between the temporary files
# and their renames, the window a signal hits in a large run) ---------------------------------------
echo OLD >sig.json
echo OLD >sig.csv
POPALLOC_SOLVE_TEST_SIGNAL=TERM run --generate 2000,4 --output sig.json --allocation sig.csv --quiet
check "SIGTERM in the write phase: killed by it (got $rc)" exited 143
check "SIGTERM in the write phase: RESULT.json untouched" grep -qx OLD sig.json
check "SIGTERM in the write phase: ALLOCATION.csv untouched" grep -qx OLD sig.csv
check "SIGTERM in the write phase: no temporary file" no_temporaries
POPALLOC_SOLVE_TEST_SIGNAL=INT run --generate 2000,4 --output sig.json --allocation sig.csv --quiet
check "Ctrl-C in the write phase: exit 130 (got $rc)" exited 130
check "Ctrl-C in the write phase: RESULT.json written" result_readable sig.json
check "Ctrl-C in the write phase: ALLOCATION.csv written" grep -q '^id,resource,fraction$' sig.csv
check "Ctrl-C in the write phase: no temporary file" no_temporaries

# ---- Values outside the supported range in the domain readers: exit 2 with the range ---------------
if ((${#OTHERS[@]} == 4)); then
  printf '{"v100": {"(%sA%s, 1)": {"null": 1e308}, "(%sB%s, 1)": {"null": 3}}}\n' "'" "'" "'" "'" \
    >huge.json
  refused "schedule: throughput 1e308" "1e60" "$SCHEDULE" --throughputs huge.json \
    --cluster v100:4 --trace t.trace
  check "schedule: throughput 1e308: FILE:LINE" stderr_has "huge.json:1:"
  printf 'A\tc\td\t-n\t0\t100\t1\t1e308\t-1\t0\n' >weight.trace
  refused "schedule: priority weight 1e308" "weight.trace:1: priority_weight" "$SCHEDULE" \
    --throughputs t.json --cluster v100:4 --trace weight.trace
  printf 'A\tc\td\t-n\t0\t100\t1\t1\t-1\t1e308\n' >arrival.trace
  refused "simulate: arrival time 1e308" "arrival.trace:1: arrival_time" "$SIMULATE" \
    --throughputs t.json --cluster v100:4 --trace arrival.trace
  printf 'A\tc\td\t-n\t0\t1e308\t1\t1\t-1\t0\n' >steps.trace
  refused "simulate: 1e308 steps" "steps.trace:1: total_steps" "$SIMULATE" \
    --throughputs t.json --cluster v100:4 --trace steps.trace
  sed '4 s/"capacity": 10/"capacity": 1e308/' ring.json >huge_ring.json
  refused "te: capacity 1e308" "huge_ring.json:4:" "$TE" --topology huge_ring.json
  printf 'A\tc\td\t-n\t0\t100\t1\t1\t0\t0\n' >slo0.trace
  refused "trace: SLO 0 is not 'none'" "slo0.trace:1: SLO" "$SCHEDULE" --throughputs t.json \
    --cluster v100:4 --trace slo0.trace
  printf '\xEF\xBB\xBF' | cat - t.trace >bom.trace
  runp "$SCHEDULE" --throughputs t.json --cluster v100:4 --trace bom.trace --quiet
  check "trace with a UTF-8 byte-order mark: accepted (got $rc: $(head -c 200 err.txt))" exited 0
fi

# ---- POP: an honest status, and parts that cannot all have work ------------------------------------
run --generate 10,4 --pop 10 --output pop10.json --quiet
check "--pop 10 on 10 jobs: exit 0" exited 0
check "--pop 10 on 10 jobs: parts_converged, not converged" result_status_is pop10.json parts_converged
refused "--pop 11 on 10 jobs" "more parts than the 10 jobs" "$BIN" --generate 10,4 --pop 11
refused "--pop 41 on a 40-job file" "more parts than the 40 jobs" "$BIN" --jobs same.jobs.csv \
  --resources same.resources.csv --pop 41
if ((${#OTHERS[@]} == 4)); then
  refused "schedule: --pop above the GPUs" "GPUs" "$SCHEDULE" --jobs 64 --pop 25
  refused "schedule: --pop above the jobs" "more parts than the 8 jobs" "$SCHEDULE" --jobs 8 --pop 9
  refused "simulate: --pop above the GPUs" "GPUs" "$SIMULATE" --jobs 60 --pop 37
fi

# ---- Runaway runs: refused up front ----------------------------------------------------------------
refused "solve: --pop 1e9" "more parts" "$BIN" --generate 10,4 --pop 1000000000
(
  limit_memory
  refused "solve: --jobs /dev/zero" "NUL byte" "$BIN" --jobs /dev/zero --resources res.csv
  echo "$passed $failed" >zero.counts
)
read -r passed failed <zero.counts
if ((${#OTHERS[@]} == 4)); then
  refused "schedule: --jobs 1e12" "--jobs must be <=" "$SCHEDULE" --jobs 1000000000000
  refused "te: --pop 1e9" "more parts than the" "$TE" --pop 1000000000
  refused "te: --split-fraction 1e9" "--split-fraction must be in [0, 1]" "$TE" --pop 2 \
    --split-fraction 1e9
  refused "lb: 8 shards on 4000 servers" "--servers (4000) must be no more than --shards (8)" "$LB" \
    --shards 8 --servers 4000
  refused "lb: 1e6 servers" "--servers must be <= 100000" "$LB" --shards 8 --servers 1000000
  refused "lb: a core LP with 20000 columns" "more than 16384" "$LB" --shards 20000 --servers 20000 \
    --relaxation core
  refused "simulate: --round-seconds 1e-9" "--round-seconds must be in" "$SIMULATE" \
    --round-seconds 1e-9
  printf 'A\tc\td\t-n\t0\t1e50\t1\t1\t-1\t0\n' >long.trace
  refused "simulate: a job of 1e50 steps" "rounds" "$SIMULATE" --throughputs t.json \
    --cluster v100:4 --trace long.trace
  runp "$SIMULATE" --throughputs t.json --cluster v100:4 --trace long.trace --max-hours 2 \
    --output long.json --quiet
  check "simulate: a job of 1e50 steps with --max-hours: exit 0 (got $rc)" exited 0
  check "simulate: a job of 1e50 steps with --max-hours: reported unfinished" python3 -c '
import json, sys; sys.exit(0 if json.load(open("long.json"))["jobs_unfinished"] == 1 else 1)'
  ln -sf /dev/zero zero.json
  (
    limit_memory
    refused "schedule: --trace /dev/zero" "NUL byte" "$SCHEDULE" --trace /dev/zero
    refused "schedule: --throughputs /dev/zero" "NUL byte" "$SCHEDULE" --throughputs /dev/zero
    refused "te: --topology /dev/zero" "NUL byte" "$TE" --topology zero.json
    echo "$passed $failed" >zero.counts
  )
  read -r passed failed <zero.counts

  # ---- Smaller items --------------------------------------------------------------------------------
  runp "$LB" --shards 32 --servers 4 --rounds 3 --skip 1 --output no/such/dir/lb.json
  check "lb: unwritable --output: exit 2 (got $rc)" exited 2
  check "lb: unwritable --output: refused before the first round" test ! -s out.txt
  python3 -c '
import json; d = json.load(open("ring.json"))
for link in d["links"]: link["capacity"] = 0
json.dump(d, open("zero_ring.json", "w"))'
  refused "te: every capacity 0" "every link has capacity 0" "$TE" --topology zero_ring.json
  refused "te: --scale 1e59" "--scale" "$TE" --scale 1e59
  check "te: --scale 1e59: no internal job index in the message" test -z "$(grep -F 'job 0' err.txt)"
  printf '{"v100": {"(%sA%s, 1)": {"null": 0}, "(%sB%s, 1)": {"null": 0}}}\n' "'" "'" "'" "'" \
    >zeros.json
  refused "schedule: all-zero throughputs" "no job can run" "$SCHEDULE" --throughputs zeros.json \
    --cluster v100:4 --trace t.trace
  runp "$SCHEDULE" --policy fifo --jobs 8 --quiet
  check "schedule: fifo summary has no 'nan' (got $(head -c 200 out.txt))" test -z "$(grep -i nan out.txt)"
  refused "schedule: a flag given twice" "given twice" "$SCHEDULE" --quiet --quiet
  refused "schedule: generator options with --trace" "is for generated jobs" "$SCHEDULE" \
    --throughputs t.json --cluster v100:4 --trace t.trace --seed 3
  runp "$SCHEDULE" --jobs 8 --pop-seed 3 --quiet
  check "schedule: --pop-seed without --pop warns" stderr_has "warning: --pop-seed"
  runp "$TE" --split-fraction 0.5 --quiet
  check "te: --split-fraction without --pop warns" stderr_has "warning: --split-fraction"
  runp "$LB" --shards 32 --servers 4 --rounds 2 --skip 1 --solver greedy --mip-gap 0.1 --quiet
  check "lb: --mip-gap with greedy warns" stderr_has "warning: --mip-gap"
  runp "$SIMULATE" --jobs 10 --policy fifo --water-filling --quiet
  check "simulate: --water-filling with fifo warns" stderr_has "warning: --water-filling"
fi
printf '{"a\\u0000b": 1, "gpu": 1, "cpu": 1}\n' >nul.prices.json
run --jobs good.jobs.csv --resources res.csv --warm-start nul.prices.json --quiet
check "a NUL byte in a name is escaped in the message" stderr_has "unknown resource 'a\x00b'"

if [[ $failed -eq 0 ]]; then
  cd / && rm -rf "$WORK"
else
  echo "cli: files kept in $WORK"
fi
summary cli
