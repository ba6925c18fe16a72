#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End-to-end tests of popalloc-lb:
#   bash tests/lb/run_lb_cli_tests.sh /path/to/popalloc-lb SCRATCH_DIR
# Runs every case even after a failure, ends with "cli-lb: N passed, M failed"; exit status 1 if
# any case failed, 77 (CTest SKIP_RETURN_CODE) without python3, 2 on bad usage.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"

if [[ $# -ne 2 ]]; then
  echo "usage: $0 POPALLOC_LB_BINARY SCRATCH_DIR" >&2
  exit 2
fi
BIN="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
if [[ ! -x "$BIN" ]]; then
  echo "cli-lb: $1 is not an executable" >&2
  exit 2
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "cli-lb: python3 not found, skipping"
  exit 77
fi
mkdir -p "$2"
WORK="$(mktemp -d "$2/cli-lb.XXXXXX")"
SCHEMA="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../schemas" && pwd)/popalloc-lb.schema.json"
cd "$WORK" || exit 2


cat >helper.py <<'PYTHON'
import json, sys

def validate(path, solver, k, rounds, skip, workload="zipf"):
    d = json.load(open(path))
    assert d["solver"] == solver, d["solver"]
    assert d["workload"] == workload, d["workload"]
    assert d["pop_parts"] == k, d["pop_parts"]
    rs = d["rounds"]
    assert len(rs) == rounds, len(rs)
    for i, r in enumerate(rs):
        assert r["round"] == i
        for key in ("shards_moved", "max_load_deviation", "seconds"):
            assert key in r, key
        assert isinstance(r["shards_moved"], int) and r["shards_moved"] >= 0
        assert r["max_load_deviation"] >= 0 and r["seconds"] >= 0
        if workload == "zipf":
            assert 0.25 <= r["exponent"] < 0.75
        else:
            assert r["exponent"] is None, r["exponent"]
        assert isinstance(r["solver_status"], str) and r["solver_status"]
        assert isinstance(r["placement_from"], str) and isinstance(r["message"], str)
        if solver != "milp":
            assert (r["solver_status"], r["placement_from"]) == ("completed", solver)
    counted = [r for r in rs if r["round"] >= skip]
    avg_moved = sum(r["shards_moved"] for r in counted) / len(counted)
    avg_seconds = sum(r["seconds"] for r in counted) / len(counted)
    worst = max(r["max_load_deviation"] for r in counted)
    assert abs(d["avg_shards_moved"] - avg_moved) <= 1e-9 * max(1, avg_moved), (d["avg_shards_moved"], avg_moved)
    assert abs(d["avg_seconds"] - avg_seconds) <= 1e-9 * max(1, avg_seconds)
    assert d["worst_load_deviation"] == worst
    assert d["status"] == ("balanced" if all(r["status"] == "balanced" for r in rs) else "unbalanced")
    assert abs(d["seconds"] - sum(r["seconds"] for r in rs)) <= 1e-9 * max(1, d["seconds"])
    return d

def main():
    cmd = sys.argv[1]
    if cmd == "validate":
        validate(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))
    elif cmd == "drift":
        # --drift SIGMA: the drift workload's keys, the run's contract, valid against the schema.
        d = validate(sys.argv[2], "price", 1, int(sys.argv[5]), int(sys.argv[6]), "drift")
        assert d["drift"] == float(sys.argv[3]), d["drift"]
        assert d["inputs"]["workload"].startswith("<generated drifting loads"), d["inputs"]
        try:
            import jsonschema
        except ImportError:
            return
        jsonschema.validate(d, json.load(open(sys.argv[4])))
    elif cmd == "zipf_keys":
        d = json.load(open(sys.argv[2]))
        assert d["workload"] == "zipf" and d["drift"] is None, (d["workload"], d["drift"])
    elif cmd == "balanced":
        # Every counted round balanced: deviation within epsilon (+ rounding).
        d = json.load(open(sys.argv[2]))
        eps = float(sys.argv[3])
        assert all(r["status"] == "balanced" for r in d["rounds"]), [r["status"] for r in d["rounds"]]
        assert d["worst_load_deviation"] <= eps * (1 + 1e-6)
    elif cmd == "unbalanced_somewhere":
        d = json.load(open(sys.argv[2]))
        assert any(r["status"] == "unbalanced" for r in d["rounds"])
        assert d["worst_load_deviation"] > 0.05
    elif cmd == "milp_status":
        # Every round: this CBC outcome and this source of the placement.
        d = json.load(open(sys.argv[2]))
        got = [(r["solver_status"], r["placement_from"]) for r in d["rounds"]]
        assert all(g == (sys.argv[3], sys.argv[4]) for g in got), got
        assert d["solver_status_rounds"] == {sys.argv[3]: len(d["rounds"])}, d["solver_status_rounds"]
        if sys.argv[3] != "optimal":
            assert all(r["message"] for r in d["rounds"])
    elif cmd == "stayed":
        d = json.load(open(sys.argv[2]))
        assert all(r["shards_moved"] == 0 for r in d["rounds"])
        assert all(r["status"] == "unbalanced" and "keeping the previous placement" in r["message"]
                   for r in d["rounds"]), [r["message"] for r in d["rounds"]]
    elif cmd == "validate_placement":
        d = json.load(open(sys.argv[2]))
        assert d["seed"] is None and d["skip"] == 0 and d["counted_rounds"] == 1
        assert d["workload"] is None and d["drift"] is None, (d["workload"], d["drift"])
        assert d["inputs"] == {"placement": "mine.csv"}, d["inputs"]
        assert (d["shards"], d["servers"]) == (41, 8)
        (r,) = d["rounds"]
        assert r["exponent"] is None and r["status"] == "balanced" and d["status"] == "balanced"
        assert d["avg_shards_moved"] == r["shards_moved"]
        try:
            import jsonschema
        except ImportError:
            return
        jsonschema.validate(d, json.load(open(sys.argv[3])))
    elif cmd == "relaxation":
        assert json.load(open(sys.argv[2]))["relaxation"] == sys.argv[3]
    elif cmd == "first_rounds_equal":
        a = json.load(open(sys.argv[2]))["rounds"]
        b = json.load(open(sys.argv[3]))["rounds"]
        assert [r["exponent"] for r in a] == [r["exponent"] for r in b]
    else:
        raise SystemExit("unknown helper command " + cmd)

main()
PYTHON
json_ok() { python3 helper.py "$@" 2>>py_err.txt; }

# ---- Runs that must work ----------------------------------------------------------------------
run
check "no arguments: demo exits 0" exited 0
check "no arguments: prints averages" stdout_has "average over rounds 10..29"

run --help
check "--help exits 0" exited 0
check "--help documents the output contract" stdout_has "avg_shards_moved"

run --shards 96 --servers 12 --rounds 8 --skip 3 --seed 42 --solver price --output price.json --quiet
check "price run exits 0" exited 0
check "price JSON contract" json_ok validate price.json price 1 8 3
check "price balances every round" json_ok balanced price.json 0.05

run --shards 96 --servers 12 --rounds 8 --skip 3 --seed 42 --solver price --pop 4 --output pop.json --quiet
check "price POP 4 exits 0" exited 0
check "price POP JSON contract" json_ok validate pop.json price 4 8 3
check "price POP balances every round" json_ok balanced pop.json 0.05

run --shards 96 --servers 12 --rounds 8 --skip 3 --seed 42 --solver greedy --output greedy.json --quiet
check "greedy run exits 0 even when unbalanced" exited 0
check "greedy JSON contract" json_ok validate greedy.json greedy 1 8 3
check "greedy cannot split shard 0 (heavier than the band)" json_ok unbalanced_somewhere greedy.json
check "same seed, same exponents across solvers" json_ok first_rounds_equal price.json greedy.json
check "zipf run: workload zipf, drift null" json_ok zipf_keys price.json

# --drift: the drift workload (shard popularity drifting), same solvers, same contract.
run --drift 0.1 --shards 256 --servers 32 --rounds 5 --skip 1 --output drift.json
check "--drift run exits 0" exited 0
check "--drift: JSON contract, workload drift, drift 0.1, schema" \
  json_ok drift drift.json 0.1 "$SCHEMA" 5 1
check "--drift balances every round" json_ok balanced drift.json 0.05
check "--drift: the settings line names it" stdout_has "seed 42, drift 0.1, solver price"
run --drift 0.1 --shards 64 --servers 8 --rounds 3 --skip 1 --verbose
check "--drift --verbose: no exponent in the round's line" grep -qE "^ +0 +- +[0-9]+ " out.txt

# --consolidate-memory: both ends of the range balance every round.
for F in 0 1; do
  run --shards 256 --servers 32 --rounds 6 --skip 1 --consolidate-memory $F --output cons$F.json
  check "--consolidate-memory $F exits 0" exited 0
  check "--consolidate-memory $F balances every round" json_ok balanced cons$F.json 0.05
done

# --time-limit with the core's relaxation: each LP relaxation is cut short, and the rounding and
# repair still place every shard.
run --shards 2048 --servers 256 --rounds 4 --skip 1 --seed 3 --solver price --relaxation core \
  --time-limit 0.01 --output limited.json --quiet
check "price --time-limit exits 0" exited 0
check "price --time-limit is not ignored" test ! -s err.txt
check "price --time-limit JSON contract" json_ok validate limited.json price 1 4 1
run --shards 96 --servers 12 --rounds 2 --skip 1 --solver greedy --time-limit 5 --quiet
check "greedy --time-limit: warned" stderr_has "--time-limit only applies to --solver price and milp"
run --shards 96 --servers 12 --rounds 2 --skip 1 --time-limit 5 --quiet
check "keep flow --time-limit: warned" stderr_has "--time-limit only applies to --relaxation core"

# Both relaxations balance every round; the JSON names the one used.
run --shards 96 --servers 12 --rounds 8 --skip 3 --seed 42 --relaxation core --output core.json --quiet
check "core relaxation exits 0" exited 0
check "core relaxation JSON contract" json_ok validate core.json price 1 8 3
check "core relaxation balances every round" json_ok balanced core.json 0.05
check "JSON names the relaxation" json_ok relaxation core.json core
check "JSON names the default relaxation" json_ok relaxation price.json flow

# Progress on stderr past the first second: the round and where the price solver is.
run --shards 2048 --servers 256 --rounds 5 --skip 0 --seed 3 --solver price --relaxation core
check "long run: progress names the round" stderr_has "popalloc-lb: round "
check "long run: progress reports the LP" grep -qE "round [0-9]+/5: (LP of [0-9]+ shards x [0-9]+ servers, iteration [0-9]+|repair)" err.txt

run --shards 24 --servers 4 --rounds 3 --skip 1 --solver milp --output milp.json --quiet
if grep -qF "needs COIN-OR CBC" err.txt; then
  check "milp without CBC: exit 2" exited 2
else
  check "milp run exits 0" exited 0
  check "milp JSON contract" json_ok validate milp.json milp 1 3 1
  check "milp balances every round" json_ok balanced milp.json 0.05
  check "milp: every round optimal, from CBC" json_ok milp_status milp.json optimal cbc

  # CBC isolation (POPALLOC_LB_MILP_FAULT is the test hook): the CBC child dies, popalloc-lb
  # reports it per round and carries on with the MIP start or the previous placement.
  POPALLOC_LB_MILP_FAULT=abort run --shards 24 --servers 4 --rounds 3 --skip 1 --solver milp \
    --output crash.json --verbose
  check "CBC abort: popalloc-lb still exits 0" exited 0
  check "CBC abort: JSON contract" json_ok validate crash.json milp 1 3 1
  check "CBC abort: solver_crashed, MIP start used" json_ok milp_status crash.json solver_crashed mip_start
  check "CBC abort: the MIP start is balanced" json_ok balanced crash.json 0.05
  check "CBC abort: per-round line says so" stdout_has "[solver_crashed -> mip_start]: CBC crashed (SIGABRT, signal 6)"
  check "CBC abort: summary line" stdout_has "milp rounds by CBC outcome (worst part): solver_crashed 3"

  POPALLOC_LB_MILP_FAULT=abort run --shards 24 --servers 4 --rounds 3 --skip 1 --solver milp \
    --milp-start none --output stay.json
  check "CBC abort without a start: exit 0" exited 0
  check "CBC abort without a start: previous placement kept" json_ok milp_status stay.json solver_crashed previous_placement
  check "CBC abort without a start: nothing moved, reported unbalanced" json_ok stayed stay.json

  POPALLOC_LB_MILP_FAULT=segv_after_incumbent run --shards 24 --servers 4 --rounds 3 --skip 1 \
    --solver milp --milp-start none --pop 2 --output segv.json
  check "CBC SIGSEGV: exit 0" exited 0
  check "CBC SIGSEGV: its last incumbent is used" json_ok milp_status segv.json solver_crashed cbc_incumbent
  check "CBC SIGSEGV: the incumbents balance" json_ok balanced segv.json 0.05

  POPALLOC_LB_MILP_FAULT=hang run --shards 24 --servers 4 --rounds 2 --skip 1 --solver milp \
    --time-limit 0.5 --output hang.json --verbose
  check "CBC hang: exit 0" exited 0
  check "CBC hang: killed at the deadline" json_ok milp_status hang.json time_limit mip_start
  check "CBC hang: message" stdout_has "killed at the deadline"

  rm -f bad.json
  POPALLOC_LB_MILP_FAULT=bogus run --solver milp --output bad.json
  check "bad fault name: exit 2" exited 2
  check "bad fault name: message" stderr_has "POPALLOC_LB_MILP_FAULT must be"
  check "bad fault name: no output file" test ! -e bad.json
fi

# ---- Invalid arguments: exit 2, clear message, no output file -----------------------------------
bad() {
  local name="$1" message="$2"
  shift 2
  rm -f bad.json
  run "$@" --output bad.json
  check "$name: exit 2" exited 2
  check "$name: message" stderr_has "$message"
  check "$name: no output file" test ! -e bad.json
}
bad "unknown option" "unknown option '--frobnicate'" --frobnicate 3
bad "unknown solver" "--solver must be milp, price or greedy" --solver cplex
bad "zero shards" "--shards must be >= 1" --shards 0
bad "non-numeric servers" "'abc' is not an integer" --servers abc
bad "skip >= rounds" "--skip (20) must be < --rounds (5)" --rounds 5
bad "pop > servers" "--pop (16) must be <= --servers (8)" --servers 8 --shards 16 --pop 16
bad "pop zero" "--pop must be >= 1" --pop 0
bad "negative mip gap" "--mip-gap must be >= 0" --mip-gap -1
bad "nan epsilon" "is not a finite number" --epsilon nan
bad "too many shards for memory" "the shards do not fit" --shards 100 --servers 2
bad "missing value" "option --rounds needs a value" --rounds
bad "repeated option" "given twice" --seed 1 --seed 2
bad "bad milp start" "--milp-start must be price or none" --milp-start cbc
bad "bad relaxation" "--relaxation must be flow or core" --relaxation simplex
bad "drift zero" "--drift must be > 0" --drift 0
bad "drift above 1" "--drift must be in (0, 1]" --drift 2
bad "drift not a number" "--drift: 'nan' is not a finite number" --drift nan
bad "consolidate-memory above 1" "--consolidate-memory must be in [0, 1]" --consolidate-memory 1.5
bad "consolidate-memory below 0" "--consolidate-memory must be >= 0" --consolidate-memory -0.1

# ---- --placement: your own shards, one round, the new placement as CSV --------------------------
cat >placement.py <<'PYTHON'
import csv, sys

def rows(path):
    return list(csv.DictReader(open(path, newline="")))

def shard_loads(path):
    loads = {}
    for r in rows(path):
        if r["shard"]:
            loads[r["shard"]] = loads.get(r["shard"], 0.0) + float(r["load"])
    return loads

cmd = sys.argv[1]
if cmd == "make":
    # 40 skewed shards on 6 of 8 servers (two split), one shard to place, two empty servers.
    out = ["shard,server,load"]
    for j in range(40):
        load = 1000 // (j + 1) + 1
        out.append(f"s{j},db-{j % 6},{load}")
        if j % 7 == 3:
            out.append(f"s{j},db-{(j + 1) % 6},{load}")
    out += ["fresh,,400", ",db-6,", ",db-7,0"]
    open(sys.argv[2], "w").write("\n".join(out) + "\n")
elif cmd == "same_loads":
    a, b = shard_loads(sys.argv[2]), shard_loads(sys.argv[3])
    assert a.keys() == b.keys(), (sorted(a), sorted(b))
    assert all(abs(a[k] - b[k]) <= 1e-9 * a[k] for k in a), [(k, a[k], b[k]) for k in a]
elif cmd == "balanced":
    # Every server's load within mean -+ epsilon * mean, all 8 servers present.
    eps, load = float(sys.argv[3]), {}
    for r in rows(sys.argv[2]):
        load[r["server"]] = load.get(r["server"], 0.0) + float(r["load"] or 0)
    mean = sum(load.values()) / len(load)
    assert len(load) == 8, sorted(load)
    assert all(abs(v - mean) <= eps * mean * (1 + 1e-6) for v in load.values()), load
elif cmd == "new_count":
    got = sum(1 for r in rows(sys.argv[2]) if r["shard"] and r["new"] == "1")
    assert got == int(sys.argv[3]), (got, sys.argv[3])
else:
    raise SystemExit("unknown placement.py command " + cmd)
PYTHON
place_ok() { python3 placement.py "$@" 2>>py_err.txt; }

place_ok make mine.csv
run --placement mine.csv --new-placement next.csv --output place.json
check "--placement: exit 0" exited 0
check "--placement: names the file" stdout_has "popalloc-lb: mine.csv: 41 shards, 8 servers, solver price"
check "--placement: reports the current placement" stdout_has "current placement: max load deviation"
check "--placement: the new one is balanced" stdout_has "new placement: balanced, new replicas"
check "--placement: JSON contract (one round)" json_ok validate_placement place.json "$SCHEMA"
check "--placement: every shard keeps its load" place_ok same_loads mine.csv next.csv
check "--placement: every server within the band" place_ok balanced next.csv 0.05
moved="$(sed -n 's/.*new replicas \([0-9]*\),.*/\1/p' out.txt)"
check "--placement: the new flags count the new replicas" place_ok new_count next.csv "${moved:-x}"
run --placement next.csv --new-placement again.csv --solver greedy --quiet
check "--placement: the written placement reads back" exited 0
check "--placement: nothing printed with --quiet" nothing_printed
check "--placement: read back, nothing is new" place_ok new_count again.csv 0
run --placement mine.csv --pop 2 --verbose
check "--placement with --pop 2: balanced" stdout_has "new placement: balanced"
check "--placement --verbose: the round's line" grep -qE "^ +0 +- +[0-9]+ " out.txt

bad "--placement with --shards" "--shards does not apply to --placement" --placement mine.csv --shards 8
bad "--placement with --drift" "--drift does not apply to --placement" --placement mine.csv --drift 0.1
bad "--new-placement alone" "--new-placement needs --placement" --new-placement x.csv
bad "--new-placement over the input" "is the same file as the input --placement 'mine.csv'" \
  --placement mine.csv --new-placement mine.csv
bad "--placement missing file" "nothing.csv: cannot open" --placement nothing.csv
printf 'shard,server,load\ns1,db,1\ns1,db,2\n' >twice.csv
bad "--placement repeated replica" "twice.csv:3: shard 's1' on server 'db' was already given on line 2" \
  --placement twice.csv
printf 'shard,server,load\ns1,db,0\n' >idle.csv
bad "--placement without load" "total load must be > 0" --placement idle.csv
printf 'shard,server,load\ns1,a,1\n,b,\n,c,\n' >wide.csv
bad "--placement more servers than shards" "the placement's servers (3) must be no more than its shards (1)" \
  --placement wide.csv
bad "--placement memory limit" "the shards do not fit" --placement mine.csv --max-memory 2
rm -f next2.csv
run --placement twice.csv --new-placement next2.csv
check "refused --placement: no new placement written" test ! -e next2.csv

if [[ -s py_err.txt ]]; then cat py_err.txt; fi
summary cli-lb
