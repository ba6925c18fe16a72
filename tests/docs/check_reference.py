#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""docs:reference - docs/reference.md must document every public field of the headers below.

For every namespace-level struct and enum in HEADERS (outside `namespace detail`) the reference
needs a heading naming it in backticks (`name`, `pop::name` or `name<Scalar>`) followed by a
table: for a struct one row per data member, `| \\`field\\` | type | default | meaning |`, whose
type must be the declared type and whose default must be the initializer (normalised below);
for an enum one row per enumerator, `| \\`name\\` = value | meaning |`. A field or enumerator
missing from the reference, one listed there that the header no longer has, a changed type or a
changed default all fail, so the reference cannot go stale.

Usage: check_reference.py REPOSITORY_ROOT
"""
import re
import sys
from pathlib import Path

HEADERS = [
    "include/popalloc/options.hpp",
    "include/popalloc/result.hpp",
    "include/popalloc/status.hpp",
    "include/popalloc/dense_problem.hpp",
    "include/popalloc/bundle_problem.hpp",
    "include/popalloc/utility/job_parameters.hpp",
    "include/popalloc/pop/pop_solver.hpp",
    "include/popalloc/pop/partition.hpp",
]

# Initializers whose documented spelling is shorter than the C++ one.
DEFAULT_SPELLINGS = {
    "std::numeric_limits<double>::infinity()": "+infinity",
    "std::numeric_limits<double>::quiet_NaN()": "NaN",
}


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def public_text(text):
    """The header without the bodies of `namespace detail { ... }` blocks."""
    out, pos = [], 0
    for match in re.finditer(r"namespace\s+detail\s*\{", text):
        if match.start() < pos:
            continue
        out.append(text[pos:match.start()])
        pos = matching_brace(text, match.end() - 1) + 1
    out.append(text[pos:])
    return "".join(out)


def matching_brace(text, open_index):
    depth = 0
    for k in range(open_index, len(text)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    raise ValueError("unbalanced braces")


def split_top_level(text, separator):
    """Splits at `separator` outside (), <>, {} and []."""
    parts, depth, current = [], 0, []
    for ch in text:
        if ch in "(<{[":
            depth += 1
        elif ch in ")>}]":
            depth -= 1
        if ch == separator and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def struct_fields(body):
    """(name, type, initializer or None) of every public data member of a struct body."""
    fields, statement, public, k = [], "", True, 0
    while k < len(body):
        ch = body[k]
        if ch == "{":
            end = matching_brace(body, k)
            if "(" in statement.split("=")[0]:  # a member function's body ends the statement
                statement, k = "", end + 1
                continue
            statement += body[k:end + 1]  # a brace initializer
            k = end + 1
            continue
        if ch == ";":
            decl = statement.strip()
            statement = ""
            label = re.match(r"^(public|private|protected)\s*:\s*", decl)
            while label:
                public = label.group(1) == "public"
                decl = decl[label.end():]
                label = re.match(r"^(public|private|protected)\s*:\s*", decl)
            if public and decl and not re.match(r"^(using|static|template|friend|typedef|enum|"
                                                r"struct|class)\b", decl):
                head = re.split(r"[={]", decl, maxsplit=1)[0]
                if "(" not in head:
                    fields.extend(declarators(decl))
            k += 1
            continue
        statement += ch
        k += 1
    return fields


def declarators(decl):
    pieces = split_top_level(decl, ",")
    first = re.match(r"^(.*?[\w>*&\s])(\w+)\s*(?:=\s*(.*)|(\{.*\}))?$", pieces[0].strip(), re.S)
    if not first:
        raise ValueError("cannot parse the declaration '%s'" % decl)
    type_text = " ".join(first.group(1).split())
    out = [(first.group(2), type_text, initializer(first.group(3), first.group(4)))]
    for piece in pieces[1:]:
        more = re.match(r"^(\w+)\s*(?:=\s*(.*)|(\{.*\}))?$", piece.strip(), re.S)
        out.append((more.group(1), type_text, initializer(more.group(2), more.group(3))))
    return out


def initializer(assigned, braced):
    value = assigned if assigned is not None else braced
    if value is None:
        return None
    value = " ".join(value.split())
    return DEFAULT_SPELLINGS.get(value, value)


def enumerators(body):
    out = []
    for item in split_top_level(body, ","):
        item = item.strip()
        if item:
            name, _, value = item.partition("=")
            out.append((name.strip(), value.strip() or None))
    return out


def declarations(path):
    """{name: ("struct", fields) or ("enum", enumerators)} of a header's public types."""
    text = public_text(strip_comments(path.read_text()))
    found = {}
    for match in re.finditer(r"\bstruct\s+(\w+)\s*\{", text):
        body = text[match.end():matching_brace(text, match.end() - 1)]
        found[match.group(1)] = ("struct", struct_fields(body))
    for match in re.finditer(r"\benum\s+class\s+(\w+)\s*(?::\s*[\w:]+)?\s*\{", text):
        body = text[match.end():matching_brace(text, match.end() - 1)]
        found[match.group(1)] = ("enum", enumerators(body))
    return found


def sections(reference):
    """{type name: table rows} from the reference's headings and the tables under them."""
    out, current, level = {}, None, 0
    for line in reference.splitlines():
        heading = re.match(r"^(#+)\s+(.*)", line)
        if heading:
            names = re.findall(r"`(?:pop::)?(\w+)(?:<\w+>)?`", heading.group(2))
            if names:
                current, level = names[0], len(heading.group(1))
                out.setdefault(current, [])
            elif current is not None and len(heading.group(1)) <= level:
                current = None
            continue
        if current is not None and line.startswith("| `"):
            cells = re.split(r"(?<!\\)\|", line.strip()[1:-1])  # "\|" is a "|" in a cell
            out[current].append([cell.strip() for cell in cells])
    return out


def unquote(cell):
    return cell.replace("`", "").strip()


def main():
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]
    documented = sections((root / "docs/reference.md").read_text())
    problems, count = [], 0
    for header in HEADERS:
        for name, (kind, members) in declarations(root / header).items():
            where = "%s (%s)" % (name, header)
            if name not in documented:
                problems.append("%s: no section in docs/reference.md" % where)
                continue
            rows = documented[name]
            if kind == "struct":
                table = {unquote(row[0]): row for row in rows if len(row) == 4}
                for field, type_text, default in members:
                    count += 1
                    row = table.pop(field, None)
                    if row is None:
                        problems.append("%s: field '%s' is not documented" % (where, field))
                        continue
                    if unquote(row[1]) != type_text:
                        problems.append("%s: '%s' has type '%s', the reference says '%s'"
                                        % (where, field, type_text, unquote(row[1])))
                    if default is not None and unquote(row[2]) != default:
                        problems.append("%s: '%s' defaults to '%s', the reference says '%s'"
                                        % (where, field, default, unquote(row[2])))
                    if not row[3]:
                        problems.append("%s: '%s' has no meaning documented" % (where, field))
                for stale in table:
                    problems.append("%s: the reference lists '%s', the header has no such field"
                                    % (where, stale))
            else:
                table = {}
                for row in rows:
                    match = re.match(r"^`(\w+)`(?:\s*=\s*(\S+))?$", row[0])
                    if match:
                        table[match.group(1)] = match.group(2)
                for enumerator, value in members:
                    count += 1
                    if enumerator not in table:
                        problems.append("%s: value '%s' is not documented" % (where, enumerator))
                    elif value is not None and table.pop(enumerator) != value:
                        problems.append("%s: '%s' = %s in the header" % (where, enumerator, value))
                    else:
                        table.pop(enumerator, None)
                for stale in table:
                    problems.append("%s: the reference lists '%s', the header has no such value"
                                    % (where, stale))
    for problem in problems:
        print("docs/reference.md: " + problem)
    if problems:
        print("docs:reference FAILED: %d problem(s); update docs/reference.md" % len(problems))
        return 1
    if count == 0:
        print("docs:reference FAILED: no fields found in the headers (parser out of date?)")
        return 1
    print("docs:reference: docs/reference.md documents all %d fields and values" % count)
    return 0


if __name__ == "__main__":
    sys.exit(main())
