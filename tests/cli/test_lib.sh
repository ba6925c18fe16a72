#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The shared helpers of tests/cli/lib.sh can fail: a failing case is counted and reported, and
# summary then fails (so that every script using them fails).
#   bash tests/cli/test_lib.sh SCRATCH_DIR
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mkdir -p "$1" && cd "$1" || exit 2
problems=0
problem() {
  echo "PROBLEM: $*"
  problems=$((problems + 1))
}

BIN=false
run
exited 1 || problem "run: \$rc of false is $rc"
[[ ! -s out.txt && ! -s err.txt ]] || problem "run: false wrote out.txt or err.txt"
nothing_printed || problem "nothing_printed after a silent run"
BIN=echo
run hello
stdout_has hello || problem "stdout_has misses the output"
! stdout_has bye || problem "stdout_has finds what was not printed"
! nothing_printed || problem "nothing_printed after output"
! stderr_has hello || problem "stderr_has finds stdout's text"
check "a passing case" true
check "a failing case" false >report.txt
grep -qx "FAIL: a failing case" report.txt || problem "the failure was not reported as FAIL: NAME"
[[ $passed -eq 1 && $failed -eq 1 ]] || problem "counts are $passed passed, $failed failed"
if summary lib >report.txt; then problem "summary succeeds after a failure"; fi
grep -qx "lib: 1 passed, 1 failed" report.txt || problem "summary line: $(cat report.txt)"
passed=0 failed=0
check "only passing" true
summary lib >/dev/null || problem "summary fails without a failure"
[[ "$(absolute .)" == "$(pwd)/." ]] || problem "absolute . is $(absolute .)"

echo "cli-lib: $problems problem(s)"
[[ $problems -eq 0 ]]
