# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The helpers every CLI test script shares; source it (bash) before the first case:
#   source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"
#
#   check NAME COMMAND...  one case, passed when COMMAND succeeds; a failure prints "FAIL: NAME"
#   pass, fail TEXT...     count a case (fail prints "FAIL: TEXT")
#   run ARGS...            runs "$BIN" ARGS with stdout to out.txt, stderr to err.txt and the exit
#                          status in $rc
#   exited CODE, stdout_has TEXT, stderr_has TEXT, nothing_printed
#                          conditions about the last run
#   absolute PATH          PATH made absolute (its directory must exist)
#   summary NAME           prints "NAME: P passed, F failed"; fails when a case failed (make it
#                          the script's last command, so that it is the exit status)
# Settings a script may give before its cases: CLI_SHOW_PASSES=1 prints "ok: NAME" for every case
# that passes; CLI_FAIL_SHOWS_STDERR=1 adds the first lines of err.txt to every failure.
# Every case runs even after a failure: nothing here exits.

passed=0
failed=0
CLI_SHOW_PASSES="${CLI_SHOW_PASSES:-0}"
CLI_FAIL_SHOWS_STDERR="${CLI_FAIL_SHOWS_STDERR:-0}"

pass() { passed=$((passed + 1)); }
fail() {
  failed=$((failed + 1))
  echo "FAIL: $*"
  if [[ $CLI_FAIL_SHOWS_STDERR == 1 ]]; then sed 's/^/    stderr: /' err.txt 2>/dev/null | head -5; fi
}
check() {
  local name="$1"
  shift
  if "$@"; then
    pass
    if [[ $CLI_SHOW_PASSES == 1 ]]; then echo "ok: $name"; fi
  else
    fail "$name"
  fi
}

run() {
  "$BIN" "$@" >out.txt 2>err.txt
  rc=$?
}
exited() { [[ $rc -eq $1 ]]; }
stdout_has() { grep -qF -- "$1" out.txt; }
stderr_has() { grep -qF -- "$1" err.txt; }
nothing_printed() { [[ ! -s out.txt && ! -s err.txt ]]; }

absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }

summary() {
  echo "$1: $passed passed, $failed failed"
  [[ $failed -eq 0 ]]
}
