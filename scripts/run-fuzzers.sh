#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer binaries (preset `fuzz`: clang++, ASan+UBSan) and runs each fuzz target
# for SECONDS, starting from a copy of its seed corpus in tests/fuzz/corpus/<target>/ (new inputs
# go to build/fuzz/corpus/<target>/, never into the repository). Fails on the first crash, leak,
# timeout (> 10 s for one input), out-of-memory (> 2 GB) or sanitizer report; the reproducer is
# left in build/fuzz/artifacts/<target>/.
#
#   bash scripts/run-fuzzers.sh [SECONDS] [TARGET...]     # default 60 s, every target
#   bash scripts/run-fuzzers.sh 600 json solve_csv         # the 10-minute runs of the issue
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds="${1:-60}"
shift || true
jobs="${POPALLOC_JOBS:-2}"

cmake --preset fuzz >/dev/null
mapfile -t all < <(find tests/fuzz -maxdepth 1 -name 'fuzz_*.cpp' | sed 's|.*/fuzz_||; s|\.cpp$||' | sort)
targets=("$@")
((${#targets[@]} > 0)) || targets=("${all[@]}")
cmake --build --preset fuzz -j "$jobs" --target "${targets[@]/#/popalloc_fuzz_}"

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
summary=()
for target in "${targets[@]}"; do
  corpus="build/fuzz/corpus/$target"
  artifacts="build/fuzz/artifacts/$target/"
  mkdir -p "$corpus" "$artifacts"
  cp -n tests/fuzz/corpus/"$target"/* "$corpus"/ 2>/dev/null || true
  log="build/fuzz/$target.log"
  echo "== fuzz $target for ${seconds}s (log $log)"
  if ! build/fuzz/tests/fuzz/popalloc_fuzz_"$target" "$corpus" -max_total_time="$seconds" \
       -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
       -artifact_prefix="$artifacts" >"$log" 2>&1; then
    tail -40 "$log"
    echo "FAIL: fuzz target $target (reproducer in $artifacts)" >&2
    exit 1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo '?')
  summary+=("$(printf '%-16s %6ss  %10s runs  coverage %s  corpus %s files' "$target" "$seconds" \
    "$runs" "$cov" "$(find "$corpus" -type f | wc -l)")")
done
printf '%s\n' "${summary[@]}"
echo "all ${#targets[@]} fuzz target(s) ran ${seconds}s without a finding"
