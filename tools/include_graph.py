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


def folder_circles():
    """Circles of files inside each folder (a file and its header are one unit, x.c with x.h):
    [(folder, sorted units)] for every strongly connected set of two or more units. Reported, not
    refused: a header pair that needs each other is sometimes the honest cut; more than two is a
    sign that one of them does two jobs (issue 40)."""
    out = []
    for d in FLOOR:
        base = os.path.join(ROOT, d)
        graph = {}
        for f in sorted(os.listdir(base)):
            if not f.endswith(SRC_EXT):
                continue
            unit = os.path.splitext(f)[0]
            with open(os.path.join(base, f), encoding="utf-8", errors="replace") as fh:
                for inc in INC.findall(fh.read()):
                    p = os.path.normpath(os.path.join(base, inc))
                    other = os.path.splitext(os.path.basename(p))[0]
                    if os.path.dirname(p) == base and os.path.exists(p) and other != unit:
                        graph.setdefault(unit, set()).add(other)
        index, low, stack, on = {}, {}, [], set()

        def strong(v):  # Tarjan's strongly connected components
            index[v] = low[v] = len(index)
            stack.append(v)
            on.add(v)
            for w in sorted(graph.get(v, ())):
                if w not in index:
                    strong(w)
                    low[v] = min(low[v], low[w])
                elif w in on:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append((d, sorted(comp)))

        for v in sorted(graph):
            if v not in index:
                strong(v)
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
    for d, comp in folder_circles():
        print("include_graph: inside %s/, files that include each other in a circle: %s (%d)" % (d, ", ".join(comp), len(comp)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
