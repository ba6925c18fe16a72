// SPDX-License-Identifier: Apache-2.0
// Fuzz target: popalloc-te's demands CSV and plan readers on a fixed four-node network. The
// first byte picks the reader (even: demands CSV, odd: plan JSON); the rest is the file. Any
// input is either rejected with io::input_error "PATH:LINE: ..." or read into what the solver
// accepts: commodities between distinct nodes in strictly increasing (source, target) order with
// demands > 0 in popalloc's value range; a previous answer with a flow per path and none or a
// price per arc, every value finite and >= 0 (te::replan_price's own check passes).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <utility>
#include <vector>

#include <popalloc/te/demands_csv.hpp>
#include <popalloc/te/plan_json.hpp>
#include <popalloc/te/price_solver.hpp>
#include <popalloc/value_range.hpp>

#include "../te/square_topology.hpp"
#include "fuzz_input.hpp"

namespace {

namespace te = popalloc::te;

/// The square topology with commodities a -> c and b -> d.
const te::instance& network() {
  static const te::instance inst = [] {
    te::topology g = te_test::square_topology();
    return te::make_instance(std::move(g), {{0, 2, 12.0}, {1, 3, 6.0}}, te::path_options{});
  }();
  return inst;
}

void check_commodities(const std::vector<te::commodity>& commodities) {
  for (std::size_t k = 0; k < commodities.size(); ++k) {
    const te::commodity& c = commodities[k];
    if (c.source < 0 || c.source >= 4 || c.target < 0 || c.target >= 4 || c.source == c.target)
      std::abort();
    if (!(c.demand > 0.0) || !popalloc::detail::in_value_range(c.demand)) std::abort();
    if (k > 0 && !(commodities[k - 1].source < c.source ||
                   (commodities[k - 1].source == c.source && commodities[k - 1].target < c.target)))
      std::abort();
  }
}

void check_previous(const te::result& previous) {
  const te::instance& inst = network();
  if (static_cast<std::int64_t>(previous.path_flow.size()) != inst.path_count()) std::abort();
  if (!previous.prices.empty() &&
      static_cast<std::int64_t>(previous.prices.size()) != inst.graph.arc_count())
    std::abort();
  for (const double v : previous.path_flow)
    if (!std::isfinite(v) || v < 0.0) std::abort();
  for (const double v : previous.prices)
    if (!std::isfinite(v) || v < 0.0) std::abort();
  if (previous.iterations < 0 || previous.solves < 0) std::abort();
  te::detail::check_previous(inst, previous);  // throws if the solver would refuse it
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool plan = (data[0] & 1) != 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const char* const path = plan ? "p.json" : "m.csv";
  try {
    if (plan)
      check_previous(te::read_plan_json(text, path, network()));
    else
      check_commodities(te::read_demands_csv(text, path, network().graph));
  } catch (const popalloc::io::input_error& e) {
    popalloc_fuzz::require_names_file(e.what(), path);
  }
  return 0;
}
