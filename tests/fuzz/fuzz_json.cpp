// SPDX-License-Identifier: Apache-2.0
// Fuzz target: popalloc::io::json::parse. Any input either parses or throws io::input_error
// with a "PATH:LINE: what" message; a parsed document re-serialised through the writer helpers
// must parse again to the same structure.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <popalloc/io/json.hpp>

namespace {

namespace json = popalloc::io::json;

void write(std::string& out, const json::value& v) {
  switch (v.type) {
    case json::value::kind::null:
      out += "null";
      break;
    case json::value::kind::boolean:
      out += v.boolean ? "true" : "false";
      break;
    case json::value::kind::number:
      json::append_number(out, v.number);
      break;
    case json::value::kind::string:
      json::append_string(out, v.text);
      break;
    case json::value::kind::array:
      out += '[';
      for (std::size_t k = 0; k < v.items.size(); ++k) {
        if (k != 0) out += ',';
        write(out, v.items[k]);
      }
      out += ']';
      break;
    case json::value::kind::object:
      out += '{';
      for (std::size_t k = 0; k < v.members.size(); ++k) {
        if (k != 0) out += ',';
        json::append_string(out, v.members[k].key);
        out += ':';
        write(out, v.members[k].content);
      }
      out += '}';
      break;
  }
}

bool same(const json::value& a, const json::value& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case json::value::kind::null:
      return true;
    case json::value::kind::boolean:
      return a.boolean == b.boolean;
    case json::value::kind::number:
      return a.number == b.number;  // shortest round-trip output reads back exactly
    case json::value::kind::string:
      return a.text == b.text;
    case json::value::kind::array:
      if (a.items.size() != b.items.size()) return false;
      for (std::size_t k = 0; k < a.items.size(); ++k)
        if (!same(a.items[k], b.items[k])) return false;
      return true;
    case json::value::kind::object:
      if (a.members.size() != b.members.size()) return false;
      for (std::size_t k = 0; k < a.members.size(); ++k)
        if (a.members[k].key != b.members[k].key ||
            !same(a.members[k].content, b.members[k].content))
          return false;
      return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  json::value parsed;
  try {
    parsed = json::parse(text, "input.json");
  } catch (const popalloc::io::input_error& e) {
    if (std::string_view(e.what()).substr(0, 11) != "input.json:") std::abort();
    return 0;
  }
  std::string again;
  write(again, parsed);
  const json::value reparsed = json::parse(again, "again.json");  // must not throw
  if (!same(parsed, reparsed)) std::abort();
  return 0;
}
