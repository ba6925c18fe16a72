// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A small JSON reader (enough for warm-start prices, with line numbers in errors) and
/// the two helpers the JSON writer needs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace popalloc_solve::json {

struct member;

/// \brief A parsed JSON value. Objects keep their members in file order (duplicates included:
/// the caller decides whether a repeated key is an error).
struct value {
  enum class kind { null, boolean, number, string, array, object };
  kind type = kind::null;
  bool boolean = false;
  double number = 0.0;
  std::string text;
  std::vector<value> items;     ///< array elements
  std::vector<member> members;  ///< object members
  long line = 0;                ///< line where the value starts

  /// \brief The first member called `key`, or nullptr (also when this is not an object).
  const value* find(std::string_view key) const;
};

struct member {
  std::string key;
  value content;
};

/// \brief Parses one JSON document. \throws input_error "PATH:LINE: what" on malformed input.
value parse(std::string_view text, const std::string& path);

/// \brief Name of a kind for messages ("a number", "an object", ...).
const char* describe(value::kind type);

/// \brief Appends `text` as a JSON string literal (quoted and escaped).
void append_string(std::string& out, std::string_view text);

/// \brief Appends a JSON number, or null when `number` is NaN or infinite (JSON has neither).
void append_number(std::string& out, double number);

}  // namespace popalloc_solve::json
