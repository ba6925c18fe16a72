// SPDX-License-Identifier: Apache-2.0
// Fuzz target: popalloc-solve's CSV reader (RESOURCES.csv, then a "----" line, then JOBS.csv).
// Any input is either rejected with io::input_error naming one of the files, or read into an
// instance that (a) passes the solver's own validation, (b) writes and reads back identically.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <popalloc/popalloc.hpp>

#include "../../examples/popalloc_solve/instance.hpp"
#include "../../examples/popalloc_solve/io.hpp"
#include "fuzz_input.hpp"

namespace {

bool same_instance(const popalloc_solve::instance& a, const popalloc_solve::instance& b) {
  const auto& p = a.problem;
  const auto& q = b.problem;
  return a.job_ids == b.job_ids && a.resource_names == b.resource_names &&
         p.throughput == q.throughput && p.capacity == q.capacity && p.weight == q.weight &&
         p.target == q.target;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto parts = popalloc_fuzz::split_parts(input, 2);
  const popalloc_fuzz::scratch_file resources(parts[0], "resources.csv");
  const popalloc_fuzz::scratch_file jobs(parts[1], "jobs.csv");

  // The requirement set is picked from the input so every validation branch is reachable.
  popalloc_solve::data_requirements requirements;
  switch (size % 3) {
    case 0:
      requirements = {"linear", false, false, false};
      break;
    case 1:
      requirements = {"target-priority", true, false, false};
      break;
    default:
      requirements = {"log", false, true, true};
      break;
  }
  popalloc_solve::instance read;
  try {
    read = popalloc_solve::read_instance(jobs.path(), resources.path(), requirements);
  } catch (const popalloc::io::input_error& e) {
    const std::string_view message = e.what();
    if (message.find(resources.path()) != 0 && message.find(jobs.path()) != 0) std::abort();
    return 0;
  }
  try {
    if (requirements.needs_target)
      read.problem.validate(popalloc::utility::target_priority{});
    else if (requirements.needs_positive_throughput)
      read.problem.validate(popalloc::utility::log{});
    else
      read.problem.validate(popalloc::utility::linear{});
  } catch (const popalloc::invalid_problem&) {
    std::abort();  // the reader accepted data the solver rejects: its checks are incomplete
  }

  const popalloc_fuzz::scratch_file prefix_holder("", "roundtrip");
  const std::string prefix = prefix_holder.path();
  popalloc_solve::write_instance(read, prefix);
  const popalloc_solve::instance again =
      popalloc_solve::read_instance(prefix + ".jobs.csv", prefix + ".resources.csv", requirements);
  std::remove((prefix + ".jobs.csv").c_str());
  std::remove((prefix + ".resources.csv").c_str());
  if (!same_instance(read, again)) std::abort();
  return 0;
}
