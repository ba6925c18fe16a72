#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run_failure.sh MODE MPIEXEC ARGS... PROGRAM: runs `MPIEXEC ARGS... PROGRAM MODE` (3 ranks) and
# checks that the job ends on its own, in time, with the error each rank is expected to report
# (see mpi_check.cpp). A hang is a failure: the job runs under `timeout`.
set -u
mode=$1
shift
limit=90
output=$(mktemp)
trap 'rm -f "$output"' EXIT
start=$(date +%s)
timeout --kill-after=10 "$limit" "$@" "$mode" >"$output" 2>&1
status=$?
elapsed=$(( $(date +%s) - start ))
cat "$output"
echo "run_failure.sh: mode $mode: exit status $status after ${elapsed} s"

failed=0
problem() { echo "run_failure.sh: FAIL: $*"; failed=1; }
if [ "$elapsed" -ge "$limit" ]; then  # (status 137 is also mpirun's own for a SIGKILLed rank)
  problem "the job did not end within ${limit} s (a rank hangs)"
fi
expected_lines() {  # expected_lines COUNT PATTERN: COUNT ranks printed an EXPECTED line matching PATTERN
  local count
  count=$(grep -c "^rank [0-9]*: EXPECTED: .*$2" "$output")
  [ "$count" -eq "$1" ] || problem "$count of the expected $1 ranks reported an error matching '$2'"
}
case "$mode" in
  invalid)
    [ "$status" -eq 0 ] || problem "exit status $status, expected 0 (every rank stops cleanly)"
    expected_lines 3 "rank 1: throughput(2, 1) must be"
    ;;
  mismatch|gap_mismatch)
    [ "$status" -eq 0 ] || problem "exit status $status, expected 0 (every rank stops cleanly)"
    expected_lines 3 "rank(s) 2 differ from rank 0"
    ;;
  throw)
    [ "$status" -ne 0 ] || problem "exit status 0 after a failed rank"
    expected_lines 1 "mpi: rank 1 failed: the callback on rank 1 failed on purpose"
    expected_lines 2 "stopped because rank 1 failed: the callback on rank 1 failed on purpose"
    ;;
  kill)
    [ "$status" -ne 0 ] || problem "exit status 0 after a killed rank"
    grep -Eqi "signal 9|killed" "$output" || problem "no report of the killed rank"
    [ "$elapsed" -lt 60 ] || problem "the job took ${elapsed} s to end after the kill"
    ;;
  stall)
    [ "$status" -ne 0 ] || problem "exit status 0 after a stalled rank"
    expected_lines 2 "did not complete within 2.000000 s"
    [ "$elapsed" -lt 50 ] || problem "the job took ${elapsed} s to end (watchdog 2 s, rank 1 sleeps 60 s)"
    ;;
  *)
    problem "unknown mode $mode"
    ;;
esac
exit $failed
