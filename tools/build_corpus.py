#!/usr/bin/env python3
"""build_corpus.py — assemble the byte-level training corpus of the fixture models (no downloads).

Job: write a few raw byte streams ("sections") from which tools/train_fixtures.py samples its
training windows, plus recipe.json (sources, sizes, seeds, sha256 of every section):
  prose.bin          King James Bible (package bible-kjv, read with its `bible` program) and the
                     fortune files of package fortunes (/usr/share/games/fortunes)
  prose_heldout.bin  the last verses/fortunes, never trained on: source of prev_token/bos probes
  code.bin           C headers under /usr/include and the Python standard library
                     (/usr/lib/python3.N), files in sorted order up to a size cap
  bracket.bin        synthetic balanced (), [], {} sequences with code-like filler; half of the
                     lines carry a tag letter before each opener that is repeated after its
                     closer ("k( ... )k"), so predicting the byte after a closer needs its opener
  entity.bin         templated stories over probes/data/people.txt and places.txt whose every
                     sentence starts by re-mentioning the most recent entity mention
The synthetic generators are also imported by train_fixtures.py to make held-out probe items
(with a different seed), so they return the annotations (bracket pairs, entity spans) too.

Invariants: everything is ASCII; the output depends only on the installed packages and the seed.
Failure contract: a missing package source is a one-line error and exit status 1.

Debian packages needed: bible-kjv, fortunes (fortunes-min is not enough), libc6-dev (headers),
python3.N (stdlib sources).
"""
import argparse
import glob
import hashlib
import json
import os
import random
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def read_names(name):
    path = os.path.join(ROOT, "probes", "data", name)
    with open(path, encoding="ascii") as f:
        return [line.strip() for line in f if line.strip()]


# ---------------------------------------------------------------- synthetic: entity stories

PERSON_VERBS = ["met", "saw", "called", "visited", "thanked", "helped", "followed", "greeted",
                "warned", "trusted", "phoned", "found", "hugged", "paid", "asked"]
PLACE_VERBS = ["went to", "moved to", "drove to", "flew to", "returned to", "stayed in",
               "lived in", "worked in", "walked to", "wrote from", "arrived in", "left for"]
OBJ_PHRASES = ["took the bus", "read a book", "made some tea", "lost the key", "sold the car",
               "fixed the door", "painted the wall", "cooked dinner", "slept late", "sang a song",
               "bought bread", "kept quiet", "wrote a letter", "fed the cat"]
PLACE_PREDS = ["was cold", "was quiet", "was far away", "looked busy", "felt like home",
               "had a small market", "was full of people", "had long winters", "was very old"]
FILLERS = ["", "", "", " at noon", " with a friend", " after the rain", " for a long time",
           " in the morning", " without a word", " again", " quietly", " on a sunday",
           " by train", " last year", " in the evening", " before the storm", " twice",
           " with great care", " for the first time", " at dawn"]
CONNECTORS = [". ", ". ", ", and then ", "; later ", ", so ", " and ", ". after that ",
              ", because ", ". then ", ", while "]


def entity_story(rng, people, places, max_len):
    """One story of at most max_len bytes. Returns (text, spans): spans are [start, end) byte
    offsets of every entity mention in order. Each sentence's subject re-mentions the most recent
    entity mention, so predicting it needs attention to that mention."""
    text = ""
    spans = []

    def add_entity(name):
        nonlocal text
        spans.append((len(text), len(text) + len(name)))
        text += name

    subject = rng.choice(people)
    subject_is_person = True
    add_entity(subject)
    while True:
        saved_text, saved_spans = text, list(spans)
        recent = subject
        r = rng.random()
        if subject_is_person:
            if r < 0.4:
                text += " " + rng.choice(PERSON_VERBS) + " "
                recent = rng.choice(people)
                add_entity(recent)
                recent_is_person = True
            elif r < 0.8:
                text += " " + rng.choice(PLACE_VERBS) + " "
                recent = rng.choice(places)
                add_entity(recent)
                recent_is_person = False
            else:
                text += " " + rng.choice(OBJ_PHRASES)
                recent_is_person = True
        else:
            if r < 0.3:
                text += " welcomed "
                recent = rng.choice(people)
                add_entity(recent)
                recent_is_person = True
            elif r < 0.55:
                text += " is near "
                recent = rng.choice(places)
                add_entity(recent)
                recent_is_person = False
            else:
                text += " " + rng.choice(PLACE_PREDS)
                recent_is_person = False
        text += rng.choice(FILLERS)
        text += rng.choice(CONNECTORS)
        # the next subject is the most recent entity mention, whatever its kind
        subject, subject_is_person = recent, recent_is_person
        add_entity(subject)
        if len(text) + 1 > max_len:
            # undo the unfinished sentence and close the story
            text, spans = saved_text, saved_spans
            if len(text) + 2 > max_len:
                # cannot even end it cleanly: drop the trailing chars after the last entity
                text = text[:max_len - 1]
            text += "."
            return text, [s for s in spans if s[1] <= len(text)]


def entity_section(rng, people, places, size):
    out = []
    total = 0
    while total < size:
        t, _ = entity_story(rng, people, places, rng.randint(120, 600))
        t += "\n"
        out.append(t)
        total += len(t)
    return "".join(out)


# ---------------------------------------------------------------- synthetic: brackets

BRACKETS = [("(", ")"), ("[", "]"), ("{", "}")]
FILL_TOKENS = ["x", "y", "i", "n", "a1", "foo", "bar", "len", "0", "1", "42", "+", " + ", ", ",
               " * ", "-", " == ", ": ", ";", " ", "k", "buf", "ptr", "->", "."]


def bracket_seq(rng, max_len, tagged, max_depth=6):
    """A line of nested brackets with code-like filler, at most max_len bytes.
    Returns (text, pairs) with pairs = [(open_index, close_index)] byte offsets.
    tagged: each opener is preceded by a random lowercase tag letter repeated after its closer."""
    text = []
    pairs = []
    length = [0]

    def emit(s):
        text.append(s)
        length[0] += len(s)

    def group(depth, budget_end):
        # needs room for tag+open+close+tag
        o, c = rng.choice(BRACKETS)
        tag = chr(ord("a") + rng.randrange(26)) if tagged else ""
        if not tagged and rng.random() < 0.5:
            emit(rng.choice(["f", "g", "foo", "call", "x", "if ", "for "]))
        emit(tag)
        open_at = length[0]
        emit(o)
        n_items = rng.randint(0, 3)
        for _ in range(n_items):
            if length[0] + 8 >= budget_end:
                break
            if depth + 1 < max_depth and rng.random() < 0.55:
                group(depth + 1, budget_end - 2)
            else:
                emit(rng.choice(FILL_TOKENS))
        close_at = length[0]
        emit(c)
        emit(tag)
        pairs.append((open_at, close_at))

    while length[0] + 12 < max_len:
        group(0, max_len - 2)
        if length[0] + 2 < max_len:
            emit(rng.choice([" ", "; ", ", ", " + ", " "]))
    s = "".join(text)[:max_len]
    pairs = [p for p in pairs if p[1] < len(s)]
    pairs.sort()
    return s, pairs


def bracket_section(rng, size):
    out = []
    total = 0
    while total < size:
        t, _ = bracket_seq(rng, rng.randint(40, 300), tagged=rng.random() < 0.5)
        t += "\n"
        out.append(t)
        total += len(t)
    return "".join(out)


# ---------------------------------------------------------------- synthetic: brackets in code lines

CODE_NAMES = ["x", "y", "n", "i", "j", "k", "buf", "len", "count", "total", "item", "node", "key", "val", "data",
              "result", "size", "idx", "arr", "cfg", "opts", "row", "col", "left", "right", "msg", "obj"]
CODE_FUNCS = ["f", "g", "get", "put", "min", "max", "len", "sum", "parse", "load", "check", "update", "make",
              "read", "write", "find", "apply", "hash", "print", "push", "pop", "abs", "clamp"]
CODE_OPS = [" + ", " - ", " * ", " / ", " % ", " == ", " != ", " < ", " > ", " <= ", " && ", " || "]


def code_bracket_seq(rng, max_len, max_depth=5):
    """Code-like lines with nested brackets, at most max_len bytes: statements (assignments, calls,
    return, if/for/while blocks over several indented lines) whose expressions nest calls f(..),
    indexing a[..], parentheses and array/object literals [..] {..}. The sparser, line-broken
    counterpart of bracket_seq(): the same matching task in text that looks like programs.
    Returns (text, pairs) as bracket_seq() does."""
    text, pairs, length = [], [], [0]

    def emit(s):
        text.append(s)
        length[0] += len(s)

    def group(o, c, body):
        open_at = length[0]
        emit(o)
        body()
        pairs.append((open_at, length[0]))
        emit(c)

    def expr(depth):
        r = rng.random()
        if depth >= max_depth or r < 0.3:
            emit(rng.choice(CODE_NAMES) if rng.random() < 0.7 else str(rng.randint(0, 99)))
        elif r < 0.5:
            emit(rng.choice(CODE_FUNCS))
            group("(", ")", lambda: args(depth + 1, rng.randint(0, 3)))
        elif r < 0.65:
            emit(rng.choice(CODE_NAMES))
            group("[", "]", lambda: expr(depth + 1))
        elif r < 0.8:
            group("(", ")", lambda: (expr(depth + 1), emit(rng.choice(CODE_OPS)), expr(depth + 1)))
        elif r < 0.9:
            group("[", "]", lambda: args(depth + 1, rng.randint(0, 3)))
        else:
            def pairs_body():
                for i in range(rng.randint(1, 2)):
                    emit(", " if i else "")
                    emit(rng.choice(CODE_NAMES) + ": ")
                    expr(depth + 1)
            group("{", "}", pairs_body)

    def args(depth, n):
        for i in range(n):
            if i:
                emit(", ")
            expr(depth)

    def statement(depth, indent):
        emit(" " * indent)
        r = rng.random()
        if r < 0.3:
            emit(rng.choice(CODE_NAMES) + " = ")
            expr(depth)
            emit(";\n")
        elif r < 0.45:
            emit(rng.choice(CODE_FUNCS))
            group("(", ")", lambda: args(depth + 1, rng.randint(0, 3)))
            emit(";\n")
        elif r < 0.55:
            emit("return ")
            expr(depth)
            emit(";\n")
        else:
            kw = rng.choice(["if ", "while ", "for "])
            emit(kw)
            if kw == "for ":
                v = rng.choice(["i", "j", "k"])
                group("(", ")", lambda: (emit("%s = 0; %s < " % (v, v)), expr(depth + 1), emit("; %s++" % v)))
            else:
                group("(", ")", lambda: expr(depth + 1))
            emit(" ")

            def block():
                emit("\n")
                for _ in range(rng.randint(1, 3)):
                    if length[0] < max_len:
                        statement(depth + 1, indent + 2) if depth + 1 < max_depth else (emit(" " * (indent + 2) + "x;\n"))
                emit(" " * indent)
            group("{", "}", block)
            emit("\n")

    while length[0] < max_len:
        statement(0, 0)
    s = "".join(text)[:max_len]
    pairs = sorted(p for p in pairs if p[1] < len(s))
    return s, pairs


def code_bracket_section(rng, size):
    out, total = [], 0
    while total < size:
        t, _ = code_bracket_seq(rng, rng.randint(80, 400))
        out.append(t + "\n")
        total += len(t) + 1
    return "".join(out)


# ---------------------------------------------------------------- natural text

def bible_text():
    try:
        res = subprocess.run(["bible", "-l0", "Genesis1:1-Revelation22:21"], check=True,
                             capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit("build_corpus.py: bible: cannot run (install bible-kjv): %s" % e)
    lines = []
    for line in res.stdout.decode("ascii", "replace").splitlines():
        m = re.match(r"^\s*\d+\s+(.*)$", line)
        if m:
            lines.append(m.group(1).strip())
        elif line.strip():
            lines.append("\n" + line.strip() + "\n")
    return "\n".join(lines) + "\n"


def fortune_texts():
    d = "/usr/share/games/fortunes"
    files = sorted(f for f in glob.glob(d + "/*") if os.path.isfile(f) and not f.endswith((".dat", ".u8")))
    if not files:
        raise SystemExit("build_corpus.py: %s: no fortune files (install fortunes)" % d)
    out = []
    for f in files:
        with open(f, "rb") as fh:
            data = fh.read().decode("ascii", "ignore")
        out.extend(e.strip("\n") + "\n" for e in data.split("\n%\n") if e.strip())
    return out


def files_text(paths, cap):
    out = []
    total = 0
    for p in paths:
        try:
            with open(p, "rb") as fh:
                t = fh.read().decode("ascii", "ignore")
        except OSError:
            continue
        if len(t) > 200000:
            continue
        out.append(t + "\n")
        total += len(t) + 1
        if total >= cap:
            break
    return "".join(out)[:cap]


def code_text(cap):
    headers = sorted(glob.glob("/usr/include/*.h") + glob.glob("/usr/include/*/*.h")
                     + glob.glob("/usr/include/*/*/*.h"))
    pydirs = sorted(glob.glob("/usr/lib/python3.[0-9]*/"))
    if not headers:
        raise SystemExit("build_corpus.py: /usr/include: no C headers (install libc6-dev)")
    if not pydirs:
        raise SystemExit("build_corpus.py: /usr/lib/python3.N: no Python sources")
    pysrc = sorted(p for p in glob.glob(pydirs[0] + "**/*.py", recursive=True)
                   if "/test" not in p and "site-packages" not in p and "dist-packages" not in p)
    # interleave C and Python files so both survive the cap
    return files_text(headers, cap // 2) + files_text(pysrc, cap // 2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, ".carry", "corpus"))
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--code-mb", type=float, default=8.0)
    ap.add_argument("--synth-mb", type=float, default=5.0)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(args.seed)
    people, places = read_names("people.txt"), read_names("places.txt")

    bible = bible_text()
    fortunes = fortune_texts()
    random.Random(args.seed + 1).shuffle(fortunes)
    n_hold_f = len(fortunes) // 20
    cut = int(len(bible) * 0.97)
    cut = bible.index("\n", cut) + 1
    prose = bible[:cut] + "".join(fortunes[n_hold_f:])
    heldout = bible[cut:] + "".join(fortunes[:n_hold_f])
    sections = {
        "prose": prose,
        "prose_heldout": heldout,
        "code": code_text(int(args.code_mb * 1e6)),
        "bracket": bracket_section(rng, int(args.synth_mb * 1e6)),
        "entity": entity_section(rng, people, places, int(args.synth_mb * 1e6)),
        # after the others, from the same generator state: the earlier sections stay byte-identical
        "bracket_code": code_bracket_section(rng, int(args.synth_mb * 1e6)),
    }
    recipe = {"seed": args.seed, "sections": {}}
    for name, text in sections.items():
        data = text.encode("ascii", "replace")
        with open(os.path.join(args.out, name + ".bin"), "wb") as f:
            f.write(data)
        recipe["sections"][name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        print("build_corpus: %-14s %9d bytes" % (name, len(data)), file=sys.stderr)
    recipe["sources"] = {
        "prose": "bible-kjv (`bible -l0 Genesis1:1-Revelation22:21`, verse numbers stripped, first 97%)"
                 " + fortunes (/usr/share/games/fortunes/*, shuffled with seed+1, all but 1/20)",
        "prose_heldout": "last 3% of the Bible text + 1/20 of the fortunes",
        "code": "/usr/include/{*,*/*,*/*/*}.h sorted, then the Python stdlib (no tests) sorted, %.1f MB cap" % args.code_mb,
        "bracket": "bracket_seq() lines, 50%% tagged, seed %d" % args.seed,
        "entity": "entity_story() stories over probes/data/{people,places}.txt, seed %d" % args.seed,
        "bracket_code": "code_bracket_seq() blocks of code-like lines, seed %d (drawn after entity)" % args.seed,
    }
    with open(os.path.join(args.out, "recipe.json"), "w") as f:
        json.dump(recipe, f, indent=1)


if __name__ == "__main__":
    main()
