#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End-to-end tests of popalloc-te:
#   bash tests/te/run_te_cli_tests.sh /path/to/popalloc-te SCRATCH_DIR DATA_DIR SCHEMA_DIR
# Runs every case even after a failure and ends with "cli-te: N passed, M failed"; exit status 1
# if any case failed, 77 (CTest SKIP_RETURN_CODE) without python3, 2 on bad usage.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"

if [[ $# -ne 4 ]]; then
  echo "usage: $0 POPALLOC_TE_BINARY SCRATCH_DIR DATA_DIR SCHEMA_DIR" >&2
  exit 2
fi
BIN="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
DATA="$(cd "$3" && pwd)"
SCHEMAS="$(cd "$4" && pwd)"
if [[ ! -x "$BIN" ]]; then
  echo "cli-te: $1 is not an executable" >&2
  exit 2
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "cli-te: python3 not found, skipping"
  exit 77
fi
mkdir -p "$2"
WORK="$(mktemp -d "$2/cli.XXXXXX")"
cd "$WORK" || exit 2

# field FILE NAME: prints a field of a JSON file.
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }
# close A B TOL: |A - B| <= TOL * |B|
close() { python3 -c 'import sys; a,b,t=map(float,sys.argv[1:]); sys.exit(0 if abs(a-b)<=t*abs(b) else 1)' "$1" "$2" "$3"; }

# 1. No arguments: the embedded B4 instance.
run
check "no arguments exits 0" exited 0
check "no arguments prints a summary" grep -qF "b4-teavar: 12 nodes, 38 arcs, 132 commodities" out.txt

# 2. te.json holds the contract fields.
run --topology "$DATA/Uninett2010.graphml" --traffic gravity --scale 8 --seed 1 --paths 4 \
    --objective total-flow --solver price --output te.json --quiet
check "price run exits 0" exited 0
check "te.json has the contract fields" python3 - te.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for k in ["objective", "total_flow", "seconds", "commodities", "paths", "max_link_utilization"]:
    assert k in r, k
assert r["commodities"] == 74 * 73, r["commodities"]
assert r["paths"] >= r["commodities"]
assert r["max_link_utilization"] <= 1 + 1e-9
assert abs(r["objective"] - r["total_flow"]) <= 1e-9 * r["total_flow"]
assert r["status"] == "converged"
PY

# Progress on stderr past the first second: the price solver's bisection steps, reported after
# each core solve (the first takes about half a second here, several on a loaded machine). The
# run ends at its time limit on any machine (this traffic model needs far longer to 1e-7).
LONG_RUN=(--topology "$DATA/Uninett2010.graphml" --scale 60 --traffic poisson-high-intra
          --objective mlu --tolerance 1e-7)
run "${LONG_RUN[@]}" --time-limit 6
check "long run exits 0" exited 0
check "long run: progress reports the bisection" grep -qE "solving min-max-utilization with price solve [0-9]+, iteration [0-9]+: objective .*, bound .*, gap .*  elapsed" err.txt
run "${LONG_RUN[@]}" --time-limit 1.5 --quiet
check "long run --quiet: no progress" test ! -s err.txt
# --time-limit bounds the whole solve also when POP's parts run one after the other.
run "${LONG_RUN[@]}" --pop 4 --threads 1 --time-limit 1.5 --output pop_limited.json --quiet
check "POP under a time limit exits 0" exited 0
check "POP's parts share the time limit" python3 -c \
  'import json,sys; assert json.load(open(sys.argv[1]))["seconds"] <= 1.5 * 1.5 + 1' pop_limited.json

# 3. LP and MPS export (when built with CLP), POP.
for obj in total-flow mcf mlu; do
  run --topology "$DATA/b4-teavar.json" --scale 64 --objective "$obj" --output price.json --quiet
  check "price $obj exits 0" exited 0
  run --topology "$DATA/b4-teavar.json" --scale 64 --objective "$obj" --pop 4 --output pop.json \
      --quiet
  check "pop $obj exits 0" exited 0
  run --topology "$DATA/b4-teavar.json" --scale 64 --objective "$obj" --solver lp \
      --output lp.json --export-mps "lp_$obj.mps" --quiet
  if exited 2 && stderr_has "built without it"; then
    echo "note: popalloc-te built without CLP; LP comparisons skipped"
    continue
  fi
  check "lp $obj exits 0" exited 0
  check "price $obj within 1e-3 of lp" close "$(field price.json objective)" "$(field lp.json objective)" 1e-3
  check "MPS file for $obj written" test -s "lp_$obj.mps"
  if command -v clp >/dev/null 2>&1; then
    clp "lp_$obj.mps" -dualsimplex >clp.txt 2>&1
    value="$(sed -n 's/^Optimal objective *\([-+0-9.eE]*\).*/\1/p' clp.txt | head -n1)"
    if [[ "$obj" != mlu ]]; then value="$(python3 -c "print(-($value))")"; fi
    check "clp program on the MPS file gives the $obj optimum" close "$value" "$(field lp.json objective)" 1e-7
  fi
done

# 4. A traffic matrix from a file, and a re-plan of a drifted one from the last run's plan.
UNINETT=(--topology "$DATA/Uninett2010.graphml" --objective mlu --quiet)
run "${UNINETT[@]}" --scale 8 --output generated.json --flows generated.csv --plan generated.plan.json
check "generated run with --flows and --plan exits 0" exited 0
python3 - generated.csv <<'PY'
import csv, random, sys
pairs = {(r["source"], r["target"]): float(r["demand"]) for r in csv.DictReader(open(sys.argv[1]))}
random.seed(5)
with open("same.csv", "w") as same, open("drifted.csv", "w") as drifted:
    same.write("source,target,demand\n")
    drifted.write("target,source,demand\n")  # any column order
    for (s, t), d in pairs.items():
        same.write(f"{s},{t},{d!r}\n")
        drifted.write(f"{t},{s},{d * random.uniform(0.95, 1.05)!r}\n")
PY
run "${UNINETT[@]}" --demands same.csv --output same.json
check "--demands exits 0" exited 0
check "--demands with the generated matrix: the same optimum" close "$(field same.json objective)" "$(field generated.json objective)" 1e-5
check "--demands is recorded as the traffic input" python3 -c '
import json; r = json.load(open("same.json"))
assert r["inputs"]["traffic"] == "same.csv" and r["traffic"] == "demands-file", r["inputs"]'
run "${UNINETT[@]}" --demands drifted.csv --output cold.json
check "drifted matrix, cold: exits 0" exited 0
run "${UNINETT[@]}" --demands drifted.csv --previous generated.plan.json --output replan.json \
    --plan replan.plan.json
check "drifted matrix, --previous: exits 0" exited 0
check "re-plan: converged to the cold optimum in fewer core solves" python3 -c '
import json; c = json.load(open("cold.json")); r = json.load(open("replan.json"))
assert r["status"] == "converged", r["status"]
assert abs(r["objective"] - c["objective"]) <= 2e-5 * c["objective"], (r["objective"], c["objective"])
assert r["solves"] < c["solves"], (r["solves"], c["solves"])
assert r["inputs"]["previous"] == "generated.plan.json"'
check "re-plan wrote its own plan" grep -qF '"format": "popalloc-te-plan"' replan.plan.json
if python3 -c 'import jsonschema' 2>/dev/null; then
  check "plan valid against its schema" python3 -c '
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
for plan in sys.argv[2:]:
    jsonschema.validate(json.load(open(plan)), schema, cls=jsonschema.Draft202012Validator)' \
    "$SCHEMAS/popalloc-te-plan.schema.json" generated.plan.json replan.plan.json
fi
printf 'source,target,demand\n0,1,5\nnowhere,1,3\n' >unknown.csv
run "${UNINETT[@]}" --demands unknown.csv --output unknown.json
check "--demands with an unknown node: exit 2, its line" stderr_has "unknown.csv:3: node 'nowhere' is not in topology 'Uninett2010'"
check "nothing written on a refused --demands" test ! -e unknown.json
run "${UNINETT[@]}" --demands drifted.csv --previous generated.plan.json --paths 3
check "--previous with other --paths: exit 2" exited 2
check "--previous with other --paths: says why" stderr_has "a re-plan needs the same --paths and --path-method"
run --objective mlu --previous generated.plan.json
check "--previous of another topology: says why" stderr_has "a re-plan needs the same topology"
run "${UNINETT[@]}" --demands drifted.csv --previous generated.json
check "--previous given a te.json: says what it needs" stderr_has "not a popalloc-te plan"
run "${UNINETT[@]}" --demands drifted.csv --traffic gravity
check "--demands with --traffic: exit 2" exited 2

# 5. Bad input: exit 2, a clear message, nothing written.
printf '<graphml>\n  <graph>\n    <node id="0">\n  </graph>\n</graphml>\n' >bad.graphml
run --topology bad.graphml --output bad.json
check "malformed graphml exits 2" exited 2
check "malformed graphml names the line" stderr_has "bad.graphml:4: end tag </graph> does not match <node>"
check "nothing written on error" test ! -e bad.json
run --topology missing.graphml
check "missing file exits 2" exited 2
run --scale -1
check "negative scale exits 2" exited 2
run --objective fastest
check "unknown objective exits 2" exited 2
check "unknown objective is explained" stderr_has "unknown objective 'fastest'"
run --solver simplex
check "unknown solver exits 2" exited 2
run --bogus
check "unknown option exits 2" exited 2
run --scale nan
check "nan scale exits 2" exited 2

summary cli-te
