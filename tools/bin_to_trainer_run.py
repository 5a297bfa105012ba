#!/usr/bin/env python3
"""bin_to_trainer_run.py — ANDREA .bin checkpoints of one run saved as a Hugging Face Trainer saves
a run: RUN/checkpoint-STEP/ with config.json, model.safetensors and trainer_state.json
(global_step STEP), STEP read from each file's name (dyck-step00300.bin -> 300).

Why: the README's tour and docs/checkpoints.md show a Trainer series on real weights; the series of
tests/data/series/ is the one training run at hand, in llm.c's .bin layout. Python's standard
library only (no numpy or torch), so the README's command runs on any machine with python3.

Layout written (what transformers' GPT2LMHeadModel.save_pretrained writes for these weights):
tensors `transformer.*` in F32 (a bf16 .bin: BF16), Conv1D weights transposed to [in, out], the
vocabulary rows without llm.c's padding, no lm_head (tied to wte). Usage:
  python3 tools/bin_to_trainer_run.py A.bin [B.bin ..] --out RUN
Bad input (not an ANDREA .bin, a size that disagrees with its header, no step in a name, two files
of one step, a folder already there) is one line `bin_to_trainer_run.py: FILE: problem`, exit 1,
before anything is written.
"""
import argparse
import array
import json
import math
import os
import re
import struct
import sys

MAGIC = 20240326


def die(msg):
    print("bin_to_trainer_run.py: " + msg, file=sys.stderr)
    sys.exit(1)


def read_bin(path):
    """(shape dict, {name: (flat array, shape)}, dtype) of an ANDREA .bin (version 3 fp32, 5 bf16)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 1024:
        die("%s: shorter than the 1024-byte header" % path)
    magic, version, T, V, L, H, C, Vp = struct.unpack("<8i", data[:32])
    if magic != MAGIC or version not in (3, 5):
        die("%s: not an ANDREA .bin checkpoint (magic %d, version %d)" % (path, magic, version))
    shapes = [("wte", (Vp, C)), ("wpe", (T, C)), ("ln1w", (L, C)), ("ln1b", (L, C)),
              ("qkvw", (L, 3 * C, C)), ("qkvb", (L, 3 * C)), ("attprojw", (L, C, C)), ("attprojb", (L, C)),
              ("ln2w", (L, C)), ("ln2b", (L, C)), ("fcw", (L, 4 * C, C)), ("fcb", (L, 4 * C)),
              ("fcprojw", (L, C, 4 * C)), ("fcprojb", (L, C)), ("lnfw", (C,)), ("lnfb", (C,))]
    n = sum(math.prod(s) for _, s in shapes)
    esz = 4 if version == 3 else 2
    if len(data) != 1024 + n * esz:
        die("%s: %d bytes, its header (L=%d H=%d C=%d Vp=%d T=%d) needs %d" % (path, len(data), L, H, C, Vp, T,
                                                                              1024 + n * esz))
    flat = array.array("f" if esz == 4 else "H")
    flat.frombytes(data[1024:])
    if sys.byteorder != "little":
        flat.byteswap()
    out, off = {}, 0
    for name, s in shapes:
        out[name] = (flat[off:off + math.prod(s)], s)
        off += math.prod(s)
    return dict(n_layer=L, n_head=H, n_embd=C, n_positions=T, vocab_size=V), out, ("F32" if esz == 4 else "BF16")


def transposed(a, rows, cols):
    """[rows, cols] row-major -> [cols, rows] row-major."""
    out = array.array(a.typecode)
    for c in range(cols):
        out.extend(a[c::cols])
    return out


def hf_tensors(shape, p):
    """The .bin's tensors under transformers' GPT-2 names: {name: (flat array, shape)}."""
    L, C, V = shape["n_layer"], shape["n_embd"], shape["vocab_size"]
    t = {"transformer.wte.weight": (p["wte"][0][:V * C], [V, C]),  # the vocabulary's rows, not the padding
         "transformer.wpe.weight": (p["wpe"][0], list(p["wpe"][1])),
         "transformer.ln_f.weight": (p["lnfw"][0], [C]), "transformer.ln_f.bias": (p["lnfb"][0], [C])}
    # (bin name, hf name, per-layer shape of the .bin; a 2-D weight is Conv1D: stored [in, out])
    per_layer = [("ln1w", "ln_1.weight", (C,)), ("ln1b", "ln_1.bias", (C,)),
                 ("qkvw", "attn.c_attn.weight", (3 * C, C)), ("qkvb", "attn.c_attn.bias", (3 * C,)),
                 ("attprojw", "attn.c_proj.weight", (C, C)), ("attprojb", "attn.c_proj.bias", (C,)),
                 ("ln2w", "ln_2.weight", (C,)), ("ln2b", "ln_2.bias", (C,)),
                 ("fcw", "mlp.c_fc.weight", (4 * C, C)), ("fcb", "mlp.c_fc.bias", (4 * C,)),
                 ("fcprojw", "mlp.c_proj.weight", (C, 4 * C)), ("fcprojb", "mlp.c_proj.bias", (C,))]
    for b, h, s in per_layer:
        k = math.prod(s)
        for layer in range(L):
            a = p[b][0][layer * k:(layer + 1) * k]
            if len(s) == 2:
                t["transformer.h.%d.%s" % (layer, h)] = (transposed(a, s[0], s[1]), [s[1], s[0]])
            else:
                t["transformer.h.%d.%s" % (layer, h)] = (a, [s[0]])
    return t


def write_safetensors(path, tensors, dtype):
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(tensors):
        a, s = tensors[name]
        if sys.byteorder != "little":
            a = array.array(a.typecode, a)
            a.byteswap()
        b = a.tobytes()
        header[name] = {"dtype": dtype, "shape": s, "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)  # the data starts 8-byte aligned, as the safetensors library writes it
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for b in blobs:
            f.write(b)


def config(shape):
    bos = 256 if shape["vocab_size"] == 257 else 50256 if shape["vocab_size"] == 50257 else None
    return {"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.0,
            "bos_token_id": bos, "embd_pdrop": 0.0, "eos_token_id": bos, "layer_norm_epsilon": 1e-05,
            "model_type": "gpt2", "n_embd": shape["n_embd"], "n_head": shape["n_head"], "n_inner": None,
            "n_layer": shape["n_layer"], "n_positions": shape["n_positions"], "resid_pdrop": 0.0,
            "scale_attn_by_inverse_layer_idx": False, "scale_attn_weights": True, "tie_word_embeddings": True,
            "vocab_size": shape["vocab_size"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bins", nargs="+", metavar="CKPT.bin")
    ap.add_argument("--out", required=True, metavar="RUN")
    args = ap.parse_args()
    steps = {}
    for b in args.bins:
        m = re.search(r"step[-_]?0*(\d+)\.bin$", os.path.basename(b))
        if not m:
            die("%s: no step in its name (NAME-stepN.bin)" % b)
        step = int(m.group(1))
        if step in steps:
            die("%s: step %d again (%s has it)" % (b, step, steps[step]))
        steps[step] = b
        if os.path.lexists(os.path.join(args.out, "checkpoint-%d" % step)):
            die("%s: already there" % os.path.join(args.out, "checkpoint-%d" % step))
    read = {step: read_bin(b) for step, b in steps.items()}  # every file checked before any write
    for step in sorted(read):
        shape, params, dtype = read[step]
        d = os.path.join(args.out, "checkpoint-%d" % step)
        os.makedirs(d)
        write_safetensors(os.path.join(d, "model.safetensors"), hf_tensors(shape, params), dtype)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(config(shape), f, indent=2)
            f.write("\n")
        with open(os.path.join(d, "trainer_state.json"), "w") as f:
            json.dump({"global_step": step}, f)
            f.write("\n")


main()
