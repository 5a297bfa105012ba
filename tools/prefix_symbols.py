#!/usr/bin/env python3
"""prefix_symbols.py — every symbol the project's libraries export starts with `andrea_`; CUDA
kernels are static or in a namespace.

The truth is `nm` (binutils): the global symbols defined by the build's libraries
(libandrea_core.a, which holds the CUDA objects in a CUDA build, and libandrea_test_support.a), or
by the objects/archives named on the command line. main, LLVMFuzzerTestOneInput and the cuBLAS entry points of kernels/cublas_lazy.c are exempt, and
so are compiler-made symbols (`__*`, `DW.ref.*`) and C++ names in a namespace. Three modes:

  python3 tools/prefix_symbols.py --check [--build DIR | FILE.a/.o ...]
      prints one line per offending symbol and exits 1 when there is one (tools/test.sh runs it
      after the ctest stage's build; tests/test_exported_symbols_are_prefixed.sh runs it in ctest).
  python3 tools/prefix_symbols.py --apply [--build DIR] [--dry-run]
      rewrites the sources so that the next build has no offender (then rebuild and test), and
      adds each rename to tools/prefix_symbols.map (old new).
  python3 tools/prefix_symbols.py --replay [--dry-run]
      redoes the renames of tools/prefix_symbols.map without a build: for a branch written against
      the old names and merged after the rename (its code uses names that no longer exist, so it
      does not build and nm cannot list them). Then build, and --apply for the branch's own symbols.

The rewrite, from the list above:
  - a C symbol NAME (or a C++ function in the global namespace) becomes andrea_NAME; a name that
    already carries the house's prefix in another spelling (`ae_fail`, `Andrea_x`, `ANDREAx`) loses
    it first (`andrea_fail`) unless that name is already taken, then it is prefixed whole
    (`andrea_ae_fail`);
  - a CUDA kernel (a symbol with a `__device_stub__`) is made static: `static __global__ ...`.
Occurrences are renamed as whole C identifiers only: in .c/.h/.cu/.cuh code and comments under the
source folders, tests/, bench/ and tools/, never inside string or character literals (messages,
SQL, JSON stay as the user sees them), never after `.` or `->` (a struct member of the same name),
never as a file name (`catalog_diff.c`). Markdown (README.md, docs/) is renamed only inside `code
spans`; CMake files (CMakeLists.txt, *.cmake) as plain words with the same file-name guard
(reports/assets/embed.cmake writes a C symbol). Python and shell files are not rewritten; any
occurrence there, and any occurrence left inside a string literal, is listed so a person can judge
it. This script, its map and its test are never rewritten.

Idempotent: after a rebuild the renamed symbols carry the prefix and are no longer listed, so a
second --apply changes nothing; a second --replay finds no old name left. Exit codes: 0 done or
nothing to report, 1 offenders found (--check), 2 bad usage or no library to read.
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from floors import folders  # noqa: E402  (tools/floors.txt)

SOURCE_DIRS = folders() + ["tests", "bench", "tools"]
LIBRARIES = ["libandrea_core.a", "libandrea_test_support.a"]
C_EXT = (".c", ".h", ".cu", ".cuh", ".cpp", ".hpp")
EXEMPT = {"main", "LLVMFuzzerTestOneInput"}
# kernels/cublas_lazy.c defines cuBLAS's own entry points (forwarding to the library it opens with
# dlopen): they must keep cuBLAS's names, which the engine's calls and cuBLAS's headers use
EXEMPT_PREFIXES = ("cublas",)
PREFIX = "andrea_"
MAP_FILE = os.path.join(ROOT, "tools", "prefix_symbols.map")
# spellings of the house prefix that a name may already carry: stripped before andrea_ is added
OLD_PREFIX = re.compile(r"^(ae_|andrea_?)", re.I)
FILE_EXT = r"\.(?:c|h|cu|cuh|cpp|md|py|sh|txt|json|html|js|css|cmake|o|a|so)\b"

C_TOKEN = re.compile(r"""(?P<comment>//[^\n]*|/\*.*?\*/)
                       |(?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
                       |(?P<ident>[A-Za-z_]\w*)""", re.S | re.X)
MD_CODE = re.compile(r"(`+)(.+?)\1", re.S)
WORD = re.compile(r"[A-Za-z_]\w*")


# ---- the list: nm ----

def nm_symbols(paths):
    """(type letter, raw name) of every global symbol defined in the given archives/objects."""
    out = []
    for p in paths:
        r = subprocess.run(["nm", "-g", "--defined-only", p], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("prefix_symbols: %s: nm failed: %s" % (p, r.stderr.strip()))
        for line in r.stdout.splitlines():
            f = line.split()
            if len(f) == 3:
                out.append((f[1], f[2]))
    return out


def global_cxx_name(sym):
    """The name of a C++ symbol in the global namespace (`_Z19attention_v1_kernel16...` ->
    attention_v1_kernel), or None for a symbol in a namespace or class (`_ZN...`) or a special one."""
    m = re.match(r"_Z(\d+)", sym)
    if not m:
        return None
    n = int(m.group(1))
    return sym[m.end():m.end() + n]


def offenders(paths):
    """[(kind, name, raw symbol)] with kind "c" (rename), "cxx" (rename) or "kernel" (make static):
    every exported symbol without the prefix, and every CUDA kernel outside a namespace."""
    syms = nm_symbols(paths)
    stubs = set()
    for _, s in syms:
        name = global_cxx_name(s)
        if name and name.startswith("__device_stub__"):
            inner = global_cxx_name("_" + name[len("__device_stub__"):])
            if inner:
                stubs.add(inner)
    found = {}
    for _, s in syms:
        if s in EXEMPT or s.startswith(("__", "DW.ref.", "_GLOBAL_", ".") + EXEMPT_PREFIXES) or "." in s:
            continue  # compiler-made: personality refs, CUDA registration, local labels
        if s.startswith("_Z"):
            name = global_cxx_name(s)
            if name is None or name.startswith("__"):
                continue  # namespaced (_ZN), typeinfo/vtables (_ZT...), device stubs
            if name in stubs:
                found.setdefault(("kernel", name), s)
            elif not name.startswith(PREFIX):
                found.setdefault(("cxx", name), s)
        elif not s.startswith(PREFIX):
            found.setdefault(("c", s), s)
    return sorted((k, n, s) for (k, n), s in found.items())


def library_paths(build):
    paths = [os.path.join(build, lib) for lib in LIBRARIES if os.path.exists(os.path.join(build, lib))]
    if not paths:
        sys.exit("prefix_symbols: %s: no %s (build first)" % (build, " or ".join(LIBRARIES)))
    return paths


# ---- the sources ----

def source_files():
    """(path, kind) of every file the rewrite reads: kind c, md, cmake or other (py/sh: listed only)."""
    for d in SOURCE_DIRS:
        for dirpath, dirs, files in os.walk(os.path.join(ROOT, d)):
            dirs[:] = sorted(x for x in dirs if x not in ("data", "corpus", "__pycache__"))
            for f in sorted(files):
                p = os.path.join(dirpath, f)
                if f.endswith(C_EXT):
                    yield p, "c"
                elif f == "CMakeLists.txt" or f.endswith(".cmake"):
                    yield p, "cmake"
                elif f.endswith((".py", ".sh")):
                    yield p, "other"
    for p in [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "CMakeLists.txt")]:
        yield p, ("md" if p.endswith(".md") else "cmake")
    for dirpath, dirs, files in os.walk(os.path.join(ROOT, "docs")):
        for f in sorted(files):
            if f.endswith(".md"):
                yield os.path.join(dirpath, f), "md"


def read(p):
    with open(p, encoding="utf-8", errors="surrogateescape") as f:
        return f.read()


def renamable(text, start, end, code=False):
    """A word at text[start:end] names the C identifier: not a member (after . or ->) and, outside
    code (comments, docs), not a file name (before .c/.h/...)."""
    before = text[max(0, start - 2):start]
    if before.endswith(".") or before == "->":
        return False
    return code or not re.match(FILE_EXT, text[end:end + 8])


def rename_words(text, mapping, base=0, full=None):
    full = text if full is None else full

    def sub(m):
        w = m.group(0)
        if w in mapping and renamable(full, base + m.start(), base + m.end()):
            return mapping[w]
        return w
    return WORD.sub(sub, text)


def rewrite_c(text, mapping, kernels, left, where):
    out = []
    pos = 0
    for m in C_TOKEN.finditer(text):
        out.append(text[pos:m.start()])
        pos = m.end()
        tok = m.group(0)
        if m.group("ident"):
            if tok in mapping and renamable(text, m.start(), m.end(), code=True):
                tok = mapping[tok]
        elif m.group("comment"):
            tok = rename_words(tok, mapping, m.start(), text)
        else:
            if any(w.group(0) in mapping and renamable(tok, w.start(), w.end()) for w in WORD.finditer(tok)):
                left.append("%s:%d: in a string: %s" % (where, text.count("\n", 0, m.start()) + 1, tok))
        out.append(tok)
    out.append(text[pos:])
    text = "".join(out)
    for k in kernels:  # a kernel made static: its __global__ declaration(s), once
        text = re.sub(r"(?<!static )__global__(\s+void\s+(?:__launch_bounds__\s*\((?:[^()]|\([^()]*\))*\)\s*)?"
                      + re.escape(k) + r"\s*\()", r"static __global__\1", text)
    return text


def rewrite_md(text, mapping):
    return MD_CODE.sub(lambda m: m.group(1) + rename_words(m.group(2), mapping) + m.group(1), text)


def new_names(names, taken):
    """old -> new: andrea_ + the name without an old spelling of the prefix, unless taken."""
    mapping = {}
    for n in names:
        short = PREFIX + OLD_PREFIX.sub("", n)
        cand = short if short not in taken and short not in mapping.values() else PREFIX + n
        if cand in taken or cand in mapping.values():
            sys.exit("prefix_symbols: %s: both %s and %s are taken; rename it by hand" % (n, short, PREFIX + n))
        mapping[n] = cand
    return mapping


def read_map():
    """old -> new of every rename made so far (MAP_FILE), {} when there is none."""
    mapping = {}
    if os.path.exists(MAP_FILE):
        for line in read(MAP_FILE).splitlines():
            f = line.split()
            if len(f) == 2 and not line.startswith("#"):
                mapping[f[0]] = f[1]
    return mapping


def write_map(mapping):
    with open(MAP_FILE, "w", encoding="utf-8") as f:
        f.write("# tools/prefix_symbols.map — every rename tools/prefix_symbols.py --apply made (old new),\n"
                "# replayed by --replay on code written against the old names (a branch merged later).\n")
        for old in sorted(mapping):
            f.write("%s %s\n" % (old, mapping[old]))


def apply(found, dry_run, replay=False):
    files = list(source_files())
    texts = {p: read(p) for p, _ in files}
    if replay:
        mapping, kernels = read_map(), []
    else:
        taken = set()
        for p, kind in files:
            if kind == "c":
                taken.update(WORD.findall(texts[p]))
        mapping = new_names(sorted({n for k, n, _ in found if k in ("c", "cxx")}), taken)
        kernels = sorted({n for k, n, _ in found if k == "kernel"})
        if mapping and not dry_run:
            write_map({**read_map(), **mapping})
    left, changed = [], []
    for p, kind in files:
        rel = os.path.relpath(p, ROOT)
        text = texts[p]
        if "prefix_symbols" in os.path.basename(p):
            continue
        if kind == "c":
            new = rewrite_c(text, mapping, kernels if p.endswith((".cu", ".cuh")) else [], left, rel)
        elif kind == "md":
            new = rewrite_md(text, mapping)
        elif kind == "cmake":
            new = rename_words(text, mapping)
        else:
            new = text
            for i, line in enumerate(text.split("\n"), 1):
                if any(w in mapping for w in WORD.findall(line)):
                    left.append("%s:%d: not rewritten (%s file): %s" % (rel, i, kind, line.strip()))
        if new != text:
            changed.append(rel)
            if not dry_run:
                with open(p, "w", encoding="utf-8", errors="surrogateescape") as f:
                    f.write(new)
    for old in sorted(mapping):
        if not replay:
            print("rename %s -> %s" % (old, mapping[old]))
    for k in kernels:
        print("static kernel %s" % k)
    print("prefix_symbols: %d %s, %d kernels made static, %d files %s" % (
        len(mapping), "renames replayed from " + os.path.relpath(MAP_FILE, ROOT) if replay else "renames", len(kernels),
        len(changed), "would change" if dry_run else "changed"))
    for line in left:
        print("left alone: " + line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="list offending symbols, exit 1 if any")
    mode.add_argument("--apply", action="store_true", help="rewrite the sources")
    mode.add_argument("--replay", action="store_true", help="redo the renames of tools/prefix_symbols.map (no build)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="build directory (default build/)")
    ap.add_argument("--dry-run", action="store_true", help="with --apply/--replay: print, write nothing")
    ap.add_argument("objects", nargs="*", help="archives/objects to read instead of the build's libraries")
    a = ap.parse_args()
    for p in a.objects:
        if not os.path.isfile(p):
            print("prefix_symbols: %s: no such file" % p, file=sys.stderr)
            return 2
    if a.replay:
        apply([], a.dry_run, replay=True)
        return 0
    found = offenders(a.objects or library_paths(a.build))
    if a.apply:
        apply(found, a.dry_run)
        return 0
    for kind, name, sym in found:
        if kind == "kernel":
            print("prefix_symbols: CUDA kernel %s is exported (%s): make it static or put it in a namespace" % (name, sym))
        else:
            print("prefix_symbols: %s is exported without the %s prefix%s" % (
                name, PREFIX, "" if sym == name else " (%s)" % sym))
    if found:
        print("prefix_symbols: %d exported symbols to fix: python3 tools/prefix_symbols.py --apply --build BUILD" % len(found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
