#!/usr/bin/env python3
"""include_graph.py — the house's floors, checked from the #include lines of the source folders.

Each folder sits on a floor; a file may include headers of its own folder and of folders on lower
floors only. Prints every include that runs back up (or sideways into another folder of the same
floor) and every circle between folders, and exits 1 when there is one. Run by tools/test.sh (CI)
and by hand: python3 tools/include_graph.py [--dot] (--dot prints the folder graph for Graphviz).
The floors (tools/floors.txt) are docs/ARCHITECTURE.md's picture; a change there is a change of the
architecture.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from floors import floors  # noqa: E402  (tools/floors.txt: the one list of the floors)

# lowest first; folders on one floor may not include each other
FLOORS = floors()
FLOOR = {d: i for i, fl in enumerate(FLOORS) for d in fl}
SRC_EXT = (".c", ".h", ".cu", ".cuh")
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def edges():
    out = []
    for d in FLOOR:
        base = os.path.join(ROOT, d)
        for dirpath, _, files in os.walk(base):
            for f in files:
                if not f.endswith(SRC_EXT):
                    continue
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                for m in INC.finditer(text):
                    inc = m.group(1)
                    for cand in (os.path.join(dirpath, inc), os.path.join(ROOT, inc)):
                        cand = os.path.normpath(cand)
                        if os.path.exists(cand):
                            rel = os.path.relpath(cand, ROOT)
                            top = rel.split(os.sep)[0]
                            if top in FLOOR and top != d:
                                out.append((os.path.relpath(path, ROOT), d, rel, top))
                            break
    return out


def main():
    es = edges()
    if "--dot" in sys.argv:
        pairs = sorted({(a, b) for _, a, _, b in es})
        print("digraph house {\n  rankdir=BT;")
        for a, b in pairs:
            print('  "%s" -> "%s";' % (a, b))
        print("}")
        return 0
    bad = [(f, d, inc, t) for f, d, inc, t in es if FLOOR[t] >= FLOOR[d]]
    for f, d, inc, t in bad:
        print("include_graph: %s includes %s: %s/ is not below %s/" % (f, inc, t, d))
    # circles between folders (only possible through the bad edges, but say so explicitly)
    graph = {}
    for _, a, _, b in es:
        graph.setdefault(a, set()).add(b)
    seen, stack, circles = set(), [], []

    def visit(n):
        if n in stack:
            circles.append(stack[stack.index(n):] + [n])
            return
        if n in seen:
            return
        seen.add(n)
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            visit(m)
        stack.pop()

    for n in sorted(graph):
        visit(n)
    for c in circles:
        print("include_graph: circle " + " -> ".join(c))
    if bad or circles:
        return 1
    print("include_graph: %d includes across folders, all downward, no circles" % len(es))
    return 0


if __name__ == "__main__":
    sys.exit(main())
