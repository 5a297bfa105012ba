#!/usr/bin/env python3
"""make_fuzz_seeds.py — writes the seed corpora of the libFuzzer targets (tests/fuzz/corpus/).

Every seed is a small VALID input of its target, so the fuzzer starts from files the parsers
accept and mutates its way into the corners. Rerunnable: the folders are rewritten from scratch,
and the output is deterministic (fixed numpy seed), so a rerun leaves git clean.

    python3 tools/make_fuzz_seeds.py [--andrea build/andrea]

Targets and their input format (see tests/fuzz/*.c):
  fuzz_checkpoint_bin  an ANDREA .bin (v3 fp32, v5 bf16), 1 layer, C=8
  fuzz_safetensors     "config.json\\n--\\nmodel.safetensors" (both halves mutate)
  fuzz_safetensors_sharded  "config.json\\n--\\nindex.json\\n--\\nshard 1\\n--\\nshard 2"
  fuzz_bpe_files       "vocab.json\\n--\\nmerges.txt"
  fuzz_bpe_encode      raw text for the GPT-2 tokenizer of tests/data/gpt2
  fuzz_probe_jsonl     probe JSON Lines for a byte-level (vocab 257) model
  fuzz_rules_json      a label rules file (--rules)
  fuzz_dump_reader     a tiny HDF5 dump made by `andrea dump` (only when --andrea works)
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")
SEP = b"\n--\n"

# one tiny shape for every model seed: 1 layer, 2 heads of 4, vocab 20 padded to 24, 8 positions
L, H, C, V, VP, T = 1, 2, 8, 20, 24, 8


def params(rng):
    """The 16 tensors in llm.c order and Linear layout [out, in] (docs/checkpoints.md)."""
    r = lambda *s: (rng.standard_normal(s) * 0.1).astype(np.float32)
    one = lambda *s: np.ones(s, np.float32)
    return [("wte", r(VP, C)), ("wpe", r(T, C)), ("ln1w", one(L, C)), ("ln1b", r(L, C)),
            ("qkvw", r(L, 3 * C, C)), ("qkvb", r(L, 3 * C)), ("attprojw", r(L, C, C)),
            ("attprojb", r(L, C)), ("ln2w", one(L, C)), ("ln2b", r(L, C)),
            ("fcw", r(L, 4 * C, C)), ("fcb", r(L, 4 * C)), ("fcprojw", r(L, C, 4 * C)),
            ("fcprojb", r(L, C)), ("lnfw", one(C)), ("lnfb", r(C))]


def bf16(a):
    """fp32 -> bf16 bits, round to nearest even (as llm.c writes them)."""
    u = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bin_file(ps, version, vp=VP):
    hdr = np.zeros(256, np.int32)
    hdr[:8] = [20240326, version, T, V, L, H, C, vp]
    body = b"".join((p.tobytes() if version == 3 else bf16(p).tobytes()) for _, p in ps)
    return hdr.tobytes() + body


def safetensors(tensors, metadata=None):
    """tensors: list of (name, dtype string, numpy array already in that dtype)."""
    header, blobs, off = {}, [], 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dt, a in tensors:
        b = a.tobytes()
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)  # the format pads the header with spaces to 8 bytes
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


def hf_tensors(ps, dtype, prefix=""):
    """GPT-2 names, Conv1D weights stored [in, out]; wte holds V rows (no padding)."""
    d = dict(ps)
    conv = lambda w: np.ascontiguousarray(w.T)
    out = [("wte.weight", d["wte"][:V]), ("wpe.weight", d["wpe"])]
    for l in range(L):
        out += [(f"h.{l}.ln_1.weight", d["ln1w"][l]), (f"h.{l}.ln_1.bias", d["ln1b"][l]),
                (f"h.{l}.attn.c_attn.weight", conv(d["qkvw"][l])), (f"h.{l}.attn.c_attn.bias", d["qkvb"][l]),
                (f"h.{l}.attn.c_proj.weight", conv(d["attprojw"][l])), (f"h.{l}.attn.c_proj.bias", d["attprojb"][l]),
                (f"h.{l}.ln_2.weight", d["ln2w"][l]), (f"h.{l}.ln_2.bias", d["ln2b"][l]),
                (f"h.{l}.mlp.c_fc.weight", conv(d["fcw"][l])), (f"h.{l}.mlp.c_fc.bias", d["fcb"][l]),
                (f"h.{l}.mlp.c_proj.weight", conv(d["fcprojw"][l])), (f"h.{l}.mlp.c_proj.bias", d["fcprojb"][l])]
    out += [("ln_f.weight", d["lnfw"]), ("ln_f.bias", d["lnfb"])]
    conv_dt = {"F32": lambda a: a.astype("<f4"), "F16": lambda a: a.astype("<f2"), "BF16": bf16}[dtype]
    return [(prefix + n, dtype, conv_dt(a)) for n, a in out]


def sharded(config, tensors):
    """The fuzz_safetensors_sharded input: tensors cut into two shards (file order) + their index."""
    names = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    half = len(tensors) // 2
    parts = [tensors[:half], tensors[half:]]
    index = {"metadata": {"total_size": sum(len(a.tobytes()) for _, _, a in tensors)},
             "weight_map": {n: names[k] for k in range(2) for n, _, _ in parts[k]}}
    files = [config, json.dumps(index, indent=2).encode()] + [safetensors(p) for p in parts]
    assert all(SEP not in f for f in files), "a seed part holds the separator: pick another numpy seed"
    return SEP.join(files)


def config_json(extra=None):
    c = {"model_type": "gpt2", "n_embd": C, "n_layer": L, "n_head": H, "n_positions": T,
         "vocab_size": V, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"}
    c.update(extra or {})
    return json.dumps(c, indent=1).encode()


def gpt2_byte_alphabet():
    """GPT-2's bytes_to_unicode: printable bytes map to themselves, the rest to U+0100 on."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def bpe_pair(merges_words):
    """A vocab.json with the 256 byte tokens, the merged tokens and <|endoftext|>; merges.txt."""
    alpha = gpt2_byte_alphabet()
    vocab = {alpha[b]: i for i, b in enumerate(sorted(alpha))}
    merges = []
    for a, b in merges_words:  # byte strings: halves must already be tokens
        ta = "".join(alpha[x] for x in a)
        tb = "".join(alpha[x] for x in b)
        merges.append(f"{ta} {tb}")
        vocab.setdefault(ta + tb, len(vocab))
    vocab["<|endoftext|>"] = len(vocab)
    return (json.dumps(vocab, ensure_ascii=False).encode(),
            ("#version: 0.2\n" + "".join(m + "\n" for m in merges)).encode())


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def dump_seed(andrea, rng):
    """A tiny dump through the real writer: 1-layer model, one short probe file, fp16 and fp32."""
    made = 0
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = os.path.join(tmp, "m.bin")
        # byte-level vocab so text probes tokenize without tokenizer files
        global V, VP
        saved = V, VP
        V, VP = 257, 264
        with open(ckpt, "wb") as f:
            f.write(bin_file(params(rng), 3, VP))
        V, VP = saved
        probes = os.path.join(tmp, "p.jsonl")
        with open(probes, "w") as f:
            f.write('{"suite": "prev_token", "text": "ab(c)"}\n')
            f.write('{"suite": "bracket", "tokens": [40, 91, 93, 41], "targets": [[2, [1]], [3, [0]]]}\n')
        for maps, contrib in (("fp16", "norm"), ("fp32", "full")):
            out = os.path.join(tmp, f"d_{maps}.h5")
            cmd = [andrea, "dump", ckpt, "--probes", probes, "--out", out, "--device", "cpu",
                   "--maps", maps, "--contrib", contrib, "--quiet"]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0 or not os.path.exists(out):
                print(f"make_fuzz_seeds: skipping dump seed ({' '.join(cmd)}): {p.stderr.strip()}",
                      file=sys.stderr)
                continue
            with open(out, "rb") as f:
                write("fuzz_dump_reader", f"tiny_{maps}_{contrib}.h5", f.read())
            made += 1
    return made


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--andrea", default=os.path.join(ROOT, "build", "andrea"),
                    help="andrea binary for the dump seeds (skipped when it cannot dump)")
    args = ap.parse_args()
    rng = np.random.default_rng(20240326)
    ps = params(rng)

    keep_dump = os.path.join(CORPUS, "fuzz_dump_reader")
    for t in ("fuzz_checkpoint_bin", "fuzz_safetensors", "fuzz_safetensors_sharded", "fuzz_bpe_files", "fuzz_bpe_encode",
              "fuzz_probe_jsonl", "fuzz_rules_json"):
        shutil.rmtree(os.path.join(CORPUS, t), ignore_errors=True)

    # .bin: fp32 v3, bf16 v5, and a pre-padding file (Vp slot 0 means Vp = V)
    write("fuzz_checkpoint_bin", "tiny_v3.bin", bin_file(ps, 3))
    write("fuzz_checkpoint_bin", "tiny_v5.bin", bin_file(ps, 5))
    ps_unpadded = [(n, p[:V] if n == "wte" else p) for n, p in ps]
    write("fuzz_checkpoint_bin", "tiny_v3_vp0.bin", bin_file(ps_unpadded, 3, vp=0))

    # safetensors + config.json in the target's split format
    write("fuzz_safetensors", "f32.st", config_json() + SEP + safetensors(hf_tensors(ps, "F32")))
    write("fuzz_safetensors", "f16_prefixed.st",
          config_json({"n_ctx": T}) + SEP + safetensors(hf_tensors(ps, "F16", "transformer."), {"format": "pt"}))
    mask = np.tril(np.ones((1, 1, T, T), np.float32))
    write("fuzz_safetensors", "bf16_with_buffers.st",
          config_json({"scale_attn_weights": True, "tie_word_embeddings": True}) + SEP +
          safetensors(hf_tensors(ps, "BF16") + [("h.0.attn.bias", "F32", mask)]))

    # sharded: model.safetensors.index.json + two shards, F32 and mixed F16 / BF16
    write("fuzz_safetensors_sharded", "f32.shards", sharded(config_json(), hf_tensors(ps, "F32", "transformer.")))
    f16, b16 = hf_tensors(ps, "F16"), hf_tensors(ps, "BF16")
    write("fuzz_safetensors_sharded", "f16_bf16.shards", sharded(config_json(), f16[:7] + b16[7:]))

    # BPE tokenizer files
    vocab, merges = bpe_pair([(b"h", b"e"), (b"l", b"l"), (b"he", b"ll"), (b"o", b" "), (b" ", b"w"),
                              (b"\xc3", b"\xa9"), (b"\xc3\xa9", b"t")])
    write("fuzz_bpe_files", "small.pair", vocab + SEP + merges)
    vocab, merges = bpe_pair([])
    write("fuzz_bpe_files", "bytes_only.pair", vocab + SEP + merges)

    # text for the real GPT-2 tokenizer
    texts = {
        "ascii.txt": "Hello world, it's (a) test: 12345 don't   stop\n\n",
        "unicode.txt": "caf\u00e9 na\u00efve \u65e5\u672c\u8a9e \U0001F600 \u0645\u0631\u062d\u0628\u0627 \u180e x",
        "code.txt": "int main(void) { return a[i] + f(x, {1, 2}); }\n\t\t// done\r\n",
        "spaces.txt": "   leading  and trailing   \n \n\n   ",
    }
    for name, t in texts.items():
        write("fuzz_bpe_encode", name, t.encode())
    write("fuzz_bpe_encode", "invalid_utf8.txt", b"ok \xff\xfe \xc3( \xe2\x82 end \xed\xa0\x80")

    # probe JSON Lines (byte-level model: vocab 257, BOS 256)
    lines = [
        {"suite": "prev_token", "text": "The cat sat on the mat."},
        {"suite": "bracket", "text": "f(a[b]{c})", "targets": [[3, [1]], [5, [4]], [9, [8]]]},
        {"suite": "induction", "tokens": [256, 10, 20, 30, 10, 20, 30]},
        {"suite": "duplicate", "tokens": [256, 5, 6, 5, 6]},
        {"suite": "entity", "text": "Alice met Bob in Paris. She", "entities": [[0, 5], [10, 13], [17, 22]]},
        {"suite": "bos", "text": "anything at all"},
        {"suite": "prev_token", "text": "no BOS in front", "bos": False},
        {"suite": "my_suite", "tokens": [1, 2, 3], "targets": [[2, [0, 1]]]},
    ]
    write("fuzz_probe_jsonl", "all_suites.jsonl", "".join(json.dumps(l) + "\n" for l in lines).encode())
    write("fuzz_probe_jsonl", "one_line.jsonl", b'{"suite": "prev_token", "text": "ab"}')
    write("fuzz_probe_jsonl", "crlf_blank.jsonl",
          b'{"suite":"bos","tokens":[256,1]}\r\n\r\n   \n{"suite":"bos","text":"x\\u00e9\\n"}\r\n')

    # label rules files (classify/analyze --rules)
    write("fuzz_rules_json", "classes.json", json.dumps(
        {"induction": {"min_score": 0.5}, "bos": {"min_ratio": 3, "min_margin": 0.1},
         "default": {"min_score": 0.25, "min_ratio": 2.0, "min_margin": 0.05}}, indent=1).encode())
    write("fuzz_rules_json", "user_class.json", b'{"my_suite": {"min_score": 1e-3}}\n')
    write("fuzz_rules_json", "empty.json", b"{}")

    # the dump: only through the real writer, so the seed is what andrea really produces
    if os.access(args.andrea, os.X_OK):
        if dump_seed(args.andrea, rng) == 0 and os.path.isdir(keep_dump):
            print("make_fuzz_seeds: kept the existing dump seeds", file=sys.stderr)
    else:
        print(f"make_fuzz_seeds: {args.andrea} not found; dump seeds left as they are", file=sys.stderr)

    total = 0
    for t in sorted(os.listdir(CORPUS)):
        files = os.listdir(os.path.join(CORPUS, t))
        size = sum(os.path.getsize(os.path.join(CORPUS, t, f)) for f in files)
        total += size
        print(f"{t}: {len(files)} seeds, {size} bytes")
    print(f"total {total} bytes")


if __name__ == "__main__":
    main()
