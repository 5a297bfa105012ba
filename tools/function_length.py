#!/usr/bin/env python3
"""function_length.py — no function in the tool's source longer than a reader can hold.

A function is a definition that opens at column 0 ("type name(args) {") and ends at the first "}"
in column 0 after it. A CUDA kernel's attribute (`__global__ void __launch_bounds__(256, 2) name(`,
the name possibly on the next line) is skipped: the kernel is reported by its own name. Generated
tables (reports/font_data.c) are not functions. Prints every function over the limit (default 120
lines, --max N) with its file and line, exits 1 if any. Run by tools/test.sh (CI).
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from floors import folders  # noqa: E402  (tools/floors.txt)

FOLDERS = folders()
SKIP = {"reports/font_data.c"}
HEAD = re.compile(r"^[A-Za-z_][\w\s\*]*?\b(\w+)\(")
ATTRIBUTE = "__launch_bounds__"
NAME = re.compile(r"\b(\w+)\s*\(")
KEYWORD = re.compile(r"^(if|for|while|switch|else|do|return|typedef|struct|enum|union)\b")


def kernel_name(header):
    """The name in a definition's header text after its __launch_bounds__(...) attribute (balanced
    parentheses), or None when nothing name-like follows."""
    at = header.find(ATTRIBUTE)
    k = header.find("(", at)
    depth = 0
    while k < len(header):
        depth += {"(": 1, ")": -1}.get(header[k], 0)
        k += 1
        if depth == 0:
            break
    m = NAME.search(header, k)
    return m.group(1) if m else None


def functions(path):
    """(name, first line, length) of each function definition: a column-0 line that starts with an
    identifier and holds "name(", continued over the following lines until one ends with "{"."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        m = HEAD.match(line)
        if m and not KEYWORD.match(line) and "=" not in line.split("(")[0]:
            k = i
            while k < len(lines) and not lines[k].rstrip().endswith(("{", ";")) and k - i < 8:
                k += 1
            if k < len(lines) and lines[k].rstrip().endswith("{"):
                j = k + 1
                while j < len(lines) and not lines[j].startswith("}"):
                    j += 1
                name = m.group(1)
                if name == ATTRIBUTE:
                    name = kernel_name("\n".join(lines[i:k + 1])) or name
                yield name, i + 1, j - i + 1
                i = j
        i += 1


def main():
    limit = 120
    if "--max" in sys.argv:
        limit = int(sys.argv[sys.argv.index("--max") + 1])
    long = []
    for d in FOLDERS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, d)):
            for f in sorted(files):
                if not f.endswith((".c", ".cu")):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, f), ROOT)
                if rel in SKIP:
                    continue
                for name, line, n in functions(os.path.join(dirpath, f)):
                    if n > limit:
                        long.append((n, rel, line, name))
    for n, rel, line, name in sorted(long, reverse=True):
        print("function_length: %s:%d: %s is %d lines (limit %d)" % (rel, line, name, n, limit))
    if long:
        return 1
    print("function_length: every function within %d lines" % limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
