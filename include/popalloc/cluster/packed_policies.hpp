// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Gavel's space-sharing ("packed") policies: `allocate_packed(jobs, cluster, table,
/// options)` for max-min fairness (plain and water filling), min makespan, finish-time fairness
/// and max-throughput (with SLO floors), and Gavel's packed FIFO heuristic, with POP.
///
/// Jobs are grouped into classes of identical jobs and the class-level LP (packed_lp.hpp) is
/// solved exactly; its solution is spread back over the jobs so that every job of a class gets
/// exactly the class's average (disaggregate_packed), which makes the per-job allocation as good
/// as the LP optimum. The objective reported is that of the per-job allocation and the bound
/// comes from the LP's duals (weak duality), so both ends are certified.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "popalloc/cluster/class_policies.hpp"
#include "popalloc/cluster/cluster_spec.hpp"
#include "popalloc/cluster/combinations.hpp"
#include "popalloc/cluster/instance.hpp"
#include "popalloc/cluster/job.hpp"
#include "popalloc/cluster/packed_lp.hpp"
#include "popalloc/cluster/policies.hpp"
#include "popalloc/cluster/policy.hpp"
#include "popalloc/cluster/policy_support.hpp"
#include "popalloc/cluster/throughputs.hpp"
#include "popalloc/detail/stopwatch.hpp"
#include "popalloc/error.hpp"
#include "popalloc/pop/partition.hpp"
#include "popalloc/pop/pop_solver.hpp"
#include "popalloc/pop/split.hpp"

namespace popalloc::cluster {
namespace detail {

/// One part's packed solution (rows of its own instance).
struct packed_outcome {
  Eigen::MatrixXd x;
  std::vector<pair_share> pairs;
  double bound = std::numeric_limits<double>::quiet_NaN();
  bool optimal = true;
  std::int64_t pair_options = 0, pruned = 0;
  int water_filling_levels = 0;     ///< max-min with water filling: levels solved
  std::int64_t classes = 0;         ///< classes of identical jobs in the class LP
  int simplex_runs = 0;             ///< dense-simplex runs
  bool slo_floors_dropped = false;  ///< max-throughput: the floors could not all be met
};

/// `p` with first < second (the throughputs follow their jobs).
inline pair_share ordered(pair_share p) {
  if (p.first > p.second) {
    std::swap(p.first, p.second);
    std::swap(p.first_throughput, p.second_throughput);
  }
  return p;
}

/// Spreads `total` pair time of (a, b) on `gpu` over the jobs: every job of a gets total / n_a,
/// every job of b total / n_b (north-west corner rule, at most n_a + n_b - 1 pairs); inside one
/// class a cycle m_0 - m_1 - ... - m_0 gives every job 2 total / n_a.
inline void spread_pair(const std::vector<Eigen::Index>& a, const std::vector<Eigen::Index>& b,
                        const class_pair& q, double total, std::vector<pair_share>& out) {
  auto emit = [&](Eigen::Index i, Eigen::Index j, double f, double ti, double tj) {
    if (!(f > 0.0)) return;
    if (i > j) {
      std::swap(i, j);
      std::swap(ti, tj);
    }
    out.push_back({i, j, q.gpu, f, ti, tj});
  };
  if (q.first == q.second) {
    const std::size_t n = a.size();
    if (n == 2) {
      emit(a[0], a[1], total, q.first_throughput, q.second_throughput);
      return;
    }
    for (std::size_t k = 0; k < n; ++k)
      emit(a[k], a[(k + 1) % n], total / static_cast<double>(n), q.first_throughput,
           q.second_throughput);
    return;
  }
  const double da = total / static_cast<double>(a.size()),
               db = total / static_cast<double>(b.size());
  double ra = da, rb = db;
  std::size_t i = 0, j = 0;
  const double eps = 1e-14 * total;
  while (i < a.size() && j < b.size()) {
    const double f = std::min(ra, rb);
    emit(a[i], b[j], f, q.first_throughput, q.second_throughput);
    ra -= f;
    rb -= f;
    if (ra <= eps) {
      ++i;
      ra = da;
    }
    if (rb <= eps) {
      ++j;
      rb = db;
    }
  }
}

/// Scales shares down where rounding left a job's time above 1 or a type above its capacity.
inline void repair_packed(const instance& in, Eigen::MatrixXd& x, std::vector<pair_share>& pairs) {
  constexpr double margin = 1.0 - 1e-12;
  Eigen::VectorXd time = x.rowwise().sum();
  for (const pair_share& p : pairs) {
    time[p.first] += p.fraction;
    time[p.second] += p.fraction;
  }
  Eigen::VectorXd job_factor = (margin / time.array().max(margin)).matrix();
  for (Eigen::Index i = 0; i < x.rows(); ++i) x.row(i) *= job_factor[i];
  for (pair_share& p : pairs) p.fraction *= std::min(job_factor[p.first], job_factor[p.second]);
  Eigen::VectorXd used = x.transpose() * in.scale;
  for (const pair_share& p : pairs) used[p.gpu] += in.scale[p.first] * p.fraction;
  for (Eigen::Index w = 0; w < x.cols(); ++w) {
    if (used[w] <= margin * in.capacity[w]) continue;
    const double f = used[w] > 0.0 ? margin * in.capacity[w] / used[w] : 0.0;
    x.col(w) *= f;
    for (pair_share& p : pairs)
      if (p.gpu == w) p.fraction *= f;
  }
}

/// The per-job allocation of class totals: every job of class a runs `alone(a, w)` of its time
/// alone on type w, and `shared[p]` is the total time of the class pair model.pairs[p].
inline void spread_classes(const instance& in, const combination_model& model,
                           const Eigen::MatrixXd& alone, const Eigen::VectorXd& shared,
                           Eigen::MatrixXd& x, std::vector<pair_share>& pairs) {
  x = Eigen::MatrixXd::Zero(in.jobs(), in.types());
  for (std::size_t a = 0; a < model.classes.size(); ++a)
    for (const Eigen::Index i : model.classes[a])
      x.row(i) = alone.row(static_cast<Eigen::Index>(a)).cwiseMax(0.0);
  for (std::size_t p = 0; p < model.pairs.size(); ++p) {
    const class_pair& q = model.pairs[p];
    const double v = shared[static_cast<Eigen::Index>(p)];
    if (v > 0.0)
      spread_pair(model.classes[static_cast<std::size_t>(q.first)],
                  model.classes[static_cast<std::size_t>(q.second)], q, v, pairs);
  }
  repair_packed(in, x, pairs);
}

/// The per-job allocation of a class-LP solution.
inline void disaggregate_packed(const instance& in, const combination_model& model,
                                const packed_lp& lp, const Eigen::VectorXd& y, Eigen::MatrixXd& x,
                                std::vector<pair_share>& pairs) {
  Eigen::MatrixXd alone =
      Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(model.classes.size()), in.types());
  Eigen::VectorXd shared = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(model.pairs.size()));
  for (std::size_t j = 0; j < lp.columns.size(); ++j) {
    const packed_lp::column& c = lp.columns[j];
    const double v = y[static_cast<Eigen::Index>(j)];
    if (static_cast<Eigen::Index>(j) == lp.level) continue;
    if (c.pair < 0)
      alone(c.cls, c.gpu) =
          v / static_cast<double>(model.classes[static_cast<std::size_t>(c.cls)].size());
    else
      shared[c.pair] = v;
  }
  spread_classes(in, model, alone, shared, x, pairs);
}

/// The class LP's data of `model`: per class the throughputs, scale and size of a member, and
/// the class pairs as level_pair columns.
struct packed_classes {
  Eigen::MatrixXd throughput;
  Eigen::VectorXd scale, count;
  std::vector<Eigen::Index> first_member;
  std::vector<level_pair> pairs;
};

inline packed_classes packed_class_data(const instance& in, const combination_model& model) {
  packed_classes c;
  const auto k = static_cast<Eigen::Index>(model.classes.size());
  c.throughput.resize(k, in.types());
  c.scale.resize(k);
  c.count.resize(k);
  for (Eigen::Index a = 0; a < k; ++a) {
    const auto& members = model.classes[static_cast<std::size_t>(a)];
    const Eigen::Index r = members.front();
    c.first_member.push_back(r);
    c.throughput.row(a) = in.model_throughput.row(r);
    c.scale[a] = in.scale[r];
    c.count[a] = static_cast<double>(members.size());
  }
  c.pairs.reserve(model.pairs.size());
  for (const class_pair& q : model.pairs) {
    const double s = c.scale[q.first];
    const double upper = pair_upper(q, c.count[q.first], c.count[q.second], in.capacity[q.gpu], s);
    c.pairs.push_back(
        {q.first, q.second, q.gpu, s, q.first_throughput, q.second_throughput, upper});
  }
  return c;
}

/// Max-min fairness with water filling, or min makespan, over the classes and pairs of
/// `model`: the class LP of the unpacked level policies (class_policies.hpp) with a column per
/// class pair. Makespan's level is 1 / makespan, a job of class a needing throughput level x
/// r_a (remaining steps). The leximin vector of the per-job packed LP is unique and every
/// permutation of a class's jobs maps the LP to itself, so every job of a class ends at the
/// same level, as without space sharing.
inline class_solve packed_level_classes(const instance& in, const combination_model& model,
                                        const policy_options& o) {
  const bool makespan = o.policy == policy_kind::min_makespan;
  packed_classes c = packed_class_data(in, model);
  Eigen::VectorXd coef(c.count.size());
  for (Eigen::Index a = 0; a < coef.size(); ++a) {
    const Eigen::Index r = c.first_member[static_cast<std::size_t>(a)];
    coef[a] = makespan ? in.remaining[r] : level_coefficient(in, r);
  }
  return solve_level_classes(c.throughput, c.scale, c.count, coef, in.capacity, !makespan,
                             o.water_filling_threshold, o.max_water_filling_levels,
                             std::move(c.pairs));
}

/// One probe of packed finish-time fairness at level L (packed_finish_time_classes).
struct finish_time_probe {
  bool solved = false;
  double multiple = 0.0;  ///< T(L): the largest common multiple of the requirements L c(L)
  double bound = 0.0;     ///< B(L) >= T(L), the LP's dual bound
  double reached = 0.0;   ///< min over classes of the level the probe's point reaches
  Eigen::MatrixXd rows;   ///< the point: per-job rows and pair totals
  Eigen::VectorXd pair_totals;
  int runs = 0;
};

/// The class LP with every class a needing ET_a >= T c_a(L), c_a(L) = r_a / (D_a - t_a L),
/// maximising T.
inline finish_time_probe probe_finish_time(const packed_classes& c, const Eigen::VectorXd& r,
                                           const Eigen::VectorXd& d, const Eigen::VectorXd& t,
                                           const Eigen::VectorXd& capacity, double level) {
  finish_time_probe out;
  const Eigen::VectorXd coef = r.array() / (d.array() - t.array() * level);
  class_level_lp lp(c.throughput, c.scale, c.count, coef, capacity, c.pairs);
  Eigen::VectorXd duals;
  out.solved = lp.maximize_level(out.multiple, out.bound, duals);
  out.runs = lp.simplex_runs();
  if (!out.solved) return out;
  const Eigen::VectorXd et = lp.class_levels().cwiseProduct(coef);  // per job of each class
  out.reached = inf();
  for (Eigen::Index a = 0; a < et.size(); ++a)
    out.reached = std::min(out.reached, et[a] > 0.0 ? d[a] / (t[a] + r[a] / et[a]) : 0.0);
  out.rows = lp.per_job_rows();
  out.pair_totals = lp.pair_totals();
  return out;
}

/// Finish-time fairness over the classes and pairs of `model`. On the level scale L = 1 / rho,
/// a job of class a reaches L when ET_a >= L c_a(L), c_a(L) = r_a / (D_a - t_a L). The
/// coefficients grow with L, so no single class LP gives the optimum L*; a probe at L fixes
/// them at c(L) and maximises the common multiple T(L). T falls as L rises and L* = T(L*), so
/// every probe certifies both ends: its point reaches the levels of some feasible allocation
/// (L* >= their minimum), and L* <= max(L, B(L)) with B(L) >= T(L) the probe's dual bound
/// (L* >= L gives L* = T(L*) <= T(L)). The probes follow the secant of T(L) - L, aimed just
/// above the estimate so that the next probe's bound closes the upper end. `bound` is the upper
/// end on L.
inline class_solve packed_finish_time_classes(const instance& in, const combination_model& model,
                                              const policy_options& o) {
  const packed_classes c = packed_class_data(in, model);
  const Eigen::Index k = c.count.size();
  Eigen::VectorXd r(k), d(k), t(k);
  double lo = 0.0, hi = inf();  // every level D / (t + r / ET) is below D / t
  for (Eigen::Index a = 0; a < k; ++a) {
    const Eigen::Index i = c.first_member[static_cast<std::size_t>(a)];
    r[a] = in.remaining[i];
    d[a] = isolated_finish_time(in, i);
    t[a] = in.elapsed[i];
    if (t[a] > 0.0) hi = std::min(hi, d[a] / t[a]);
  }
  class_solve out;
  double level = 0.0, last_level = 0.0, last_excess = 0.0;  // last: the previous probe
  constexpr int max_probes = 60;
  for (int probe = 0; probe < max_probes; ++probe) {
    finish_time_probe p = probe_finish_time(c, r, d, t, in.capacity, level);
    out.runs += p.runs;
    if (!p.solved) return out;
    ++out.levels;
    hi = std::min(hi, std::max(level, p.bound));
    if (p.reached > lo || out.rows.size() == 0) {
      lo = std::max(lo, p.reached);
      out.rows = std::move(p.rows);
      out.pair_totals = std::move(p.pair_totals);
    }
    if (hi - lo <= 0.5 * o.tolerance * lo) break;
    const double excess = p.multiple - level;
    double estimate = p.reached;
    if (probe > 0 && excess != last_excess)
      estimate = level - excess * (level - last_level) / (excess - last_excess);
    last_level = level;
    last_excess = excess;
    level = std::max(estimate, lo) * (1.0 + 0.25 * o.tolerance);
    if (!(level < hi)) level = 0.5 * (lo + hi);
  }
  out.ok = out.rows.size() > 0 && lo > 0.0;
  out.bound = hi;
  out.level = lo;
  return out;
}

/// Whether `jobs` name keys of `table` (a job type unknown to the table cannot be paired, and
/// is far more likely a mismatched table than a job that shares with nothing).
inline void check_packed_jobs(const std::vector<job>& jobs, const throughput_table& table) {
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const job_key key{jobs[i].job_type, jobs[i].scale_factor};
    if (!table.contains(key))
      throw invalid_problem("job " + std::to_string(i) + " (id " + std::to_string(jobs[i].id) +
                            "): " + key.to_string() +
                            " is not in the throughput table, so its co-located throughputs "
                            "are unknown");
  }
}

inline void validate_packed_options(const policy_options& o) {
  if (o.policy == policy_kind::proportional_fairness || o.policy == policy_kind::isolated)
    throw invalid_options(std::string("space sharing is implemented for max-min-fairness, "
                                      "min-makespan, finish-time-fairness, max-throughput and "
                                      "fifo, not ") +
                          to_string(o.policy));
  if (!(o.pairing.fifo_threshold >= 0.0))
    throw invalid_options("pairing: fifo_threshold must be >= 0");
  if (o.heterogeneity_agnostic)
    throw invalid_options("space sharing is heterogeneity-aware only (Gavel's packed policies)");
  if (!o.gpu_cost.empty()) throw invalid_options("space sharing: GPU costs are not supported");
}

/// Largest dense tableau (rows x (columns + rows) doubles) a packed class LP may use: 240 MB,
/// pivots of about 20 ms. Jobs that are all distinct for the policy (min makespan's remaining
/// steps) make a class per job and a column per job pair, which grows with n^2.
constexpr double max_packed_tableau = 3e7;

/// \throws invalid_problem when the class LP of `model` would exceed max_packed_tableau.
inline void check_class_lp_size(const instance& in, const combination_model& model) {
  const auto k = static_cast<double>(model.classes.size());
  const double rows = static_cast<double>(in.types()) + 3.0 * k;
  const double columns =
      k * static_cast<double>(in.types()) + static_cast<double>(model.pairs.size()) + 2.0 * k + 1.0;
  if (rows * (columns + rows) <= max_packed_tableau) return;
  throw invalid_problem("space sharing: " + std::to_string(model.classes.size()) +
                        " classes of identical jobs and " + std::to_string(model.pairs.size()) +
                        " class pairs x GPU types make an exact class LP too large to solve "
                        "densely (" +
                        std::to_string(static_cast<long long>(rows)) + " x " +
                        std::to_string(static_cast<long long>(columns)) +
                        "); split the jobs with POP (pop_parts) or raise the pair threshold");
}

/// Max-throughput with SLO floors over classes split by floor (Gavel's
/// max_sum_throughput_packed_SLOs): the floors can all be met exactly when the class LP's floor
/// level reaches 1, and the total throughput is then maximised with the level held. Otherwise,
/// or with a floor no allocation reaches (a deadline already passed), out.slo_floors_dropped is
/// set and the caller solves without floors, as Gavel does.
inline void solve_packed_floors(const instance& in, const combination_model& model,
                                packed_outcome& out) {
  for (const auto& members : model.classes)
    if (!std::isfinite(in.slo_floor[members.front()])) {
      out.slo_floors_dropped = true;
      return;
    }
  const packed_lp lp = build_packed_lp(in, model, false, true);
  const packed_lp_solution s = solve_packed_lp(lp);
  out.simplex_runs += s.runs;
  if (!(s.level >= 1.0 - 1e-9)) {  // NaN: the first run failed
    out.slo_floors_dropped = true;
    return;
  }
  out.optimal = s.optimal;
  out.bound = s.bound;
  disaggregate_packed(in, model, lp, s.y, out.x, out.pairs);
}

/// Gavel's packed FIFO (`fifo_packed`): FIFO on whole GPUs (arrival order, each job on its
/// fastest type with room), then every queued job in arrival order joins the running single job
/// of its scale factor, on that job's type, whose normalised combined throughput with it is
/// largest and above options.pairing.fifo_threshold; the first queued job that finds none
/// ends the packing (no job overtakes another).
inline packed_outcome solve_packed_fifo(const instance& in, const std::vector<job>& jobs,
                                        const gpu_cluster& cluster, const throughput_table& table,
                                        const policy_options& o) {
  packed_outcome out;
  out.x = solve_baseline(in, o).x;
  std::vector<Eigen::Index> queue, running;
  for (Eigen::Index i = 0; i < in.jobs(); ++i) {
    if (!in.schedulable[static_cast<std::size_t>(i)]) continue;
    (out.x.row(i).sum() > 0.0 ? running : queue).push_back(i);
  }
  std::stable_sort(queue.begin(), queue.end(),
                   [&](Eigen::Index a, Eigen::Index b) { return in.arrival[a] < in.arrival[b]; });
  std::vector<char> paired(static_cast<std::size_t>(in.jobs()), 0);
  for (const Eigen::Index q : queue) {
    const job& jq = jobs[static_cast<std::size_t>(q)];
    double best = o.pairing.fifo_threshold;
    Eigen::Index partner = -1, gpu = -1;
    std::pair<double, double> shared{0.0, 0.0};
    for (const Eigen::Index r : running) {
      const job& jr = jobs[static_cast<std::size_t>(r)];
      if (paired[static_cast<std::size_t>(r)] || jr.scale_factor != jq.scale_factor) continue;
      Eigen::Index w = 0;
      out.x.row(r).maxCoeff(&w);
      if (!(in.true_throughput(q, w) > 0.0)) continue;
      const auto t = table.get_pair(job_key{jr.job_type, jr.scale_factor},
                                    job_key{jq.job_type, jq.scale_factor},
                                    cluster.types[static_cast<std::size_t>(w)]);
      if (!(t.first > 0.0) || !(t.second > 0.0)) continue;
      const double combined =
          t.first / in.true_throughput(r, w) + t.second / in.true_throughput(q, w);
      if (combined > best) {
        best = combined;
        partner = r;
        gpu = w;
        shared = t;
      }
    }
    if (partner < 0) break;
    paired[static_cast<std::size_t>(partner)] = 1;
    out.x.row(partner).setZero();
    out.pairs.push_back(
        ordered({partner, q, static_cast<int>(gpu), 1.0, shared.first, shared.second}));
  }
  return out;
}

/// The packed policy on one (sub-)instance; `jobs` are its rows' jobs.
inline packed_outcome solve_packed(const instance& in, const std::vector<job>& jobs,
                                   const gpu_cluster& cluster, const throughput_table& table,
                                   const policy_options& o) {
  if (o.policy == policy_kind::fifo) return solve_packed_fifo(in, jobs, cluster, table, o);
  packed_outcome out;
  const bool makespan = o.policy == policy_kind::min_makespan;
  const bool finish_time = o.policy == policy_kind::finish_time_fairness;
  const bool floors =
      o.policy == policy_kind::max_throughput && o.slo_floors && (in.slo_floor.array() > 0.0).any();
  const class_split split = makespan      ? class_split::remaining_steps
                            : finish_time ? class_split::finish_time
                            : floors      ? class_split::slo_floor
                                          : class_split::none;
  const combination_model model = make_combinations(in, jobs, cluster, table, o.pairing, split);
  out.pair_options = static_cast<std::int64_t>(model.pairs.size());
  out.pruned = model.pruned;
  out.classes = static_cast<std::int64_t>(model.classes.size());
  check_class_lp_size(in, model);
  if (model.classes.empty()) {
    out.x = Eigen::MatrixXd::Zero(in.jobs(), in.types());
    return out;
  }
  if ((o.policy == policy_kind::max_min_fairness && o.water_filling) || makespan || finish_time) {
    const class_solve s =
        finish_time ? packed_finish_time_classes(in, model, o) : packed_level_classes(in, model, o);
    out.optimal = s.ok;
    // Makespan's and finish-time fairness's bounds are on the level (1 / makespan, 1 / rho):
    // the reciprocal bounds the objective below.
    out.bound = makespan || finish_time ? 1.0 / s.bound : s.bound;
    if (!makespan && !finish_time) out.water_filling_levels = s.levels;
    out.simplex_runs = s.runs;
    if (s.ok)
      spread_classes(in, model, s.rows, s.pair_totals, out.x, out.pairs);
    else
      out.x = Eigen::MatrixXd::Zero(in.jobs(), in.types());
    return out;
  }
  if (floors) {
    solve_packed_floors(in, model, out);
    if (!out.slo_floors_dropped) return out;
  }
  const packed_lp lp = build_packed_lp(in, model, o.policy == policy_kind::max_min_fairness);
  const packed_lp_solution s = solve_packed_lp(lp);
  out.optimal = s.optimal;
  out.bound = s.bound;
  out.simplex_runs += s.runs;
  disaggregate_packed(in, model, lp, s.y, out.x, out.pairs);
  return out;
}

/// ET_i with the pairs, in `throughput` (true or model) for singles.
inline Eigen::VectorXd packed_throughput(const Eigen::MatrixXd& throughput,
                                         const Eigen::MatrixXd& x,
                                         const std::vector<pair_share>& pairs) {
  Eigen::VectorXd et = (throughput.array() * x.array()).rowwise().sum().matrix();
  for (const pair_share& p : pairs) {
    et[p.first] += p.first_throughput * p.fraction;
    et[p.second] += p.second_throughput * p.fraction;
  }
  return et;
}

inline double packed_objective(const instance& in, const policy_options& o,
                               const Eigen::VectorXd& et) {
  if (o.policy == policy_kind::max_throughput) return et.sum();
  if (o.policy == policy_kind::min_makespan) return makespan_of(in, et);
  if (o.policy == policy_kind::finish_time_fairness) return finish_time_fairness_of(in, et);
  return max_min_level_of(in, et);
}

inline std::vector<job> job_subset(const std::vector<job>& jobs,
                                   const std::vector<std::int64_t>& members) {
  std::vector<job> out;
  out.reserve(members.size());
  for (const std::int64_t i : members) out.push_back(jobs[static_cast<std::size_t>(i)]);
  return out;
}

/// POP: parts of the jobs on shares of the GPUs; pairs only inside a part.
inline packed_outcome solve_packed_pop(const instance& in, const std::vector<job>& jobs,
                                       const gpu_cluster& cluster, const throughput_table& table,
                                       const policy_options& o, cluster_allocation& result) {
  const int k = o.pop_parts;
  const auto n = static_cast<std::int64_t>(jobs.size());
  pop::partition assignment = o.pop_strategy == pop::partition_strategy::round_robin
                                  ? pop::partition_round_robin(n, k)
                              : o.pop_strategy == pop::partition_strategy::shuffled
                                  ? pop::partition_shuffled(n, k, o.pop_seed)
                                  : pop::partition_uniform_random(n, k, o.pop_seed);
  const pop::unit_split units = pop::split_units(cluster.counts, k);
  const auto parts = pop::pop_solve(
      assignment,
      [&](int s, const std::vector<std::int64_t>& members) {
        packed_outcome part;
        if (members.empty()) return part;
        Eigen::VectorXd share(static_cast<Eigen::Index>(cluster.size()));
        for (std::size_t w = 0; w < cluster.size(); ++w)
          share[static_cast<Eigen::Index>(w)] =
              static_cast<double>(units.shares[w][static_cast<std::size_t>(s)]);
        return solve_packed(in.subset(members, share), job_subset(jobs, members), cluster, table,
                            o);
      },
      o.threads);
  packed_outcome out;
  out.x = Eigen::MatrixXd::Zero(in.jobs(), in.types());
  const auto members = assignment.members();
  for (int s = 0; s < k; ++s) {
    const packed_outcome& part = parts.results[static_cast<std::size_t>(s)];
    const auto& rows = members[static_cast<std::size_t>(s)];
    if (rows.empty()) continue;
    for (std::size_t r = 0; r < rows.size(); ++r)
      out.x.row(static_cast<Eigen::Index>(rows[r])) = part.x.row(static_cast<Eigen::Index>(r));
    for (pair_share p : part.pairs) {
      p.first = rows[static_cast<std::size_t>(p.first)];
      p.second = rows[static_cast<std::size_t>(p.second)];
      out.pairs.push_back(ordered(p));
    }
    out.optimal = out.optimal && part.optimal;
    out.slo_floors_dropped = out.slo_floors_dropped || part.slo_floors_dropped;
    out.water_filling_levels = std::max(out.water_filling_levels, part.water_filling_levels);
    out.classes += part.classes;
    out.simplex_runs += part.simplex_runs;
    out.pair_options += part.pair_options;
    out.pruned += part.pruned;
  }
  result.pop_parts_seconds_max = parts.seconds_max();
  result.pop_parts_seconds_sum = parts.seconds_sum();
  return out;
}

}  // namespace detail

/// \brief Gavel's packed policies: like allocate() (same options, same result fields), but jobs
/// may also share GPUs in pairs of equal scale factor at the co-located throughputs of `table`
/// (options.pairing says which pairs are offered). Max-min fairness: plain (the minimum is
/// exact and certified, and among the allocations that reach it the one with the largest total
/// normalised throughput is returned) or, with options.water_filling, the leximin allocation
/// (water filling over classes, options.water_filling_threshold and max_water_filling_levels as
/// for allocate()); min makespan (exact over classes of jobs with equal remaining steps, so
/// as fast as the classes are few); finish-time fairness (classes of jobs that also agree on
/// elapsed and isolated times, one class LP per probe of the level 1 / rho, certified to
/// options.tolerance); max-throughput (without costs; with SLO floors as for allocate(), met
/// exactly over classes of jobs with equal floors, or dropped when they cannot all be met); FIFO
/// (Gavel's packing heuristic, options.pairing.fifo_threshold; no bound). The
/// result's `fraction` is each job's time alone, `pairs` the time shared; POP drops the pairs
/// whose jobs land in different parts.
/// \throws invalid_problem for invalid jobs or cluster or a job whose (type, scale factor) is
/// not in `table`; invalid_options for other policies, agnostic or GPU costs.
inline cluster_allocation allocate_packed(const std::vector<job>& jobs, const gpu_cluster& cluster,
                                          const throughput_table& table,
                                          const policy_options& options = {}) {
  const popalloc::detail::stopwatch clock;
  detail::validate_options(options, cluster);
  detail::validate_packed_options(options);
  const instance in = prepare_instance(jobs, cluster, options);
  detail::check_packed_jobs(jobs, table);
  cluster_allocation out;
  out.policy = options.policy;
  out.space_sharing = true;
  out.schedulable = in.schedulable;
  out.pop_parts = options.pop_parts;
  const detail::packed_outcome r =
      options.pop_parts == 1 ? detail::solve_packed(in, jobs, cluster, table, options)
                             : detail::solve_packed_pop(in, jobs, cluster, table, options, out);
  out.fraction = r.x;
  out.pairs = r.pairs;
  out.water_filling_levels = r.water_filling_levels;
  out.classes = r.classes;
  out.simplex_runs = r.simplex_runs;
  const Eigen::VectorXd model_et = detail::packed_throughput(in.model_throughput, r.x, r.pairs);
  out.objective = detail::packed_objective(in, options, model_et);
  out.bound = options.pop_parts == 1 ? r.bound : std::numeric_limits<double>::quiet_NaN();
  const bool closed = options.pop_parts > 1 || !(std::abs(out.bound - out.objective) >
                                                 options.tolerance * std::abs(out.bound));
  out.status = r.optimal && closed ? solve_status::converged : solve_status::stalled;
  out.effective_throughput = detail::packed_throughput(in.true_throughput, r.x, r.pairs);
  out.proportional_throughput = in.proportional_true;
  if (options.policy == policy_kind::max_throughput && options.slo_floors) {
    const double worst = detail::applied_floor_shortfall(in, model_et, out.slo_jobs);
    if (out.slo_jobs > 0) {
      out.slo_floors_dropped = r.slo_floors_dropped;
      out.slo_worst_shortfall = worst;
    }
  }
  out.normalized_throughput.resize(in.jobs());
  for (Eigen::Index i = 0; i < in.jobs(); ++i)
    out.normalized_throughput[i] =
        in.proportional_true[i] > 0.0
            ? in.scale[i] * out.effective_throughput[i] / (in.weight[i] * in.proportional_true[i])
            : 0.0;
  out.seconds = clock.seconds();
  return out;
}

}  // namespace popalloc::cluster
