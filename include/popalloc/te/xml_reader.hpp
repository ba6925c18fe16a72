// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A small strict XML reader for the subset GraphML files use: elements, attributes,
/// character data with the five predefined entities and numeric character references, comments,
/// CDATA sections and processing instructions (skipped). No DTDs, no namespaces processing (a
/// prefix is part of the name). Malformed input is an io::input_error "PATH:LINE: what".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "popalloc/io/input_error.hpp"

namespace popalloc::te::xml {

/// \brief One element: name, attributes in file order, children, and its own character data
/// (the text directly inside it, concatenated, entities decoded).
struct element {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;
  std::vector<element> children;
  std::string text;
  long line = 0;  ///< line of the start tag

  /// \brief The value of attribute `key`, or nullptr.
  const std::string* attribute(std::string_view key) const {
    for (const auto& [k, v] : attributes)
      if (k == key) return &v;
    return nullptr;
  }
};

namespace detail {

class parser {
 public:
  parser(std::string_view text, const std::string& path) : text_(text), path_(path) {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") position_ = 3;
  }

  element document() {
    skip_misc();
    if (at_end()) fail("no root element");
    if (peek() != '<') fail("text before the root element");
    element root = parse_element(0);
    skip_misc();
    if (!at_end()) fail("content after the root element");
    return root;
  }

 private:
  static constexpr int max_depth = 128;

  [[noreturn]] void fail(const std::string& what) const { io::fail_at(path_, line_, what); }
  bool at_end() const { return position_ >= text_.size(); }
  char peek() const { return text_[position_]; }
  bool starts_with(std::string_view s) const { return text_.substr(position_, s.size()) == s; }
  void advance(std::size_t count) {
    for (std::size_t q = 0; q < count && !at_end(); ++q, ++position_)
      if (text_[position_] == '\n') ++line_;
  }
  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
  void skip_space() {
    while (!at_end() && is_space(peek())) advance(1);
  }
  static bool is_name_char(char c, bool first) {
    const auto u = static_cast<unsigned char>(c);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || u >= 0x80)
      return true;
    return !first && ((c >= '0' && c <= '9') || c == '-' || c == '.');
  }

  /// Skips `what` up to and including `end`; fails if the file ends first.
  void skip_until(std::string_view end, const char* what) {
    const long start_line = line_;
    const std::size_t found = text_.find(end, position_);
    if (found == std::string_view::npos)
      io::fail_at(path_, start_line, std::string("unterminated ") + what);
    advance(found + end.size() - position_);
  }

  /// Whitespace, comments and processing instructions outside the root element.
  void skip_misc() {
    for (;;) {
      skip_space();
      if (starts_with("<?")) {
        skip_until("?>", "processing instruction");
      } else if (starts_with("<!--")) {
        skip_until("-->", "comment");
      } else if (starts_with("<!")) {
        fail("DOCTYPE and other declarations are not supported");
      } else {
        return;
      }
    }
  }

  std::string parse_name() {
    const std::size_t start = position_;
    if (at_end() || !is_name_char(peek(), true)) fail("expected a name" + found());
    while (!at_end() && is_name_char(peek(), false)) advance(1);
    return std::string(text_.substr(start, position_ - start));
  }

  std::string found() const {
    if (at_end()) return " but the file ends";
    return std::string(" but found '") + peek() + "'";
  }

  static void append_utf8(std::string& out, std::uint32_t code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  /// Decodes an entity reference at '&' into `out`.
  void parse_reference(std::string& out) {
    const std::size_t semicolon = text_.find(';', position_);
    if (semicolon == std::string_view::npos || semicolon - position_ > 12)
      fail("'&' must start an entity reference such as &amp;");
    const std::string_view name = text_.substr(position_ + 1, semicolon - position_ - 1);
    if (name == "amp") {
      out += '&';
    } else if (name == "lt") {
      out += '<';
    } else if (name == "gt") {
      out += '>';
    } else if (name == "quot") {
      out += '"';
    } else if (name == "apos") {
      out += '\'';
    } else if (name.size() >= 2 && name[0] == '#') {
      const bool hex = name[1] == 'x';
      const std::string_view digits = name.substr(hex ? 2 : 1);
      std::uint32_t code = 0;
      if (digits.empty()) fail("empty character reference");
      for (const char c : digits) {
        std::uint32_t d = 0;
        if (c >= '0' && c <= '9') {
          d = static_cast<std::uint32_t>(c - '0');
        } else if (hex && c >= 'a' && c <= 'f') {
          d = static_cast<std::uint32_t>(c - 'a' + 10);
        } else if (hex && c >= 'A' && c <= 'F') {
          d = static_cast<std::uint32_t>(c - 'A' + 10);
        } else {
          fail("malformed character reference '&" + std::string(name) + ";'");
        }
        code = code * (hex ? 16u : 10u) + d;
        if (code > 0x10FFFF) fail("character reference out of range");
      }
      if (code == 0) fail("character reference to NUL");
      append_utf8(out, code);
    } else {
      fail("unknown entity '&" + std::string(name) + ";'");
    }
    advance(semicolon + 1 - position_);
  }

  std::string parse_attribute_value() {
    if (at_end() || (peek() != '"' && peek() != '\'')) fail("expected a quoted value" + found());
    const char quote = peek();
    advance(1);
    std::string value;
    for (;;) {
      if (at_end()) fail("unterminated attribute value");
      const char c = peek();
      if (c == quote) {
        advance(1);
        return value;
      }
      if (c == '<') fail("'<' inside an attribute value");
      if (c == '&') {
        parse_reference(value);
      } else {
        value += c;
        advance(1);
      }
    }
  }

  element parse_element(int depth) {
    if (depth > max_depth) fail("elements nested too deeply");
    element e;
    e.line = line_;
    advance(1);  // '<'
    e.name = parse_name();
    for (;;) {
      const bool spaced = !at_end() && is_space(peek());
      skip_space();
      if (at_end()) fail("unterminated start tag <" + e.name + ">");
      if (starts_with("/>")) {
        advance(2);
        return e;
      }
      if (peek() == '>') {
        advance(1);
        break;
      }
      if (!spaced) fail("expected whitespace between attributes" + found());
      std::string key = parse_name();
      skip_space();
      if (at_end() || peek() != '=') fail("expected '=' after attribute '" + key + "'" + found());
      advance(1);
      skip_space();
      std::string value = parse_attribute_value();
      if (e.attribute(key) != nullptr) fail("attribute '" + key + "' repeated in <" + e.name + ">");
      e.attributes.emplace_back(std::move(key), std::move(value));
    }
    // Content up to the matching end tag.
    for (;;) {
      if (at_end()) io::fail_at(path_, e.line, "element <" + e.name + "> is never closed");
      if (starts_with("</")) {
        advance(2);
        const std::string closing = parse_name();
        if (closing != e.name)
          fail("end tag </" + closing + "> does not match <" + e.name + "> opened on line " +
               std::to_string(e.line));
        skip_space();
        if (at_end() || peek() != '>') fail("expected '>' to end </" + closing + ">" + found());
        advance(1);
        return e;
      }
      if (starts_with("<!--")) {
        skip_until("-->", "comment");
      } else if (starts_with("<![CDATA[")) {
        advance(9);
        const long start_line = line_;
        const std::size_t end = text_.find("]]>", position_);
        if (end == std::string_view::npos) io::fail_at(path_, start_line, "unterminated CDATA");
        e.text += text_.substr(position_, end - position_);
        advance(end + 3 - position_);
      } else if (starts_with("<?")) {
        skip_until("?>", "processing instruction");
      } else if (starts_with("<!")) {
        fail("declarations are not allowed inside elements");
      } else if (peek() == '<') {
        e.children.push_back(parse_element(depth + 1));
      } else if (peek() == '&') {
        parse_reference(e.text);
      } else {
        e.text += peek();
        advance(1);
      }
    }
  }

  std::string_view text_;
  const std::string& path_;
  std::size_t position_ = 0;
  long line_ = 1;
};

}  // namespace detail

/// \brief Parses one XML document. \throws io::input_error "PATH:LINE: what" when malformed.
inline element parse(std::string_view text, const std::string& path) {
  return detail::parser(text, path).document();
}

}  // namespace popalloc::te::xml
