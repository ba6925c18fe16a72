// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief CSV input for popalloc's programs: records split into fields without copying, and
/// number fields checked against popalloc's value range, with "FILE:LINE: what" errors.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "popalloc/io/input_error.hpp"
#include "popalloc/value_range.hpp"

namespace popalloc::io {

inline bool is_csv_blank(char c) { return c == ' ' || c == '\t'; }

/// A field for an error message: quoted, and shortened so a garbage line cannot flood stderr.
inline std::string quoted_field(std::string_view field) {
  constexpr std::size_t kMaxShown = 40;
  if (field.size() > kMaxShown) return "'" + std::string(field.substr(0, kMaxShown)) + "...'";
  return "'" + std::string(field) + "'";
}

/// Splits CSV text into records of fields without copying. Blank lines are skipped, CRLF and a
/// UTF-8 byte order mark are accepted, blanks around fields are trimmed. A field may be quoted
/// (to hold a comma), but doubled quotes inside it and line breaks inside it are not supported.
class csv_records {
 public:
  csv_records(std::string_view text, const std::string& path) : text_(text), path_(path) {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") position_ = 3;
  }

  /// Reads the next non-blank record into `fields`; false at the end of the text.
  bool next(std::vector<std::string_view>& fields) {
    const char* const text_end = text_.data() + text_.size();
    while (position_ < text_.size()) {
      ++line_;
      const char* begin = text_.data() + position_;
      const char* newline = static_cast<const char*>(
          std::memchr(begin, '\n', static_cast<std::size_t>(text_end - begin)));
      const char* end = newline != nullptr ? newline : text_end;
      position_ =
          static_cast<std::size_t>((newline != nullptr ? newline + 1 : text_end) - text_.data());
      if (end > begin && end[-1] == '\r') --end;
      if (std::all_of(begin, end, is_csv_blank)) continue;
      split(begin, end, fields);
      return true;
    }
    return false;
  }

  /// Line number (1-based) of the record last returned by next().
  long line() const { return line_; }

  /// An upper bound on the number of records still to come (for reserving memory).
  std::size_t remaining_records_bound() const {
    const std::string_view rest = text_.substr(position_);
    return static_cast<std::size_t>(std::count(rest.begin(), rest.end(), '\n')) + 1;
  }

 private:
  void split(const char* p, const char* end, std::vector<std::string_view>& fields) const {
    fields.clear();
    for (;;) {
      while (p < end && is_csv_blank(*p)) ++p;
      if (p < end && *p == '"') {
        const char* const close = std::find(p + 1, end, '"');
        if (close == end) fail_at(path_, line_, "unterminated quoted field");
        if (close + 1 < end && close[1] == '"')
          fail_at(path_, line_, "doubled quotes inside a quoted field are not supported");
        fields.emplace_back(p + 1, static_cast<std::size_t>(close - p - 1));
        p = close + 1;
        while (p < end && is_csv_blank(*p)) ++p;
        if (p == end) return;
        if (*p != ',') fail_at(path_, line_, "unexpected text after a quoted field");
        ++p;
        continue;
      }
      const char* const comma = std::find(p, end, ',');
      const char* field_end = comma;
      const char* trimmed_end = field_end;
      while (trimmed_end > p && is_csv_blank(trimmed_end[-1])) --trimmed_end;
      fields.emplace_back(p, static_cast<std::size_t>(trimmed_end - p));
      if (comma == end) return;
      p = comma + 1;
    }
  }

  std::string_view text_;
  const std::string& path_;
  std::size_t position_ = 0;
  long line_ = 0;
};

/// Reports a bad number field. Kept out of line: the message is built only on failure.
[[noreturn]] inline void fail_number(std::string_view field, std::string_view column,
                                     const std::string& path, long line, const char* problem) {
  const std::string shown = field.empty() ? std::string("empty field") : quoted_field(field);
  fail_at(path, line, shown + " in column '" + std::string(column) + "' " + problem);
}

/// A number >= 0 in popalloc's value range from `field`, else input_error naming file, line and
/// column.
inline double parse_non_negative(std::string_view field, std::string_view column,
                                 const std::string& path, long line) {
  if (field.empty()) fail_number(field, column, path, line, "is not a number");
  const char* first = field.data();
  const char* last = first + field.size();
  if (*first == '+') ++first;  // from_chars rejects the '+' that some tools write
  double value = 0.0;
  const auto [end, error] = std::from_chars(first, last, value);
  if (error == std::errc::result_out_of_range)
    fail_number(field, column, path, line, "is out of the range of a double");
  if (error != std::errc() || end != last)
    fail_number(field, column, path, line, "is not a number");
  if (!std::isfinite(value)) fail_number(field, column, path, line, "is not finite");
  if (value < 0.0) fail_number(field, column, path, line, "is negative");
  if (!::popalloc::detail::in_value_range(value))
    fail_number(field, column, path, line,
                (std::string("is outside the supported range (") +
                 ::popalloc::detail::value_range_text() + ")")
                    .c_str());
  return value;
}

/// The positions of `names` in a header record, in the order of `names` (fields.size() for one
/// that is absent); the first `required` of them must be present. \throws input_error
/// "PATH:LINE: unknown column 'x' (EXPECTED)", "duplicate column 'x'" or "missing column 'x'".
inline std::vector<std::size_t> header_columns(const std::vector<std::string_view>& fields,
                                               std::initializer_list<std::string_view> names,
                                               std::size_t required, std::string_view expected,
                                               const std::string& path, long line) {
  const std::size_t absent = fields.size();
  std::vector<std::size_t> at(names.size(), absent);
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const auto name = std::find(names.begin(), names.end(), fields[i]);
    if (name == names.end())
      fail_at(path, line,
              "unknown column " + quoted_field(fields[i]) + " (" + std::string(expected) + ")");
    std::size_t& slot = at[static_cast<std::size_t>(name - names.begin())];
    if (slot != absent) fail_at(path, line, "duplicate column " + quoted_field(fields[i]));
    slot = i;
  }
  for (std::size_t k = 0; k < required; ++k)
    if (at[k] == absent)
      fail_at(path, line, "missing column '" + std::string(names.begin()[k]) + "'");
  return at;
}

inline void check_field_count(const std::vector<std::string_view>& fields, std::size_t expected,
                              const std::string& path, long line) {
  if (fields.size() != expected)
    fail_at(path, line,
            "expected " + std::to_string(expected) + " fields as in the header, found " +
                std::to_string(fields.size()));
}

}  // namespace popalloc::io
