// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A small strict JSON reader that reports "PATH:LINE: what" for malformed input, and the
/// two helpers a JSON writer needs (string literals, shortest round-trip numbers).
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "popalloc/io/input_error.hpp"
#include "popalloc/io/text_file.hpp"

namespace popalloc {
namespace io {
namespace json {

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

namespace detail {

/// Recursive-descent parser over the whole text. Newlines can only occur in whitespace
/// (strings may not contain raw control characters), so counting them there tracks the line.
class parser {
 public:
  parser(std::string_view text, const std::string& path) : text_(text), path_(path) {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") position_ = 3;
  }

  value document() {
    skip_whitespace();
    if (at_end()) fail("empty document, expected a JSON value");
    value root = parse_value(0);
    skip_whitespace();
    if (!at_end()) fail("unexpected text after the JSON value");
    return root;
  }

 private:
  // Deep nesting is never legitimate here and would otherwise overflow the stack.
  static constexpr int max_depth = 256;

  [[noreturn]] void fail(const std::string& what) const { fail_at(path_, line_, what); }
  bool at_end() const { return position_ >= text_.size(); }
  char peek() const { return text_[position_]; }

  void skip_whitespace() {
    for (; !at_end(); ++position_) {
      const char c = peek();
      if (c == '\n')
        ++line_;
      else if (c != ' ' && c != '\t' && c != '\r')
        return;
    }
  }

  void expect(char c) {
    skip_whitespace();
    if (at_end() || peek() != c) fail(std::string("expected '") + c + "'" + found());
    ++position_;
  }

  std::string found() const {
    if (at_end()) return " but the file ends";
    return std::string(" but found '") + peek() + "'";
  }

  bool consume_word(std::string_view word) {
    if (text_.substr(position_, word.size()) != word) return false;
    position_ += word.size();
    return true;
  }

  value parse_value(int depth) {
    skip_whitespace();
    if (at_end()) fail("expected a value but the file ends");
    value result;
    result.line = line_;
    const char c = peek();
    if (c == '{') {
      result.type = value::kind::object;
      parse_object(result, depth);
    } else if (c == '[') {
      result.type = value::kind::array;
      parse_array(result, depth);
    } else if (c == '"') {
      result.type = value::kind::string;
      result.text = parse_string();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      result.type = value::kind::number;
      result.number = parse_number();
    } else if (consume_word("true")) {
      result.type = value::kind::boolean;
      result.boolean = true;
    } else if (consume_word("false")) {
      result.type = value::kind::boolean;
    } else if (consume_word("null")) {
      result.type = value::kind::null;
    } else {
      fail("expected a value" + found());
    }
    return result;
  }

  void parse_object(value& object, int depth) {
    if (depth >= max_depth) fail("nesting too deep");
    ++position_;  // '{'
    skip_whitespace();
    if (!at_end() && peek() == '}') {
      ++position_;
      return;
    }
    for (;;) {
      skip_whitespace();
      if (at_end() || peek() != '"') fail("expected a member name in quotes" + found());
      member entry;
      entry.key = parse_string();
      expect(':');
      entry.content = parse_value(depth + 1);
      object.members.push_back(std::move(entry));
      skip_whitespace();
      if (!at_end() && peek() == ',') {
        ++position_;
        continue;
      }
      expect('}');
      return;
    }
  }

  void parse_array(value& array, int depth) {
    if (depth >= max_depth) fail("nesting too deep");
    ++position_;  // '['
    skip_whitespace();
    if (!at_end() && peek() == ']') {
      ++position_;
      return;
    }
    for (;;) {
      array.items.push_back(parse_value(depth + 1));
      skip_whitespace();
      if (!at_end() && peek() == ',') {
        ++position_;
        continue;
      }
      expect(']');
      return;
    }
  }

  /// Strict JSON number grammar, then std::from_chars on exactly that span.
  double parse_number() {
    const std::size_t start = position_;
    auto digits = [&] {
      const std::size_t first = position_;
      while (!at_end() && peek() >= '0' && peek() <= '9') ++position_;
      return position_ - first;
    };
    if (peek() == '-') ++position_;
    if (!at_end() && peek() == '0') {
      ++position_;
    } else if (digits() == 0) {
      fail("malformed number");
    }
    if (!at_end() && peek() == '.') {
      ++position_;
      if (digits() == 0) fail("malformed number: digits expected after '.'");
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      ++position_;
      if (!at_end() && (peek() == '+' || peek() == '-')) ++position_;
      if (digits() == 0) fail("malformed number: digits expected in the exponent");
    }
    double number = 0.0;
    const char* first = text_.data() + start;
    const char* last = text_.data() + position_;
    const auto [end, error] = std::from_chars(first, last, number);
    if (error == std::errc::result_out_of_range)
      fail("number '" + std::string(first, last) + "' is out of the range of a double");
    if (error != std::errc() || end != last) fail("malformed number");
    return number;
  }

  unsigned hex4() {
    if (position_ + 4 > text_.size()) fail("truncated \\u escape");
    unsigned code = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text_[position_++];
      code <<= 4;
      if (c >= '0' && c <= '9')
        code |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        code |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        code |= static_cast<unsigned>(c - 'A' + 10);
      else
        fail("invalid \\u escape");
    }
    return code;
  }

  static void append_utf8(std::string& out, unsigned code) {
    auto byte = [](unsigned bits) { return static_cast<char>(static_cast<unsigned char>(bits)); };
    if (code < 0x80) {
      out += byte(code);
    } else if (code < 0x800) {
      out += byte(0xC0 | (code >> 6));
      out += byte(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += byte(0xE0 | (code >> 12));
      out += byte(0x80 | ((code >> 6) & 0x3F));
      out += byte(0x80 | (code & 0x3F));
    } else {
      out += byte(0xF0 | (code >> 18));
      out += byte(0x80 | ((code >> 12) & 0x3F));
      out += byte(0x80 | ((code >> 6) & 0x3F));
      out += byte(0x80 | (code & 0x3F));
    }
  }

  std::string parse_string() {
    ++position_;  // opening quote
    std::string out;
    for (;;) {
      if (at_end()) fail("unterminated string");
      const char c = text_[position_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character inside a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_end()) fail("unterminated string");
      const char escape = text_[position_++];
      switch (escape) {
        case '"':
        case '\\':
        case '/':
          out += escape;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          unsigned code = hex4();
          if (code >= 0xD800 && code < 0xDC00) {  // high surrogate: a low one must follow
            if (!consume_word("\\u")) fail("unpaired surrogate in \\u escape");
            const unsigned low = hex4();
            if (low < 0xDC00 || low >= 0xE000) fail("unpaired surrogate in \\u escape");
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          } else if (code >= 0xDC00 && code < 0xE000) {
            fail("unpaired surrogate in \\u escape");
          }
          append_utf8(out, code);
          break;
        }
        default:
          fail(std::string("invalid escape '\\") + escape + "'");
      }
    }
  }

  std::string_view text_;
  const std::string& path_;
  std::size_t position_ = 0;
  long line_ = 1;
};

}  // namespace detail

inline const value* value::find(std::string_view key) const {
  for (const member& entry : members)
    if (entry.key == key) return &entry.content;
  return nullptr;
}

/// \brief Parses one JSON document. \throws input_error "PATH:LINE: what" on malformed input.
inline value parse(std::string_view text, const std::string& path) {
  return detail::parser(text, path).document();
}

inline const char* describe(value::kind type) {
  switch (type) {
    case value::kind::null:
      return "null";
    case value::kind::boolean:
      return "a boolean";
    case value::kind::number:
      return "a number";
    case value::kind::string:
      return "a string";
    case value::kind::array:
      return "an array";
    case value::kind::object:
      return "an object";
  }
  return "a value";
}

inline void append_string(std::string& out, std::string_view text) {
  static constexpr char hex_digits[] = "0123456789abcdef";
  out += '"';
  for (const char c : text) {
    const auto code = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (code < 0x20) {
      out += "\\u00";
      out += hex_digits[code >> 4];
      out += hex_digits[code & 0xF];
    } else {
      out += c;
    }
  }
  out += '"';
}

inline void append_number(std::string& out, double number) {
  if (!std::isfinite(number)) {
    out += "null";
    return;
  }
  io::append_number(out, number);
}

}  // namespace json
}  // namespace io
}  // namespace popalloc
