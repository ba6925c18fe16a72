// SPDX-License-Identifier: Apache-2.0
// The shard placement MILP through COIN-OR CBC (see milp_cbc.hpp), run in a child process.
#include "milp_cbc.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <popalloc/error.hpp>
#include <popalloc/lb/checker.hpp>

#if defined(POPALLOC_LB_HAVE_CBC) && POPALLOC_LB_HAVE_CBC
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <CbcEventHandler.hpp>
#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif
#endif

namespace popalloc_lb {

const char* to_string(milp_fault f) {
  switch (f) {
    case milp_fault::none:
      return "none";
    case milp_fault::abort_child:
      return "abort";
    case milp_fault::segv_after_incumbent:
      return "segv_after_incumbent";
    case milp_fault::hang_child:
      return "hang";
  }
  return "unknown";
}

const char* to_string(milp_outcome outcome) {
  switch (outcome) {
    case milp_outcome::optimal:
      return "optimal";
    case milp_outcome::infeasible:
      return "infeasible";
    case milp_outcome::time_limit:
      return "time_limit";
    case milp_outcome::not_run:
      return "not_run";
    case milp_outcome::solver_crashed:
      return "solver_crashed";
  }
  return "unknown";
}

const char* to_string(placement_source source) {
  switch (source) {
    case placement_source::cbc:
      return "cbc";
    case placement_source::cbc_incumbent:
      return "cbc_incumbent";
    case placement_source::mip_start:
      return "mip_start";
    case placement_source::previous_placement:
      return "previous_placement";
    case placement_source::none:
      return "none";
  }
  return "unknown";
}

bool parse_milp_fault(const std::string& name, milp_fault& out) {
  for (const milp_fault f : {milp_fault::none, milp_fault::abort_child,
                             milp_fault::segv_after_incumbent, milp_fault::hang_child})
    if (name == to_string(f)) {
      out = f;
      return true;
    }
  return false;
}

#if defined(POPALLOC_LB_HAVE_CBC) && POPALLOC_LB_HAVE_CBC

bool milp_available() { return true; }

namespace {

using popalloc::lb::lb_result;
using popalloc::lb::lb_status;

std::string format_number(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

/// Column values of a MILP solution, sparse (CBC's answers have about S + S nonzeros of 2NS).
using sparse_columns = std::vector<std::pair<std::int32_t, double>>;

sparse_columns sparse(const double* values, int ncols) {
  sparse_columns out;
  for (int c = 0; c < ncols; ++c)
    if (values[c] != 0.0) out.emplace_back(c, values[c]);
  return out;
}

/// What one CBC run ended with.
struct cbc_answer {
  enum kind_t : std::int32_t { solution = 0, infeasible = 1, no_incumbent = 2 };
  std::int32_t kind = no_incumbent;
  std::int32_t nodes = 0;
  std::int32_t proven_optimal = 0;
  double objective = 0.0;
  double best_bound = 0.0;
  sparse_columns values;
};

/// Called with every new incumbent (all columns) and its objective.
class incumbent_sink {
 public:
  virtual ~incumbent_sink() = default;
  virtual void incumbent(const double* values, int ncols, double objective) = 0;
};

/// Hands each improved incumbent of the branch-and-bound model to a sink. It looks at the model's
/// best solution on every event rather than trusting one event kind: CBC's events differ in
/// whether bestSolution() is already updated when they fire.
class incumbent_events : public CbcEventHandler {
 public:
  incumbent_events(incumbent_sink* sink, int ncols, milp_fault fault)
      : sink_(sink), ncols_(ncols), fault_(fault) {}
  CbcAction event(CbcEvent) override {
    look();
    return noAction;
  }
  CbcAction event(CbcEvent, void*) override {
    look();
    return noAction;
  }
  CbcEventHandler* clone() const override { return new incumbent_events(*this); }

 private:
  void look() {
    if (model_ == nullptr || sink_ == nullptr || model_->getNumCols() != ncols_) return;
    const double* best = model_->bestSolution();
    if (best == nullptr) return;
    const double objective = model_->getObjValue();
    if (!(objective < last_ - 1e-7)) return;
    last_ = objective;
    sink_->incumbent(best, ncols_, objective);
    if (fault_ == milp_fault::segv_after_incumbent) {
      // Die by the signal itself, as an unsanitised CBC does (ASan's handler would exit(1)).
      std::signal(SIGSEGV, SIG_DFL);
      std::raise(SIGSEGV);
    }
  }
  incumbent_sink* sink_;
  int ncols_;
  milp_fault fault_;
  double last_ = COIN_DBL_MAX;
};

/// Builds the MILP of docs/load-balancing.md and runs CBC's branch-and-cut on it (in this process).
/// The MILP's constraint rows as triplets with their bounds. Columns: r_ij is j * N + i, x_ij is
/// N * S + j * N + i.
struct milp_rows {
  std::vector<int> rows, cols;
  std::vector<double> values, row_lo, row_hi;
  int count = 0;  ///< rows
};

milp_rows milp_constraints(const popalloc::lb::problem& prob) {
  const std::size_t n = prob.server_count(), s = prob.shards();
  const std::size_t nx = n * s;
  const int R = prob.required_replicas();
  const double lo = prob.lower(), hi = prob.upper();
  milp_rows m;
  std::vector<int>& rows = m.rows;
  std::vector<int>& cols = m.cols;
  std::vector<double>& values = m.values;
  std::vector<double>& row_lo = m.row_lo;
  std::vector<double>& row_hi = m.row_hi;
  auto rcol = [&](std::size_t j, std::size_t i) { return static_cast<int>(j * n + i); };
  auto xcol = [&](std::size_t j, std::size_t i) { return static_cast<int>(nx + j * n + i); };
  int row = 0;
  // Balanced load per server; memory per server.
  for (std::size_t i = 0; i < n; ++i, ++row) {
    for (std::size_t j = 0; j < s; ++j)
      if (prob.load[j] != 0.0) {
        rows.push_back(row);
        cols.push_back(rcol(j, i));
        values.push_back(prob.load[j]);
      }
    row_lo.push_back(lo);
    row_hi.push_back(hi);
  }
  for (std::size_t i = 0; i < n; ++i, ++row) {
    for (std::size_t j = 0; j < s; ++j)
      if (prob.memory[j] != 0.0) {
        rows.push_back(row);
        cols.push_back(xcol(j, i));
        values.push_back(prob.memory[j]);
      }
    row_lo.push_back(-COIN_DBL_MAX);
    row_hi.push_back(prob.max_memory);
  }
  // r_ij <= x_ij and, with R > 1, x_ij <= r_ij + 0.9999 (POP's "no idle replica").
  for (std::size_t j = 0; j < s; ++j)
    for (std::size_t i = 0; i < n; ++i) {
      rows.insert(rows.end(), {row, row});
      cols.insert(cols.end(), {rcol(j, i), xcol(j, i)});
      values.insert(values.end(), {1.0, -1.0});
      row_lo.push_back(-COIN_DBL_MAX);
      row_hi.push_back(0.0);
      ++row;
      if (R > 1) {
        rows.insert(rows.end(), {row, row});
        cols.insert(cols.end(), {xcol(j, i), rcol(j, i)});
        values.insert(values.end(), {1.0, -1.0});
        row_lo.push_back(-COIN_DBL_MAX);
        row_hi.push_back(0.9999);
        ++row;
      }
    }
  // sum_i r_ij = 1 and sum_i x_ij >= min(R, N).
  for (std::size_t j = 0; j < s; ++j) {
    for (std::size_t i = 0; i < n; ++i) {
      rows.push_back(row);
      cols.push_back(rcol(j, i));
      values.push_back(1.0);
    }
    row_lo.push_back(1.0);
    row_hi.push_back(1.0);
    ++row;
    for (std::size_t i = 0; i < n; ++i) {
      rows.push_back(row);
      cols.push_back(xcol(j, i));
      values.push_back(1.0);
    }
    row_lo.push_back(static_cast<double>(R));
    row_hi.push_back(COIN_DBL_MAX);
    ++row;
  }
  m.count = row;
  return m;
}

/// A MIP start for CBC: column names (CBC matches a start to columns by name) and values.
/// name_ptrs point into names, so a mip_start is moved, never copied (a move keeps the strings
/// where they are).
struct mip_start {
  std::vector<std::string> names;
  std::vector<const char*> name_ptrs;
  std::vector<double> start_values;
};

/// Names the columns of `solver` and returns options.start as a MIP start (empty without one).
mip_start name_mip_start(const popalloc::lb::problem& prob, const milp_options& options,
                         OsiClpSolverInterface& solver) {
  const std::size_t n = prob.server_count(), s = prob.shards();
  const std::size_t nx = n * s;
  auto rcol = [&](std::size_t j, std::size_t i) { return static_cast<int>(j * n + i); };
  auto xcol = [&](std::size_t j, std::size_t i) { return static_cast<int>(nx + j * n + i); };
  mip_start m;
  std::vector<std::string>& names = m.names;
  std::vector<const char*>& name_ptrs = m.name_ptrs;
  std::vector<double>& start_values = m.start_values;
  if (options.start != nullptr && options.start->shards.size() == s) {
    // MIP start: every x and r (CBC needs names to match a start to columns).
    names.resize(2 * nx);
    for (std::size_t c = 0; c < 2 * nx; ++c) {
      names[c] = (c < nx ? "r" : "x") + std::to_string(c % nx);
      solver.setColName(static_cast<int>(c), names[c]);
    }
    start_values.assign(2 * nx, 0.0);
    for (std::size_t j = 0; j < s; ++j)
      for (const auto& r : options.start->shards[j]) {
        start_values[static_cast<std::size_t>(rcol(j, static_cast<std::size_t>(r.server)))] =
            r.fraction;
        start_values[static_cast<std::size_t>(xcol(j, static_cast<std::size_t>(r.server)))] = 1.0;
      }
    for (const auto& name : names) name_ptrs.push_back(name.c_str());
  }
  return m;
}

cbc_answer run_cbc(const popalloc::lb::problem& prob, const milp_options& options,
                   incumbent_sink* sink) {
  const std::size_t n = prob.server_count(), s = prob.shards();
  const std::size_t nx = n * s;  // r: columns 0..nx-1, x: nx..2nx-1; column j*n + i
  const bool have_current = !prob.current.shards.empty();

  auto xcol = [&](std::size_t j, std::size_t i) { return static_cast<int>(nx + j * n + i); };
  const milp_rows m = milp_constraints(prob);
  const int row = m.count;
  const int ncols = static_cast<int>(2 * nx);
  CoinPackedMatrix matrix(true, m.rows.data(), m.cols.data(), m.values.data(),
                          static_cast<CoinBigIndex>(m.values.size()));
  matrix.setDimensions(row, ncols);
  std::vector<double> col_lo(2 * nx, 0.0), col_hi(2 * nx, 1.0), objective(2 * nx, 0.0);
  for (std::size_t j = 0; j < s; ++j)
    for (std::size_t i = 0; i < n; ++i)
      objective[static_cast<std::size_t>(xcol(j, i))] =
          have_current && prob.current.holds(j, static_cast<std::int32_t>(i)) ? 0.0 : 1.0;

  OsiClpSolverInterface solver;
  solver.messageHandler()->setLogLevel(0);
  solver.loadProblem(matrix, col_lo.data(), col_hi.data(), objective.data(), m.row_lo.data(),
                     m.row_hi.data());
  for (int c = static_cast<int>(nx); c < ncols; ++c) solver.setInteger(c);

  mip_start start = name_mip_start(prob, options, solver);
  std::vector<const char*>& name_ptrs = start.name_ptrs;
  std::vector<double>& start_values = start.start_values;

  CbcModel model(solver);
  CbcSolverUsefulData data;
  data.noPrinting_ = true;
  CbcMain0(model, data);
  model.setLogLevel(0);
  // CbcMain1 branches on a copy of `model`, which clones this handler.
  incumbent_events events(sink, ncols, options.fault);
  if (sink != nullptr) model.passInEventHandler(&events);
  if (!name_ptrs.empty())
    model.setMIPStart(static_cast<int>(name_ptrs.size()), name_ptrs.data(), start_values.data());
  const std::string gap = format_number(options.mip_gap);
  const std::string seconds = format_number(options.time_limit);
  // Wall-clock limit (CBC counts CPU seconds by default). CglPreProcess is off: CBC 2.10.8
  // crashed in its postProcess (ClpPresolve) on a POP sub-problem of the 1024 x 128 benchmark
  // (round 4, k = 16); with it off the columns CBC reports are the model's, which the incumbent
  // stream relies on.
  const char* argv[] = {"popalloc-lb", "-log",    "0",        "-ratioGap",     gap.c_str(),
                        "-timeMode",   "elapsed", "-seconds", seconds.c_str(), "-preprocess",
                        "off",         "-solve",  "-quit"};
  CbcMain1(static_cast<int>(sizeof argv / sizeof argv[0]), argv, model, nullptr, data);

  cbc_answer out;
  out.nodes = model.getNodeCount();
  out.best_bound = model.getBestPossibleObjValue();
  const double* best = model.bestSolution();
  if (model.isProvenInfeasible()) {
    out.kind = cbc_answer::infeasible;
  } else if (best != nullptr && model.getNumCols() == ncols) {
    out.kind = cbc_answer::solution;
    out.objective = model.getObjValue();
    out.proven_optimal = model.isProvenOptimal() ? 1 : 0;
    out.values = sparse(best, ncols);
  }
  return out;
}

/// The placement of a MILP solution: x = 1 replicas that serve queries (or that R > 1 needs),
/// fractions below 1e-9 dropped and renormalised.
popalloc::lb::placement placement_of(const popalloc::lb::problem& prob,
                                     const sparse_columns& values) {
  const std::size_t n = prob.server_count(), s = prob.shards(), nx = n * s;
  const int R = prob.required_replicas();
  std::vector<double> dense(2 * nx, 0.0);
  for (const auto& [c, v] : values)
    if (c >= 0 && static_cast<std::size_t>(c) < 2 * nx) dense[static_cast<std::size_t>(c)] = v;
  popalloc::lb::placement out;
  out.shards.resize(s);
  for (std::size_t j = 0; j < s; ++j) {
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      const double x = dense[nx + j * n + i];
      double r = dense[j * n + i];
      if (r < 1e-9) r = 0.0;
      // Keep a replica CBC chose (x = 1) only if it serves queries, or R > 1 requires it.
      if (x > 0.5 && (r > 0.0 || R > 1)) {
        out.shards[j].push_back({static_cast<std::int32_t>(i), r});
        sum += r;
      }
    }
    if (sum > 0.0)
      for (auto& e : out.shards[j]) e.fraction /= sum;
  }
  return out;
}

/// A placement from CBC checked against the problem: balanced, or unbalanced with the violation.
lb_result checked(const popalloc::lb::problem& prob, const sparse_columns& values,
                  const std::string& what) {
  lb_result out;
  out.result = placement_of(prob, values);
  const auto c = popalloc::lb::check(prob, out.result);
  out.status = c.feasible ? lb_status::balanced : lb_status::unbalanced;
  out.message = c.feasible ? what : what + "; the checker rejects it: " + c.violation;
  return out;
}

/// The answer of a CBC run that ended by itself (in this process or in a child).
lb_result from_answer(const popalloc::lb::problem& prob, const cbc_answer& a, milp_report& rep) {
  rep.nodes = a.nodes;
  rep.best_bound = a.best_bound;
  lb_result out;
  if (a.kind == cbc_answer::infeasible) {
    rep.outcome = milp_outcome::infeasible;
    out.status = lb_status::infeasible;
    out.message = "CBC proved the MILP infeasible";
  } else if (a.kind == cbc_answer::solution) {
    rep.outcome = a.proven_optimal ? milp_outcome::optimal : milp_outcome::time_limit;
    rep.source = placement_source::cbc;
    rep.proven_optimal = a.proven_optimal != 0;
    rep.objective = a.objective;
    out = checked(prob, a.values,
                  a.proven_optimal ? "optimal within the MIP gap" : "time limit: best incumbent");
  } else {
    rep.outcome = milp_outcome::time_limit;
    out.status = lb_status::no_solution;
    out.message = "CBC found no integer solution within the time limit";
  }
  return out;
}

// ---- The child process and its pipe protocol -------------------------------------------------
// A message is a header followed by `count` (column, value) entries. Incumbents may come many
// times; the final answer once, last. A message cut short by a crash is ignored.

constexpr std::uint32_t kIncumbent = 0x4c42494eU;  // "LBIN"
constexpr std::uint32_t kFinal = 0x4c424649U;      // "LBFI"

struct message_header {
  std::uint32_t tag;
  std::int32_t kind;
  std::int32_t nodes;
  std::int32_t proven_optimal;
  double objective;
  double best_bound;
  std::uint64_t count;
};

struct message_entry {
  std::int32_t column;
  std::int32_t unused;
  double value;
};

/// Writes all of `size` bytes or ends the child (the parent is gone or the pipe broke).
void write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t w = ::write(fd, p, size);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) ::_exit(5);
    p += w;
    size -= static_cast<std::size_t>(w);
  }
}

void send(int fd, std::uint32_t tag, const cbc_answer& a) {
  message_header h{tag,
                   a.kind,
                   a.nodes,
                   a.proven_optimal,
                   a.objective,
                   a.best_bound,
                   static_cast<std::uint64_t>(a.values.size())};
  std::string bytes(sizeof h + a.values.size() * sizeof(message_entry), '\0');
  std::memcpy(bytes.data(), &h, sizeof h);
  for (std::size_t k = 0; k < a.values.size(); ++k) {
    const message_entry e{a.values[k].first, 0, a.values[k].second};
    std::memcpy(bytes.data() + sizeof h + k * sizeof e, &e, sizeof e);
  }
  write_all(fd, bytes.data(), bytes.size());
}

class pipe_sink : public incumbent_sink {
 public:
  explicit pipe_sink(int fd) : fd_(fd) {}
  void incumbent(const double* values, int ncols, double objective) override {
    cbc_answer a;
    a.kind = cbc_answer::solution;
    a.objective = objective;
    a.values = sparse(values, ncols);
    send(fd_, kIncumbent, a);
  }

 private:
  int fd_;
};

/// Parses complete messages off the front of `buffer`.
void parse_messages(std::string& buffer, cbc_answer& incumbent, bool& have_incumbent,
                    int& incumbents, cbc_answer& final_answer, bool& have_final) {
  std::size_t at = 0;
  for (;;) {
    if (buffer.size() - at < sizeof(message_header)) break;
    message_header h{};
    std::memcpy(&h, buffer.data() + at, sizeof h);
    if (h.tag != kIncumbent && h.tag != kFinal) {  // cannot happen unless memory was corrupted
      buffer.clear();
      return;
    }
    if ((buffer.size() - at - sizeof h) / sizeof(message_entry) < h.count) break;
    cbc_answer a;
    a.kind = h.kind;
    a.nodes = h.nodes;
    a.proven_optimal = h.proven_optimal;
    a.objective = h.objective;
    a.best_bound = h.best_bound;
    a.values.resize(static_cast<std::size_t>(h.count));
    for (std::size_t k = 0; k < a.values.size(); ++k) {
      message_entry e{};
      std::memcpy(&e, buffer.data() + at + sizeof h + k * sizeof e, sizeof e);
      a.values[k] = {e.column, e.value};
    }
    at += sizeof h + a.values.size() * sizeof(message_entry);
    if (h.tag == kIncumbent) {
      incumbent = std::move(a);
      have_incumbent = true;
      ++incumbents;
    } else {
      final_answer = std::move(a);
      have_final = true;
    }
  }
  buffer.erase(0, at);
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGKILL:
      return "SIGKILL, e.g. the out-of-memory killer";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "signal";
  }
}

[[noreturn]] void child_main(const popalloc::lb::problem& prob, const milp_options& options,
                             int fd) {
#if defined(__linux__)
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive popalloc-lb
#endif
  std::signal(SIGPIPE, SIG_IGN);
  // CBC prints a few lines even with printing off; the parent's stdout is the round table.
  const int null_fd = ::open("/dev/null", O_WRONLY);
  if (null_fd >= 0) {
    ::dup2(null_fd, STDOUT_FILENO);
    ::close(null_fd);
  }
  if (options.fault == milp_fault::abort_child) std::abort();
  if (options.fault == milp_fault::hang_child)
    for (;;) ::pause();
  try {
    pipe_sink sink(fd);
    const cbc_answer a = run_cbc(prob, options, &sink);
    send(fd, kFinal, a);
  } catch (...) {
    ::_exit(4);
  }
  ::close(fd);
  ::_exit(0);
}

lb_result solve_in_child(const popalloc::lb::problem& prob, const milp_options& options,
                         milp_report& rep) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - start).count(); };
  lb_result out;
  int fds[2];
  if (::pipe(fds) != 0) {
    rep.outcome = milp_outcome::not_run;
    out.message = std::string("could not create a pipe for the CBC child: ") + std::strerror(errno);
    return out;
  }
  std::fflush(nullptr);  // the child must not flush the parent's buffered output again
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    rep.outcome = milp_outcome::not_run;
    out.message = std::string("could not start the CBC child process: ") + std::strerror(e);
    return out;
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(prob, options, fds[1]);
  }
  ::close(fds[1]);

  const double grace =
      options.kill_grace >= 0.0 ? options.kill_grace : std::max(1.0, 0.05 * options.time_limit);
  const double deadline = options.time_limit + grace;
  std::string buffer;
  cbc_answer incumbent, final_answer;
  bool have_incumbent = false, have_final = false, killed = false;
  std::vector<char> chunk(1 << 16);
  for (;;) {
    const double left = deadline - elapsed();
    if (left <= 0.0) {
      ::kill(pid, SIGKILL);
      killed = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min(1000.0, std::ceil(left * 1e3))));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t got = ::read(fds[0], chunk.data(), chunk.size());
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // end of file: the child finished or died
    buffer.append(chunk.data(), static_cast<std::size_t>(got));
    parse_messages(buffer, incumbent, have_incumbent, rep.incumbents, final_answer, have_final);
  }
  ::close(fds[0]);
  int status = 0;
  rusage usage{};
  while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  rep.child_cpu_seconds =
      static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
      1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  char after_text[64];
  std::snprintf(after_text, sizeof after_text, " after %.2f s", elapsed());
  const std::string after = after_text;

  if (!killed && have_final && WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return from_answer(prob, final_answer, rep);

  std::string what;
  if (killed) {
    rep.outcome = milp_outcome::time_limit;
    what = "CBC did not stop at its " + format_number(options.time_limit) +
           " s limit; killed at the deadline" + after;
  } else {
    rep.outcome = milp_outcome::solver_crashed;
    if (WIFSIGNALED(status))
      what = "CBC crashed (" + std::string(signal_name(WTERMSIG(status))) + ", signal " +
             std::to_string(WTERMSIG(status)) + ")" + after;
    else
      what = "the CBC child exited with status " +
             std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + " without an answer" +
             after;
  }
  if (have_incumbent) {
    rep.source = placement_source::cbc_incumbent;
    rep.objective = incumbent.objective;
    out = checked(prob, incumbent.values,
                  what + "; returning its last incumbent (" + format_number(incumbent.objective) +
                      " new replicas)");
    return out;
  }
  out.status = lb_status::no_solution;
  out.message = what + "; no incumbent";
  return out;
}

}  // namespace

milp_result solve_milp(const popalloc::lb::problem& prob, const milp_options& options) {
  const auto start = std::chrono::steady_clock::now();
  prob.validate();
  if (!(options.mip_gap >= 0.0) || !std::isfinite(options.mip_gap))
    throw popalloc::invalid_options("MILP: mip_gap must be finite and >= 0");
  if (!(options.time_limit > 0.0) || !std::isfinite(options.time_limit))
    throw popalloc::invalid_options("MILP: time_limit must be finite and > 0");
  if (!std::isfinite(options.kill_grace))
    throw popalloc::invalid_options("MILP: kill_grace must be finite");
  const std::size_t nx = prob.server_count() * prob.shards();
  if (2 * nx > static_cast<std::size_t>(INT32_MAX / 2))
    throw popalloc::invalid_problem("MILP: " + std::to_string(prob.shards()) + " shards x " +
                                    std::to_string(prob.server_count()) +
                                    " servers is too large for CBC");
  milp_result out;
  lb_result& placement = out;
  if (options.isolate)
    placement = solve_in_child(prob, options, out.report);
  else
    placement = from_answer(prob, run_cbc(prob, options, nullptr), out.report);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

#else

bool milp_available() { return false; }

milp_result solve_milp(const popalloc::lb::problem&, const milp_options&) {
  throw popalloc::invalid_problem(
      "the MILP solver is not available: this build has no COIN-OR CBC (install "
      "coinor-libcbc-dev and pkg-config, then reconfigure)");
}

#endif

}  // namespace popalloc_lb
