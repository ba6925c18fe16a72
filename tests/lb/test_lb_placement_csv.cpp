// SPDX-License-Identifier: Apache-2.0
// A user's shards and placement as CSV (lb::read_placement_csv, lb::append_placement_csv): what
// the reader makes of a hand-written file, what it refuses, and a solved placement written and
// read back as the next round's input.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/lb.hpp>
#include <popalloc/lb/placement_csv.hpp>

#include "support/input_refusal.hpp"

namespace lb = popalloc::lb;

namespace {

using popalloc_test::refusal;

lb::named_problem read(const std::string& text) { return lb::read_placement_csv(text, "p.csv"); }

std::string refusal_of(const std::string& text) {
  return refusal([&] { (void)read(text); });
}

/// The replicas of shard j as (server name, fraction) pairs, in file order.
std::vector<std::pair<std::string, double>> replicas(const lb::named_problem& n, std::size_t j) {
  std::vector<std::pair<std::string, double>> out;
  for (const lb::route& r : n.instance.current.shards[j])
    out.emplace_back(n.server_names[static_cast<std::size_t>(r.server)], r.fraction);
  return out;
}

}  // namespace

TEST_CASE("placement CSV: loads are the sums of the replicas' rows, fractions their shares") {
  // Columns in another order, blanks, CRLF, a shard's rows apart, an idle copy, a shard to be
  // placed, an empty server, quoted names.
  const std::string text =
      "server, load ,shard\r\n"
      "db-1,300,orders\r\n"
      "db-2,100,users\n"
      "\n"
      "db-2,100,orders\n"
      "\"db,3\",0,users\n"
      ",40,\"new, shard\"\n"
      "db-4,,\n"
      "db-1,0,idle\n";
  const lb::named_problem n = read(text);
  CHECK(n.shard_names == std::vector<std::string>{"orders", "users", "new, shard", "idle"});
  CHECK(n.server_names == std::vector<std::string>{"db-1", "db-2", "db,3", "db-4"});
  const lb::problem& p = n.instance;
  CHECK(p.servers == 4);
  CHECK(p.load == std::vector<double>{400, 100, 40, 0});
  CHECK(p.memory == std::vector<double>{1, 1, 1, 1});
  CHECK(replicas(n, 0) ==
        std::vector<std::pair<std::string, double>>{{"db-1", 0.75}, {"db-2", 0.25}});
  CHECK(replicas(n, 1) ==
        std::vector<std::pair<std::string, double>>{{"db-2", 1.0}, {"db,3", 0.0}});
  CHECK(replicas(n, 2).empty());  // to be placed
  CHECK(replicas(n, 3) == std::vector<std::pair<std::string, double>>{{"db-1", 1.0}});  // all 0
}

TEST_CASE("placement CSV: the memory column gives each shard's memory") {
  const lb::named_problem n = read("shard,server,load,memory\na,s1,5,2.5\nb,s2,1,0\na,s2,5,2.5\n");
  CHECK(n.instance.memory == std::vector<double>{2.5, 0.0});
  CHECK(n.instance.load == std::vector<double>{10.0, 1.0});
}

TEST_CASE("placement CSV: malformed files are refused with the file, line and reason") {
  CHECK(refusal_of("") == "p.csv:1: file is empty, expected the header 'shard,server,load'");
  CHECK(refusal_of("shard,server\na,b\n") == "p.csv:1: missing column 'load'");
  CHECK(refusal_of("shard,server,load,weight\n") ==
        "p.csv:1: unknown column 'weight' (expected 'shard,server,load' and optionally 'memory')");
  CHECK(refusal_of("shard,server,load,load\n") == "p.csv:1: duplicate column 'load'");
  CHECK(refusal_of("shard,server,load\n") ==
        "p.csv:1: no shard: expected a row 'shard,server,load' per replica");
  CHECK(refusal_of("shard,server,load\ns1,,1\n") ==
        "p.csv:2: no server: every shard is to be placed, and no row declares a server");
  CHECK(refusal_of("shard,server,load\ns1,db,-1\n") ==
        "p.csv:2: '-1' in column 'load' is negative");
  CHECK(refusal_of("shard,server,load\ns1,db,nan\n") ==
        "p.csv:2: 'nan' in column 'load' is not finite");
  CHECK(refusal_of("shard,server,load\ns1,db,1,2\n") ==
        "p.csv:2: expected 3 fields as in the header, found 4");
  CHECK(refusal_of("shard,server,load\ns1,db,1\n\ns1,db,2\n") ==
        "p.csv:4: shard 's1' on server 'db' was already given on line 2");
  CHECK(refusal_of("shard,server,load\ns1,,1\ns1,db,2\n") ==
        "p.csv:3: shard 's1' was first given on line 2; a shard to be placed (empty server) has "
        "that one row only");
  CHECK(refusal_of("shard,server,load\ns1,db,1\ns1,,2\n") ==
        "p.csv:3: shard 's1' was first given on line 2; a shard to be placed (empty server) has "
        "that one row only");
  CHECK(refusal_of("shard,server,load\n,,1\n") == "p.csv:2: both shard and server are empty");
  CHECK(refusal_of("shard,server,load\n,db,3\n") ==
        "p.csv:2: a row without a shard declares an empty server; its load must be 0 or empty");
  CHECK(refusal_of("shard,server,load,memory\ns1,a,1,1\ns1,b,1,2\n") ==
        "p.csv:3: shard 's1' has memory '2' here but a different one on line 2");
  CHECK(refusal_of("shard,server,load,memory\ns1,a,1,\n") ==
        "p.csv:2: empty field in column 'memory' is not a number");
  CHECK(refusal_of("shard,server,load\n\"s1,a,1\n") == "p.csv:2: unterminated quoted field");
}

TEST_CASE("placement CSV: a solved placement reads back as the next round's current one") {
  // Skewed loads on 6 of 8 servers, two of them split, one shard to place, two empty servers.
  std::string text = "shard,server,load,memory\n";
  for (int j = 0; j < 40; ++j) {
    const std::string shard = "s" + std::to_string(j), load = std::to_string(1000 / (j + 1) + 1);
    text += shard + ",db-" + std::to_string(j % 6) + "," + load + ",1\n";
    if (j % 7 == 3) text += shard + ",db-" + std::to_string((j + 1) % 6) + "," + load + ",1\n";
  }
  text += "fresh,,400,1\n,db-6,,\n,db-7,0,\n";
  const lb::named_problem before = read(text);
  lb::problem p = before.instance;
  p.epsilon = 0.05;
  p.max_memory = 16;
  REQUIRE(p.servers == 8);
  REQUIRE_FALSE(lb::check(p, p.current).feasible);
  const lb::lb_result solved = lb::solve_price(p);
  REQUIRE(solved.status == lb::lb_status::balanced);
  const lb::check_report c = lb::check(p, solved.result);
  REQUIRE(c.feasible);

  lb::named_problem named = before;
  named.instance = p;
  std::string written;
  lb::append_placement_csv(written, named, solved.result);
  // One `new` flag per replica the current placement did not have.
  std::size_t flagged = 0;
  for (std::size_t at = written.find(",1\n"); at != std::string::npos;
       at = written.find(",1\n", at + 1))
    ++flagged;
  CHECK(static_cast<std::int64_t>(flagged) == c.new_replicas);

  const lb::named_problem after = read(written);
  CHECK(after.shard_names == before.shard_names);
  CHECK(after.server_names.size() == before.server_names.size());
  for (std::size_t j = 0; j < p.shards(); ++j) {
    CHECK(after.instance.load[j] == doctest::Approx(p.load[j]).epsilon(1e-12));
    CHECK(after.instance.memory[j] == p.memory[j]);
  }
  // Read back, the new placement is the current one: balanced, and nothing more to move.
  lb::problem next = after.instance;
  next.epsilon = 0.05;
  next.max_memory = 16;
  for (std::size_t j = 0; j < next.shards(); ++j)
    for (const lb::route& r : next.current.shards[j])
      CHECK(solved.result.holds(
          j, static_cast<std::int32_t>(
                 std::find(before.server_names.begin(), before.server_names.end(),
                           after.server_names[static_cast<std::size_t>(r.server)]) -
                 before.server_names.begin())));
  const lb::check_report again = lb::check(next, next.current);
  CHECK(again.feasible);
  CHECK(again.new_replicas == 0);
  const lb::lb_result stay = lb::solve_price(next);
  CHECK(stay.status == lb::lb_status::balanced);
  CHECK(lb::check(next, stay.result).new_replicas == 0);
}
