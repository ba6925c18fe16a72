#include "lp_reference.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <ClpSimplex.hpp>
#include <ClpSolve.hpp>
#include <CoinPackedMatrix.hpp>

namespace popalloc_test {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("popalloc_test::solve_lp: " + what);
}

bool nonneg(double v) { return std::isfinite(v) && v >= 0.0; }

double utility_of(const lp_problem& p, int i, double t, double w) {
  switch (p.utility) {
    case lp_utility::linear:
      return w * t;
    case lp_utility::target_priority:
      return w * std::min(t - p.target[static_cast<size_t>(i)], 0.0);
    case lp_utility::piecewise_linear: {
      double v = std::numeric_limits<double>::infinity();
      for (const auto& [s, b] : p.pieces) v = std::min(v, s * t + b);
      return w * v;
    }
    case lp_utility::linear_with_floor:
      return w * t - p.penalty * std::max(p.target[static_cast<size_t>(i)] - t, 0.0);
  }
  return 0.0;
}

}  // namespace

lp_problem make_dense_lp(const Eigen::MatrixXd& A, const Eigen::VectorXd& capacity,
                         const Eigen::VectorXd& weight, const Eigen::VectorXd* target, lp_utility u,
                         const Eigen::MatrixXd* demand) {
  const Eigen::Index n = A.rows(), m = A.cols();
  require(n > 0 && m > 0, "empty throughput matrix");
  require(capacity.size() == m, "capacity size != A.cols()");
  require(weight.size() == 0 || weight.size() == n, "weight size != A.rows()");
  require(demand == nullptr || (demand->rows() == n && demand->cols() == m), "demand shape != A");
  require((u != lp_utility::target_priority && u != lp_utility::linear_with_floor) ||
              (target != nullptr && target->size() == n),
          "target_priority and linear_with_floor need a target of size A.rows()");
  lp_problem p;
  p.n_jobs = static_cast<int>(n);
  p.n_resources = static_cast<int>(m);
  p.utility = u;
  p.capacity.assign(capacity.data(), capacity.data() + m);
  p.weight.assign(weight.data(), weight.data() + weight.size());
  if (target != nullptr) p.target.assign(target->data(), target->data() + target->size());
  p.options.reserve(static_cast<size_t>(n * m));
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < m; ++j) {
      const double d = demand != nullptr ? (*demand)(i, j) : 1.0;
      lp_option o{static_cast<int>(i), A(i, j), {}};
      if (d != 0.0) o.consumption.emplace_back(static_cast<int>(j), d);
      p.options.push_back(std::move(o));
    }
  }
  return p;
}

lp_solution solve_lp(const lp_problem& p, bool use_barrier) {
  const int n = p.n_jobs, m = p.n_resources;
  const size_t nu = static_cast<size_t>(n);
  require(n > 0 && m > 0, "n_jobs and n_resources must be positive");
  require(!p.options.empty(), "no options");
  require(p.capacity.size() == static_cast<size_t>(m), "capacity size != n_resources");
  require(std::all_of(p.capacity.begin(), p.capacity.end(), nonneg), "capacity must be >= 0");
  require(p.weight.empty() || p.weight.size() == nu, "weight size != n_jobs");
  require(std::all_of(p.weight.begin(), p.weight.end(), nonneg), "weight must be >= 0");
  const bool tp = p.utility == lp_utility::target_priority;
  const bool pwl = p.utility == lp_utility::piecewise_linear;
  const bool floor = p.utility == lp_utility::linear_with_floor;
  require(!(tp || floor) || p.target.size() == nu, "target size != n_jobs");
  require(!(tp || floor) || std::all_of(p.target.begin(), p.target.end(),
                                        [](double t) { return std::isfinite(t); }),
          "target must be finite");
  require(!floor || nonneg(p.penalty), "penalty must be >= 0");
  require(!pwl || !p.pieces.empty(), "piecewise_linear needs pieces");
  for (const auto& [s, b] : p.pieces)
    require(std::isfinite(s) && std::isfinite(b), "non-finite piece");
  auto w = [&](int i) { return p.weight.empty() ? 1.0 : p.weight[static_cast<size_t>(i)]; };

  // Rows: [0, n) per-job simplex, [n, n+m) capacity, then K epigraph rows per job (K = 1 for
  // target_priority, #pieces for piecewise_linear, 2 for linear_with_floor). Columns: options,
  // then z_i per job if epigraph. Epigraph row k of job i: z_i - slope(i, k) t_i <= intercept(i,k).
  const int K = tp ? 1 : (pwl ? static_cast<int>(p.pieces.size()) : (floor ? 2 : 0));
  auto slope = [&](int i, int k) {
    if (pwl) return w(i) * p.pieces[static_cast<size_t>(k)].first;
    if (floor) return k == 0 ? w(i) : w(i) + p.penalty;
    return w(i);
  };
  auto intercept = [&](int i, int k) {
    if (pwl) return w(i) * p.pieces[static_cast<size_t>(k)].second;
    const double target = p.target[static_cast<size_t>(i)];
    if (floor) return k == 0 ? 0.0 : -p.penalty * target;
    return -w(i) * target;
  };
  const int n_opt = static_cast<int>(p.options.size());
  const int n_col = n_opt + (K > 0 ? n : 0), n_row = n + m + K * n;
  const double inf = COIN_DBL_MAX;
  std::vector<double> obj(static_cast<size_t>(n_col), 0.0), col_lo(obj.size(), 0.0),
      col_up(obj.size(), inf), row_lo(static_cast<size_t>(n_row), -inf), row_up(row_lo.size());
  std::vector<CoinBigIndex> start{0};
  std::vector<int> index;
  std::vector<double> element;
  for (const lp_option& o : p.options) {
    require(o.job >= 0 && o.job < n, "option job out of range");
    require(nonneg(o.value), "option value must be >= 0");
    auto cons = o.consumption;
    std::sort(cons.begin(), cons.end());
    index.push_back(o.job);
    element.push_back(1.0);
    for (size_t k = 0; k < cons.size(); ++k) {
      require(cons[k].first >= 0 && cons[k].first < m, "consumption resource out of range");
      require(nonneg(cons[k].second), "consumption must be >= 0");
      if (k > 0 && cons[k].first == cons[k - 1].first) {
        element.back() += cons[k].second;
      } else {
        index.push_back(n + cons[k].first);
        element.push_back(cons[k].second);
      }
    }
    if (K == 0) obj[static_cast<size_t>(start.size() - 1)] = w(o.job) * o.value;
    for (int k = 0; k < K; ++k) {
      const double coefficient = slope(o.job, k) * o.value;
      if (coefficient == 0.0) continue;
      index.push_back(n + m + o.job * K + k);
      element.push_back(-coefficient);
    }
    start.push_back(static_cast<CoinBigIndex>(index.size()));
  }
  for (int i = 0; i < n && K > 0; ++i) {
    const size_t c = static_cast<size_t>(n_opt + i);
    obj[c] = 1.0;
    col_lo[c] = -inf;
    col_up[c] = tp ? 0.0 : inf;
    for (int k = 0; k < K; ++k) {
      const int r = n + m + i * K + k;
      index.push_back(r);
      element.push_back(1.0);
      row_up[static_cast<size_t>(r)] = intercept(i, k);
    }
    start.push_back(static_cast<CoinBigIndex>(index.size()));
  }
  std::fill(row_up.begin(), row_up.begin() + n, 1.0);
  std::copy(p.capacity.begin(), p.capacity.end(), row_up.begin() + n);

  CoinPackedMatrix mat(true, n_row, n_col, static_cast<CoinBigIndex>(index.size()), element.data(),
                       index.data(), start.data(), nullptr);
  ClpSimplex model;
  model.setLogLevel(0);
  model.loadProblem(mat, col_lo.data(), col_up.data(), obj.data(), row_lo.data(), row_up.data());
  model.setOptimizationDirection(-1.0);  // maximise
  ClpSolve opts;
  opts.setSolveType(use_barrier ? ClpSolve::useBarrier : ClpSolve::useDual);
  const auto t0 = std::chrono::steady_clock::now();
  model.initialSolve(opts);
  const auto t1 = std::chrono::steady_clock::now();

  lp_solution sol;
  sol.seconds = std::chrono::duration<double>(t1 - t0).count();
  sol.optimal = model.isProvenOptimal();
  const double* xs = model.primalColumnSolution();
  const double* duals = model.dualRowSolution();
  sol.x.assign(xs, xs + n_opt);
  std::vector<double> t(nu, 0.0);
  for (int o = 0; o < n_opt; ++o) {
    const lp_option& op = p.options[static_cast<size_t>(o)];
    t[static_cast<size_t>(op.job)] += op.value * sol.x[static_cast<size_t>(o)];
  }
  for (int i = 0; i < n; ++i) sol.objective += utility_of(p, i, t[static_cast<size_t>(i)], w(i));
  // With setOptimizationDirection(-1), CLP reports duals of the original (maximisation) problem:
  // d objective / d rhs, which is >= 0 for a <= row (checked by perturbation in the scratch test).
  // Only round-off-sized negatives are clipped; anything larger would expose a sign error.
  sol.prices.assign(duals + n, duals + n + m);
  for (double& q : sol.prices)
    if (q <= 0.0 && q > -1e-9) q = 0.0;  // also turns -0 into +0
  return sol;
}

}  // namespace popalloc_test
