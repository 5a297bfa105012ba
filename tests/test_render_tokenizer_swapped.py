#!/usr/bin/python3
"""test_render_tokenizer_swapped — `andrea render` labels a dump's tokens with the tokenizer the
dump was made with: when the vocab.json / merges.txt beside the checkpoint were replaced since
(another valid tokenizer of the same size: id 256 "QQ" became "ZZ"), the dump's
tokenizer_vocab_sha256 no longer matches, and the report takes the token text the dump stores
(token_text), saying so in its note, instead of showing the other tokenizer's text. With the
dump's own tokenizer in place the report reads it as before.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import BIN, FAILED, check  # noqa: E402

try:
    import numpy  # noqa: F401  (tiny_ckpt writes the checkpoint with numpy)
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)
import tiny_ckpt  # noqa: E402


def byte_symbols():
    """GPT-2's byte-to-unicode map: the vocabulary's spelling of each byte."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def write_tokenizer(folder, pair):
    """256 byte tokens, the merge of `pair` (two equal letters) as id 256, <|endoftext|> as 257."""
    sym = byte_symbols()
    vocab = {sym[i]: i for i in range(256)}
    vocab[pair] = 256
    vocab["<|endoftext|>"] = 257
    with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(folder, "merges.txt"), "w", encoding="utf-8") as f:
        f.write(f"#version: 0.2\n{pair[0]} {pair[1]}\n")


def run(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120)


def main():
    tmp = tempfile.mkdtemp(prefix="andrea-toks-")
    try:
        model = os.path.join(tmp, "m.bin")
        tiny_ckpt.write_bin(model, maxT=64, V=300, L=1, H=1, C=8)
        write_tokenizer(tmp, "QQ")
        probes = os.path.join(tmp, "p.jsonl")
        with open(probes, "w") as f:
            f.write(json.dumps({"suite": "prev_token", "text": "QQQQ hello QQ"}) + "\n")
        dump, db = os.path.join(tmp, "d.h5"), os.path.join(tmp, "c.db")
        r = run("dump", model, "--probes", probes, "--out", dump, "--device", "cpu", "--quiet")
        check(r.returncode == 0, f"dump: {r.stderr}")
        r = run("classify", dump, "--db", db, "--no-causal", "--quiet")
        check(r.returncode == 0, f"classify: {r.stderr}")

        r = run("render", dump, "--db", db, "--out", os.path.join(tmp, "same"), "--quiet")
        # the token lists the pages show are in data/meta.js (andrea.js draws them)
        meta = open(os.path.join(tmp, "same", "data", "meta.js"), encoding="utf-8").read() if r.returncode == 0 else ""
        index = open(os.path.join(tmp, "same", "index.html"), encoding="utf-8").read() if r.returncode == 0 else ""
        check(r.returncode == 0 and '"QQ"' in meta and "not the one the dump was made with" not in index,
              f"the dump's own tokenizer labels the tokens: exit {r.returncode}: {r.stderr}")

        write_tokenizer(tmp, "ZZ")  # same size, another text for id 256
        r = run("render", dump, "--db", db, "--out", os.path.join(tmp, "swapped"), "--quiet")
        check(r.returncode == 0, f"render with a swapped tokenizer: exit {r.returncode}: {r.stderr}")
        meta = open(os.path.join(tmp, "swapped", "data", "meta.js"), encoding="utf-8").read() if r.returncode == 0 else ""
        index = open(os.path.join(tmp, "swapped", "index.html"), encoding="utf-8").read() if r.returncode == 0 else ""
        check('"QQ"' in meta and "ZZ" not in meta, "the report shows the dump's token text, not the swapped tokenizer's")
        check("is not the one the dump was made with" in index, "the report's note says the tokenizer beside it was replaced")
    finally:
        shutil.rmtree(tmp)
    print(f"{len(FAILED)} failed")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
