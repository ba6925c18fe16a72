#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The contract every program keeps (docs/output-format.md): -h, --help and --version exit 0,
# an unknown option exits 2 with one line naming it, the common options are accepted, --quiet
# prints nothing, and the default run's --output JSON is valid against its schema and records
# the version, the command line and the inputs.
#   run_contract_tests.sh VERSION SCHEMA_DIR SCRATCH_DIR SOLVE SCHEDULE SIMULATE TE LB
# Exit 77 (CTest SKIP_RETURN_CODE) without python3 and its jsonschema module
# (scripts/install-deps.sh installs Debian's python3-jsonschema).
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
if [[ $# -ne 8 ]]; then
  echo "usage: $0 VERSION SCHEMA_DIR SCRATCH_DIR SOLVE SCHEDULE SIMULATE TE LB" >&2
  exit 2
fi
version="$1" schemas="$2" scratch="$3"
shift 3
programs=(popalloc-solve popalloc-schedule popalloc-simulate popalloc-te popalloc-lb)
binaries=("$@")
if ! python3 -c 'import jsonschema' 2>/dev/null; then
  echo "contract: python3 with jsonschema not found (scripts/install-deps.sh), skipping"
  exit 77
fi
rm -rf "$scratch"
mkdir -p "$scratch"
cd "$scratch" || exit 2

stderr_is_one_line_with() { [[ $(wc -l <err.txt) -eq 1 ]] && grep -qF -- "$1" err.txt; }

cat >validate.py <<'PYTHON'
import json, sys
import jsonschema

schema_path, result_path, program, version = sys.argv[1:5]
argv = sys.argv[5:]
schema = json.load(open(schema_path))
jsonschema.Draft202012Validator.check_schema(schema)
r = json.load(open(result_path))
jsonschema.validate(r, schema, cls=jsonschema.Draft202012Validator)
assert r["schema_version"] == 1
assert r["program"] == program, r["program"]
assert r["popalloc_version"] == version, (r["popalloc_version"], version)
assert r["command_line"] == argv, (r["command_line"], argv)
assert r["inputs"], r["inputs"]
# Real values of each default run, not only their types.
if program == "popalloc-solve":
    assert r["status"] == "converged" and r["n_jobs"] == 1000000 and r["n_resources"] == 8
    assert r["objective"] <= r["dual_bound"] <= r["trivial_bound"]
    assert 0 <= r["relative_gap"] <= 1e-4, r["relative_gap"]
    assert r["inputs"] == {"instance": "<generated 1000000 x 8, family generations, seed 1>"}
elif program == "popalloc-schedule":
    assert r["policy"] == "max-min-fairness" and r["water_filling"] and r["tolerance"] == 1e-6
    assert len(r["jobs"]) == 64 and r["pop_parts"] == 1
    assert r["objective"] <= r["dual_bound"] <= r["objective"] * (1 + 1e-6)
    assert r["relative_gap"] <= 1e-6
    m = min(j["normalized_throughput"] for j in r["jobs"])
    assert abs(m - r["objective"]) <= 1e-9 * m, (m, r["objective"])
    assert r["inputs"]["throughputs"] == "<built-in Gavel throughputs>"
elif program == "popalloc-simulate":
    assert r["status"] == "finished" and r["jobs_total"] == r["jobs_finished"] == 120
    assert not r["water_filling"] and r["tolerance"] == 1e-4 and r["pop_parts"] == 1
    assert 0 < r["avg_jct_hours"] <= r["makespan_hours"]
elif program == "popalloc-te":
    assert r["status"] == "converged" and r["objective_name"] == "total-flow"
    assert r["objective"] <= r["dual_bound"] * (1 + 1e-12) and r["relative_gap"] <= 1e-5
    assert r["inputs"]["topology"] == "<embedded b4-teavar.json>" and r["nodes"] == 12
elif program == "popalloc-lb":
    assert r["status"] == "balanced" and r["pop_parts"] == 1 and r["solver"] == "price"
    assert len(r["rounds"]) == 30 and r["counted_rounds"] == 20 and r["balanced_rounds"] == 20
    assert abs(r["seconds"] - sum(x["seconds"] for x in r["rounds"])) <= 1e-9 * max(1, r["seconds"])
PYTHON

for k in "${!programs[@]}"; do
  program="${programs[$k]}"
  BIN="${binaries[$k]}"
  for help in -h --help; do
    run "$help"
    check "$program $help: exit 0" exited 0
    check "$program $help: usage on stdout" stdout_has "Usage:"
    check "$program $help: lists the common options" stdout_has "--version"
  done
  run --version
  check "$program --version: exit 0" exited 0
  check "$program --version: names the popalloc version" stdout_has "$program $version"
  check "$program --version: backends" stdout_has "backends: cpu"
  check "$program --version: LP/MILP libraries" stdout_has "LP/MILP libraries found by the build:"
  run --no-such-flag
  check "$program unknown option: exit 2" exited 2
  check "$program unknown option: one line naming it" stderr_is_one_line_with "'--no-such-flag'"
  run -x
  check "$program -x: exit 2" exited 2
  run --quiet --verbose
  check "$program --quiet --verbose: exit 2" exited 2
  check "$program --quiet --verbose: says why" stderr_is_one_line_with "cannot be combined"

  # The default run, its JSON against the schema; --quiet prints nothing at all. popalloc-lb
  # runs its quick demo only without any argument: its sizes are given here.
  args=(--output "$program.json" --quiet)
  [[ $program == popalloc-lb ]] && args=(--shards 256 --servers 32 --rounds 30 --skip 10 "${args[@]}")
  run "${args[@]}"
  check "$program default run: exit 0" exited 0
  check "$program --quiet: nothing printed" nothing_printed
  check "$program default run: JSON valid against its schema" \
    python3 validate.py "$schemas/$program.schema.json" "$program.json" "$program" "$version" \
    "$BIN" "${args[@]}"

  # The common options, each with its one meaning, on a small run.
  small=()
  [[ $program == popalloc-solve ]] && small=(--generate 2000,4)
  [[ $program == popalloc-lb ]] && small=(--shards 64 --servers 8 --rounds 3 --skip 1)
  run "${small[@]}" --threads 1 --seed 3 --time-limit 100 --output common.json --quiet
  check "$program --threads --seed --time-limit: exit 0" exited 0
  check "$program --threads --seed --time-limit: output written" test -s common.json
  rm -f common.json
done

# --verbose: the per-item tables that the normal run leaves out.
BIN="${binaries[1]}"
run --jobs 6
check "popalloc-schedule: no per-job table by default" test "$(grep -c 'Recommendation\|ResNet\|LM\|Transformer\|CycleGAN\|A3C' out.txt)" -eq 0
run --jobs 6 --verbose
check "popalloc-schedule --verbose: per-job table" stdout_has "ET (steps/s)"
BIN="${binaries[4]}"
run --rounds 4 --skip 1 --shards 64 --servers 8
check "popalloc-lb: no per-round lines by default" test "$(grep -c ' balanced$' out.txt)" -eq 0
run --rounds 4 --skip 1 --shards 64 --servers 8 --verbose
check "popalloc-lb --verbose: a line per round" test "$(grep -c ' balanced$' out.txt)" -eq 4

summary contract
