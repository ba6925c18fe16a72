// SPDX-License-Identifier: Apache-2.0
// Fuzz target: popalloc-solve's warm-start prices reader (a JSON object of resource -> price, or
// a result file with a "prices" object) for the resources "a", "b" and "gpu". Any input is either
// rejected with io::input_error naming the file, or gives prices in [0, 1e60].
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <popalloc/value_range.hpp>

#include "../../examples/popalloc_solve/io.hpp"
#include "../../examples/popalloc_solve/result_files.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const popalloc_fuzz::scratch_file file(input, "prices.json");
  const std::vector<std::string> resources = {"a", "b", "gpu"};
  Eigen::VectorXd prices;
  try {
    prices = popalloc_solve::read_warm_start_prices(file.path(), resources);
  } catch (const popalloc::io::input_error& e) {
    if (std::string_view(e.what()).find(file.path()) != 0) std::abort();
    return 0;
  }
  if (prices.size() != 3 || (prices.array() < 0.0).any()) std::abort();
  for (Eigen::Index j = 0; j < prices.size(); ++j)
    if (!(prices[j] <= popalloc::value_max)) std::abort();
  return 0;
}
