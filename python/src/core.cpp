// SPDX-License-Identifier: Apache-2.0
// popalloc._core: the nanobind extension behind the `popalloc` Python package. The Python layer
// (python/popalloc/*.py) normalises arguments (dtype, contiguity, dict formats); this file turns
// them into popalloc problems, runs the solvers with the GIL released and hands the results back
// as numpy arrays that own the solver's buffers (no copy on the way out).
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include <Eigen/Core>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

// Only what the problem hooks below need: popalloc::solve's definition (dual_solver.hpp, pulled
// in by the headers after the hooks) must see them.
#include "popalloc/dense_problem.hpp"
#include "popalloc/detail/engine.hpp"
#include "popalloc/detail/sample_start.hpp"
#include "popalloc/detail/traits.hpp"

// ---- A dense problem that reads the caller's arrays in place -----------------------------------
//
// popalloc::dense_problem owns Eigen matrices, so passing a numpy array through it costs a copy of
// the whole throughput matrix (64 MB at 1e6 x 8, about a tenth of the solve). dense_ref carries
// the same data as pointers, and the hooks below let popalloc::solve treat it as a dense problem:
// the CPU engine reads dense problems in place anyway (the same dense_view), the sample start
// takes its sample from it, and validation defers to dense_problem::validate on a copy whenever
// the data is not plainly valid, so the library itself words every error. popalloc::solve's own
// orchestration runs unchanged; a test checks that the results equal those of the same data in
// a dense_problem bit for bit.
namespace popalloc_python {

template <class Scalar>
struct dense_ref {
  using scalar_type = Scalar;
  using matrix = typename popalloc::dense_problem<Scalar>::matrix;
  using vector = typename popalloc::dense_problem<Scalar>::vector;

  const Scalar* throughput = nullptr;  // n x m, row-major
  const Scalar* demand = nullptr;      // demand_rows x demand_cols, row-major, or null
  const Scalar* job_demand = nullptr;
  const Scalar* weight = nullptr;
  const Scalar* target = nullptr;
  Eigen::Index n = 0, m = 0;
  Eigen::Index weight_size = 0, target_size = 0, job_demand_size = 0;
  Eigen::Index demand_rows = 0, demand_cols = 0;
  Eigen::VectorXd capacity;

  Eigen::Index jobs() const { return n; }
  Eigen::Index resources() const { return m; }

  /// The same data in a dense_problem (a copy).
  popalloc::dense_problem<Scalar> owned() const {
    popalloc::dense_problem<Scalar> p;
    p.throughput = Eigen::Map<const matrix>(throughput, n, m);
    p.capacity = capacity;
    if (weight) p.weight = Eigen::Map<const vector>(weight, weight_size);
    if (target) p.target = Eigen::Map<const vector>(target, target_size);
    if (job_demand) p.job_demand = Eigen::Map<const vector>(job_demand, job_demand_size);
    if (demand) p.demand = Eigen::Map<const matrix>(demand, demand_rows, demand_cols);
    return p;
  }

  /// dense_problem::validate's verdict: its conditions are checked here in place, and data that
  /// fails any of them is validated by dense_problem::validate on a copy, which names the
  /// offending entry.
  template <class Utility>
  void validate(const Utility& utility) const {
    if (!plainly_valid<Utility>()) owned().validate(utility);
  }

 private:
  /// Every entry 0 or within the value range (NaN fails).
  static bool in_range(const Scalar* values, std::int64_t count) {
    double bad = 0.0;
    POPALLOC_PRAGMA_OMP(omp parallel for reduction(+ : bad) if (count > 65536))
    for (std::int64_t k = 0; k < count; ++k) {
      const double v = static_cast<double>(values[k]);
      bad += (v == 0.0) | ((v >= popalloc::value_min) & (v <= popalloc::value_max)) ? 0.0 : 1.0;
    }
    return bad == 0.0;
  }

  bool vector_ok(const Scalar* v, Eigen::Index size, bool positive) const {
    if (v == nullptr) return size == 0;
    if (size != n) return false;
    for (Eigen::Index i = 0; i < n; ++i) {
      const double x = static_cast<double>(v[i]);
      if (!popalloc::detail::in_value_range(x) || x < 0 || (positive && x == 0)) return false;
    }
    return true;
  }

  template <class Utility>
  bool plainly_valid() const {
    if (n == 0 || m == 0 || capacity.size() != m) return false;
    for (Eigen::Index j = 0; j < m; ++j)
      if (!popalloc::detail::in_value_range(capacity[j]) || capacity[j] < 0) return false;
    if (!vector_ok(weight, weight_size, Utility::requires_positive_weight)) return false;
    if (!vector_ok(job_demand, job_demand_size, false)) return false;
    if (Utility::uses_target) {
      if (target == nullptr || target_size != n) return false;
      for (Eigen::Index i = 0; i < n; ++i)
        if (!(std::abs(static_cast<double>(target[i])) <= popalloc::value_max)) return false;
    } else if (target_size != 0 && target_size != n) {
      return false;
    }
    if (demand_rows * demand_cols != 0 || demand != nullptr) {
      if (job_demand != nullptr || demand_rows != n || demand_cols != m) return false;
      if (!in_range(demand, n * m)) return false;
    }
    if (!in_range(throughput, n * m)) return false;
    if (Utility::requires_positive_throughput) {
      int closed_rows = 0;
      const Scalar* a = throughput;
      const double* cap = capacity.data();
      const Eigen::Index cols = m;
      POPALLOC_PRAGMA_OMP(omp parallel for reduction(| : closed_rows) if (n * m > 65536))
      for (Eigen::Index i = 0; i < n; ++i) {
        int open = 0;
        for (Eigen::Index j = 0; j < cols; ++j)
          open |= static_cast<int>(a[i * cols + j] > 0 && cap[j] > 0);
        closed_rows |= static_cast<int>(!open);
      }
      if (closed_rows != 0) return false;
    }
    return true;
  }
};

}  // namespace popalloc_python

namespace popalloc::detail {

template <class Scalar>
class problem_storage<host_executor, popalloc_python::dense_ref<Scalar>> {
 public:
  using view_type = dense_view<Scalar>;

  problem_storage(host_executor& /*exec*/, const popalloc_python::dense_ref<Scalar>& p)
      : total_options(p.n * p.m) {
    view.n = p.n;
    view.m = static_cast<std::int32_t>(p.m);
    view.throughput = p.throughput;
    view.demand = p.demand;
    view.job_demand = p.job_demand;
    view.weight = p.weight;
    view.target = p.target;
    closed_.assign(static_cast<std::size_t>(p.m), 0);
    bool any_closed = false;
    for (Eigen::Index j = 0; j < p.m; ++j)
      if (p.capacity[j] == 0) closed_[static_cast<std::size_t>(j)] = 1, any_closed = true;
    if (any_closed) view.closed = closed_.data();
  }

  view_type view;
  std::int64_t total_options;

 private:
  std::vector<unsigned char> closed_;
};

template <class Scalar>
struct is_dense_problem<popalloc_python::dense_ref<Scalar>> : std::true_type {};

template <class Scalar>
const Eigen::VectorXd& capacity_of(const popalloc_python::dense_ref<Scalar>& problem) {
  return problem.capacity;
}

template <class Scalar>
std::int64_t sample_stride(const popalloc_python::dense_ref<Scalar>& problem,
                           bool piecewise_linear) {
  return sample_stride(problem.jobs(), problem.resources(), piecewise_linear);
}

/// sample_jobs(problem, stride) of a whole problem: jobs stride / 2 + k stride, capacities
/// scaled to the sample's share of the jobs.
template <class Scalar>
dense_problem<Scalar> sample_jobs(const popalloc_python::dense_ref<Scalar>& p,
                                  std::int64_t stride) {
  const std::int64_t first = stride / 2;
  const auto count =
      static_cast<Eigen::Index>(p.n > first ? (p.n - first + stride - 1) / stride : 0);
  dense_problem<Scalar> out;
  auto take = [&](const Scalar* from, Eigen::Index cols, auto& to) {
    if (from == nullptr) return;
    to.resize(count, cols);
    for (Eigen::Index k = 0; k < count; ++k)
      for (Eigen::Index j = 0; j < cols; ++j) to(k, j) = from[(first + k * stride) * cols + j];
  };
  take(p.throughput, p.m, out.throughput);
  take(p.demand, p.m, out.demand);
  take(p.weight, 1, out.weight);
  take(p.target, 1, out.target);
  take(p.job_demand, 1, out.job_demand);
  out.capacity = p.capacity * (static_cast<double>(count) / static_cast<double>(p.n));
  return out;
}

}  // namespace popalloc::detail

#include "popalloc/cluster/policies.hpp"
#include "popalloc/lb.hpp"
#include "popalloc/popalloc.hpp"
#include "popalloc/te.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace popalloc_python {
namespace {

// ---- numpy output -------------------------------------------------------------------------------

/// A numpy array that owns `values` (moved to the heap, freed with the array).
template <class T, class Allocator>
nb::object to_numpy(std::vector<T, Allocator>&& values) {
  using owned_vector = std::vector<T, Allocator>;
  auto* owned = new owned_vector(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<owned_vector*>(p); });
  const std::size_t shape[1] = {owned->size()};
  return nb::cast(nb::ndarray<nb::numpy, T, nb::ndim<1>>(owned->data(), 1, shape, owner));
}

nb::object to_numpy(const Eigen::VectorXd& v) {
  return to_numpy(std::vector<double>(v.data(), v.data() + v.size()));
}

/// Row-major n x m matrix as a numpy array that owns it.
nb::object to_numpy(const Eigen::MatrixXd& x) {
  std::vector<double> values(static_cast<std::size_t>(x.size()));
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index j = 0; j < x.cols(); ++j)
      values[static_cast<std::size_t>(i * x.cols() + j)] = x(i, j);
  auto* owned = new std::vector<double>(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
  const std::size_t shape[2] = {static_cast<std::size_t>(x.rows()),
                                static_cast<std::size_t>(x.cols())};
  return nb::cast(nb::ndarray<nb::numpy, double, nb::ndim<2>>(owned->data(), 2, shape, owner));
}

// ---- numpy input --------------------------------------------------------------------------------

using any_array = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

template <class Scalar>
bool has_dtype(const any_array& a) {
  return a.dtype() == nb::dtype<Scalar>();
}

template <class Scalar>
const Scalar* data_of(const std::optional<any_array>& a) {
  return a && a->size() > 0 ? static_cast<const Scalar*>(a->data()) : nullptr;
}

Eigen::VectorXd to_vector(const any_array& a) {
  if (!has_dtype<double>(a) || a.ndim() != 1) throw nb::type_error("expected a 1-D float64 array");
  return Eigen::Map<const Eigen::VectorXd>(static_cast<const double*>(a.data()),
                                           static_cast<Eigen::Index>(a.shape(0)));
}

// ---- Options and utilities ----------------------------------------------------------------------

popalloc::gap_measure parse_gap(const std::string& name) {
  if (name == "automatic") return popalloc::gap_measure::automatic;
  if (name == "objective") return popalloc::gap_measure::objective;
  if (name == "anchored") return popalloc::gap_measure::anchored;
  throw popalloc::invalid_options("gap must be 'automatic', 'objective' or 'anchored', got '" +
                                  name + "'");
}

struct options_in {
  double relative_gap = 1e-4;
  double absolute_gap = 0.0;
  std::string gap = "automatic";
  int max_iterations = 500;
  double time_limit = std::numeric_limits<double>::infinity();
  int threads = 0;
  std::optional<any_array> warm_start;
  bool sample_start = true;
  int callback_every = 1;

  popalloc::solver_options get() const {
    popalloc::solver_options o;
    o.relative_gap = relative_gap;
    o.absolute_gap = absolute_gap;
    o.gap = parse_gap(gap);
    o.max_iterations = max_iterations;
    o.time_limit_seconds = time_limit;
    o.threads = threads;
    if (warm_start) o.warm_start_prices = to_vector(*warm_start);
    o.sample_start = sample_start;
    o.callback_every = callback_every;
    return o;
  }
};

/// Calls f(utility) with the utility named `name` ("power" reads alpha, "linear-with-floor"
/// reads penalty).
template <class F>
decltype(auto) with_utility(const std::string& name, double alpha, double penalty, F&& f) {
  namespace u = popalloc::utility;
  if (name == "log") return f(u::log{});
  if (name == "linear") return f(u::linear{});
  if (name == "target-priority") return f(u::target_priority{});
  if (name == "power") return f(u::power(alpha));
  if (name == "linear-with-floor") {
    if (!(penalty >= 0.0) || !std::isfinite(penalty))
      throw popalloc::invalid_options("linear-with-floor needs a finite penalty >= 0");
    u::linear_with_floor l;
    l.penalty = penalty;
    return f(l);
  }
  throw popalloc::invalid_options("unknown utility '" + name +
                                  "' (log, linear, target-priority, power, linear-with-floor)");
}

// ---- Progress callback: user callback, Ctrl-C, and exceptions -----------------------------------

struct progress_info {
  int iteration = 0;
  double elapsed_seconds = 0.0;
  double objective = 0.0;
  double dual_bound = 0.0;
  double relative_gap = 0.0;
  double smoothing = 0.0;
  Eigen::VectorXd prices;
};

/// The solver's callback. Runs on the solving thread with the GIL released; takes the GIL only
/// to check for signals (Ctrl-C stops the solve, which returns its best allocation, as the
/// command-line solver does) and to call the user's callback. A Python exception in the callback
/// stops the solve and is raised again once the solve has returned.
class callback_bridge {
 public:
  explicit callback_bridge(nb::handle user) : user_(user) {}

  popalloc::callback_action operator()(const popalloc::progress& p) {
    held_gil_ = held_gil_ || PyGILState_Check() == 1;
    nb::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
        PyErr_Clear();
        signal_stop_ = true;
      } else {
        error_ = std::make_unique<nb::python_error>();
      }
      return popalloc::callback_action::stop;
    }
    if (!user_.is_valid() || user_.is_none()) return popalloc::callback_action::proceed;
    progress_info info;
    info.iteration = p.iteration;
    info.elapsed_seconds = p.elapsed_seconds;
    info.objective = p.primal_objective;
    info.dual_bound = p.dual_bound;
    info.relative_gap = p.relative_gap;
    info.smoothing = p.smoothing;
    info.prices = Eigen::Map<const Eigen::VectorXd>(p.prices, p.n_resources);
    try {
      const nb::object answer = user_(nb::cast(std::move(info)));
      const int stop = PyObject_IsTrue(answer.ptr());
      if (stop < 0) throw nb::python_error();
      if (stop == 1) return popalloc::callback_action::stop;
    } catch (nb::python_error& e) {
      // Ctrl-C while the callback's Python code runs surfaces there: it still means "stop".
      if (e.matches(PyExc_KeyboardInterrupt)) {
        signal_stop_ = true;
      } else {
        error_ = std::make_unique<nb::python_error>(std::move(e));
      }
      return popalloc::callback_action::stop;
    }
    return popalloc::callback_action::proceed;
  }

  bool signal_stop() const { return signal_stop_; }
  /// Whether any call found the GIL held by the solving thread (it should have been released).
  bool held_gil() const { return held_gil_; }
  /// Raises the callback's exception, if any (with the GIL held).
  void rethrow() {
    if (error_) {
      nb::python_error e = std::move(*error_);
      error_.reset();
      throw e;
    }
  }

 private:
  nb::handle user_;
  bool signal_stop_ = false;
  bool held_gil_ = false;
  std::unique_ptr<nb::python_error> error_;
};

// ---- Results ------------------------------------------------------------------------------------

nb::dict timings_dict(const popalloc::solve_timings& t) {
  nb::dict d;
  d["setup"] = t.setup_seconds;
  d["solve"] = t.solve_seconds;
  d["evaluate"] = t.evaluate_seconds;
  d["sample"] = t.sample_seconds;
  return d;
}

/// Every field of a solve_result; the buffers move into numpy arrays.
nb::dict result_dict(popalloc::solve_result&& r, bool signal_stop, bool held_gil) {
  nb::dict d;
  d["status"] = r.status;
  d["iterations"] = r.iterations;
  d["sample_iterations"] = r.sample_iterations;
  d["smoothing_stages"] = r.smoothing_stages;
  d["interior_point_steps"] = r.interior_point_steps;
  d["smoothing"] = r.smoothing;
  d["objective"] = r.primal_objective;
  d["dual_bound"] = r.dual_bound;
  d["trivial_bound"] = r.trivial_bound;
  d["duality_gap"] = r.duality_gap;
  d["relative_gap"] = r.relative_gap;
  d["gap_scale"] = r.gap_scale;
  d["gap_scale_name"] = std::string(r.gap_scale_name);
  d["gap_measure"] = std::string(popalloc::to_string(r.gap_measure));
  d["max_capacity_violation"] = r.max_capacity_violation;
  d["prices"] = to_numpy(r.prices);
  d["final_prices"] = to_numpy(r.final_prices);
  d["usage"] = to_numpy(r.usage);
  d["throughput"] = to_numpy(r.throughput);
  d["indptr"] = to_numpy(std::move(r.allocation.job_offset));
  d["indices"] = to_numpy(std::move(r.allocation.option));
  d["data"] = to_numpy(std::move(r.allocation.fraction));
  d["timings"] = timings_dict(r.timings);
  d["interrupted_by_signal"] = signal_stop;
  d["solved_holding_gil"] = held_gil;
  return d;
}

// ---- Dense solves -------------------------------------------------------------------------------

template <class Scalar>
dense_ref<Scalar> read_dense(const any_array& throughput, const any_array& capacity,
                             const std::optional<any_array>& weight,
                             const std::optional<any_array>& target,
                             const std::optional<any_array>& job_demand,
                             const std::optional<any_array>& demand) {
  if (throughput.ndim() != 2) throw nb::value_error("throughput must be a 2-D array");
  dense_ref<Scalar> in;
  in.throughput = static_cast<const Scalar*>(throughput.data());
  in.n = static_cast<Eigen::Index>(throughput.shape(0));
  in.m = static_cast<Eigen::Index>(throughput.shape(1));
  in.capacity = to_vector(capacity);
  auto vector_in = [](const std::optional<any_array>& a, const char* name, Eigen::Index& size) {
    if (!a) return;
    if (!has_dtype<Scalar>(*a) || a->ndim() != 1)
      throw nb::type_error(
          (std::string(name) + " must be a 1-D array of throughput's dtype").c_str());
    size = static_cast<Eigen::Index>(a->shape(0));
  };
  vector_in(weight, "weight", in.weight_size);
  vector_in(target, "target", in.target_size);
  vector_in(job_demand, "job_demand", in.job_demand_size);
  in.weight = data_of<Scalar>(weight);
  in.target = data_of<Scalar>(target);
  in.job_demand = data_of<Scalar>(job_demand);
  if (demand) {
    if (!has_dtype<Scalar>(*demand) || demand->ndim() != 2)
      throw nb::type_error("demand must be a 2-D array of throughput's dtype");
    in.demand_rows = static_cast<Eigen::Index>(demand->shape(0));
    in.demand_cols = static_cast<Eigen::Index>(demand->shape(1));
    in.demand = data_of<Scalar>(demand);
  }
  return in;
}

template <class Scalar>
nb::dict solve_dense_typed(const any_array& throughput, const any_array& capacity,
                           const std::string& utility_name, double alpha, double penalty,
                           const std::optional<any_array>& weight,
                           const std::optional<any_array>& target,
                           const std::optional<any_array>& job_demand,
                           const std::optional<any_array>& demand, const options_in& opts,
                           nb::handle callback, bool copy) {
  const dense_ref<Scalar> in =
      read_dense<Scalar>(throughput, capacity, weight, target, job_demand, demand);
  const popalloc::solver_options options = opts.get();
  callback_bridge bridge(callback);
  const popalloc::progress_callback cb = [&bridge](const popalloc::progress& p) {
    return bridge(p);
  };
  // Where the solver read the throughput matrix from (the caller's buffer, unless `copy`).
  std::uintptr_t read_from = 0;
  popalloc::solve_result r = with_utility(utility_name, alpha, penalty, [&](const auto& u) {
    nb::gil_scoped_release release;
    if (!copy) {
      read_from = reinterpret_cast<std::uintptr_t>(in.throughput);
      popalloc::solve_result view_result = popalloc::solve(in, u, options, cb);
      // popalloc::solve finishes dense_problems only: the finish's problems are small, so it
      // gets a copy of the view's data (detail/interior_point.hpp).
      if (options.interior_point_finish &&
          popalloc::detail::interior_point_may_help(view_result.status) &&
          in.jobs() * in.resources() <= popalloc::detail::interior_point_copy_limit)
        popalloc::detail::finish_with_interior_point(in.owned(), u, options, view_result);
      return view_result;
    }
    const popalloc::dense_problem<Scalar> owned = in.owned();
    read_from = reinterpret_cast<std::uintptr_t>(owned.throughput.data());
    return popalloc::solve(owned, u, options, cb);
  });
  bridge.rethrow();
  nb::dict d = result_dict(std::move(r), bridge.signal_stop(), bridge.held_gil());
  d["throughput_address"] = read_from;
  return d;
}

nb::dict solve_dense(const any_array& throughput, const any_array& capacity,
                     const std::string& utility, double alpha, double penalty,
                     const std::optional<any_array>& weight, const std::optional<any_array>& target,
                     const std::optional<any_array>& job_demand,
                     const std::optional<any_array>& demand, const options_in& opts,
                     nb::handle callback, bool copy) {
  if (has_dtype<double>(throughput))
    return solve_dense_typed<double>(throughput, capacity, utility, alpha, penalty, weight, target,
                                     job_demand, demand, opts, callback, copy);
  if (has_dtype<float>(throughput))
    return solve_dense_typed<float>(throughput, capacity, utility, alpha, penalty, weight, target,
                                    job_demand, demand, opts, callback, copy);
  throw nb::type_error("throughput must be float64 or float32");
}

/// Seconds of popalloc::solve alone on an owned copy of the data (made before the clock starts):
/// what a C++ caller with the same data in a dense_problem pays. For the overhead benchmark.
double time_cpp_solve(const any_array& throughput, const any_array& capacity,
                      const std::string& utility, double alpha, double penalty,
                      const options_in& opts) {
  if (!has_dtype<double>(throughput)) throw nb::type_error("throughput must be float64");
  const auto in = read_dense<double>(throughput, capacity, {}, {}, {}, {});
  const popalloc::dense_problem<double> p = in.owned();
  const popalloc::solver_options options = opts.get();
  return with_utility(utility, alpha, penalty, [&](const auto& u) {
    nb::gil_scoped_release release;
    const auto start = std::chrono::steady_clock::now();
    const popalloc::solve_result r = popalloc::solve(p, u, options);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r.status == popalloc::solve_status::numerical_error)
      throw popalloc::backend_error("the C++ reference solve ended in numerical_error");
    return seconds;
  });
}

// ---- Bundle solves ------------------------------------------------------------------------------

/// Options given in compressed form: job i owns options job_offset[i] .. job_offset[i+1]-1,
/// option o has value rate value[o] and consumes amount[k] of resource[k] for the entries k in
/// option_offset[o] .. option_offset[o+1]-1 (a CSR matrix options x resources).
nb::dict solve_bundle(const any_array& job_offset, const any_array& value,
                      const any_array& option_offset, const any_array& resource,
                      const any_array& amount, const any_array& capacity,
                      const std::string& utility_name, double alpha, double penalty,
                      const std::optional<any_array>& weight,
                      const std::optional<any_array>& target, const options_in& opts,
                      nb::handle callback) {
  auto need = [](const any_array& a, auto tag, const char* what) {
    using T = decltype(tag);
    if (!has_dtype<T>(a) || a.ndim() != 1) throw nb::type_error(what);
    return static_cast<const T*>(a.data());
  };
  const auto* jo = need(job_offset, std::int64_t{}, "job_offset must be a 1-D int64 array");
  const auto* v = need(value, double{}, "value must be a 1-D float64 array");
  const auto* oo = need(option_offset, std::int64_t{}, "option_offset must be a 1-D int64 array");
  const auto* res = need(resource, std::int32_t{}, "resource must be a 1-D int32 array");
  const auto* am = need(amount, double{}, "amount must be a 1-D float64 array");
  const std::size_t jobs = job_offset.shape(0) == 0 ? 0 : job_offset.shape(0) - 1;
  const auto options_count = static_cast<std::int64_t>(value.shape(0));
  const auto entries = static_cast<std::int64_t>(resource.shape(0));
  if (static_cast<std::int64_t>(option_offset.shape(0)) != options_count + 1 ||
      static_cast<std::int64_t>(amount.shape(0)) != entries)
    throw nb::value_error("consumption must have one row per option");
  if (job_offset.shape(0) == 0 || jo[0] != 0 || jo[jobs] != options_count)
    throw nb::value_error("job_offset must start at 0 and end at the number of options");
  for (std::size_t i = 0; i < jobs; ++i)
    if (jo[i + 1] < jo[i]) throw nb::value_error("job_offset must be nondecreasing");
  if (oo[0] != 0 || oo[options_count] != entries)
    throw nb::value_error("consumption's indptr must start at 0 and end at its nnz");
  for (std::int64_t o = 0; o < options_count; ++o)
    if (oo[o + 1] < oo[o]) throw nb::value_error("consumption's indptr must be nondecreasing");
  const double* w = nullptr;
  const double* t = nullptr;
  if (weight) {
    w = need(*weight, double{}, "weight must be a 1-D float64 array");
    if (weight->shape(0) != jobs) throw nb::value_error("weight must have one entry per job");
  }
  if (target) {
    t = need(*target, double{}, "target must be a 1-D float64 array");
    if (target->shape(0) != jobs) throw nb::value_error("target must have one entry per job");
  }
  popalloc::bundle_problem<double> problem(to_vector(capacity));
  std::vector<popalloc::consumption> uses;
  for (std::size_t i = 0; i < jobs; ++i) {
    popalloc::job_parameters params;
    if (w) params.weight = w[i];
    if (t) params.target = t[i];
    problem.add_job(params);
    for (std::int64_t o = jo[i]; o < jo[i + 1]; ++o) {
      uses.clear();
      for (std::int64_t k = oo[o]; k < oo[o + 1]; ++k) uses.push_back({res[k], am[k]});
      problem.add_option(v[o], uses);
    }
  }
  const popalloc::solver_options options = opts.get();
  callback_bridge bridge(callback);
  const popalloc::progress_callback cb = [&bridge](const popalloc::progress& p) {
    return bridge(p);
  };
  popalloc::solve_result r = with_utility(utility_name, alpha, penalty, [&](const auto& u) {
    nb::gil_scoped_release release;
    return popalloc::solve(problem, u, options, cb);
  });
  bridge.rethrow();
  // Options within a job become global option indices: the allocation is jobs x options.
  auto& a = r.allocation;
  for (std::size_t i = 0; i < a.jobs(); ++i)
    for (auto k = a.job_offset[i]; k < a.job_offset[i + 1]; ++k)
      a.option[static_cast<std::size_t>(k)] += static_cast<std::int32_t>(jo[i]);
  return result_dict(std::move(r), bridge.signal_stop(), bridge.held_gil());
}

// ---- POP ----------------------------------------------------------------------------------------

popalloc::pop::partition_strategy parse_strategy(const std::string& name) {
  using s = popalloc::pop::partition_strategy;
  for (const s k : {s::shuffled, s::uniform_random, s::round_robin, s::two_choices})
    if (name == popalloc::pop::to_string(k)) return k;
  throw popalloc::invalid_options("unknown partition strategy '" + name +
                                  "' (shuffled, uniform-random, round-robin, two-choices)");
}

template <class Scalar>
nb::dict pop_solve_typed(const any_array& throughput, const any_array& capacity,
                         const std::string& utility_name, double alpha, double penalty,
                         const std::optional<any_array>& weight,
                         const std::optional<any_array>& target,
                         const std::optional<any_array>& job_demand,
                         const std::optional<any_array>& demand, const options_in& opts, int parts,
                         std::uint64_t seed, const std::string& strategy, int pop_threads) {
  const auto in = read_dense<Scalar>(throughput, capacity, weight, target, job_demand, demand);
  popalloc::pop::pop_options options;
  options.parts = parts;
  options.seed = seed;
  options.strategy = parse_strategy(strategy);
  options.solver = opts.get();
  options.threads = pop_threads;
  const popalloc::dense_problem<Scalar> problem = in.owned();
  popalloc::pop::pop_solve_result r =
      with_utility(utility_name, alpha, penalty, [&](const auto& u) {
        nb::gil_scoped_release release;
        return popalloc::pop::pop_solve(problem, u, options);
      });
  std::vector<std::int32_t> part_of = std::move(r.assignment.part_of);
  nb::list parts_out;
  for (const auto& s : r.parts) {
    nb::dict p;
    p["jobs"] = s.jobs;
    p["status"] = s.status;
    p["iterations"] = s.iterations;
    p["objective"] = s.primal_objective;
    p["dual_bound"] = s.dual_bound;
    p["relative_gap"] = s.relative_gap;
    p["seconds"] = s.seconds;
    parts_out.append(p);
  }
  nb::dict d = result_dict(std::move(r.result), false, false);
  d["part_of"] = to_numpy(std::move(part_of));
  d["parts"] = parts_out;
  d["bound_candidate"] = r.bound_candidate;
  nb::dict t = d["timings"];
  t["partition"] = r.timings.partition_seconds;
  t["parts_wall"] = r.timings.parts_wall_seconds;
  t["parts_sum"] = r.timings.parts_seconds_sum;
  t["parts_max"] = r.timings.parts_seconds_max;
  t["coalesce"] = r.timings.coalesce_seconds;
  t["bound"] = r.timings.bound_seconds;
  t["total"] = r.timings.total_seconds;
  return d;
}

nb::dict pop_solve(const any_array& throughput, const any_array& capacity,
                   const std::string& utility, double alpha, double penalty,
                   const std::optional<any_array>& weight, const std::optional<any_array>& target,
                   const std::optional<any_array>& job_demand,
                   const std::optional<any_array>& demand, const options_in& opts, int parts,
                   std::uint64_t seed, const std::string& strategy, int pop_threads) {
  if (has_dtype<double>(throughput))
    return pop_solve_typed<double>(throughput, capacity, utility, alpha, penalty, weight, target,
                                   job_demand, demand, opts, parts, seed, strategy, pop_threads);
  if (has_dtype<float>(throughput))
    return pop_solve_typed<float>(throughput, capacity, utility, alpha, penalty, weight, target,
                                  job_demand, demand, opts, parts, seed, strategy, pop_threads);
  throw nb::type_error("throughput must be float64 or float32");
}

// ---- Cluster scheduling (Gavel's policies) ------------------------------------------------------

template <class T>
T get_or(const nb::dict& d, const char* key, T fallback) {
  return d.contains(key) ? nb::cast<T>(d[key]) : fallback;
}

const double* column(const nb::dict& jobs, const char* key, std::size_t n) {
  if (!jobs.contains(key)) return nullptr;
  const auto a = nb::cast<any_array>(jobs[key]);
  if (!has_dtype<double>(a) || a.ndim() != 1 || a.shape(0) != n)
    throw nb::value_error((std::string(key) + " must be a 1-D float64 array, one per job").c_str());
  return static_cast<const double*>(a.data());
}

/// popalloc::cluster::allocate on jobs given as columns (`throughput`: jobs x GPU types in the
/// order of `types`; the other keys optional, one value per job).
nb::dict cluster_allocate(const nb::dict& jobs, const std::vector<std::string>& types,
                          const std::vector<std::int64_t>& counts, const nb::dict& opts) {
  namespace pc = popalloc::cluster;
  const auto t = nb::cast<any_array>(jobs["throughput"]);
  if (!has_dtype<double>(t) || t.ndim() != 2 || t.shape(1) != types.size())
    throw nb::value_error("throughput must be a float64 array of jobs x GPU types");
  const std::size_t n = t.shape(0), w = t.shape(1);
  const auto* tp = static_cast<const double*>(t.data());
  const double* scale = column(jobs, "scale_factor", n);
  const double* weight = column(jobs, "priority_weight", n);
  const double* total = column(jobs, "total_steps", n);
  const double* remaining = column(jobs, "remaining_steps", n);
  const double* arrival = column(jobs, "arrival_time", n);
  const double* elapsed = column(jobs, "elapsed_time", n);
  const double* isolated = column(jobs, "isolated_time", n);
  const double* slo = column(jobs, "slo", n);
  std::vector<pc::job> list(n);
  for (std::size_t i = 0; i < n; ++i) {
    pc::job& j = list[i];
    j.id = static_cast<std::int64_t>(i);
    j.throughput.assign(tp + i * w, tp + (i + 1) * w);
    if (scale) {
      if (!(scale[i] >= 1.0 && scale[i] <= 1e9) || scale[i] != std::floor(scale[i]))
        throw popalloc::invalid_problem("job " + std::to_string(i) +
                                        ": scale factor must be a whole number >= 1");
      j.scale_factor = static_cast<int>(scale[i]);
    }
    if (weight) j.priority_weight = weight[i];
    if (total) j.total_steps = total[i];
    if (remaining) j.remaining_steps = remaining[i];
    if (arrival) j.arrival_time = arrival[i];
    if (elapsed) j.elapsed_time = elapsed[i];
    if (isolated) j.isolated_time = isolated[i];
    if (slo) j.slo = slo[i];
  }
  pc::gpu_cluster cluster;
  cluster.types = types;
  cluster.counts = counts;
  pc::policy_options o;
  o.policy = pc::parse_policy(get_or<std::string>(opts, "policy", "max-min-fairness"));
  o.heterogeneity_agnostic = get_or<bool>(opts, "heterogeneity_agnostic", false);
  o.reference_gpu = get_or<std::string>(opts, "reference_gpu", o.reference_gpu);
  o.water_filling = get_or<bool>(opts, "water_filling", true);
  o.tolerance = get_or<double>(opts, "tolerance", o.tolerance);
  o.threads = get_or<int>(opts, "threads", 0);
  o.time_limit_seconds = get_or<double>(opts, "time_limit", o.time_limit_seconds);
  o.gpu_cost = get_or<std::vector<double>>(opts, "gpu_cost", {});
  o.slo_floors = get_or<bool>(opts, "slo_floors", true);
  o.pop_parts = get_or<int>(opts, "pop_parts", 1);
  o.pop_seed = get_or<std::uint64_t>(opts, "pop_seed", 0);
  o.pop_strategy = parse_strategy(get_or<std::string>(opts, "pop_strategy", "uniform-random"));
  if (opts.contains("warm_start") && !opts["warm_start"].is_none())
    o.warm_start_prices = to_vector(nb::cast<any_array>(opts["warm_start"]));
  pc::cluster_allocation a;
  {
    nb::gil_scoped_release release;
    a = pc::allocate(list, cluster, o);
  }
  nb::dict d;
  d["fraction"] = to_numpy(a.fraction);
  d["effective_throughput"] = to_numpy(a.effective_throughput);
  d["normalized_throughput"] = to_numpy(a.normalized_throughput);
  d["proportional_throughput"] = to_numpy(a.proportional_throughput);
  std::vector<std::uint8_t> schedulable(a.schedulable.begin(), a.schedulable.end());
  d["schedulable"] = to_numpy(std::move(schedulable));
  d["objective"] = a.objective;
  d["bound"] = a.bound;
  d["status"] = a.status;
  d["core_solves"] = a.core_solves;
  d["water_filling_levels"] = a.water_filling_levels;
  d["slo_jobs"] = a.slo_jobs;
  d["slo_floors_dropped"] = a.slo_floors_dropped;
  d["slo_worst_shortfall"] = a.slo_worst_shortfall;
  d["seconds"] = a.seconds;
  d["prices"] = to_numpy(a.prices);
  return d;
}

// ---- Traffic engineering ----------------------------------------------------------------------

/// A previous TE answer's per-path flows and arc prices (float64 vectors) as te::result.
popalloc::te::result te_previous(const any_array& path_flow, const any_array& prices) {
  if (!has_dtype<double>(path_flow) || path_flow.ndim() != 1 || !has_dtype<double>(prices) ||
      prices.ndim() != 1)
    throw nb::value_error("a previous result's path flows and prices must be float64 vectors");
  popalloc::te::result previous;
  const auto* f = static_cast<const double*>(path_flow.data());
  const auto* p = static_cast<const double*>(prices.data());
  previous.path_flow.assign(f, f + path_flow.shape(0));
  previous.prices.assign(p, p + prices.shape(0));
  return previous;
}

/// popalloc::te::solve_price on a node-link document (the text popalloc-te reads, so the same
/// loading rules apply) and a traffic matrix given as (source name, target name, demand); with
/// a previous answer's path flows and prices, te::replan_price.
nb::dict te_solve(const std::string& node_link_json, const std::vector<std::string>& sources,
                  const std::vector<std::string>& targets, const any_array& demand,
                  const std::string& objective, int k, double default_capacity, double relative_gap,
                  int max_iterations, int threads, double time_limit,
                  const std::optional<any_array>& previous_path_flow,
                  const std::optional<any_array>& previous_prices) {
  namespace te = popalloc::te;
  if (previous_path_flow.has_value() != previous_prices.has_value())
    throw nb::value_error("a previous result needs both its path flows and its prices");
  if (!has_dtype<double>(demand) || demand.ndim() != 1 || demand.shape(0) != sources.size() ||
      targets.size() != sources.size())
    throw nb::value_error("one float64 demand per (source, target) pair");
  if (k < 1) throw popalloc::invalid_options("k (paths per commodity) must be >= 1");
  const auto* d = static_cast<const double*>(demand.data());
  te::topology graph;
  try {
    graph = te::parse_node_link_json(node_link_json, "graph", "graph", default_capacity);
  } catch (const popalloc::io::input_error& e) {
    throw popalloc::invalid_problem(e.what());
  }
  std::unordered_map<std::string, std::int32_t> index_of;
  for (std::size_t v = 0; v < graph.node_names.size(); ++v)
    index_of.emplace(graph.node_names[v], static_cast<std::int32_t>(v));
  auto index = [&](const std::string& name) {
    const auto found = index_of.find(name);
    if (found == index_of.end())
      throw popalloc::invalid_problem("node " + name +
                                      " of the traffic matrix is not in the topology's largest "
                                      "strongly connected component");
    return found->second;
  };
  std::vector<te::commodity> commodities;
  std::vector<std::int64_t> pair_of_commodity;
  for (std::size_t q = 0; q < sources.size(); ++q) {
    if (!std::isfinite(d[q]) || d[q] < 0.0)
      throw popalloc::invalid_problem("demand " + sources[q] + " -> " + targets[q] +
                                      " must be finite and >= 0");
    if (d[q] == 0.0 || sources[q] == targets[q]) continue;
    commodities.push_back({index(sources[q]), index(targets[q]), d[q]});
    pair_of_commodity.push_back(static_cast<std::int64_t>(q));
  }
  te::path_options paths;
  paths.k = k;
  paths.threads = threads;
  te::price_options options;
  options.solver.relative_gap = relative_gap;
  options.solver.max_iterations = max_iterations;
  options.solver.threads = threads;
  options.solver.time_limit_seconds = time_limit;
  const te::te_objective kind = te::parse_te_objective(objective);
  te::result previous;
  if (previous_path_flow) previous = te_previous(*previous_path_flow, *previous_prices);
  te::instance inst;
  te::result r;
  {
    nb::gil_scoped_release release;
    inst = te::make_instance(std::move(graph), std::move(commodities), paths);
    r = previous_path_flow ? te::replan_price(inst, kind, previous, options)
                           : te::solve_price(inst, kind, options);
  }
  const te::flow_summary summary = te::summarize(inst, r.path_flow);
  nb::list path_list;
  for (std::size_t q = 0; q < inst.commodities.size(); ++q)
    for (auto p = inst.paths.pair_offset[q]; p < inst.paths.pair_offset[q + 1]; ++p) {
      nb::list nodes;
      const auto first = inst.paths.path_offset[static_cast<std::size_t>(p)];
      const auto last = inst.paths.path_offset[static_cast<std::size_t>(p) + 1];
      for (auto a = first; a < last; ++a) {
        const auto& arc =
            inst.graph.arcs[static_cast<std::size_t>(inst.paths.arcs[static_cast<std::size_t>(a)])];
        if (a == first) nodes.append(inst.graph.node_names[static_cast<std::size_t>(arc.from)]);
        nodes.append(inst.graph.node_names[static_cast<std::size_t>(arc.to)]);
      }
      path_list.append(
          nb::make_tuple(pair_of_commodity[q], nodes, r.path_flow[static_cast<std::size_t>(p)]));
    }
  nb::list arcs;
  for (std::size_t e = 0; e < inst.graph.arcs.size(); ++e) {
    const auto& a = inst.graph.arcs[e];
    arcs.append(nb::make_tuple(inst.graph.node_names[static_cast<std::size_t>(a.from)],
                               inst.graph.node_names[static_cast<std::size_t>(a.to)],
                               summary.load[e], a.capacity));
  }
  std::vector<double> commodity_flow(sources.size(), 0.0);
  for (std::size_t q = 0; q < pair_of_commodity.size(); ++q)
    commodity_flow[static_cast<std::size_t>(pair_of_commodity[q])] = summary.commodity_flow[q];
  nb::dict out;
  out["objective"] = r.objective;
  out["bound"] = r.bound;
  out["relative_gap"] = r.relative_gap;
  out["status"] = std::string(te::to_string(r.status));
  out["iterations"] = r.iterations;
  out["solves"] = r.solves;
  out["seconds"] = r.seconds;
  out["paths"] = path_list;
  out["arcs"] = arcs;
  out["commodity_flow"] = to_numpy(std::move(commodity_flow));
  out["total_flow"] = summary.total_flow;
  out["max_link_utilization"] = summary.max_link_utilization;
  out["max_capacity_excess"] = summary.max_capacity_excess;
  out["path_flow"] = to_numpy(std::vector<double>(r.path_flow));
  out["prices"] = to_numpy(std::vector<double>(r.prices));
  return out;
}

// ---- Load balancing ---------------------------------------------------------------------------

/// Shard placement: popalloc::lb::solve_price (or solve_greedy), optionally over POP parts.
/// `current` is shards x servers: the current routing fractions, with `held` marking replicas
/// (an idle copy holds the shard with fraction 0).
nb::dict lb_place(const any_array& load, const any_array& memory, int servers, double max_memory,
                  int replication, double epsilon, const std::optional<any_array>& current,
                  const std::optional<any_array>& held, const std::string& method, int parts,
                  double relative_gap, int threads, const std::string& relaxation) {
  namespace lb = popalloc::lb;
  auto vec = [](const any_array& a, const char* what) {
    if (!has_dtype<double>(a) || a.ndim() != 1)
      throw nb::type_error((std::string(what) + " must be a 1-D float64 array").c_str());
    const auto* p = static_cast<const double*>(a.data());
    return std::vector<double>(p, p + a.shape(0));
  };
  lb::problem prob;
  prob.load = vec(load, "load");
  prob.memory = vec(memory, "memory");
  prob.servers = servers;
  prob.max_memory = max_memory;
  prob.replication = replication;
  prob.epsilon = epsilon;
  const std::size_t shards = prob.load.size();
  if (current) {
    if (!has_dtype<double>(*current) || current->ndim() != 2 || current->shape(0) != shards ||
        servers < 1 || current->shape(1) != static_cast<std::size_t>(servers))
      throw nb::value_error("current must be a float64 array of shards x servers");
    const auto* c = static_cast<const double*>(current->data());
    const std::uint8_t* h = nullptr;
    if (held) {
      if (!has_dtype<bool>(*held) || held->ndim() != 2 || held->shape(0) != shards ||
          held->shape(1) != current->shape(1))
        throw nb::value_error("held must be a bool array shaped like current");
      h = static_cast<const std::uint8_t*>(held->data());
    }
    prob.current.shards.resize(shards);
    for (std::size_t j = 0; j < shards; ++j)
      for (std::size_t i = 0; i < static_cast<std::size_t>(servers); ++i) {
        const double f = c[j * static_cast<std::size_t>(servers) + i];
        const bool holds = h ? h[j * static_cast<std::size_t>(servers) + i] != 0 : f != 0.0;
        if (holds || f != 0.0) prob.current.shards[j].push_back({static_cast<std::int32_t>(i), f});
      }
  }
  if (method != "price" && method != "greedy")
    throw popalloc::invalid_options("method must be 'price' or 'greedy', got '" + method + "'");
  if (parts < 1) throw popalloc::invalid_options("parts must be >= 1");
  if (relaxation != "flow" && relaxation != "core")
    throw popalloc::invalid_options("relaxation must be 'flow' or 'core', got '" + relaxation +
                                    "'");
  lb::price_options options;
  options.relaxation =
      relaxation == "flow" ? lb::relaxation_method::keep_flow : lb::relaxation_method::core;
  options.solver.relative_gap = relative_gap;
  options.solver.threads = threads;
  lb::lb_result r;
  {
    nb::gil_scoped_release release;
    prob.validate();
    auto solve_one = [&](const lb::problem& p) {
      return method == "price" ? lb::solve_price(p, options) : lb::solve_greedy(p);
    };
    r = parts == 1 ? solve_one(prob) : lb::pop_solve(prob, parts, solve_one);
  }
  const std::size_t n = static_cast<std::size_t>(servers);
  std::vector<double> fraction(shards * n, 0.0);
  std::vector<std::uint8_t> replica(shards * n, 0);
  for (std::size_t j = 0; j < r.result.shards.size(); ++j)
    for (const lb::route& route : r.result.shards[j]) {
      fraction[j * n + static_cast<std::size_t>(route.server)] = route.fraction;
      replica[j * n + static_cast<std::size_t>(route.server)] = 1;
    }
  nb::dict out;
  out["status"] = std::string(lb::to_string(r.status));
  out["message"] = r.message;
  out["seconds"] = r.seconds;
  out["fraction"] = to_numpy(std::move(fraction));
  out["replica"] = to_numpy(std::move(replica));
  if (!r.result.shards.empty()) {
    const lb::check_report c = lb::check(prob, r.result);
    out["feasible"] = c.feasible;
    out["new_replicas"] = c.new_replicas;
    out["replicas"] = c.replicas;
    out["max_load_deviation"] = c.max_load_deviation;
    out["server_load"] = to_numpy(std::vector<double>(c.server_load));
    out["server_memory"] = to_numpy(std::vector<double>(c.server_memory));
  }
  return out;
}

// ---- Re-planning: incremental_solver ------------------------------------------------------------

/// popalloc::incremental_solver over float64 data for a utility chosen at run time.
class incremental_py {
  using any_solver =
      std::variant<popalloc::incremental_solver<popalloc::utility::log>,
                   popalloc::incremental_solver<popalloc::utility::linear>,
                   popalloc::incremental_solver<popalloc::utility::target_priority>,
                   popalloc::incremental_solver<popalloc::utility::power>,
                   popalloc::incremental_solver<popalloc::utility::linear_with_floor>>;
  any_solver solver_;

  /// f(solver) for the solver of the chosen utility (each returns the same type).
  template <class F>
  auto visit(F&& f) -> decltype(f(std::get<0>(solver_))) {
    return std::visit(std::forward<F>(f), solver_);
  }

 public:
  using job_id = std::int64_t;

  incremental_py(const any_array& capacity, const std::string& utility_name, double alpha,
                 double penalty, const options_in& opts)
      : solver_(with_utility(utility_name, alpha, penalty, [&](const auto& u) -> any_solver {
          using solver = popalloc::incremental_solver<std::decay_t<decltype(u)>>;
          return solver(to_vector(capacity), opts.get(), u);
        })) {}

  job_id add_job(const any_array& throughput, double weight, double target, double demand) {
    const Eigen::VectorXd row = to_vector(throughput);
    return visit([&](auto& s) { return s.add_job(row.transpose(), weight, target, demand); });
  }

  nb::object add_jobs(const any_array& throughput, const std::optional<any_array>& weight,
                      const std::optional<any_array>& target,
                      const std::optional<any_array>& demand) {
    if (!has_dtype<double>(throughput) || throughput.ndim() != 2)
      throw nb::type_error("throughput must be a 2-D float64 array");
    popalloc::dense_problem<double> batch;
    batch.throughput = Eigen::Map<const popalloc::dense_problem<double>::matrix>(
        static_cast<const double*>(throughput.data()),
        static_cast<Eigen::Index>(throughput.shape(0)),
        static_cast<Eigen::Index>(throughput.shape(1)));
    if (weight) batch.weight = to_vector(*weight);
    if (target) batch.target = to_vector(*target);
    if (demand) batch.job_demand = to_vector(*demand);
    std::vector<job_id> ids = visit([&](auto& s) { return s.add_jobs(batch); });
    return to_numpy(std::move(ids));
  }

  void remove_job(job_id id) {
    visit([&](auto& s) { s.remove_job(id); });
  }
  void update_throughput(job_id id, const any_array& throughput) {
    const Eigen::VectorXd row = to_vector(throughput);
    visit([&](auto& s) { s.update_throughput(id, row.transpose()); });
  }
  void update_weight(job_id id, double w) {
    visit([&](auto& s) { s.update_weight(id, w); });
  }
  void update_target(job_id id, double t) {
    visit([&](auto& s) { s.update_target(id, t); });
  }
  void update_demand(job_id id, double d) {
    visit([&](auto& s) { s.update_demand(id, d); });
  }
  void set_capacity(Eigen::Index j, double c) {
    visit([&](auto& s) { s.set_capacity(j, c); });
  }
  void set_capacities(const any_array& c) {
    const Eigen::VectorXd capacity = to_vector(c);
    visit([&](auto& s) { s.set_capacities(capacity); });
  }
  void forget_prices() {
    visit([](auto& s) { s.forget_prices(); });
  }
  Eigen::Index jobs() const {
    return std::visit([](const auto& s) { return s.jobs(); }, solver_);
  }
  Eigen::Index resources() const {
    return std::visit([](const auto& s) { return s.resources(); }, solver_);
  }
  bool contains(job_id id) const {
    return std::visit([&](const auto& s) { return s.contains(id); }, solver_);
  }
  Eigen::Index row_of(job_id id) const {
    return std::visit([&](const auto& s) { return s.row_of(id); }, solver_);
  }
  nb::object job_ids() const {
    std::vector<job_id> ids = std::visit([](const auto& s) { return s.job_ids(); }, solver_);
    return to_numpy(std::move(ids));
  }

  /// solve() (or solve_cold() when `cold`), with the GIL released.
  nb::dict solve(nb::handle callback, bool cold) {
    callback_bridge bridge(callback);
    const popalloc::progress_callback cb = [&bridge](const popalloc::progress& p) {
      return bridge(p);
    };
    popalloc::solve_result r = visit([&](auto& s) {
      nb::gil_scoped_release release;
      return cold ? s.solve_cold(cb) : s.solve(cb);
    });
    bridge.rethrow();
    return result_dict(std::move(r), bridge.signal_stop(), bridge.held_gil());
  }
};

}  // namespace
}  // namespace popalloc_python

NB_MODULE(_core, m) {
  using namespace popalloc_python;
  m.doc() = "popalloc's compiled core; use the functions of the popalloc package instead.";

  // One translator for the whole hierarchy, most derived first, so each popalloc error reaches
  // Python as its own class (the validation errors as ValueError subclasses).
  static nb::object error_type =
      nb::steal(PyErr_NewException("popalloc._core.Error", PyExc_RuntimeError, nullptr));
  static nb::object invalid_problem_type =
      nb::steal(PyErr_NewException("popalloc._core.InvalidProblem", PyExc_ValueError, nullptr));
  static nb::object invalid_options_type =
      nb::steal(PyErr_NewException("popalloc._core.InvalidOptions", PyExc_ValueError, nullptr));
  static nb::object backend_error_type =
      nb::steal(PyErr_NewException("popalloc._core.BackendError", error_type.ptr(), nullptr));
  m.attr("Error") = error_type;
  m.attr("InvalidProblem") = invalid_problem_type;
  m.attr("InvalidOptions") = invalid_options_type;
  m.attr("BackendError") = backend_error_type;
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const popalloc::invalid_problem& e) {
      PyErr_SetString(invalid_problem_type.ptr(), e.what());
    } catch (const popalloc::invalid_options& e) {
      PyErr_SetString(invalid_options_type.ptr(), e.what());
    } catch (const popalloc::backend_error& e) {
      PyErr_SetString(backend_error_type.ptr(), e.what());
    } catch (const popalloc::error& e) {
      PyErr_SetString(error_type.ptr(), e.what());
    }
  });

  {
    // Every status the library names (status.hpp is append-only), as NAME = value.
    auto statuses = nb::enum_<popalloc::solve_status>(
        m, "SolveStatus", "Why a solve stopped (values and meanings as in popalloc/status.hpp).");
    static std::vector<std::string> names;
    for (int v = 0; v < 256; ++v) {
      const auto status = static_cast<popalloc::solve_status>(v);
      std::string name = popalloc::to_string(status);
      if (name == "unknown") break;
      for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      names.push_back(std::move(name));
    }
    for (std::size_t v = 0; v < names.size(); ++v)
      statuses.value(names[v].c_str(), static_cast<popalloc::solve_status>(v));
  }

  nb::class_<progress_info>(m, "Progress", "What the solve callback receives after an evaluation.")
      .def_ro("iteration", &progress_info::iteration)
      .def_ro("elapsed_seconds", &progress_info::elapsed_seconds)
      .def_ro("objective", &progress_info::objective, "best feasible objective so far")
      .def_ro("dual_bound", &progress_info::dual_bound, "best dual bound so far")
      .def_ro("relative_gap", &progress_info::relative_gap)
      .def_ro("smoothing", &progress_info::smoothing)
      .def_prop_ro(
          "prices", [](const progress_info& p) { return to_numpy(p.prices); },
          "current prices (a copy)")
      .def("__repr__", [](const progress_info& p) {
        return "Progress(iteration=" + std::to_string(p.iteration) +
               ", objective=" + std::to_string(p.objective) +
               ", dual_bound=" + std::to_string(p.dual_bound) +
               ", relative_gap=" + std::to_string(p.relative_gap) + ")";
      });

  nb::class_<options_in>(m, "SolverOptions")
      .def(nb::init<>())
      .def_rw("relative_gap", &options_in::relative_gap)
      .def_rw("absolute_gap", &options_in::absolute_gap)
      .def_rw("gap", &options_in::gap)
      .def_rw("max_iterations", &options_in::max_iterations)
      .def_rw("time_limit", &options_in::time_limit)
      .def_rw("threads", &options_in::threads)
      .def_rw("warm_start", &options_in::warm_start, nb::arg("value").none())
      .def_rw("sample_start", &options_in::sample_start)
      .def_rw("callback_every", &options_in::callback_every);

  m.def("solve_dense", &solve_dense, "throughput"_a.noconvert(), "capacity"_a.noconvert(),
        "utility"_a, "alpha"_a, "penalty"_a, "weight"_a.noconvert().none(),
        "target"_a.noconvert().none(), "job_demand"_a.noconvert().none(),
        "demand"_a.noconvert().none(), "options"_a, "callback"_a.none(), "copy"_a);
  m.def("solve_bundle", &solve_bundle, "job_offset"_a.noconvert(), "value"_a.noconvert(),
        "option_offset"_a.noconvert(), "resource"_a.noconvert(), "amount"_a.noconvert(),
        "capacity"_a.noconvert(), "utility"_a, "alpha"_a, "penalty"_a,
        "weight"_a.noconvert().none(), "target"_a.noconvert().none(), "options"_a,
        "callback"_a.none());
  m.def("pop_solve", &pop_solve, "throughput"_a.noconvert(), "capacity"_a.noconvert(), "utility"_a,
        "alpha"_a, "penalty"_a, "weight"_a.noconvert().none(), "target"_a.noconvert().none(),
        "job_demand"_a.noconvert().none(), "demand"_a.noconvert().none(), "options"_a, "parts"_a,
        "seed"_a, "strategy"_a, "pop_threads"_a);
  m.def("time_cpp_solve", &time_cpp_solve, "throughput"_a.noconvert(), "capacity"_a.noconvert(),
        "utility"_a, "alpha"_a, "penalty"_a, "options"_a);
  m.def("cluster_allocate", &cluster_allocate, "jobs"_a, "types"_a, "counts"_a, "options"_a);
  m.def("te_solve", &te_solve, "node_link_json"_a, "sources"_a, "targets"_a, "demand"_a.noconvert(),
        "objective"_a, "k"_a, "default_capacity"_a, "relative_gap"_a, "max_iterations"_a,
        "threads"_a, "time_limit"_a, "previous_path_flow"_a.noconvert().none() = nb::none(),
        "previous_prices"_a.noconvert().none() = nb::none());
  m.def("lb_place", &lb_place, "load"_a.noconvert(), "memory"_a.noconvert(), "servers"_a,
        "max_memory"_a, "replication"_a, "epsilon"_a, "current"_a.noconvert().none(),
        "held"_a.noconvert().none(), "method"_a, "parts"_a, "relative_gap"_a, "threads"_a,
        "relaxation"_a);

  nb::class_<incremental_py>(m, "IncrementalSolver")
      .def(nb::init<const any_array&, const std::string&, double, double, const options_in&>(),
           "capacity"_a.noconvert(), "utility"_a, "alpha"_a, "penalty"_a, "options"_a)
      .def("add_job", &incremental_py::add_job, "throughput"_a.noconvert(), "weight"_a, "target"_a,
           "demand"_a)
      .def("add_jobs", &incremental_py::add_jobs, "throughput"_a.noconvert(),
           "weight"_a.noconvert().none(), "target"_a.noconvert().none(),
           "demand"_a.noconvert().none())
      .def("remove_job", &incremental_py::remove_job, "job_id"_a)
      .def("update_throughput", &incremental_py::update_throughput, "job_id"_a,
           "throughput"_a.noconvert())
      .def("update_weight", &incremental_py::update_weight, "job_id"_a, "weight"_a)
      .def("update_target", &incremental_py::update_target, "job_id"_a, "target"_a)
      .def("update_demand", &incremental_py::update_demand, "job_id"_a, "demand"_a)
      .def("set_capacity", &incremental_py::set_capacity, "resource"_a, "capacity"_a)
      .def("set_capacities", &incremental_py::set_capacities, "capacity"_a.noconvert())
      .def("forget_prices", &incremental_py::forget_prices)
      .def("jobs", &incremental_py::jobs)
      .def("resources", &incremental_py::resources)
      .def("contains", &incremental_py::contains, "job_id"_a)
      .def("row_of", &incremental_py::row_of, "job_id"_a)
      .def("job_ids", &incremental_py::job_ids)
      .def("solve", &incremental_py::solve, "callback"_a.none(), "cold"_a);
}
