#!/usr/bin/python3
"""test_dump_is_self_describing — a dump reads without andrea and without its tokenizer
(docs/dump-format.md): h5py sees HDF5 dimension scales with labels on every dataset's axes
(seq, layer, head, query, key, position; d_model on head_out; target/entity + field on the
tables), a token_text dataset holding each token's text (UTF-8, "" past the length), and the
tokenizer's identity (tokenizer_vocab_sha256, the same for the same tokenizer, different for
another). Then `andrea render` of a GPT-2 BPE model whose checkpoint folder has no vocab.json
shows the stored token text instead of #id."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import BIN, FAILED, check  # noqa: E402

try:
    import h5py
    import numpy  # noqa: F401
except ImportError as e:
    print(f"SKIP: /usr/bin/python3 lacks {e.name} (Debian: python3-h5py, python3-numpy)")
    sys.exit(77)
from tiny_ckpt import write_bin  # noqa: E402

SRC = os.environ["ANDREA_SRC"]
DIMS = {
    "tokens": ["seq", "position"],
    "token_text": ["seq", "position"],
    "lengths": ["seq"],
    "targets": ["target", "field"],
    "entities": ["entity", "field"],
    "attention": ["seq", "layer", "head", "query", "key"],
    "head_out_norm": ["seq", "layer", "head", "position"],
    "head_dla": ["seq", "layer", "head", "position"],
    "head_out": ["seq", "layer", "head", "position", "d_model"],
}


def run(*args):
    r = subprocess.run([BIN, *args], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
    return r


def check_dump(path, want_text):
    with h5py.File(path, "r") as f:
        vsha = f.attrs["tokenizer_vocab_sha256"].decode()
        check(len(vsha) == 64 and all(c in "0123456789abcdef" for c in vsha), f"tokenizer_vocab_sha256 {vsha!r}")
        for suite in f.attrs["suites"].decode().split(","):
            g = f[suite]
            for name, want in DIMS.items():
                if name not in g:
                    check(name == "head_out", f"/{suite}/{name} missing")
                    continue
                d = g[name]
                labels = [dim.label for dim in d.dims]
                check(labels == want, f"/{suite}/{name} dimension labels {labels}, want {want}")
                scales = [list(dim.keys()) for dim in d.dims]
                check(scales == [[w] for w in want], f"/{suite}/{name} dimension scales {scales}")
                for i, w in enumerate(want):
                    sc = d.dims[i][0]
                    check(sc.shape == (d.shape[i],) and (sc[()] == range(d.shape[i])).all(),
                          f"/{suite}/{w} scale is 0..{d.shape[i] - 1}")
            text = g["token_text"].asstr()[()]
            tokens, lengths = g["tokens"][()], g["lengths"][()]
            check(text.shape == tokens.shape, f"/{suite}/token_text shape {text.shape}")
            for i, n in enumerate(lengths):
                check(all(t == "" for t in text[i, n:]), f"/{suite}/token_text row {i} empty past length {n}")
            for (i, p), want in want_text.get(suite, {}).items():
                check(text[i, p] == want, f"/{suite}/token_text[{i}, {p}] = {text[i, p]!r}, want {want!r}")
        return vsha


with tempfile.TemporaryDirectory() as tmp:
    os.chdir(tmp)
    # byte-level: the bundled-style tiny model, built-in suites, --heads for head_out
    write_bin("tiny.bin", maxT=48, V=257, L=2, H=4, C=32, seed=3, scale=0.3, ln_ones=True)
    r = run("dump", "tiny.bin", "--probes", "bracket,entity,bos", "--n", "3", "--len", "24", "--heads", "1.2",
            "--out", "byte.h5", "--quiet", "--device", "cpu")
    check(r.returncode == 0, "dump of the byte-level model")
    with h5py.File("byte.h5", "r") as f:
        toks = f["bracket/tokens"][0]
        n = int(f["bracket/lengths"][0])
    # byte-level text: the byte itself; BOS (256) has no text
    want = {(0, p): (chr(t) if t < 128 and t != 0 else "" if t == 256 else "\ufffd") for p, t in enumerate(toks[:n])}
    sha_byte = check_dump("byte.h5", {"bracket": want})

    # GPT-2 BPE: the tokenizer folder given with --tokenizer, absent beside the checkpoint
    os.mkdir("bpe")
    write_bin("bpe/m.bin", maxT=32, V=50257, L=1, H=2, C=16, seed=5, scale=0.3, ln_ones=True)
    with open("p.jsonl", "w") as fp:
        fp.write('{"suite": "prev_token", "text": "The quick brown fox jumps over the lazy dog, naïvely."}\n')
        fp.write('{"suite": "prev_token", "text": "Héllo wörld: attention heads!"}\n')
    r = run("dump", "bpe/m.bin", "--probes", "p.jsonl", "--tokenizer", os.path.join(SRC, "tests/data/gpt2"),
            "--out", "bpe.h5", "--quiet", "--device", "cpu")
    check(r.returncode == 0, "dump of the BPE model")
    # text items start with BOS (<|endoftext|>) when the vocabulary has one (docs/probes.md)
    sha_bpe = check_dump("bpe.h5", {"prev_token": {(0, 0): "<|endoftext|>", (0, 1): "The", (0, 2): " quick",
                                                   (0, 3): " brown"}})
    check(sha_bpe != sha_byte, "two tokenizers have two identities")
    with h5py.File("bpe.h5", "r") as f:
        row = "".join(f["prev_token/token_text"].asstr()[0])
        check(row == "<|endoftext|>The quick brown fox jumps over the lazy dog, naïvely.",
              f"BPE texts join to BOS + the text: {row!r}")

    # render without the tokenizer: the stored text, not #id
    r = run("classify", "bpe.h5", "--db", "c.db", "--quiet", "--device", "cpu")
    check(r.returncode == 0, "classify of the BPE dump")
    r = run("render", "bpe.h5", "--db", "c.db", "--out", "rep", "--quiet")
    check(r.returncode == 0, "render of the BPE dump without its tokenizer")
    blob = ""
    for root, _, files in os.walk("rep"):
        for name in files:
            if name.endswith((".html", ".js", ".json")):
                with open(os.path.join(root, name), encoding="utf-8", errors="replace") as fp:
                    blob += fp.read()
    check("Token text from the dump" in blob, "the report says its token text came from the dump")
    check("quick" in blob and "brown" in blob, "the report shows the stored token text")
    check("Token text unavailable" not in blob, "no 'token text unavailable' note")

print(f"{len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
