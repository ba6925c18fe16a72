// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A named problem instance: the dense problem plus job ids and resource names, and the
/// CSV formats it is read from and written to.
///
///   JOBS.csv       id,weight,target,demand,<resource name>,...   (any column order; weight
///                  optional, default 1; target needed by target-priority; demand optional:
///                  units of every resource the job occupies while it runs, e.g. a Gavel scale
///                  factor, finite and > 0, read into dense_problem::job_demand, default 1; a
///                  resource column holds the job's throughput there, 0 = cannot use; a missing
///                  resource column means 0)
///   RESOURCES.csv  name,capacity
#pragma once

#include <string>
#include <vector>

#include <popalloc/dense_problem.hpp>

namespace popalloc_solve {

struct instance {
  std::vector<std::string> job_ids;
  std::vector<std::string> resource_names;  ///< column order of problem.throughput
  popalloc::dense_problem<double> problem;
};

/// \brief What the chosen utility needs from the data; checked while reading so errors can name
/// the file and line instead of a row index.
struct data_requirements {
  const char* utility_name = "";
  bool needs_target = false;
  bool needs_positive_weight = false;
  bool needs_positive_throughput = false;
};

/// \brief Reads and checks RESOURCES.csv and JOBS.csv. \throws input_error "FILE:LINE: ...".
instance read_instance(const std::string& jobs_path, const std::string& resources_path,
                       const data_requirements& requirements);

/// \brief Writes PREFIX.jobs.csv and PREFIX.resources.csv (exact round trip, with a demand
/// column when problem.job_demand is set). \throws input_error, also for a problem with an
/// n x m demand matrix (JOBS.csv has no format for it).
void write_instance(const instance& data, const std::string& prefix);

}  // namespace popalloc_solve
