// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The max-level problem that max-min fairness, minimum makespan and finish-time
/// fairness reduce to (cluster/level_bisection.hpp solves it).
#pragma once

#include <functional>
#include <vector>

#include <Eigen/Core>

namespace popalloc::cluster {

/// \brief A max-level problem over the base constraints sum_w x_iw <= 1,
/// sum_i s_i x_iw <= n_w.
struct level_problem {
  Eigen::MatrixXd throughput;  ///< A, n x m (0: cannot run there)
  Eigen::VectorXd scale;       ///< s_i: GPUs held at once
  Eigen::VectorXd capacity;    ///< n_w
  /// Level at which job i is frozen (+inf: free). Its requirement is tau_i(min(L, cap_i)).
  std::vector<double> cap;
  /// tau_i(L): throughput job i needs for level L; nondecreasing in L, 0 if it needs none,
  /// +inf if no throughput reaches L.
  std::function<double(Eigen::Index, double)> target;
  /// level_i(ET): the level job i reaches with throughput ET; nondecreasing in ET.
  std::function<double(Eigen::Index, double)> level_of;
  /// k_i where tau_i(L) = k_i L for every job (max-min fairness, minimum makespan), which
  /// enables the crossover (cluster/level_crossover.hpp); empty otherwise.
  Eigen::VectorXd linear_coefficient;
};

}  // namespace popalloc::cluster
