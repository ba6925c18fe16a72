// SPDX-License-Identifier: Apache-2.0
// popalloc-te: traffic engineering (multi-commodity flow over precomputed paths) on a topology
// file, solved by popalloc's price-discovery core or exactly by COIN-OR CLP, optionally with POP.
// `popalloc-te --help` documents the options; docs/traffic-engineering.md the method.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <popalloc/io/atomic_file.hpp>
#include <popalloc/io/input_error.hpp>
#include <popalloc/io/json.hpp>
#include <popalloc/io/text_file.hpp>
#include <popalloc/te.hpp>
#include <popalloc/value_range.hpp>

#include "../common/command_line.hpp"
#include "embedded_b4.hpp"
#include "lp_clp.hpp"

namespace popalloc_te {
namespace {

namespace te = popalloc::te;
namespace json = popalloc::io::json;
using popalloc::io::input_error;

constexpr const char* kUsage = R"(Usage:
  popalloc-te [--topology FILE] [--traffic MODEL | --demands FILE] [--scale F] [--seed S]
              [--paths K] [--objective OBJ] [--solver price|lp] [--pop K] [--output te.json]
              [--plan FILE] [--previous FILE] [--export-mps FILE.mps] [options]
  popalloc-te           B4 (12 nodes, embedded), gravity traffic, 4 paths, total flow, price solver

Routes the demands of a traffic matrix between all node pairs over k precomputed paths per
pair without exceeding link capacities (path formulation, docs/traffic-engineering.md).

Input:
  --topology FILE        Topology Zoo .graphml (undirected links become two arcs, parallel links
                         collapse, largest strongly connected component, capacity 1000) or
                         networkx node-link .json (capacities from the file)
  --default-capacity C   capacity of .json arcs without one (default 1000)
  --traffic MODEL        gravity | uniform | bimodal | poisson-high-intra | poisson-high-inter
                         (default gravity), with POP's parameters for the topology's name
  --demands FILE         your traffic matrix instead of a model: CSV with the header
                         source,target,demand and one row per node pair, nodes named by their
                         ids in the topology file (rows of demand 0 are skipped)
  --scale F              multiply the traffic matrix by F (default 1)
  --seed S               traffic-matrix seed, also the POP partition seed (default 0)
  --paths K              paths per commodity (default 4)
  --path-method M        edge-disjoint (default; max-flow set, shortest K by inverse capacity)
                         | yen (K shortest simple paths by inverse capacity)

Model and solver:
  --objective OBJ        total-flow (default) | concurrent-flow (mcf) | min-max-utilization (mlu)
  --solver S             price (default: popalloc's price-discovery core) | lp (exact, COIN-OR CLP)
  --tolerance TOL        price solver: relative gap, 0 < TOL < 0.1 (default 1e-5)
  --max-iterations N     price solver: dual evaluations per core solve (default 5000)
  --time-limit SECONDS   price solver: wall-clock limit of the whole solve (with --pop, each part
                         gets what is left when it starts)
  --threads N            CPU threads (default 0: the OpenMP default)
  --pop K                POP: deal the commodities over K sub-problems with capacities c/K, solve
                         them in parallel with the chosen solver, add the flows (default 1)
  --split-fraction F     POP: split heavy commodities into N + round(N F) pieces (default 0)
  --previous FILE        re-plan from the --plan file of an earlier run on the same topology
                         with the same --paths and --path-method (typically with a drifted
                         --demands file): concurrent-flow and min-max-utilization start from
                         its routing and prices (docs/traffic-engineering.md); price solver,
                         without --pop

Output:
  --output FILE          te.json (share/popalloc/schemas/popalloc-te.schema.json,
                         docs/output-format.md): schema_version, program, popalloc_version,
                         command_line, inputs, objective, objective_name, dual_bound,
                         relative_gap, status, total_flow, concurrent_flow,
                         max_link_utilization, seconds, pop_parts, commodities, paths,
                         total_demand and the run's settings
  --export-mps FILE      the exact LP that --solver lp solves, as free MPS (a maximisation is
                         written as min of the negated objective); works without CLP
  --flows FILE           CSV commodity,source,target,demand,path,nodes,flow (flow > 0 only)
  --plan FILE            the answer as a plan that a later run re-plans from (--previous):
                         every arc with its price and every path with flow, by node names
                         (docs/output-format.md)
  --quiet                no progress and no summary line
  --verbose              progress every second from the start
  -h, --help             this text
  --version              popalloc version, backends, LP/MILP libraries

Outputs are replaced atomically; symbolic links are written through, "-" (stdout), devices and
FIFOs directly, and a read-only file or an output that is an input or another output is refused
before any work.

Exit status: 0 solved, 2 usage or input error (nothing is written), 1 internal error.
)";

using popalloc_cli::option_spec;

constexpr option_spec kOptions[] = {
    {"topology", true},   {"default-capacity", true},
    {"traffic", true},    {"scale", true},
    {"paths", true},      {"path-method", true},
    {"objective", true},  {"solver", true},
    {"tolerance", true},  {"max-iterations", true},
    {"pop", true},        {"split-fraction", true},
    {"export-mps", true}, {"flows", true},
    {"demands", true},    {"plan", true},
    {"previous", true},
};

[[noreturn]] void usage_error(const std::string& what) {
  throw input_error(what + " (see popalloc-te --help)");
}

void warn(const char* what) { std::fprintf(stderr, "popalloc-te: warning: %s\n", what); }

std::map<std::string, std::string, std::less<>> parse_arguments(int argc, char** argv) {
  return popalloc_cli::parse_program_arguments(argc, argv, kOptions, usage_error);
}

const popalloc_cli::value_reader read_value{usage_error};

struct settings {
  std::string topology_path;  // empty: embedded B4
  std::string demands_path;   // empty: the traffic model
  double default_capacity = 1000.0;
  te::traffic_model traffic = te::traffic_model::gravity;
  double scale = 1.0;
  std::uint64_t seed = 0;
  te::path_options paths;
  te::te_objective objective = te::te_objective::total_flow;
  bool use_lp = false;
  te::price_options price;
  int pop_parts = 1;
  double split_fraction = 0.0;
  std::string output_path, mps_path, flows_path, plan_path, previous_path;
  popalloc_cli::verbosity verbosity = popalloc_cli::verbosity::normal;
};

settings interpret(const std::map<std::string, std::string, std::less<>>& given) {
  settings s;
  auto value_of = [&](const char* name) -> const std::string* {
    const auto found = given.find(name);
    return found == given.end() ? nullptr : &found->second;
  };
  try {
    if (const auto* v = value_of("topology")) s.topology_path = *v;
    if (const auto* v = value_of("default-capacity")) {
      s.default_capacity = read_value.number(*v, "--default-capacity", popalloc_cli::at_least(0.0));
      if (!popalloc::detail::in_value_range(s.default_capacity))
        usage_error(std::string("--default-capacity must be ") +
                    popalloc::detail::value_range_text());
    }
    if (const auto* v = value_of("traffic")) s.traffic = te::parse_traffic_model(*v);
    if (const auto* v = value_of("scale")) {
      s.scale = read_value.number(*v, "--scale", popalloc_cli::above(0.0));
      if (!popalloc::detail::in_value_range(s.scale))
        usage_error(std::string("--scale must be ") +
                    popalloc::detail::positive_value_range_text());
    }
    if (const auto* v = value_of("seed"))
      s.seed = read_value.integer<std::uint64_t>(*v, "--seed", 0);
    if (const auto* v = value_of("paths")) s.paths.k = read_value.integer(*v, "--paths", 1);
    if (const auto* v = value_of("path-method")) {
      if (*v == "edge-disjoint")
        s.paths.method = te::path_method::edge_disjoint;
      else if (*v == "yen" || *v == "k-shortest")
        s.paths.method = te::path_method::k_shortest;
      else
        usage_error("--path-method must be edge-disjoint or yen, not '" + *v + "'");
    }
    if (const auto* v = value_of("objective")) s.objective = te::parse_te_objective(*v);
    if (const auto* v = value_of("solver")) {
      if (*v == "lp")
        s.use_lp = true;
      else if (*v != "price")
        usage_error("--solver must be price or lp, not '" + *v + "'");
    }
    if (const auto* v = value_of("tolerance")) {
      s.price.solver.relative_gap = read_value.number(*v, "--tolerance", popalloc_cli::above(0.0));
      if (!(s.price.solver.relative_gap < 0.1)) usage_error("--tolerance must be in (0, 0.1)");
    }
    if (const auto* v = value_of("max-iterations"))
      s.price.solver.max_iterations = read_value.integer(*v, "--max-iterations", 1);
    if (const auto* v = value_of("time-limit"))
      s.price.solver.time_limit_seconds =
          read_value.number(*v, "--time-limit", popalloc_cli::above(0.0));
    if (const auto* v = value_of("threads")) {
      s.price.solver.threads = read_value.integer(*v, "--threads", 0);
      s.paths.threads = s.price.solver.threads;
    }
    if (const auto* v = value_of("pop")) s.pop_parts = read_value.integer(*v, "--pop", 1);
    if (const auto* v = value_of("split-fraction")) {
      s.split_fraction = read_value.number(*v, "--split-fraction", popalloc_cli::at_least(0.0));
      // POP's fraction of extra pieces: above 1 the commodities multiply without bound.
      if (!(s.split_fraction <= 1.0)) usage_error("--split-fraction must be in [0, 1]");
      if (s.pop_parts == 1) warn("--split-fraction does nothing without --pop K > 1");
    }
  } catch (const popalloc::invalid_options& e) {
    usage_error(e.what());
  }
  for (const char* name : {"output", "export-mps", "flows", "plan", "demands", "previous"})
    if (const auto* v = value_of(name); v != nullptr && v->empty())
      usage_error(std::string("--") + name + " needs a file name");
  if (const auto* v = value_of("output")) s.output_path = *v;
  if (const auto* v = value_of("export-mps")) s.mps_path = *v;
  if (const auto* v = value_of("flows")) s.flows_path = *v;
  if (const auto* v = value_of("plan")) s.plan_path = *v;
  if (const auto* v = value_of("demands")) s.demands_path = *v;
  if (const auto* v = value_of("previous")) s.previous_path = *v;
  if (!s.demands_path.empty() && given.count("traffic") != 0)
    usage_error("--traffic and --demands cannot be combined (--demands is the traffic matrix)");
  if (!s.previous_path.empty() && (s.use_lp || s.pop_parts > 1))
    usage_error("--previous re-plans with --solver price and without --pop");
  popalloc::io::check_output_files({{"--output", s.output_path},
                                    {"--export-mps", s.mps_path},
                                    {"--flows", s.flows_path},
                                    {"--plan", s.plan_path}},
                                   {{"--topology", s.topology_path},
                                    {"--demands", s.demands_path},
                                    {"--previous", s.previous_path}});
  if (s.use_lp) {
    for (const char* price_only : {"tolerance", "max-iterations", "time-limit"})
      if (given.count(price_only) != 0)
        warn((std::string("--") + price_only + " only applies to --solver price").c_str());
  }
  s.verbosity = popalloc_cli::verbosity_of(given);
  if (s.use_lp && !lp_solver_available())
    usage_error(
        "--solver lp needs COIN-OR CLP, and this popalloc-te was built without it (install "
        "coinor-libclp-dev and reconfigure; --export-mps writes the LP for another solver)");
  return s;
}

std::string json_number(double value) {
  std::string out;
  json::append_number(out, value);
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void field(std::string& out, const char* name, double value, bool last = false) {
  out += "  ";
  json::append_string(out, name);
  out += ": ";
  json::append_number(out, value);
  out += last ? "\n" : ",\n";
}

void field(std::string& out, const char* name, const std::string& value) {
  out += "  ";
  json::append_string(out, name);
  out += ": ";
  json::append_string(out, value);
  out += ",\n";
}

/// The topology, the instance on it, and the time the traffic matrix and the paths took.
struct loaded_instance {
  te::topology graph;
  te::instance inst;
  double traffic_seconds = 0.0;
  double path_seconds = 0.0;
};

/// Reads or embeds the topology, generates the traffic matrix and computes the paths.
loaded_instance load_instance(const settings& s) {
  te::topology graph;
  if (s.topology_path.empty())
    graph = te::parse_node_link_json(kEmbeddedB4, "<embedded b4-teavar.json>", "b4-teavar");
  else
    graph = te::load_topology(s.topology_path, s.default_capacity);
  const auto t_traffic = std::chrono::steady_clock::now();
  const te::traffic_parameters parameters = te::default_traffic_parameters(graph.name);
  std::vector<te::commodity> commodities;
  if (s.demands_path.empty()) {
    const auto matrix = te::generate_traffic(graph, s.traffic, parameters, s.scale, s.seed);
    commodities = te::commodities_of(matrix, graph.nodes);
  } else {
    commodities =
        te::read_demands_csv(popalloc::io::read_whole_file(s.demands_path), s.demands_path, graph);
    for (te::commodity& c : commodities) c.demand *= s.scale;
  }
  bool any_capacity = false;
  for (const te::arc& a : graph.arcs) any_capacity = any_capacity || a.capacity > 0.0;
  if (!any_capacity)
    throw input_error((s.topology_path.empty() ? graph.name : s.topology_path) +
                      ": every link has capacity 0, so no flow can be routed");
  if (commodities.empty())
    throw input_error(s.demands_path.empty()
                          ? "the traffic matrix has no positive demand (try another --traffic or "
                            "--seed)"
                          : s.demands_path + ": no pair has a positive demand");
  for (const auto& c : commodities)
    if (!popalloc::detail::in_value_range(c.demand))
      usage_error("--scale " + json_number(s.scale) + " makes a demand of " +
                  json_number(c.demand) + ", outside " + popalloc::detail::value_range_text() +
                  "; choose another --scale");
  if (s.pop_parts > static_cast<int>(commodities.size()))
    usage_error("--pop " + std::to_string(s.pop_parts) + " asks for more parts than the " +
                std::to_string(commodities.size()) + " commodities");
  const double traffic_seconds = seconds_since(t_traffic);
  const auto t_paths = std::chrono::steady_clock::now();
  te::instance inst = [&] {
    const popalloc_cli::heartbeat beat(s.verbosity, "computing paths");
    return te::make_instance(graph, std::move(commodities), s.paths);
  }();
  const double path_seconds = seconds_since(t_paths);
  return {std::move(graph), std::move(inst), traffic_seconds, path_seconds};
}

/// Solves `inst` with the chosen solver, over POP parts when asked, with progress on stderr.
/// `previous`: the --previous plan read onto `inst`, or null.
te::result solve(const settings& s, const te::instance& inst, const te::result* previous) {
  // The price solver reports its core's iterations (total-flow) or its bisection steps; the
  // heartbeat prints the latest report every second (CLP reports nothing: the heartbeat alone
  // says the run is alive). With POP the parts report concurrently and the latest one is shown.
  popalloc_cli::progress_state latest("starting");
  te::price_options price = s.price;
  if (s.verbosity != popalloc_cli::verbosity::quiet)
    price.callback = [&latest](const te::progress& p) {
      char text[160];
      std::snprintf(text, sizeof text,
                    "solve %d, iteration %d: objective %.9g, bound %.9g, gap %.2e", p.solves,
                    p.iterations, p.objective, p.bound, p.relative_gap);
      latest.set(text);
      return popalloc::callback_action::proceed;
    };
  // --time-limit bounds the whole solve: POP's parts, which may run one after the other, share
  // it (each gets what is left when it starts).
  const popalloc::detail::stopwatch clock;
  auto solve_one = [&](const te::instance& part, int core_threads) {
    if (s.use_lp) return solve_lp(part, s.objective);
    te::price_options o = price;
    o.solver.threads = core_threads;
    if (std::isfinite(o.solver.time_limit_seconds))
      o.solver.time_limit_seconds = std::max(1e-3, o.solver.time_limit_seconds - clock.seconds());
    if (previous != nullptr) return te::replan_price(part, s.objective, *previous, o);
    return te::solve_price(part, s.objective, o);
  };
  te::result result;
  std::optional<popalloc_cli::heartbeat> beat;
  std::function<std::string()> state;
  if (!s.use_lp) state = [&latest] { return latest.get(); };
  beat.emplace(
      s.verbosity,
      std::string("solving ") + te::to_string(s.objective) + " with " + (s.use_lp ? "lp" : "price"),
      std::move(state));
  if (s.pop_parts > 1) {
    te::pop_options o;
    o.parts = s.pop_parts;
    o.split_fraction = s.split_fraction;
    o.seed = s.seed;
    // CLP models are solved one after the other (CLP's message handling is not documented as
    // thread-safe); the price solver runs one part per thread.
    o.threads = s.use_lp ? 1 : s.price.solver.threads;
    result = te::solve_pop(inst, s.objective, o,
                           [&](const te::instance& part) { return solve_one(part, 1); });
  } else {
    result = solve_one(inst, s.price.solver.threads);
  }
  beat.reset();
  return result;
}

/// --output: te.json.
void write_json(int argc, char** argv, const settings& s, const loaded_instance& in,
                const te::result& result, const te::flow_summary& summary) {
  const te::topology& graph = in.graph;
  const te::instance& inst = in.inst;
  const double path_seconds = in.path_seconds, traffic_seconds = in.traffic_seconds;
  std::string out = "{\n";
  popalloc_cli::run_record run("popalloc-te", argc, argv);
  run.input("topology", s.topology_path.empty() ? "<embedded b4-teavar.json>" : s.topology_path);
  if (s.demands_path.empty())
    run.input("traffic", "<generated " + std::string(te::to_string(s.traffic)) +
                             " traffic, scale " + json_number(s.scale) + ", seed " +
                             std::to_string(s.seed) + ">");
  else
    run.input("traffic", s.demands_path);
  if (!s.previous_path.empty()) run.input("previous", s.previous_path);
  popalloc_cli::append_envelope(out, run);
  field(out, "objective", result.objective);
  field(out, "objective_name", te::to_string(s.objective));
  field(out, "dual_bound", result.bound);
  field(out, "relative_gap", result.relative_gap);
  field(out, "status", te::to_string(result.status));
  field(out, "total_flow", summary.total_flow);
  field(out, "concurrent_flow", summary.concurrent_flow);
  field(out, "max_link_utilization", summary.max_link_utilization);
  field(out, "max_capacity_excess", summary.max_capacity_excess);
  field(out, "max_demand_excess", summary.max_demand_excess);
  field(out, "seconds", result.seconds);
  field(out, "path_seconds", path_seconds);
  field(out, "traffic_seconds", traffic_seconds);
  field(out, "commodities", static_cast<double>(inst.commodity_count()));
  field(out, "paths", static_cast<double>(inst.path_count()));
  field(out, "total_demand", inst.total_demand());
  field(out, "nodes", graph.nodes);
  field(out, "arcs", graph.arc_count());
  field(out, "topology", graph.name);
  field(out, "traffic", s.demands_path.empty() ? te::to_string(s.traffic) : "demands-file");
  field(out, "scale", s.scale);
  field(out, "seed", static_cast<double>(s.seed));
  field(out, "paths_per_commodity", s.paths.k);
  field(out, "path_method",
        s.paths.method == te::path_method::edge_disjoint ? "edge-disjoint" : "yen");
  field(out, "solver", s.use_lp ? "lp" : "price");
  field(out, "iterations", result.iterations);
  field(out, "solves", result.solves);
  double part_max = 0.0, part_sum = 0.0;
  for (const double t : result.part_seconds) {
    part_max = std::max(part_max, t);
    part_sum += t;
  }
  field(out, "pop_parts_seconds_max", part_max);
  field(out, "pop_parts_seconds_sum", part_sum);
  field(out, "pop_parts", s.pop_parts, true);
  out += "}\n";
  popalloc::io::atomic_output_file file(s.output_path);
  file.buffer() = std::move(out);
  file.commit();
}

/// --flows: the CSV of every path with flow.
void write_flows(const settings& s, const loaded_instance& in, const te::result& result) {
  const te::topology& graph = in.graph;
  const te::instance& inst = in.inst;
  popalloc::io::atomic_output_file file(s.flows_path);
  std::string& out = file.buffer();
  out += "commodity,source,target,demand,path,nodes,flow\n";
  for (std::size_t k = 0; k < inst.commodities.size(); ++k) {
    const auto& c = inst.commodities[k];
    for (auto p = inst.paths.pair_offset[k]; p < inst.paths.pair_offset[k + 1]; ++p) {
      const double f = result.path_flow[static_cast<std::size_t>(p)];
      if (!(f > 0.0)) continue;
      out += std::to_string(k) + ",";
      popalloc::io::append_csv_field(out, graph.node_names[static_cast<std::size_t>(c.source)]);
      out += ',';
      popalloc::io::append_csv_field(out, graph.node_names[static_cast<std::size_t>(c.target)]);
      out += ',';
      popalloc::io::append_number(out, c.demand);
      out += "," + std::to_string(p - inst.paths.pair_offset[k]) + ",";
      std::string nodes = graph.node_names[static_cast<std::size_t>(c.source)];
      for (auto a = inst.paths.path_offset[static_cast<std::size_t>(p)];
           a < inst.paths.path_offset[static_cast<std::size_t>(p) + 1]; ++a)
        nodes +=
            "-" +
            graph.node_names[static_cast<std::size_t>(
                graph.arcs[static_cast<std::size_t>(inst.paths.arcs[static_cast<std::size_t>(a)])]
                    .to)];
      popalloc::io::append_csv_field(out, nodes);
      out += ',';
      popalloc::io::append_number(out, f);
      out += '\n';
      file.flush_if_large();
    }
  }
  file.commit();
}

/// The summary line on stdout.
void print_summary(const settings& s, const loaded_instance& in, const te::result& result,
                   const te::flow_summary& summary) {
  const te::topology& graph = in.graph;
  const te::instance& inst = in.inst;
  std::printf(
      "%s: %d nodes, %d arcs, %lld commodities, %lld paths; %s %s%s: objective %.9g "
      "(bound %.9g, gap %.2e, %s), total flow %.9g, max utilization %.6g, %.3f s "
      "(paths %.3f s)\n",
      graph.name.c_str(), graph.nodes, graph.arc_count(),
      static_cast<long long>(inst.commodity_count()), static_cast<long long>(inst.path_count()),
      te::to_string(s.objective), s.use_lp ? "lp" : "price",
      s.pop_parts > 1 ? (" pop " + std::to_string(s.pop_parts)).c_str() : "", result.objective,
      result.bound, result.relative_gap, te::to_string(result.status), summary.total_flow,
      summary.max_link_utilization, result.seconds, in.path_seconds);
}

int run(int argc, char** argv) {
  const auto given = parse_arguments(argc, argv);
  if (given.count("help") != 0) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (given.count("version") != 0) {
    std::fputs(popalloc_cli::version_text("popalloc-te", "",
                                          lp_solver_available() ? "COIN-OR CLP (--solver lp)" : "")
                   .c_str(),
               stdout);
    return 0;
  }
  const settings s = interpret(given);

  const loaded_instance in = load_instance(s);
  const te::topology& graph = in.graph;
  const te::instance& inst = in.inst;
  if (!s.mps_path.empty()) {
    popalloc::io::atomic_output_file file(s.mps_path);
    te::append_mps(file.buffer(), te::build_lp(inst, s.objective), graph.name);
    file.commit();
  }

  std::optional<te::result> previous;
  if (!s.previous_path.empty())
    previous =
        te::read_plan_json(popalloc::io::read_whole_file(s.previous_path), s.previous_path, inst);
  const te::result result = solve(s, inst, previous ? &*previous : nullptr);
  const te::flow_summary summary = te::summarize(inst, result.path_flow);
  if (!s.output_path.empty()) write_json(argc, argv, s, in, result, summary);
  if (!s.flows_path.empty()) write_flows(s, in, result);
  if (!s.plan_path.empty()) {
    popalloc::io::atomic_output_file file(s.plan_path);
    te::append_plan_json(file.buffer(), inst, s.objective, result);
    file.commit();
  }
  if (s.verbosity != popalloc_cli::verbosity::quiet) print_summary(s, in, result, summary);
  return 0;
}

}  // namespace
}  // namespace popalloc_te

int main(int argc, char** argv) {
  return popalloc_cli::run_program("popalloc-te", [&] { return popalloc_te::run(argc, argv); });
}
