#!/usr/bin/python3
"""test_dump_h5py — `andrea dump` output read with h5py as docs/dump-format.md says.

Writes a tiny random ANDREA .bin with numpy (llm.c layout), dumps it with the CLI (fp32 and fp16),
and checks: root attributes (sha256 of the checkpoint, config), shapes and dtypes, every attention
row sums to 1 over its causal prefix and is 0 beyond it (and padded rows are 0), and the values
equal an independent float64 numpy forward of the same model (attention, head_out_norm, head_dla,
head_out). Stock tools: h5dump reads the file when installed.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
except ImportError as e:  # the Debian packages python3-h5py / python3-numpy
    print(f"SKIP: {e}")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import BIN, FAILED, FLT_EPSILON, check, forward_roundings, fp32_tol  # noqa: E402  (after the skip checks above)


# ---- a tiny model in the llm.c .bin layout ----
MAXT, V, L, H, C = 48, 257, 2, 4, 32
HD = C // H
rng = np.random.default_rng(1234)


def randn(*shape, scale=0.2):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


P = {
    "wte": randn(V, C), "wpe": randn(MAXT, C),
    "ln1w": 1 + randn(L, C, scale=0.1), "ln1b": randn(L, C, scale=0.1),
    "qkvw": randn(L, 3 * C, C, scale=0.3), "qkvb": randn(L, 3 * C, scale=0.1),
    "attprojw": randn(L, C, C), "attprojb": randn(L, C, scale=0.1),
    "ln2w": 1 + randn(L, C, scale=0.1), "ln2b": randn(L, C, scale=0.1),
    "fcw": randn(L, 4 * C, C), "fcb": randn(L, 4 * C, scale=0.1),
    "fcprojw": randn(L, C, 4 * C), "fcprojb": randn(L, C, scale=0.1),
    "lnfw": 1 + randn(C, scale=0.1), "lnfb": randn(C, scale=0.1),
}
ORDER = ["wte", "wpe", "ln1w", "ln1b", "qkvw", "qkvb", "attprojw", "attprojb", "ln2w", "ln2b",
         "fcw", "fcb", "fcprojw", "fcprojb", "lnfw", "lnfb"]


def write_bin(path):
    header = np.zeros(256, dtype=np.int32)
    header[:8] = [20240326, 3, MAXT, V, L, H, C, V]
    with open(path, "wb") as f:
        f.write(header.tobytes())
        for name in ORDER:
            f.write(P[name].astype("<f4").tobytes())


# ---- independent float64 forward (docs/checkpoints.md, forward.h's DLA definition) ----
def layernorm(x, w, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * w + b


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def forward(tokens):
    """tokens: [T] -> attn [L,H,T,T], head_out [L,H,T,C], head_out_norm [L,H,T], dla [L,H,T], and for
    the bounds: |q_t| |k_j| / sqrt(hd) [L,H,T,T], dla's sum of |terms| [L,H,T]."""
    p = {k: v.astype(np.float64) for k, v in P.items()}
    T = len(tokens)
    x = p["wte"][tokens] + p["wpe"][:T]
    attn = np.zeros((L, H, T, T))
    hout = np.zeros((L, H, T, C))
    qk = np.zeros((L, H, T, T))
    mask = np.triu(np.ones((T, T), dtype=bool), 1)
    for l in range(L):
        h = layernorm(x, p["ln1w"][l], p["ln1b"][l])
        qkv = h @ p["qkvw"][l].T + p["qkvb"][l]
        q, k, v = qkv[:, :C], qkv[:, C:2 * C], qkv[:, 2 * C:]
        out = np.zeros((T, C))
        for hh in range(H):
            sl = slice(hh * HD, (hh + 1) * HD)
            s = q[:, sl] @ k[:, sl].T / np.sqrt(HD)
            qk[l, hh] = np.outer(np.linalg.norm(q[:, sl], axis=1), np.linalg.norm(k[:, sl], axis=1)) / np.sqrt(HD)
            s[mask] = -np.inf
            s = np.exp(s - s.max(-1, keepdims=True))
            a = s / s.sum(-1, keepdims=True)
            attn[l, hh] = a
            o = a @ v[:, sl]
            hout[l, hh] = o @ p["attprojw"][l][:, sl].T
            out += hout[l, hh]
        x = x + out + p["attprojb"][l]
        h = layernorm(x, p["ln2w"][l], p["ln2b"][l])
        x = x + gelu(h @ p["fcw"][l].T + p["fcb"][l]) @ p["fcprojw"][l].T + p["fcprojb"][l]
    sigma = np.sqrt(x.var(-1) + 1e-5)  # [T]
    wte_c = p["wte"][:V] - p["wte"][:V].mean(0)
    dla = np.full((L, H, T), np.nan)
    dla_terms = np.zeros((L, H, T))
    for t in range(T - 1):
        u = p["lnfw"] * wte_c[tokens[t + 1]] / sigma[t]
        c = hout[:, :, t, :]
        dla[:, :, t] = ((c - c.mean(-1, keepdims=True)) * u).sum(-1)
        dla_terms[:, :, t] = (np.abs(c - c.mean(-1, keepdims=True)) * np.abs(u)).sum(-1)
    return attn, hout, np.linalg.norm(hout, axis=-1), dla, qk, dla_terms


def attn_bound(ra, qk, T):
    """The bound on each attention probability of the fp32 engine against the float64 forward
    (issue 39: relative to the magnitudes, as tests/test_forward_golden.c's attn_worst_ratio): a score
    of layer l carries the rounding of the chain before it (per earlier layer QKV C, a score hd, P.V T,
    W_O C, the MLP C + 4C; this layer's LayerNorm C, QKV C, score hd) relative to |q||k|/sqrt(hd)
    (which bounds the score's |terms| and how far relative errors of q and k move it), plus the
    softmax's shift by the row's largest score (one rounding of s_j - s_max): ds. p = softmax(s) moves
    by p_j ((1 - p_j) ds_j - sum_{k != j} p_k ds_k); plus the softmax's own rounding relative to p_j
    (an exp, a division, a sum of up to T exponentials) and FLT_MIN (subnormals). ra [L,H,T,T]."""
    b = np.zeros_like(ra)
    causal = np.tril(np.ones((T, T), dtype=bool))
    for l in range(L):
        n_l = l * (7.0 * C + HD + T) + 2.0 * C + HD
        m = np.where(causal, qk[l], 0.0)  # [H, T, T]
        ds = fp32_tol(n_l, m) + FLT_EPSILON * (m + m.max(-1, keepdims=True))
        ds = np.where(causal, ds, 0.0)
        p = ra[l]
        pds = (p * ds).sum(-1, keepdims=True)
        b[l] = p * ((1 - p) * ds + pds - p * ds) + fp32_tol(T, p) + np.finfo(np.float32).tiny
    return b


def run_dump(ckpt, out, *extra):
    cmd = [BIN, "dump", ckpt, "--out", out, "--quiet", "--probes", "prev_token,induction,bracket,entity",
           "--n", "3", "--len", "40", "--batch", "2", "--device", "cpu", *extra]  # the float64 checks are the CPU's
    r = subprocess.run(cmd, capture_output=True, text=True)
    check(r.returncode == 0, f"{' '.join(cmd)} failed: {r.stderr}")
    return r


def main():
    tmp = tempfile.mkdtemp(prefix="andrea-h5py-")
    ckpt = os.path.join(tmp, "tiny.bin")
    write_bin(ckpt)
    f32, f16 = os.path.join(tmp, "d32.h5"), os.path.join(tmp, "d16.h5")
    run_dump(ckpt, f32, "--maps", "fp32", "--contrib", "full")
    run_dump(ckpt, f16)
    # deflated by andrea on every core (H5Dwrite_chunk of zlib streams): stock HDF5's deflate filter
    # must read the same values back, padded rows included
    gz16, gz32 = os.path.join(tmp, "g16.h5"), os.path.join(tmp, "g32.h5")
    run_dump(ckpt, gz16, "--gzip", "1")
    run_dump(ckpt, gz32, "--gzip", "6", "--maps", "fp32", "--contrib", "full")
    # several deflate groups per batch (write one group while deflating the next), forced small
    # (the hook exists in test builds only: -DANDREA_TESTING=ON, as tools/test.sh builds)
    gzg = os.path.join(tmp, "gg.h5")
    hooks = os.environ.get("ANDREA_TEST_HOOKS") == "1"
    if not hooks:
        print("note: not a test build (-DANDREA_TESTING=OFF): the forced deflate groups are not checked")
    os.environ["ANDREA_TEST_DEFLATE_GROUP"] = "3"
    run_dump(ckpt, gzg, "--gzip", "1")
    del os.environ["ANDREA_TEST_DEFLATE_GROUP"]
    if FAILED:
        return 1
    sha = hashlib.sha256(open(ckpt, "rb").read()).hexdigest()
    with h5py.File(f32, "r") as a, h5py.File(f16, "r") as b:
        # string attributes are fixed-length UTF-8: h5py hands them out as bytes
        at = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in a.attrs.items()}
        bt = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in b.attrs.items()}
        check(at["checkpoint_sha256"] == sha, "checkpoint_sha256 is the sha256 of the file")
        check(at["checkpoint_path"] == ckpt, "checkpoint_path")
        cfg = json.loads(at["config"])
        check(cfg["n_layer"] == L and cfg["n_head"] == H and cfg["d_model"] == C and cfg["vocab_size"] == V,
              "config JSON")
        check(int(at["n_layer"]) == L and int(at["head_dim"]) == HD, "config ints")
        check(at["maps_dtype"] == "fp32" and bt["maps_dtype"] == "fp16", "maps_dtype")
        check(at["contrib"] == "full" and bt["contrib"] == "norm", "contrib")
        check(at["engine"] == "cpu" and at["precision"] == "fp32", "engine and precision attributes")
        check(at["suites"] == "prev_token,induction,bracket,entity", "suites list")
        check(isinstance(a.attrs["andrea_version"], bytes) and at["andrea_version"], "andrea_version")
        with open(f32, "rb") as raw:  # the seal in the HDF5 user block (dump.h)
            head = raw.read(512)
        seal = head.rstrip(b"\0").decode().split("\n")
        blk = int(seal[1].split()[1]) if seal[1].startswith("sha256-blocks ") else 0
        data = open(f32, "rb").read()[512:]
        tree = hashlib.sha256(b"".join(hashlib.sha256(data[i:i + blk]).digest()
                                       for i in range(0, len(data), blk))).hexdigest() if blk else ""
        check(seal[0] == "ANDREA-DUMP 1" and blk == 64 << 20 and seal[1].split()[2] == tree,
              "seal: sha256 of the 64 MiB blocks' sha256 digests")
        check("head_out" not in b["prev_token"], "no head_out without --contrib full")
        worst = {"attn": 0.0, "norm": 0.0, "dla": 0.0, "hout": 0.0, "fp16": 0.0}
        ratio = {"sums": 0.0, "attn": 0.0, "norm": 0.0, "dla": 0.0, "hout": 0.0}  # worst error / its bound
        for suite in at["suites"].split(","):
            g, g16 = a[suite], b[suite]
            n, T = g["tokens"].shape
            check(g.attrs["seed"] == 1729 and g.attrs["source"].decode() == "builtin", f"{suite} attrs")
            check(g["tokens"].dtype == np.int32 and g["lengths"].dtype == np.int32, f"{suite} int32")
            check(g["targets"].dtype == np.int32 and g["targets"].shape[1] == 3, f"{suite} targets")
            check(g["attention"].shape == (n, L, H, T, T), f"{suite} attention shape")
            check(g["attention"].dtype == np.float32 and g16["attention"].dtype == np.float16,
                  f"{suite} attention dtypes")
            check(g["attention"].chunks == (1, 1, 1, T, T), f"{suite} one chunk per map")
            for ds in ("head_out_norm", "head_dla"):
                check(g[ds].shape == (n, L, H, T) and g[ds].dtype == np.float32, f"{suite} {ds}")
            check(g["head_out"].shape == (n, L, H, T, C), f"{suite} head_out shape")
            tg = g["targets"][:]
            check(np.all(tg[:, 2] <= tg[:, 1]), f"{suite} keys precede queries")
            for i in range(n):
                ln = int(g["lengths"][i])
                toks = g["tokens"][i, :ln]
                check(np.all(g["tokens"][i, ln:] == 0), f"{suite} padding tokens are 0")
                att = g["attention"][i].astype(np.float64)  # [L,H,T,T]
                sums = att[:, :, :ln, :].sum(-1)
                # a row's probabilities each carry the softmax's rounding relative to themselves (an
                # exp, a division) and share its normaliser, a sum of up to T exponentials: the sum of
                # the row is 1 within the rounding of a T-term sum relative to 1 (was atol 1e-5)
                ratio["sums"] = max(ratio["sums"], np.abs(sums - 1.0).max() / fp32_tol(ln, 1.0))
                check(np.all(np.abs(sums - 1.0) <= fp32_tol(ln, 1.0)), f"{suite} seq {i} rows sum to 1")
                upper = np.triu(np.ones((T, T), dtype=bool), 1)
                check(np.all(att[:, :, upper] == 0), f"{suite} seq {i} zero beyond the causal prefix")
                check(np.all(att[:, :, ln:, :] == 0), f"{suite} seq {i} padded rows are 0")
                ra, rh, rn, rd, qk, dterms = forward(toks)
                # bounds (issue 39): the fp32 engine against float64, each relative to the magnitudes
                # of what it is computed from, along the forward's chain (forward_roundings, testlib)
                n_fw = forward_roundings(L, C, HD, ln)
                ea = np.abs(att[:, :, :ln, :ln] - ra)
                worst["attn"] = max(worst["attn"], ea.max())
                ratio["attn"] = max(ratio["attn"], (ea / attn_bound(ra, qk, ln)).max())
                # head_out = o W_O: the chain up to it, relative to the largest |head_out| of its layer
                # and sequence (the terms of its last sum are of that size, or the errors carried in)
                eh = np.abs(g["head_out"][i][:, :, :ln] - rh)
                worst["hout"] = max(worst["hout"], eh.max())
                ratio["hout"] = max(ratio["hout"], (eh / fp32_tol(n_fw, np.abs(rh).max(axis=(1, 2, 3), keepdims=True))).max())
                # its norm: one more C-term sum, relative to the largest norm of the layer
                en = np.abs(g["head_out_norm"][i][:, :, :ln] - rn)
                worst["norm"] = max(worst["norm"], en.max())
                ratio["norm"] = max(ratio["norm"], (en / fp32_tol(n_fw + C, rn.max(axis=(1, 2), keepdims=True))).max())
                dla = g["head_dla"][i]
                check(np.all(np.isnan(dla[:, :, ln - 1:])), f"{suite} seq {i} DLA NaN without a next token")
                # DLA: a C-term sum of (c_i - mean c) u_i after the whole chain (sigma is the final
                # LayerNorm's), relative to its sum of |terms| (errors of c, sigma relative to theirs)
                ed = np.abs(dla[:, :, :ln - 1] - rd[:, :, :ln - 1])
                worst["dla"] = max(worst["dla"], ed.max())
                ratio["dla"] = max(ratio["dla"], (ed / fp32_tol(n_fw + 2 * C, dterms[:, :, :ln - 1])).max())
                a16 = g16["attention"][i].astype(np.float64)
                # fp16 keeps 11 significant bits: |err| <= 2^-11 * |x| (+ subnormal step)
                check(np.all(np.abs(a16 - att) <= np.abs(att) / 2048 + 6e-8), f"{suite} seq {i} fp16 within half precision")
                worst["fp16"] = max(worst["fp16"], np.abs(a16 - att).max())
                check(np.array_equal(g16["head_dla"][i], dla, equal_nan=True), f"{suite} fp16 dump DLA equals fp32 dump")
        print("max |dump - numpy float64|:", {k: f"{v:.2e}" for k, v in worst.items()})
        print("worst error / its rounding bound:", {k: f"{v:.3g}" for k, v in ratio.items()})
        # float32 engine vs float64 reference: within the rounding bounds above
        check(ratio["attn"] <= 1, f"attention equals the numpy forward ({worst['attn']:.2e}, {ratio['attn']:.3g} x its bound)")
        check(ratio["hout"] <= 1, f"head_out equals the numpy forward ({worst['hout']:.2e}, {ratio['hout']:.3g} x its bound)")
        check(ratio["norm"] <= 1, f"head_out_norm equals the numpy forward ({worst['norm']:.2e}, {ratio['norm']:.3g} x its bound)")
        check(ratio["dla"] <= 1, f"head_dla equals the numpy forward ({worst['dla']:.2e}, {ratio['dla']:.3g} x its bound)")
    for plain, packed, level in ((f16, gz16, 1), (f32, gz32, 6), (f16, gzg, 1)):
        with h5py.File(plain, "r") as a, h5py.File(packed, "r") as z:
            for suite in ("prev_token", "induction", "bracket", "entity"):
                check(z[suite]["attention"].compression == "gzip" and z[suite]["attention"].compression_opts == level,
                      f"{packed}: {suite} attention carries the deflate filter, level {level}")
                check(np.array_equal(a[suite]["attention"][:], z[suite]["attention"][:]),
                      f"{packed}: {suite} attention equals the uncompressed dump")
                if "head_out" in a[suite]:
                    check(np.array_equal(a[suite]["head_out"][:], z[suite]["head_out"][:]),
                          f"{packed}: {suite} head_out equals the uncompressed dump")
            check(os.path.getsize(packed) < os.path.getsize(plain), f"{packed} is smaller than {plain}")
    h5dump = shutil.which("h5dump")
    if h5dump:
        r = subprocess.run([h5dump, "-H", f16], capture_output=True, text=True)
        check(r.returncode == 0 and "attention" in r.stdout, "h5dump reads the dump")
    else:
        print("note: h5dump not installed, stock-tool check not run")
    shutil.rmtree(tmp)
    print(f"test_dump_h5py: {'FAILED ' + str(len(FAILED)) if FAILED else 'all checks passed'}")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
