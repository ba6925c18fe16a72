// SPDX-License-Identifier: Apache-2.0
// The named instance around a family's problem; the distributions live in families.cpp.
#include "generator.hpp"

#include <cstdint>
#include <string>

namespace popalloc_solve {

instance generate_instance(const generator_settings& settings) {
  return generate_instance(settings, 0, settings.jobs);
}

instance generate_instance(const generator_settings& settings, std::int64_t first,
                           std::int64_t count) {
  instance result;
  result.problem = generate_family(settings.family, settings.jobs, settings.resources,
                                   settings.seed, first, count);
  result.resource_names = family_resource_names(settings.family, settings.resources);
  result.job_ids.reserve(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) result.job_ids.push_back(std::to_string(first + i));
  return result;
}

}  // namespace popalloc_solve
