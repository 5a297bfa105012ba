#!/usr/bin/env python3
"""make_golden.py — the Hugging Face golden fixture for the C engine's tests.

Job: load an ANDREA .bin (models/andrea-tiny.bin) into Hugging Face transformers' GPT2LMHeadModel
(fp32, eager attention, on the CPU so no TF32 or fused kernel changes the numbers), run it on N = 4
fixed inputs of T = 64 byte tokens (BOS + 63 bytes of text), and write
  OUT.h5:   tokens int32 [N, T], attn float32 [N, L, H, T, T] (softmax probabilities, query x key),
            logits float32 [N, T, 257]; root attributes checkpoint, checkpoint_sha256, versions
  HF_DIR/:  config.json + model.safetensors saved by save_pretrained (fp32; the C loader's
            Hugging Face path can be tested on the very same weights)
Checks before writing (any failure: message and exit 1, nothing written):
  - this repository's own PyTorch forward (tools/train_fixtures.py) gives the same logits and
    attention as transformers (max abs difference <= 1e-4);
  - the saved folder reloads with from_pretrained to the same logits;
  - every tensor in model.safetensors is float32, and the names carry the `transformer.` prefix.
Needs: torch, transformers, safetensors, h5py, numpy (the GPU machine has them; no network).
"""
import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import train_fixtures as tf  # noqa: E402

TEXTS = [
    "In the beginning God created the heaven and the earth. And the earth was without form",
    "int main(void) { if (a[i] > (b + c)) { return f(x[0], {1, 2}); } return 0; }",
    "q7#Lw-Zk2!pX9&mR4(tB ~ q7#Lw-Zk2!pX9&mR4(tB ~ q7#Lw-Zk2!pX9&mR4(tB ~ q7#Lw",
    "Mary met John in Paris, and then John went to Rome. Rome was cold, so Rome welcomed Ada.",
]
T = 64


def die(msg):
    print("make_golden.py: " + msg, file=sys.stderr)
    sys.exit(1)


def tokens():
    out = []
    for t in TEXTS:
        b = list(t.encode("ascii"))[:T - 1]
        if len(b) != T - 1:
            die("fixed text shorter than %d bytes: %r" % (T - 1, t))
        out.append([tf.BOS] + b)
    return np.array(out, dtype=np.int32)


def build_hf(shape, params):
    from transformers import GPT2Config, GPT2LMHeadModel
    C, L, H = shape["n_embd"], shape["n_layer"], shape["n_head"]
    V = shape["vocab"]
    cfg = GPT2Config(vocab_size=V, n_positions=shape["max_t"], n_embd=C, n_layer=L, n_head=H,
                     activation_function="gelu_new", layer_norm_epsilon=1e-5, resid_pdrop=0.0,
                     embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=tf.BOS, eos_token_id=tf.BOS,
                     tie_word_embeddings=True)
    cfg._attn_implementation = "eager"  # explicit softmax probabilities, returned with output_attentions
    model = GPT2LMHeadModel(cfg)
    if getattr(model.config, "_attn_implementation", "eager") != "eager" and hasattr(model, "set_attn_implementation"):
        model.set_attn_implementation("eager")
    sd = model.state_dict()
    # Conv1D keeps [in, out]; a Linear would keep [out, in] like the .bin. Decide from c_attn's shape.
    cattn = [k for k in sd if k.endswith("h.0.attn.c_attn.weight")][0]
    conv1d = tuple(sd[cattn].shape) == (C, 3 * C)
    print("make_golden: c_attn weight %s -> %s layout" % (tuple(sd[cattn].shape), "Conv1D [in,out]" if conv1d else "Linear [out,in]"))
    names = {"ln_1.weight": "ln1w", "ln_1.bias": "ln1b", "attn.c_attn.weight": "qkvw", "attn.c_attn.bias": "qkvb",
             "attn.c_proj.weight": "attprojw", "attn.c_proj.bias": "attprojb", "ln_2.weight": "ln2w",
             "ln_2.bias": "ln2b", "mlp.c_fc.weight": "fcw", "mlp.c_fc.bias": "fcb", "mlp.c_proj.weight": "fcprojw",
             "mlp.c_proj.bias": "fcprojb"}
    new = {}
    for k, v in sd.items():
        base = k[len("transformer."):] if k.startswith("transformer.") else k
        if base in ("wte.weight", "lm_head.weight"):
            src = params["wte"][:V]
        elif base == "wpe.weight":
            src = params["wpe"]
        elif base == "ln_f.weight":
            src = params["lnfw"]
        elif base == "ln_f.bias":
            src = params["lnfb"]
        elif base.startswith("h."):
            _, i, rest = base.split(".", 2)
            if rest in ("attn.bias", "attn.masked_bias"):
                continue  # causal-mask buffers
            if rest not in names:
                die("unexpected transformers tensor %s" % k)
            src = params[names[rest]][int(i)]
            if conv1d and rest.endswith("weight") and src.ndim == 2:
                src = src.T
        else:
            die("unexpected transformers tensor %s" % k)
        if tuple(src.shape) != tuple(v.shape):
            die("%s: shape %s, .bin gives %s" % (k, tuple(v.shape), tuple(src.shape)))
        new[k] = torch.from_numpy(np.ascontiguousarray(src, dtype=np.float32))
    missing, unexpected = model.load_state_dict(new, strict=False)
    if unexpected or [m for m in missing if not m.endswith(("attn.bias", "attn.masked_bias"))]:
        die("load_state_dict: missing %s unexpected %s" % (missing, unexpected))
    return model.float().eval()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--checkpoint", default=os.path.join(tf.ROOT, "models", "andrea-tiny.bin"))
    ap.add_argument("--checkpoint-name", default="models/andrea-tiny.bin", help="path stored in the h5 attribute")
    ap.add_argument("--out-h5", default=os.path.join(tf.ROOT, "tests", "data", "golden_tiny.h5"))
    ap.add_argument("--out-hf", default=os.path.join(tf.ROOT, "tests", "data", "tiny_hf"))
    args = ap.parse_args()
    import h5py
    import transformers
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_grad_enabled(False)

    shape, params = tf.read_bin(args.checkpoint)
    if shape["version"] != 3:
        die("%s: the golden fixture wants an fp32 checkpoint" % args.checkpoint)
    toks = tokens()
    x = torch.from_numpy(toks.astype(np.int64))
    hf = build_hf(shape, params)
    out = hf(input_ids=x, output_attentions=True)
    if out.attentions is None:
        hf.config.output_attentions = True  # some versions read the flag from the config only
        out = hf(input_ids=x, output_attentions=True)
    logits = out.logits.float().numpy()
    if out.attentions is None or len(out.attentions) != shape["n_layer"]:
        die("transformers returned no attention probabilities (eager attention not in use?)")
    attn = torch.stack(list(out.attentions), 1).float().numpy()  # [N, L, H, T, T]

    # independent check: this repository's own forward on the same .bin
    own, _ = tf.model_from_bin(args.checkpoint)
    own_logits, own_probs = own(x, want_probs=True)
    own_attn = torch.stack(own_probs, 1).numpy()
    dl = float(np.abs(own_logits.numpy() - logits).max())
    da = float(np.abs(own_attn - attn).max())
    print("make_golden: max |logits own - HF| = %.3e, max |attn own - HF| = %.3e" % (dl, da))
    if dl > 1e-4 or da > 1e-4:
        die("own forward and transformers disagree (logits %.3e, attention %.3e)" % (dl, da))
    rows = attn.sum(-1)
    if np.abs(rows - 1).max() > 1e-5:
        die("attention rows do not sum to 1")

    # save_pretrained into a scratch folder, check it, then keep config.json + model.safetensors
    scratch = tempfile.mkdtemp()
    try:
        hf.save_pretrained(scratch)
        st = os.path.join(scratch, "model.safetensors")
        if not os.path.exists(st):
            die("save_pretrained wrote no model.safetensors: %s" % os.listdir(scratch))
        from safetensors import safe_open
        with safe_open(st, framework="pt") as f:
            keys = sorted(f.keys())
            for k in keys:
                t = f.get_tensor(k)
                if t.dtype != torch.float32:
                    die("%s: tensor %s is %s, not float32" % (st, k, t.dtype))
        print("make_golden: model.safetensors tensors: %d, e.g. %s" % (len(keys), ", ".join(keys[:4])))
        if not all(k.startswith("transformer.") or k == "lm_head.weight" for k in keys):
            die("unexpected tensor names in model.safetensors: %s" % keys)
        from transformers import GPT2LMHeadModel
        re_model = GPT2LMHeadModel.from_pretrained(scratch, attn_implementation="eager").float().eval()
        dr = float(np.abs(re_model(input_ids=x).logits.float().numpy() - logits).max())
        print("make_golden: reloaded folder, max |logit difference| = %.3e" % dr)
        if dr > 1e-5:
            die("saved folder does not reload to the same model (%.3e)" % dr)
        os.makedirs(args.out_hf, exist_ok=True)
        for name in ("config.json", "model.safetensors"):
            shutil.copy(os.path.join(scratch, name), os.path.join(args.out_hf, name + ".tmp-golden"))
            os.replace(os.path.join(args.out_hf, name + ".tmp-golden"), os.path.join(args.out_hf, name))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    with open(args.checkpoint, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    tmp = args.out_h5 + ".tmp-golden"
    with h5py.File(tmp, "w") as h:
        h.create_dataset("tokens", data=toks.astype(np.int32))
        h.create_dataset("attn", data=attn.astype(np.float32))
        h.create_dataset("logits", data=logits.astype(np.float32))
        h.attrs["checkpoint"] = args.checkpoint_name
        h.attrs["checkpoint_sha256"] = sha
        h.attrs["transformers_version"] = transformers.__version__
        h.attrs["torch_version"] = str(torch.__version__)  # TorchVersion is a str subclass h5py cannot store
        h.attrs["config"] = json.dumps({k: shape[k] for k in ("n_layer", "n_head", "n_embd", "max_t", "vocab", "vp")})
        h.attrs["description"] = ("GPT2LMHeadModel (eager attention, fp32, CPU) on the checkpoint; attn [N, L, H, T, T] "
                                  "softmax probabilities query x key; logits [N, T, V]; tokens = BOS (256) + 63 bytes")
    os.replace(tmp, args.out_h5)
    print("make_golden: wrote %s (%d bytes) and %s" % (args.out_h5, os.path.getsize(args.out_h5), args.out_hf))


if __name__ == "__main__":
    main()
