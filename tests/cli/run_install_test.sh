#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What `cmake --install` ships: the five programs in bin/ (each run with no arguments from a
# directory outside the source and build trees), the data and schemas in share/popalloc/,
# popalloc.pc (pkg-config --cflags popalloc), LICENSE and README.
#   run_install_test.sh BUILD_DIR PREFIX   installs BUILD_DIR into PREFIX (emptied first), checks
#   run_install_test.sh - PREFIX           checks an existing install (.ci/run's install step)
# Exit 77 (CTest SKIP_RETURN_CODE) without pkg-config.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR|- PREFIX" >&2
  exit 2
fi
build="$1" prefix="$2"
if ! command -v pkg-config >/dev/null 2>&1; then
  echo "install: pkg-config not found, skipping"
  exit 77
fi
elsewhere="$(mktemp -d)"
trap 'rm -rf "$elsewhere"' EXIT
if [[ "$build" != - ]]; then
  rm -rf "$prefix"
  cmake --install "$build" --prefix "$prefix" >"$elsewhere/install.log" 2>&1 ||
    { cat "$elsewhere/install.log"; echo "FAIL: cmake --install"; exit 1; }
fi
prefix="$(cd "$prefix" && pwd)"


for program in popalloc-solve popalloc-schedule popalloc-simulate popalloc-te popalloc-lb; do
  check "bin/$program installed" test -x "$prefix/bin/$program"
  (cd "$elsewhere" && "$prefix/bin/$program" >out.txt 2>err.txt)
  rc=$?
  check "installed $program with no arguments: exit 0 (got $rc: $(head -c 300 "$elsewhere/err.txt"))" \
    test "$rc" -eq 0
  check "installed $program: prints its summary" test -s "$elsewhere/out.txt"
  check "share/popalloc/schemas/$program.schema.json" \
    test -s "$prefix/share/popalloc/schemas/$program.schema.json"
done
check "share/popalloc/gavel: Gavel's throughputs" \
  test -s "$prefix/share/popalloc/gavel/simulation_throughputs.json"
check "share/popalloc/topologies" test -d "$prefix/share/popalloc/topologies"
check "LICENSE" test -s "$prefix/share/doc/popalloc/LICENSE"
check "README.md" test -s "$prefix/share/doc/popalloc/README.md"
check "share/pkgconfig/popalloc.pc" test -s "$prefix/share/pkgconfig/popalloc.pc"
cflags="$(PKG_CONFIG_PATH="$prefix/share/pkgconfig" pkg-config --cflags popalloc 2>&1)"
check "pkg-config --cflags popalloc: the installed include directory ($cflags)" \
  grep -qF -- "-I$prefix/include" <<<"$cflags"
check "pkg-config --modversion popalloc" \
  test -n "$(PKG_CONFIG_PATH="$prefix/share/pkgconfig" pkg-config --modversion popalloc)"
check "the installed popalloc.hpp" test -s "$prefix/include/popalloc/popalloc.hpp"
# A program built from the installed headers with nothing but pkg-config's flags.
cat >"$elsewhere/consumer.cpp" <<'CPP'
#include <popalloc/popalloc.hpp>
#include <cstdio>
int main() {
  popalloc::dense_problem<double> p;
  p.throughput.resize(2, 2);
  p.throughput << 2.0, 1.0, 1.0, 3.0;
  p.capacity = Eigen::Vector2d(1.0, 1.0);
  const auto r = popalloc::solve(p, popalloc::utility::linear{});
  std::printf("%.9g\n", r.primal_objective);
  const bool near = r.primal_objective > 5.0 * (1 - 1e-4) && r.primal_objective <= 5.0 + 1e-9;
  return r.status == popalloc::solve_status::converged && near ? 0 : 1;
}
CPP
if command -v c++ >/dev/null 2>&1; then
  # shellcheck disable=SC2046  # pkg-config's flags are words
  check "a consumer compiles with pkg-config --cflags popalloc" \
    c++ -std=c++17 $cflags "$elsewhere/consumer.cpp" -o "$elsewhere/consumer"
  check "the consumer solves (objective 5 = 2 + 3)" "$elsewhere/consumer"
fi
summary install
