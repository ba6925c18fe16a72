// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The command-line layer shared by the five programs (and the option parser of
/// popalloc-compare and bench_families): "--name value", "--name=value" and flags, each option
/// at most once, unknown options rejected; the options every program accepts with one meaning
/// (docs/output-format.md), --version, progress on stderr and the JSON envelope.
#pragma once

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <popalloc/config.hpp>
#include <popalloc/error.hpp>
#include <popalloc/io/input_error.hpp>
#include <popalloc/io/json.hpp>
#include <popalloc/version.hpp>

namespace popalloc_cli {

/// \brief An option a program accepts, without its leading "--".
struct option_spec {
  std::string_view name;
  bool takes_value;
};

/// \brief Given options by name; flags map to "".
using given_options = std::map<std::string, std::string, std::less<>>;

namespace detail {

template <class UsageError>
given_options parse(int argc, char** argv, const option_spec* begin, const option_spec* end,
                    const option_spec* common_begin, const option_spec* common_end,
                    UsageError& usage_error, bool dashes_end_value) {
  given_options given;
  for (int k = 1; k < argc; ++k) {
    std::string_view argument = argv[k];
    // -h is the one short option: what a user tries first when a program is new to them.
    if (argument == "-h" && common_begin != common_end) argument = "--help";
    if (argument.substr(0, 2) != "--" || argument.size() == 2)
      usage_error("unexpected argument '" + std::string(argument) + "'");
    argument.remove_prefix(2);
    const std::size_t equals = argument.find('=');
    const std::string_view name = argument.substr(0, equals);
    auto named = [&](const option_spec& o) { return o.name == name; };
    const option_spec* spec = std::find_if(begin, end, named);
    if (spec == end) {
      spec = std::find_if(common_begin, common_end, named);
      if (spec == common_end) usage_error("unknown option '--" + std::string(name) + "'");
    }
    std::string value;
    if (spec->takes_value) {
      if (equals != std::string_view::npos) {
        value = argument.substr(equals + 1);
      } else if (k + 1 < argc &&
                 !(dashes_end_value && std::string_view(argv[k + 1]).substr(0, 2) == "--")) {
        value = argv[++k];
      } else {
        usage_error("option --" + std::string(name) + " needs a value");
      }
    } else if (equals != std::string_view::npos) {
      usage_error("option --" + std::string(name) + " takes no value");
    }
    if (!given.emplace(std::string(name), std::move(value)).second)
      usage_error("option --" + std::string(name) + " given twice");
  }
  return given;
}

}  // namespace detail

/// \brief Parses argv against `options` only; every problem is reported through `usage_error`
/// (which must not return), so each program words its own pointer to --help. With
/// `dashes_end_value`, an argument starting with "--" is never taken as the previous option's
/// value ("--rounds --output x" is "--rounds needs a value", not rounds = "--output").
template <std::size_t N, class UsageError>
given_options parse_arguments(int argc, char** argv, const option_spec (&options)[N],
                              UsageError usage_error, bool dashes_end_value = false) {
  return detail::parse(argc, argv, std::begin(options), std::end(options), nullptr, nullptr,
                       usage_error, dashes_end_value);
}

/// \brief The options of every program, with one meaning each (docs/output-format.md
/// "Common options"); a program lists only its own options and handles all of these.
inline constexpr option_spec kCommonOptions[] = {
    {"help", false},  {"version", false}, {"threads", true},  {"seed", true},
    {"output", true}, {"quiet", false},   {"verbose", false}, {"time-limit", true},
};

/// \brief parse_arguments() over the program's options and kCommonOptions, with -h for --help.
/// --quiet with --verbose is an error.
template <std::size_t N, class UsageError>
given_options parse_program_arguments(int argc, char** argv, const option_spec (&options)[N],
                                      UsageError usage_error, bool dashes_end_value = false) {
  given_options given =
      detail::parse(argc, argv, std::begin(options), std::end(options), std::begin(kCommonOptions),
                    std::end(kCommonOptions), usage_error, dashes_end_value);
  if (given.count("quiet") != 0 && given.count("verbose") != 0)
    usage_error("--quiet and --verbose cannot be combined");
  return given;
}

/// \brief The smallest value a number option accepts: `above(x)` excludes x, `at_least(x)`
/// includes it.
struct lower_bound {
  double value;
  bool inclusive;
};
constexpr lower_bound above(double value) { return {value, false}; }
constexpr lower_bound at_least(double value) { return {value, true}; }
/// Any finite number.
constexpr lower_bound any_number{-std::numeric_limits<double>::infinity(), true};

/// \brief Reads the values of numeric options. A value that is not a number of the asked kind,
/// or lies outside the accepted range, goes to the program's usage error (as for
/// parse_arguments), with the option's name and the range, so that every program words these
/// errors alike: "--threads: 'x' is not an integer", "--pop must be >= 1",
/// "--tolerance must be > 0".
template <class UsageError>
class value_reader {
 public:
  explicit value_reader(UsageError usage_error) : usage_error_(std::move(usage_error)) {}

  /// A whole number (decimal digits, an optional '-') in [minimum, maximum].
  template <class Integer>
  Integer integer(std::string_view text, const std::string& option, Integer minimum,
                  Integer maximum = std::numeric_limits<Integer>::max()) const {
    static_assert(std::is_integral_v<Integer>);
    Integer value{};
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    const bool whole = !text.empty() && end == text.data() + text.size();
    if (std::is_unsigned_v<Integer> && text.size() > 1 && text[0] == '-' &&
        integer_text(text.substr(1)))
      fail(option + " must be >= " + std::to_string(minimum));
    if (error == std::errc::result_out_of_range && whole)
      fail(option + " must be in [" + std::to_string(minimum) + ", " + std::to_string(maximum) +
           "]");
    if (error != std::errc() || !whole)
      fail(option + ": '" + std::string(text) + "' is not an integer");
    if (value < minimum) fail(option + " must be >= " + std::to_string(minimum));
    if (value > maximum) fail(option + " must be <= " + std::to_string(maximum));
    return value;
  }

  /// A finite decimal number ("2", "-0.5", "1e-3"; not "inf" or "nan") at or above `bound`.
  double number(std::string_view text, const std::string& option, lower_bound bound) const {
    double value = 0.0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() ||
        !std::isfinite(value))
      fail(option + ": '" + std::string(text) + "' is not a finite number");
    if (bound.inclusive ? !(value >= bound.value) : !(value > bound.value)) {
      std::string limit;
      popalloc::io::json::append_number(limit, bound.value);
      fail(option + (bound.inclusive ? " must be >= " : " must be > ") + limit);
    }
    return value;
  }

 private:
  static bool integer_text(std::string_view digits) {
    return !digits.empty() &&
           std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  }

  [[noreturn]] void fail(const std::string& what) const {
    usage_error_(what);
    // A usage error must not return (parse_arguments); should one, the option is still refused.
    throw popalloc::io::input_error(what);
  }

  UsageError usage_error_;
};

/// \brief The body of a program's main(): returns `run()`, and maps what it throws to one line
/// on stderr, "PROGRAM: what", and the exit status of docs/output-format.md: 2 for a bad command
/// line or input (io::input_error, which usage errors and the readers throw; invalid_problem;
/// invalid_options), 1 for running out of memory and for anything else (an internal error).
template <class Run>
int run_program(const char* program, Run&& run) {
  try {
    return run();
  } catch (const popalloc::io::input_error& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 2;
  } catch (const popalloc::invalid_problem& e) {
    std::fprintf(stderr, "%s: invalid problem: %s\n", program, e.what());
    return 2;
  } catch (const popalloc::invalid_options& e) {
    std::fprintf(stderr, "%s: invalid option: %s\n", program, e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: out of memory\n", program);
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", program, e.what());
    return 1;
  }
}

/// \brief What a program prints besides its outputs and its errors and warnings (stderr):
/// quiet: nothing; normal: the summary on stdout and, for runs past their first second, progress
/// on stderr; verbose: also the per-item table (jobs, rounds) on stdout and progress from the
/// start.
enum class verbosity { quiet, normal, verbose };

inline verbosity verbosity_of(const given_options& given) {
  if (given.count("quiet") != 0) return verbosity::quiet;
  if (given.count("verbose") != 0) return verbosity::verbose;
  return verbosity::normal;
}

/// \brief The --version text: the popalloc version, the compute backends compiled into this
/// program, and the LP/MILP libraries the build found (which this program uses, if any).
/// `backends` lists the backends beyond "cpu"; `uses` the libraries this program calls.
inline std::string version_text(std::string_view program, std::string_view backends,
                                std::string_view uses) {
  std::string out = std::string(program) + " " + popalloc::version_string + "\n";
  out += "backends: cpu (OpenMP ";
  out += POPALLOC_OPENMP_ACTIVE ? "on" : "off";
  out += ")";
  if (!backends.empty()) out += ", " + std::string(backends);
  out += "\nLP/MILP libraries found by the build: ";
  std::string found;
#ifdef POPALLOC_CLI_CLP_VERSION
  found += std::string("COIN-OR CLP ") + POPALLOC_CLI_CLP_VERSION;
#endif
#ifdef POPALLOC_CLI_CBC_VERSION
  found += std::string(found.empty() ? "" : ", ") + "COIN-OR CBC " + POPALLOC_CLI_CBC_VERSION;
#endif
#ifdef POPALLOC_CLI_HAVE_GLPK
  found += std::string(found.empty() ? "" : ", ") + "GLPK";
#endif
  out += found.empty() ? "none" : found;
  out += "\nused by " + std::string(program) + ": ";
  out += uses.empty() ? "none" : std::string(uses);
  out += "\n";
  return out;
}

/// \brief Seconds between progress lines, and the quiet start: a run that ends within its first
/// second prints none.
inline constexpr double kProgressFirstSeconds = 1.0;
inline constexpr double kProgressIntervalSeconds = 1.0;

/// \brief Progress for a library call that reports none (the cluster policies, CLP) or that
/// reports through a callback whose steps can each take long (the TE price solver's core solves,
/// load-balancing rounds; progress_state carries its latest report): a thread prints
/// "  LABEL[ STATE]  elapsed S s" to stderr every second after the first (verbose: from the
/// start), until the object is destroyed. `state`, if given, is called on that thread, so what it
/// reads must be atomic.
class heartbeat {
 public:
  heartbeat(verbosity level, std::string label, std::function<std::string()> state = {}) {
    if (level == verbosity::quiet) return;
    const double first = level == verbosity::verbose ? 0.0 : kProgressFirstSeconds;
    thread_ = std::thread([this, label = std::move(label), state = std::move(state), first] {
      const auto start = std::chrono::steady_clock::now();
      auto wake = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(first));
      std::unique_lock<std::mutex> lock(mutex_);
      while (!done_) {
        if (cv_.wait_until(lock, wake, [this] { return done_; })) break;
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const std::string now = state ? " " + state() : std::string();
        std::fprintf(stderr, "  %s%s  elapsed %7.1f s\n", label.c_str(), now.c_str(), elapsed);
        wake += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(kProgressIntervalSeconds));
      }
    });
  }
  heartbeat(const heartbeat&) = delete;
  heartbeat& operator=(const heartbeat&) = delete;
  ~heartbeat() {
    if (!thread_.joinable()) return;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

/// \brief The latest progress report of a library call, as text: written by its progress
/// callback (from any thread, several at once) and read by a heartbeat's `state`.
class progress_state {
 public:
  explicit progress_state(std::string initial = {}) : text_(std::move(initial)) {}
  void set(std::string text) {
    const std::lock_guard<std::mutex> lock(mutex_);
    text_ = std::move(text);
  }
  std::string get() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return text_;
  }

 private:
  mutable std::mutex mutex_;
  std::string text_;
};

/// \brief The version of the JSON layout of every program's --output (docs/output-format.md);
/// raised when a key is renamed or removed or changes meaning.
inline constexpr int kSchemaVersion = 1;

/// \brief What every JSON output opens with: the layout version, the program and the popalloc
/// version, the command line and the inputs' names.
struct run_record {
  std::string program;
  std::vector<std::string> command_line;
  /// Role (e.g. "trace") -> file name, or a description in angle brackets for a built-in or
  /// generated input ("<built-in Gavel throughputs>").
  std::vector<std::pair<std::string, std::string>> inputs;

  run_record(std::string name, int argc, char** argv) : program(std::move(name)) {
    for (int k = 0; k < argc; ++k) command_line.emplace_back(argv[k]);
  }
  void input(std::string role, std::string name) {
    inputs.emplace_back(std::move(role), std::move(name));
  }
};

/// \brief Appends the envelope's members, each on its own line indented by two spaces and
/// followed by ",\n": call it right after the opening "{\n".
inline void append_envelope(std::string& out, const run_record& run) {
  namespace json = popalloc::io::json;
  out += "  \"schema_version\": " + std::to_string(kSchemaVersion) + ",\n  \"program\": ";
  json::append_string(out, run.program);
  out += ",\n  \"popalloc_version\": ";
  json::append_string(out, popalloc::version_string);
  out += ",\n  \"command_line\": [";
  for (std::size_t k = 0; k < run.command_line.size(); ++k) {
    if (k != 0) out += ", ";
    json::append_string(out, run.command_line[k]);
  }
  out += "],\n  \"inputs\": {";
  for (std::size_t k = 0; k < run.inputs.size(); ++k) {
    if (k != 0) out += ", ";
    json::append_string(out, run.inputs[k].first);
    out += ": ";
    json::append_string(out, run.inputs[k].second);
  }
  out += "},\n";
}

}  // namespace popalloc_cli
