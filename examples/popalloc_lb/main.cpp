// SPDX-License-Identifier: Apache-2.0
// popalloc-lb: POP's load-balancing benchmark (E-Store-style shard placement) with the exact MILP
// (COIN-OR CBC), popalloc's price-discovery LP relaxation + repair, or the greedy heuristic, each
// optionally under POP. `popalloc-lb --help` documents it; docs/load-balancing.md the method.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <time.h>
#include <utility>
#include <vector>

#include <sys/resource.h>

#include <popalloc/io/atomic_file.hpp>
#include <popalloc/io/input_error.hpp>
#include <popalloc/io/text_file.hpp>
#include <popalloc/lb.hpp>
#include <popalloc/lb/placement_csv.hpp>

#include "../common/command_line.hpp"
#include "milp_cbc.hpp"

namespace popalloc_lb {
namespace {

using popalloc::io::input_error;
namespace lb = popalloc::lb;

constexpr const char* kUsage = R"(Usage:
  popalloc-lb --shards S --servers N --rounds R --seed SEED --solver milp|price|greedy [--pop K]
              [options]
  popalloc-lb --placement FILE [--new-placement FILE] [--solver NAME] [--pop K] [options]
  popalloc-lb          a quick demo: 256 shards, 32 servers, 30 rounds (10 skipped), price

POP's load-balancing benchmark: every round the shard loads are load_j = round(1e6/(j+1)^z) with
z ~ U(0.25, 0.75) drawn by java.util.Random(SEED) (the exponents of POP's harness), memory 1 per
shard, at most --max-memory shards per server; shard j starts on server j mod N. Each round the
solver re-places the shards so that every server's load is within mean -+ epsilon * mean while
creating as few new shard replicas as possible; the result is the next round's placement. With
--drift, the shards' popularity drifts from round to round instead (see --drift).

With --placement, one round re-places your own shards instead (see --placement below and
docs/load-balancing.md).

Options:
  --shards S          number of shards (default 1024)
  --servers N         number of servers (default 128)
  --rounds R          rounds (default 100)
  --skip K            first rounds left out of the averages (default 20; must be < R)
  --seed SEED         seed of the exponent sequence (default 42, POP's), or of the drift
  --drift SIGMA       the drift workload instead of POP's, 0 < SIGMA <= 1: round 0 has the loads
                      at z = 0.5, then every round multiplies each shard's load by
                      exp(N(0, SIGMA^2)), independently (shard popularity drifting; the exponent
                      is "-" per round and null in the JSON). Not with --placement
  --solver NAME       milp: the exact MILP through COIN-OR CBC (to --mip-gap)
                      price: LP relaxation by popalloc's price-discovery solver + repair (default)
                      greedy: E-Store-style heuristic (POP's heuristicBalance)
  --pop K             POP: servers in K contiguous groups, shards dealt to groups preferring
                      where they live (split across groups when needed), groups solved one after
                      the other, routing merged scaled by partial load (default 1: no POP)
  --epsilon E         balance band half-width relative to the mean (default 0.05)
  --max-memory M      memory per server: with the generated workload, shards per server
                      (default 16); with --placement, in the file's memory units (default: no
                      limit)
  --mip-gap G         milp: relative MIP gap (default 0.05, POP's CPLEX setting)
  --time-limit T      milp: wall-clock seconds per MILP solve (default 60). Every CBC solve
                      runs in a child process: killed when it overruns the limit (plus max(1 s,
                      5%)), and a crash of CBC becomes the round's solver status, not the end of
                      popalloc-lb. price with --relaxation core: wall-clock seconds per LP
                      relaxation (per POP part; default none), the rounding and repair run
                      after it
  --milp-start KIND   milp: price (default; the price solver's placement as MIP start, its time
                      counted in the round's seconds) or none
  --relaxation KIND   price: flow (default): the LP relaxation reduced to what the holding
                      servers keep of the moving shards, solved exactly by a greedy augmenting
                      flow; core: the relaxation over holding servers and receivers solved by
                      popalloc's price-discovery core to --tolerance
  --consolidate-memory F
                      price (and milp's start): the repair frees a shard's spare replica only
                      on servers whose memory is at least F x --max-memory, 0 <= F <= 1
                      (default 0.75; 0: wherever it can); spare replicas let the next round
                      re-route load without moving data
  --tolerance TOL     price: relative duality gap of the LP relaxation, 0 < TOL < 0.1
                      (default 1e-4; the flow's certificate is exact and must meet it too)
  --threads T         price with --relaxation core: OpenMP threads of the LP solve (default 0:
                      OpenMP default)
  --output FILE       JSON (share/popalloc/schemas/popalloc-lb.schema.json,
                      docs/output-format.md): schema_version, program, popalloc_version,
                      command_line, inputs, status, seconds, solver, relaxation, pop_parts,
                      workload (zipf or drift; null with --placement), drift (SIGMA or null),
                      rounds [{round, shards_moved, max_load_deviation, seconds, cpu_seconds,
                      exponent, status, solver_status, placement_from, message}],
                      avg_shards_moved, avg_seconds,
                      avg_cpu_seconds, worst_load_deviation (over the counted rounds),
                      solver_status_rounds, and the settings
  --placement FILE    your shards and where they live, as CSV: a header naming the columns
                      shard, server, load (any order; optionally memory), then one row per
                      replica: the server holds the shard and serves `load` of its queries (0:
                      an idle copy). A shard's load is the sum of its rows. A row with an empty
                      server is a shard to be placed (its only row); a row with an empty shard
                      and load 0 or empty is a server that holds nothing yet. memory: the
                      shard's, the same on each of its rows (default 1). Not with --shards,
                      --servers, --rounds, --skip, --seed or --drift
  --new-placement FILE
                      with --placement: the new placement in the same CSV format, with the
                      columns shard,server,load,memory,new (new: 1 for a replica to create),
                      readable as the next round's --placement
  --quiet             nothing on stdout, no progress
  --verbose           also a line per round on stdout
  -h, --help          this text
  --version           popalloc version, backends, LP/MILP libraries

It prints the settings and the averages over the counted rounds (with --placement: the current
placement's max load deviation, then the new placement's status, new replicas, max load
deviation and seconds), and progress on stderr (the round reached) once a run takes more than a
second. With --verbose, per round: round, exponent z ("-" with --placement or --drift), shards
moved (new replicas), max load deviation
(max over servers of |load - mean| / mean), wall-clock and CPU seconds (this process and its CBC
children), status (balanced, or unbalanced when the solver could not meet every constraint, e.g.
greedy never splits a shard heavier than the band) and, for milp, how CBC ended (the worst over
POP's parts): optimal (within the gap), time_limit, infeasible, solver_crashed (CBC died on a
signal), not_run, and where the placement comes from: cbc, cbc_incumbent (the last incumbent CBC
found before it was killed or crashed), mip_start (the price placement), previous_placement
(nothing better: the shards stay where they are).

Outputs are replaced atomically; symbolic links are written through, "-" (stdout), devices and
FIFOs directly, and a read-only file or an output that is an input or another output is refused
before any work.

Exit status: 0 done (also when some rounds are unbalanced: the status says which), 2 invalid
arguments (nothing is written), 1 internal error.
)";

using popalloc_cli::option_spec;

constexpr option_spec kOptions[] = {
    {"shards", true},        {"servers", true},
    {"rounds", true},        {"skip", true},
    {"solver", true},        {"pop", true},
    {"epsilon", true},       {"max-memory", true},
    {"mip-gap", true},       {"milp-start", true},
    {"tolerance", true},     {"placement", true},
    {"new-placement", true}, {"relaxation", true},
    {"drift", true},         {"consolidate-memory", true},
};

[[noreturn]] void usage_error(const std::string& what) {
  throw input_error(what + " (see popalloc-lb --help)");
}

std::map<std::string, std::string, std::less<>> parse_arguments(int argc, char** argv) {
  return popalloc_cli::parse_program_arguments(argc, argv, kOptions, usage_error,
                                               /*dashes_end_value=*/true);
}

const popalloc_cli::value_reader read_value{usage_error};

struct settings {
  long long shards = 1024, servers = 128, rounds = 100, skip = 20, seed = 42;
  std::string solver = "price";
  lb::relaxation_method relaxation = lb::relaxation_method::keep_flow;
  int pop = 1;
  double epsilon = 0.05, max_memory = 16.0, mip_gap = 0.05, time_limit = 60.0, tolerance = 1e-4;
  double consolidate_memory = 0.75;
  std::optional<double> drift;  ///< --drift: sigma of the drift workload; none: POP's zipf
  bool milp_start = true;
  bool time_limit_given = false;
  bool max_memory_given = false;
  int threads = 0;
  std::string output;
  std::string placement_path, new_placement_path;  ///< --placement, --new-placement
  popalloc_cli::verbosity verbosity = popalloc_cli::verbosity::normal;
  popalloc_lb::milp_fault fault = popalloc_lb::milp_fault::none;
};

std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

/// A number as %g: for text (the JSON takes number(), which reads back exactly).
std::string short_number(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// Far above POP's largest benchmark (16384 x 2048); the repair's work grows with the square of
// the servers, so beyond these a run would not end in any useful time.
constexpr long long kMaxShards = 10'000'000, kMaxServers = 100'000;

/// The checks that need the numbers of shards and servers (from the options, or from the
/// --placement file) and the shards' total memory; with --placement and no --max-memory, the
/// memory limit becomes that total (no limit).
void check_sizes(settings& s, double total_memory) {
  const bool from_file = !s.placement_path.empty();
  const std::string servers = from_file
                                  ? "the placement's servers (" + std::to_string(s.servers) + ")"
                                  : "--servers (" + std::to_string(s.servers) + ")";
  const std::string shards = from_file ? "its shards (" + std::to_string(s.shards) + ")"
                                       : "--shards (" + std::to_string(s.shards) + ")";
  if (from_file && s.shards > kMaxShards)
    usage_error(shards + " are more than " + std::to_string(kMaxShards));
  if (from_file && s.servers > kMaxServers)
    usage_error(servers + " are more than " + std::to_string(kMaxServers));
  if (s.pop > s.servers) usage_error("--pop (" + std::to_string(s.pop) + ") must be <= " + servers);
  // The core's relaxation has up to a column per server of a part, and its Newton system is
  // columns x columns: 16384 columns already take 2 GiB, more cannot be solved in memory.
  constexpr long long kMaxLpServers = 16384;
  const long long part_servers = (s.servers + s.pop - 1) / s.pop;
  if (s.solver != "greedy" && s.relaxation == lb::relaxation_method::core &&
      part_servers > kMaxLpServers)
    usage_error("--relaxation core solves an LP with up to a column per server: " +
                std::to_string(part_servers) + " servers per part is more than " +
                std::to_string(kMaxLpServers) +
                " (use --relaxation flow, --pop K to split them, or --solver greedy)");
  if (s.servers > s.shards)
    usage_error(servers + " must be no more than " + shards +
                ": a server reaches the load band only through a replica, so with more servers "
                "than shards most shards would be split over many servers, which the model "
                "does not cover");
  if (s.pop > 1 && s.pop > s.shards)
    usage_error("--pop (" + std::to_string(s.pop) + ") must be <= " + shards);
  if (from_file && !s.max_memory_given) s.max_memory = total_memory;
  if (total_memory > s.max_memory * static_cast<double>(s.servers))
    usage_error("the shards do not fit: their memory (" + number(total_memory) +
                ") is more than --max-memory x " + (from_file ? "servers" : "--servers"));
}

settings read_settings(int argc, char** argv, bool& help, bool& version) {
  settings s;
  if (argc == 1) {  // the quick demo (also the CTest smoke test)
    s.shards = 256;
    s.servers = 32;
    s.rounds = 30;
    s.skip = 10;
    return s;
  }
  const auto given = parse_arguments(argc, argv);
  if (given.count("help") != 0 || given.count("version") != 0) {
    help = given.count("help") != 0;
    version = !help;
    return s;
  }
  auto get = [&](const char* name) -> const std::string* {
    const auto it = given.find(name);
    return it == given.end() ? nullptr : &it->second;
  };
  constexpr long long kMaxInt = std::numeric_limits<std::int32_t>::max();
  if (auto v = get("shards")) s.shards = read_value.integer(*v, "--shards", 1LL, kMaxShards);
  if (auto v = get("servers")) s.servers = read_value.integer(*v, "--servers", 1LL, kMaxServers);
  if (auto v = get("rounds")) s.rounds = read_value.integer(*v, "--rounds", 1LL, kMaxInt);
  if (auto v = get("skip")) s.skip = read_value.integer(*v, "--skip", 0LL, kMaxInt);
  if (auto v = get("seed"))
    s.seed = read_value.integer(*v, "--seed", std::numeric_limits<long long>::min());
  if (auto v = get("solver")) {
    if (*v != "milp" && *v != "price" && *v != "greedy")
      usage_error("--solver must be milp, price or greedy (got '" + *v + "')");
    s.solver = *v;
  }
  if (auto v = get("relaxation")) {
    if (*v != "flow" && *v != "core")
      usage_error("--relaxation must be flow or core (got '" + *v + "')");
    s.relaxation = *v == "flow" ? lb::relaxation_method::keep_flow : lb::relaxation_method::core;
  }
  if (auto v = get("pop")) s.pop = read_value.integer(*v, "--pop", 1);
  if (auto v = get("epsilon"))
    s.epsilon = read_value.number(*v, "--epsilon", popalloc_cli::at_least(0.0));
  if (auto v = get("max-memory")) {
    s.max_memory = read_value.number(*v, "--max-memory", popalloc_cli::above(0.0));
    s.max_memory_given = true;
  }
  if (auto v = get("mip-gap"))
    s.mip_gap = read_value.number(*v, "--mip-gap", popalloc_cli::at_least(0.0));
  if (auto v = get("time-limit")) {
    s.time_limit = read_value.number(*v, "--time-limit", popalloc_cli::above(0.0));
    s.time_limit_given = true;
  }
  if (auto v = get("drift")) {
    s.drift = read_value.number(*v, "--drift", popalloc_cli::above(0.0));
    if (!(*s.drift <= 1.0)) usage_error("--drift must be in (0, 1]");
  }
  if (auto v = get("consolidate-memory")) {
    s.consolidate_memory =
        read_value.number(*v, "--consolidate-memory", popalloc_cli::at_least(0.0));
    if (!(s.consolidate_memory <= 1.0)) usage_error("--consolidate-memory must be in [0, 1]");
  }
  if (auto v = get("tolerance")) {
    s.tolerance = read_value.number(*v, "--tolerance", popalloc_cli::above(0.0));
    if (!(s.tolerance < 0.1)) usage_error("--tolerance must be in (0, 0.1)");
  }
  if (auto v = get("threads")) s.threads = read_value.integer(*v, "--threads", 0, 4096);
  if (auto v = get("milp-start")) {
    if (*v != "price" && *v != "none")
      usage_error("--milp-start must be price or none (got '" + *v + "')");
    s.milp_start = *v == "price";
  }
  for (const char* name : {"output", "placement", "new-placement"})
    if (auto v = get(name); v != nullptr && v->empty())
      usage_error(std::string("--") + name + " needs a file name");
  if (auto v = get("output")) s.output = *v;
  if (auto v = get("placement")) s.placement_path = *v;
  if (auto v = get("new-placement")) s.new_placement_path = *v;
  if (!s.placement_path.empty()) {
    for (const char* generated : {"shards", "servers", "rounds", "skip", "seed", "drift"})
      if (given.count(generated) != 0)
        usage_error(std::string("--") + generated +
                    " does not apply to --placement (the file gives the shards and servers, and "
                    "one round is solved)");
    s.rounds = 1;
    s.skip = 0;
  } else if (!s.new_placement_path.empty()) {
    usage_error("--new-placement needs --placement (the generated rounds have no file to write)");
  }
  // Now, not after the rounds: a typo must not cost the whole run.
  popalloc::io::check_output_files(
      {{"--output", s.output}, {"--new-placement", s.new_placement_path}},
      {{"--placement", s.placement_path}});
  s.verbosity = popalloc_cli::verbosity_of(given);
  // Options of another solver do nothing; say so rather than let the user believe they did.
  auto ignored = [&](std::initializer_list<const char*> names, const char* applies_to) {
    for (const char* name : names)
      if (given.count(name) != 0)
        std::fprintf(stderr, "popalloc-lb: warning: --%s only applies to %s\n", name, applies_to);
  };
  if (s.solver != "milp") ignored({"mip-gap", "milp-start"}, "--solver milp");
  if (s.solver == "greedy")
    ignored({"tolerance", "threads", "time-limit", "relaxation", "consolidate-memory"},
            "--solver price and milp");
  else if (s.relaxation == lb::relaxation_method::keep_flow && s.solver == "price")
    ignored({"threads", "time-limit"}, "--relaxation core");
  else if (s.relaxation == lb::relaxation_method::keep_flow)
    ignored({"threads"}, "--relaxation core");
  // Test hook of the CBC isolation (tests/lb/run_lb_cli_tests.sh); deliberately not an option.
  if (const char* fault = std::getenv("POPALLOC_LB_MILP_FAULT"); fault != nullptr && *fault) {
    if (!parse_milp_fault(fault, s.fault))
      usage_error(std::string("POPALLOC_LB_MILP_FAULT must be none, abort, segv_after_incumbent "
                              "or hang (got '") +
                  fault + "')");
  }
  if (s.skip >= s.rounds)
    usage_error("--skip (" + std::to_string(s.skip) + ") must be < --rounds (" +
                std::to_string(s.rounds) + ") so that some rounds are counted");
  if (s.solver == "milp" && !milp_available())
    usage_error(
        "--solver milp needs COIN-OR CBC, which this build does not have (install "
        "coinor-libcbc-dev and pkg-config and reconfigure)");
  if (s.placement_path.empty()) check_sizes(s, static_cast<double>(s.shards));
  return s;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(c));
      out += esc;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

struct round_record {
  long long round = 0;
  double exponent = 0.0;
  std::int64_t moved = 0;
  double deviation = 0.0;
  double seconds = 0.0;
  double cpu_seconds = 0.0;
  std::string status;
  std::string solver_status;   ///< milp: worst CBC outcome over the parts; else "completed"
  std::string placement_from;  ///< milp: worst source over the parts; else the solver's name
  std::string message;         ///< why the round is not balanced, or what CBC did if not optimal
};

/// CPU seconds of this process, all threads, plus its finished CBC children (robust to other
/// work on a shared machine).
double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  rusage children{};
  getrusage(RUSAGE_CHILDREN, &children);
  auto seconds = [](const timeval& v) {
    return static_cast<double>(v.tv_sec) + 1e-6 * static_cast<double>(v.tv_usec);
  };
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec) +
         seconds(children.ru_utime) + seconds(children.ru_stime);
}

/// What the MILP did in one round, over its POP parts: the worst outcome and source.
struct milp_round {
  std::map<std::string, int> outcomes;  ///< parts per outcome name
  bool any = false;                     ///< a part was added
  milp_outcome worst_outcome = milp_outcome::optimal;
  placement_source worst_source = placement_source::cbc;
  std::string message;  ///< why the worst outcome is not optimal
  void add(milp_outcome outcome, placement_source source, const std::string& why) {
    ++outcomes[to_string(outcome)];
    if (!any || worse(worst_outcome, outcome) != worst_outcome) {
      worst_outcome = outcome;
      if (outcome != milp_outcome::optimal) message = why;
    }
    if (!any || worse(worst_source, source) != worst_source) worst_source = source;
    any = true;
  }
  std::string outcome_name() const { return any ? to_string(worst_outcome) : ""; }
  std::string source_name() const { return any ? to_string(worst_source) : ""; }
};

/// The current placement with the previous fractions, used when a solver returns nothing.
lb::placement normalised(const lb::placement& p) {
  lb::placement out = p;
  for (auto& shard : out.shards) {
    double sum = 0.0;
    for (const auto& r : shard) sum += r.fraction;
    for (auto& r : shard)
      r.fraction = sum > 0.0 ? r.fraction / sum : 1.0 / static_cast<double>(shard.size());
  }
  return out;
}

/// The price solver's options; unless quiet, its progress goes to `latest` for the heartbeat.
lb::price_options price_options_of(const settings& s, popalloc_cli::progress_state& latest) {
  const bool quiet = s.verbosity == popalloc_cli::verbosity::quiet;
  lb::price_options price;
  price.relaxation = s.relaxation;
  price.consolidate_memory = s.consolidate_memory;
  price.solver.relative_gap = s.tolerance;
  price.solver.threads = s.threads;
  // For --solver milp the limit is CBC's; its MIP start keeps an unlimited LP.
  if (s.solver == "price" && s.time_limit_given) price.solver.time_limit_seconds = s.time_limit;
  if (!quiet)
    price.callback = [&latest](const lb::progress& p) {
      char text[160];
      if (p.stage == lb::stage::lp && p.lp_iterations == 0)
        std::snprintf(text, sizeof text, "keep LP of %zu shards x %zu servers solved, gap %.2e",
                      p.lp_shards, p.lp_servers, p.lp_relative_gap);
      else if (p.stage == lb::stage::lp)
        std::snprintf(text, sizeof text, "LP of %zu shards x %zu servers, iteration %d, gap %.2e",
                      p.lp_shards, p.lp_servers, p.lp_iterations, p.lp_relative_gap);
      else if (p.lp_shards == 0)
        std::snprintf(text, sizeof text, "repair (no LP needed)");
      else
        std::snprintf(text, sizeof text,
                      "repair after the LP of %zu shards x %zu servers (%d iterations)",
                      p.lp_shards, p.lp_servers, p.lp_iterations);
      latest.set(text);
      return popalloc::callback_action::proceed;
    };
  return price;
}

/// One MILP solve of `p`, with the price solver's placement as MIP start unless --milp-start
/// none; what CBC did goes to `tally`. A solve without any placement keeps the current one.
lb::lb_result solve_one_milp(const settings& s, const lb::price_options& po, const lb::problem& p,
                             milp_round& milp_tally) {
  milp_options mo;
  mo.mip_gap = s.mip_gap;
  mo.time_limit = s.time_limit;
  mo.fault = s.fault;
  lb::lb_result start;
  if (s.milp_start) {
    start = lb::solve_price(p, po);
    if (start.status == lb::lb_status::balanced) mo.start = &start.result;
  }
  milp_result r = solve_milp(p, mo);
  const milp_report& report = r.report;
  r.seconds += start.seconds;
  if (r.status != lb::lb_status::balanced && start.status == lb::lb_status::balanced) {
    // CBC ended without a better incumbent than the start it was given: return the start.
    milp_tally.add(report.outcome, placement_source::mip_start, r.message);
    start.message = "MILP: " + r.message + "; returning the MIP start";
    start.seconds = r.seconds;
    return start;
  }
  if (r.status == lb::lb_status::no_solution) {
    // No placement at all (crash or time limit before any incumbent, no usable start): the
    // shards stay where they are, and the checker says whether that is still balanced.
    milp_tally.add(report.outcome, placement_source::previous_placement, r.message);
    const double seconds = r.seconds;
    r.result = normalised(p.current);
    const lb::check_report c = lb::check(p, r.result);
    r.status = c.feasible ? lb::lb_status::balanced : lb::lb_status::unbalanced;
    r.message = "MILP: " + r.message + "; keeping the previous placement" +
                (c.feasible ? std::string() : ": " + c.violation);
    r.seconds = seconds;
    return r;
  }
  milp_tally.add(report.outcome, report.source, r.message);
  return r;
}

/// What the rounds produced.
struct run_totals {
  std::vector<round_record> records;
  double total_seconds = 0.0;
  std::map<std::string, long long> solver_status_rounds;  ///< rounds per solver_status
};

/// One round: `p` solved by --solver (over POP parts with --pop), checked against `p`, and its
/// record; the solver's placement, or the current one if it returned nothing.
std::pair<round_record, lb::placement> solve_round(const settings& s,
                                                   const lb::price_options& price,
                                                   const lb::problem& p, long long round,
                                                   double exponent) {
  milp_round milp_tally;
  auto solve_one = [&](const lb::problem& part) -> lb::lb_result {
    if (s.solver == "greedy") return lb::solve_greedy(part);
    if (s.solver == "price") return lb::solve_price(part, price);
    return solve_one_milp(s, price, part, milp_tally);
  };
  round_record rec;
  rec.round = round;
  rec.exponent = exponent;
  const double cpu_start = process_cpu_seconds();
  lb::lb_result r = s.pop > 1 ? lb::pop_solve(p, s.pop, solve_one) : solve_one(p);
  rec.cpu_seconds = process_cpu_seconds() - cpu_start;
  rec.seconds = r.seconds;
  rec.status = lb::to_string(r.status);
  if (s.solver == "milp") {
    rec.solver_status = milp_tally.outcome_name();
    rec.placement_from = milp_tally.source_name();
    rec.message = r.status == lb::lb_status::balanced ? milp_tally.message : r.message;
    if (s.pop > 1 && milp_tally.outcomes.size() > 1) {
      std::string parts;
      for (const auto& [outcome, count] : milp_tally.outcomes)
        parts += (parts.empty() ? "" : ", ") + outcome + " " + std::to_string(count);
      rec.message = "parts: " + parts + (rec.message.empty() ? "" : "; " + rec.message);
    }
  } else {
    rec.solver_status = "completed";
    rec.placement_from = s.solver;
    if (r.status != lb::lb_status::balanced) rec.message = r.message;
  }
  if (r.result.shards.empty()) r.result = normalised(p.current);  // nothing returned: stay
  const lb::check_report c = lb::check(p, r.result);
  rec.moved = c.new_replicas;
  rec.deviation = c.max_load_deviation;
  return {std::move(rec), std::move(r.result)};
}

/// --verbose: the round's line.
void print_round(const settings& s, const round_record& rec) {
  const std::string milp =
      s.solver == "milp" ? " [" + rec.solver_status + " -> " + rec.placement_from + "]" : "";
  char exponent[32] = "      -";  // --placement: no generated exponent
  if (std::isfinite(rec.exponent)) std::snprintf(exponent, sizeof exponent, "%7.4f", rec.exponent);
  std::printf("%6lld %s %8lld %10.6f %10.4f %10.4f  %s%s%s%s\n", rec.round, exponent,
              static_cast<long long>(rec.moved), rec.deviation, rec.seconds, rec.cpu_seconds,
              rec.status.c_str(), milp.c_str(), rec.message.empty() ? "" : ": ",
              rec.message.c_str());
  std::fflush(stdout);
}

/// Runs every round: each solves the workload's next problem (over POP parts with --pop) from the
/// previous round's placement. `round_now` and `latest` feed the heartbeat.
run_totals run_rounds(const settings& s, const lb::price_options& price,
                      popalloc_cli::progress_state& latest, std::atomic<long long>& round_now) {
  const auto shards = static_cast<std::size_t>(s.shards);
  const auto servers = static_cast<std::int32_t>(s.servers);
  // The next round's problem from the current placement, with its exponent (NaN for --drift).
  std::function<lb::problem(const lb::placement&, double*)> next_round;
  if (s.drift)
    next_round = [w = lb::drift_workload(shards, servers, s.seed, *s.drift, s.max_memory)](
                     const lb::placement& current, double* exponent) mutable {
      return w.next_round(current, exponent);
    };
  else
    next_round = [w = lb::zipf_workload(shards, servers, s.seed, s.max_memory)](
                     const lb::placement& current, double* exponent) mutable {
      return w.next_round(current, exponent);
    };
  lb::placement current = lb::round_robin_placement(shards, servers);
  run_totals totals;
  for (long long round = 0; round < s.rounds; ++round) {
    double exponent = 0.0;
    lb::problem p = next_round(current, &exponent);
    p.epsilon = s.epsilon;
    latest.set("");
    auto [rec, result] = solve_round(s, price, p, round, exponent);
    current = std::move(result);
    totals.total_seconds += rec.seconds;
    ++totals.solver_status_rounds[rec.solver_status];
    round_now.store(std::min(round + 1, s.rounds - 1));
    if (s.verbosity == popalloc_cli::verbosity::verbose) print_round(s, rec);
    totals.records.push_back(std::move(rec));
  }
  return totals;
}

/// --placement: one round that re-places the file's shards; --new-placement gets the result.
run_totals run_placement(const settings& s, const lb::named_problem& named,
                         const lb::price_options& price) {
  const lb::problem& p = named.instance;
  const lb::check_report before = lb::check(p, normalised(p.current));
  auto [rec, result] = solve_round(s, price, p, 0, std::numeric_limits<double>::quiet_NaN());
  if (s.verbosity != popalloc_cli::verbosity::quiet)
    std::printf("current placement: max load deviation %.6f%s\n", before.max_load_deviation,
                before.feasible ? " (balanced)" : "");
  if (s.verbosity == popalloc_cli::verbosity::verbose) print_round(s, rec);
  if (!s.new_placement_path.empty()) {
    popalloc::io::atomic_output_file file(s.new_placement_path);
    lb::append_placement_csv(file.buffer(), named, result);
    file.commit();
  }
  run_totals totals;
  totals.total_seconds = rec.seconds;
  ++totals.solver_status_rounds[rec.solver_status];
  totals.records.push_back(std::move(rec));
  return totals;
}

/// Averages over the counted rounds (those from --skip on).
struct averages {
  long long counted = 0, balanced = 0;
  double moved = 0.0, seconds = 0.0, cpu_seconds = 0.0, worst = 0.0;
};

averages average(const settings& s, const std::vector<round_record>& records) {
  double moved = 0.0, seconds = 0.0, cpu_seconds = 0.0, worst = 0.0;
  long long counted = 0, balanced = 0;
  for (const auto& rec : records) {
    if (rec.round < s.skip) continue;
    ++counted;
    moved += static_cast<double>(rec.moved);
    seconds += rec.seconds;
    cpu_seconds += rec.cpu_seconds;
    worst = std::max(worst, rec.deviation);
    if (rec.status == "balanced") ++balanced;
  }
  const double avg_moved = moved / static_cast<double>(counted);
  const double avg_seconds = seconds / static_cast<double>(counted);
  const double avg_cpu_seconds = cpu_seconds / static_cast<double>(counted);
  averages a;
  a.counted = counted;
  a.balanced = balanced;
  a.moved = avg_moved;
  a.seconds = avg_seconds;
  a.cpu_seconds = avg_cpu_seconds;
  a.worst = worst;
  return a;
}

/// --output: lb.json.
void write_json(int argc, char** argv, const settings& s, const run_totals& totals,
                const averages& a) {
  const std::vector<round_record>& records = totals.records;
  const double total_seconds = totals.total_seconds;
  const std::map<std::string, long long>& solver_status_rounds = totals.solver_status_rounds;
  const long long counted = a.counted, balanced = a.balanced;
  const double avg_moved = a.moved, avg_seconds = a.seconds, avg_cpu_seconds = a.cpu_seconds,
               worst = a.worst;
  popalloc::io::atomic_output_file file(s.output);
  std::string& o = file.buffer();
  o += "{\n";
  popalloc_cli::run_record run("popalloc-lb", argc, argv);
  if (s.placement_path.empty())
    run.input("workload", s.drift ? "<generated drifting loads, sigma " + short_number(*s.drift) +
                                        ", seed " + std::to_string(s.seed) + ">"
                                  : "<generated Zipf loads, seed " + std::to_string(s.seed) + ">");
  else
    run.input("placement", s.placement_path);
  popalloc_cli::append_envelope(o, run);
  bool all_balanced = true;
  for (const auto& rec : records) all_balanced = all_balanced && rec.status == "balanced";
  // balanced: every round, skipped ones too, met the band.
  o += "  \"status\": " + quoted(all_balanced ? "balanced" : "unbalanced") +
       ",\n  \"seconds\": " + number(total_seconds) + ",\n  \"solver\": " + quoted(s.solver) +
       ",\n  \"relaxation\": " +
       (s.solver == "greedy" ? std::string("null") : quoted(lb::to_string(s.relaxation))) +
       ",\n  \"pop_parts\": " + std::to_string(s.pop) + ",\n  \"workload\": " +
       (!s.placement_path.empty() ? std::string("null") : quoted(s.drift ? "drift" : "zipf")) +
       ",\n  \"drift\": " + (s.drift ? number(*s.drift) : std::string("null")) +
       ",\n  \"shards\": " + std::to_string(s.shards) +
       ",\n  \"servers\": " + std::to_string(s.servers) +
       ",\n  \"seed\": " + (s.placement_path.empty() ? std::to_string(s.seed) : "null") +
       ",\n  \"skip\": " + std::to_string(s.skip) + ",\n  \"epsilon\": " + number(s.epsilon) +
       ",\n  \"max_memory\": " + number(s.max_memory) + ",\n  \"rounds\": [";
  for (std::size_t k = 0; k < records.size(); ++k) {
    const auto& rec = records[k];
    o += std::string(k ? "," : "") + "\n    {\"round\": " + std::to_string(rec.round) +
         ", \"shards_moved\": " + std::to_string(rec.moved) +
         ", \"max_load_deviation\": " + number(rec.deviation) +
         ", \"seconds\": " + number(rec.seconds) + ", \"cpu_seconds\": " + number(rec.cpu_seconds) +
         ", \"exponent\": " + number(rec.exponent) + ", \"status\": " + quoted(rec.status) +
         ", \"solver_status\": " + quoted(rec.solver_status) +
         ", \"placement_from\": " + quoted(rec.placement_from) +
         ", \"message\": " + quoted(rec.message) + "}";
  }
  o += "\n  ],\n  \"counted_rounds\": " + std::to_string(counted) +
       ",\n  \"balanced_rounds\": " + std::to_string(balanced) +
       ",\n  \"avg_shards_moved\": " + number(avg_moved) +
       ",\n  \"avg_seconds\": " + number(avg_seconds) +
       ",\n  \"avg_cpu_seconds\": " + number(avg_cpu_seconds) +
       ",\n  \"worst_load_deviation\": " + number(worst) + ",\n  \"solver_status_rounds\": {";
  bool first = true;
  for (const auto& [status, count] : solver_status_rounds) {
    o += std::string(first ? "" : ", ") + quoted(status) + ": " + std::to_string(count);
    first = false;
  }
  o += "}\n}\n";
  file.commit();
}

int run(int argc, char** argv) {
  bool help = false, version = false;
  settings s = read_settings(argc, argv, help, version);
  if (help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (version) {
    std::fputs(popalloc_cli::version_text("popalloc-lb", "",
                                          milp_available() ? "COIN-OR CBC (--solver milp)" : "")
                   .c_str(),
               stdout);
    return 0;
  }
  std::optional<lb::named_problem> named;
  if (!s.placement_path.empty()) {
    named =
        lb::read_placement_csv(popalloc::io::read_whole_file(s.placement_path), s.placement_path);
    lb::problem& p = named->instance;
    s.shards = static_cast<long long>(p.shards());
    s.servers = p.servers;
    double total_memory = 0.0;
    for (const double m : p.memory) total_memory += m;
    check_sizes(s, total_memory);
    p.epsilon = s.epsilon;
    p.max_memory = s.max_memory;
    p.validate();
  }
  const bool quiet = s.verbosity == popalloc_cli::verbosity::quiet;
  // Rounds of a large instance take seconds each: the heartbeat reports from within a round,
  // with the price solver's latest report (its LP's iterations, then the repair).
  std::atomic<long long> round_now{0};
  popalloc_cli::progress_state latest;
  const lb::price_options price = price_options_of(s, latest);
  std::optional<popalloc_cli::heartbeat> beat;
  beat.emplace(s.verbosity == popalloc_cli::verbosity::normal ? popalloc_cli::verbosity::normal
                                                              : popalloc_cli::verbosity::quiet,
               "popalloc-lb:", [&round_now, &latest, rounds = s.rounds] {
                 const std::string now = latest.get();
                 return "round " + std::to_string(round_now.load() + 1) + "/" +
                        std::to_string(rounds) + (now.empty() ? "" : ": " + now);
               });
  const bool verbose = s.verbosity == popalloc_cli::verbosity::verbose;
  if (!quiet) {
    if (named)
      std::printf("popalloc-lb: %s: %lld shards, %lld servers, solver %s, pop k = %d\n",
                  s.placement_path.c_str(), s.shards, s.servers, s.solver.c_str(), s.pop);
    else
      std::printf(
          "popalloc-lb: %lld shards, %lld servers, %lld rounds (first %lld skipped), seed "
          "%lld%s, solver %s, pop k = %d\n",
          s.shards, s.servers, s.rounds, s.skip, s.seed,
          s.drift ? (", drift " + short_number(*s.drift)).c_str() : "", s.solver.c_str(), s.pop);
    if (verbose)
      std::printf("%6s %7s %8s %10s %10s %10s  %s\n", "round", "z", "moved", "deviation", "seconds",
                  "cpu", "status");
    std::fflush(stdout);
  }
  const run_totals totals =
      named ? run_placement(s, *named, price) : run_rounds(s, price, latest, round_now);
  beat.reset();
  const averages a = average(s, totals.records);
  const std::map<std::string, long long>& solver_status_rounds = totals.solver_status_rounds;
  const long long counted = a.counted, balanced = a.balanced;
  const double avg_moved = a.moved, avg_seconds = a.seconds, avg_cpu_seconds = a.cpu_seconds,
               worst = a.worst;
  if (!quiet && named) {
    const round_record& rec = totals.records.front();
    std::printf("new placement: %s, new replicas %lld, max load deviation %.6f, seconds %.4f%s%s\n",
                rec.status.c_str(), static_cast<long long>(rec.moved), rec.deviation, rec.seconds,
                rec.message.empty() ? "" : ": ", rec.message.c_str());
  } else if (!quiet) {
    std::printf(
        "average over rounds %lld..%lld: shards moved %.2f, seconds %.4f (cpu %.4f), worst "
        "load deviation %.6f, balanced rounds %lld/%lld\n",
        s.skip, s.rounds - 1, avg_moved, avg_seconds, avg_cpu_seconds, worst, balanced, counted);
  }
  if (s.solver == "milp" && !quiet) {
    std::string summary;
    for (const auto& [status, count] : solver_status_rounds)
      summary += (summary.empty() ? "" : ", ") + status + " " + std::to_string(count);
    std::printf("milp rounds by CBC outcome (worst part): %s\n", summary.c_str());
  }
  if (!s.output.empty()) write_json(argc, argv, s, totals, a);
  return 0;
}

}  // namespace
}  // namespace popalloc_lb

int main(int argc, char** argv) {
  return popalloc_cli::run_program("popalloc-lb", [&] { return popalloc_lb::run(argc, argv); });
}
