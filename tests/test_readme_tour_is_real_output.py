"""test_readme_tour_is_real_output.py — every `$ build/andrea ...` example in README.md's fenced
blocks is run, in a scratch folder laid out like the source tree (models/, tests/data/series/,
tools/bin_to_trainer_run.py, build/andrea), and its output must be what the README shows (so are the
other `$ ...` lines of those blocks, such as `printf ... > my.txt`, which make the files the examples
after them read): the same lines and words, numbers
within the rounding that another CPU's SIMD and BLAS kernels give (README: "can move the sixth
significant digit"; the bound is derived below, same_word). A README line `...` stands for any lines. So the tour cannot drift from what
the tool prints: a renamed column, a changed message or a stale label list fails here."""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

from testlib import BIN, FAILED, check, forward_roundings, fp32_tol

SRC = os.environ["ANDREA_SRC"]
NUMBER = re.compile(r"^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\*?$")


def relative_rounding():
    """How far, relative to its magnitude, another CPU may move a number the tour prints (issue 39;
    testlib.fp32_tol, tests/check.h): the longest fp32 chains behind them on the bundled model (its
    .bin header: L, H, C, max T), the forward's (scores, losses, deltas) and the circuits' Gram
    products (a C(C+1)/2-term inner product cancelling to ~hd/C, times C/hd; test_circuits_unit.c)."""
    with open(os.path.join(SRC, "models", "andrea-bundled.bin"), "rb") as f:
        _, _, T, _, L, H, C = struct.unpack("<7i", f.read(28))
    hd = C // H
    return max(fp32_tol(forward_roundings(L, C, hd, T), 1.0), fp32_tol(C + 2 * hd + C * (C + 1) / 2, 1.0) * C / hd)


REL = relative_rounding()


def half_unit(word):
    """Half a unit in the last digit printed: the printing's own rounding."""
    mant, _, exp = word.lower().partition("e")
    decimals = len(mant.partition(".")[2])
    return 0.5 * 10.0 ** (int(exp or 0) - decimals)


def examples(readme):
    """(command, expected output lines) of every `$ ...` line in a fenced block, in order; a
    command goes on over the indented lines after it."""
    out, block, cur = [], False, None
    for line in readme.splitlines():
        if line.startswith("```"):
            if cur: out.append(cur)
            block, cur = not block, None
            continue
        if not block:
            continue
        if line.startswith("$ "):
            if cur: out.append(cur)
            cur = [line[2:], []]
        elif cur is not None and line.startswith("    ") and not cur[1]:
            cur[0] += "\n" + line
        elif cur is not None:
            cur[1].append(line)
    return [(c, [l for l in o]) for c, o in out]


def same_word(want, got):
    if want == got:
        return True
    if NUMBER.match(want) and NUMBER.match(got) and want.endswith("*") == got.endswith("*"):
        w, g = want.rstrip("*"), got.rstrip("*")
        a, b = float(w), float(g)
        # integers and one-decimal numbers are counts, ratios of counts and L.H head names: exact
        if not re.search(r"[eE]|\.\d\d", w + " " + g):
            return a == b
        # a measurement: the two unprinted values are within REL of their magnitude, and each was
        # rounded to its last printed digit (two values across a rounding boundary print a unit
        # apart) -- was 2e-5 + 1e-4 |a|, under one unit of a 3-decimal score's last digit
        return abs(a - b) <= half_unit(w) + half_unit(g) + REL * max(abs(a), abs(b))
    return False


def same_line(want, got):
    w, g = want.split(), got.split()
    return len(w) == len(g) and all(same_word(x, y) for x, y in zip(w, g))


def matches(want, out, err):
    """want (the README's lines) against what the command printed: its stdout and stderr lines
    each in their order, interleaved in any way (a terminal shows them as they come, a pipe
    buffers stdout); a want line `...` takes any lines (none or more)."""
    want = [l for l in want if l.strip()]
    out = [l for l in out if l.strip()]
    err = [l for l in err if l.strip()]
    seen = {}
    def at(i, j, k):
        key = (i, j, k)
        if key not in seen:
            if i == len(want):
                seen[key] = j == len(out) and k == len(err)
            elif want[i].strip() == "...":
                seen[key] = at(i + 1, j, k) or (j < len(out) and at(i, j + 1, k)) or (k < len(err) and at(i, j, k + 1))
            else:
                seen[key] = (j < len(out) and same_line(want[i], out[j]) and at(i + 1, j + 1, k)) or \
                            (k < len(err) and same_line(want[i], err[k]) and at(i + 1, j, k + 1))
        return seen[key]
    return at(0, 0, 0)


def scratch_tree(tmp):
    """The names the tour uses: models/, tests/data/series/, tools/bin_to_trainer_run.py (the
    Trainer series' folders), build/andrea; the bundled model found
    through ANDREA_MODEL_DIR there, so it prints as models/andrea-bundled.bin."""
    shutil.copytree(os.path.join(SRC, "models"), os.path.join(tmp, "models"),
                    ignore=shutil.ignore_patterns("*.md", "README*"))
    os.makedirs(os.path.join(tmp, "tests", "data"))
    shutil.copytree(os.path.join(SRC, "tests", "data", "series"), os.path.join(tmp, "tests", "data", "series"))
    os.makedirs(os.path.join(tmp, "tools"))
    shutil.copy(os.path.join(SRC, "tools", "bin_to_trainer_run.py"), os.path.join(tmp, "tools"))
    os.makedirs(os.path.join(tmp, "build"))
    os.symlink(os.path.abspath(BIN), os.path.join(tmp, "build", "andrea"))


def main():
    with open(os.path.join(SRC, "README.md"), encoding="utf-8") as f:
        tour = examples(f.read())
    n_andrea = sum(c.startswith("build/andrea") for c, _ in tour)
    check(n_andrea >= 10, f"the README's tour has its examples (found {n_andrea})")
    tmp = tempfile.mkdtemp(prefix="andrea-readme-")
    try:
        scratch_tree(tmp)
        # The README shows the CPU engine's output; with a usable GPU `--device auto` runs CUDA in
        # TF32, whose scores differ from the CPU's in the third or fourth digit.
        probe = subprocess.run([BIN, "show", os.path.join(tmp, "models", "andrea-tiny.bin"), "hi", "--device", "cuda",
                                "--out", os.path.join(tmp, "gpu-probe"), "--quiet"], capture_output=True)
        if probe.returncode == 0:
            print("SKIP: a CUDA device is usable here, so the README's commands (--device auto) would run on it; "
                  "the README shows CPU output")
            sys.exit(77)
        env = dict(os.environ, ANDREA_MODEL_DIR=os.path.join(tmp, "models"), COLUMNS="200")
        for cmd, want in tour:
            shown = cmd.split("\n")[0][:90]
            # the command as a user types it; a trailing "# ..." is the README's comment
            r = subprocess.run(["bash", "-c", cmd], cwd=tmp, env=env, capture_output=True, text=True, timeout=600)
            out, err = r.stdout.splitlines(), r.stderr.splitlines()
            ok = matches(want, out, err)
            check(ok, f"README example `{shown}` prints what the README shows:\n  README:\n    "
                      + "\n    ".join(want) + "\n  now (stdout):\n    " + "\n    ".join(out)
                      + "\n  now (stderr):\n    " + "\n    ".join(err))
            if ok:
                print(f"ok   {shown}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(FAILED)} failed")
    sys.exit(1 if FAILED else 0)


main()
