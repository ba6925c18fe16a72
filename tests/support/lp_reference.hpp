// Exact LP reference for popalloc's tests (Agrawal et al., MPC 2022), built on COIN-OR
// CLP.
//
//   maximize   sum_i f_i(t_i),   t_i = sum_{o of job i} a_o x_o
//   subject to x >= 0,  sum_{o of job i} x_o <= 1  (per job),  sum_o c_oj x_o <= R_j  (per
//   resource)
//
// f_i(t) = w_i t (linear), w_i min(t - T_i, 0) (target_priority, epigraph z_i <= 0,
// z_i <= w_i (t_i - T_i)), w_i min_k (slope_k t + intercept_k) (piecewise_linear, epigraph), or
// w_i t - M max(T_i - t, 0) (linear_with_floor, epigraph z_i <= w_i t_i,
// z_i <= (w_i + M) t_i - M T_i).
#pragma once

#include <utility>
#include <vector>

#include <Eigen/Dense>

namespace popalloc_test {

enum class lp_utility { linear, target_priority, piecewise_linear, linear_with_floor };

struct lp_option {
  int job;       // 0..n_jobs-1
  double value;  // a_o >= 0
  std::vector<std::pair<int, double>>
      consumption;  // (resource, amount >= 0); duplicates are summed
};

struct lp_problem {
  int n_jobs = 0;
  int n_resources = 0;
  std::vector<double> capacity;    // size m, >= 0
  std::vector<lp_option> options;  // any order
  std::vector<double> weight;      // size n (empty = all 1), >= 0
  std::vector<double> target;      // size n (target_priority and linear_with_floor)
  double penalty = 0.0;            // M >= 0 (linear_with_floor)
  lp_utility utility = lp_utility::linear;
  std::vector<std::pair<double, double>> pieces;  // (slope, intercept) for piecewise_linear
};

// Dense special case: option index i*m + j is job i on resource j (value A_ij, consumption D_ij of
// resource j; D = all ones if demand is null). Every (i, j) is present, also when A_ij = 0 (such an
// option is useless). weight of size 0 means all ones; target is required for target_priority and
// linear_with_floor.
lp_problem make_dense_lp(const Eigen::MatrixXd& A, const Eigen::VectorXd& capacity,
                         const Eigen::VectorXd& weight, const Eigen::VectorXd* target, lp_utility u,
                         const Eigen::MatrixXd* demand = nullptr);

struct lp_solution {
  bool optimal = false;
  double objective = 0;        // sum_i f_i(t_i) evaluated at x (maximisation value)
  std::vector<double> x;       // per option, same order as lp_problem::options; a basic solution,
                               // exact up to CLP round-off (~1e-12, e.g. a row sum of 1 + 1e-12)
  std::vector<double> prices;  // dual of each capacity row: d objective / d R_j >= 0
  double seconds = 0;          // wall time of the CLP solve only
};

// Throws std::invalid_argument on malformed or empty input (n_jobs < 1, n_resources < 1, no
// options, sizes that do not match, negative or non-finite data, indices out of range, no pieces).
// use_barrier: CLP barrier with crossover (a basic solution and duals as with simplex).
lp_solution solve_lp(const lp_problem& p, bool use_barrier = false);

}  // namespace popalloc_test
