// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The option parser shared by the example programs and popalloc-compare: "--name value",
/// "--name=value" and flags, each option at most once, unknown options rejected.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace popalloc_cli {

/// \brief An option a program accepts, without its leading "--".
struct option_spec {
  std::string_view name;
  bool takes_value;
};

/// \brief Given options by name; flags map to "".
using given_options = std::map<std::string, std::string, std::less<>>;

/// \brief Parses argv against `options`; every problem is reported through `usage_error`
/// (which must not return), so each program words its own pointer to --help. With
/// `dashes_end_value`, an argument starting with "--" is never taken as the previous option's
/// value ("--rounds --output x" is "--rounds needs a value", not rounds = "--output").
template <std::size_t N, class UsageError>
given_options parse_arguments(int argc, char** argv, const option_spec (&options)[N],
                              UsageError usage_error, bool dashes_end_value = false) {
  given_options given;
  for (int k = 1; k < argc; ++k) {
    std::string_view argument = argv[k];
    if (argument.substr(0, 2) != "--" || argument.size() == 2)
      usage_error("unexpected argument '" + std::string(argument) + "'");
    argument.remove_prefix(2);
    const std::size_t equals = argument.find('=');
    const std::string_view name = argument.substr(0, equals);
    const auto spec = std::find_if(std::begin(options), std::end(options),
                                   [&](const option_spec& o) { return o.name == name; });
    if (spec == std::end(options)) usage_error("unknown option '--" + std::string(name) + "'");
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

}  // namespace popalloc_cli
