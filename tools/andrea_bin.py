"""andrea_bin — reads an ANDREA .bin checkpoint (llm.c layout, version 3 fp32 or 5 bf16) with numpy
alone, so that scripts without torch (tools/tf32_error_budget.py) and with it
(tools/train_fixtures.py, tools/make_golden.py) share one reader."""
import numpy as np

MAGIC = 20240326


def read_bin(path):
    """Reads an ANDREA .bin with numpy alone. Returns (shape dict, {name: float32 array})."""
    with open(path, "rb") as f:
        data = f.read()
    hdr = np.frombuffer(data[:1024], dtype=np.int32)
    if hdr[0] != MAGIC or hdr[1] not in (3, 5):
        raise SystemExit("%s: not an ANDREA checkpoint (magic %d, version %d)" % (path, hdr[0], hdr[1]))
    T, V, L, H, C, Vp = (int(x) for x in hdr[2:8])
    shapes = [("wte", (Vp, C)), ("wpe", (T, C)), ("ln1w", (L, C)), ("ln1b", (L, C)),
              ("qkvw", (L, 3 * C, C)), ("qkvb", (L, 3 * C)), ("attprojw", (L, C, C)), ("attprojb", (L, C)),
              ("ln2w", (L, C)), ("ln2b", (L, C)), ("fcw", (L, 4 * C, C)), ("fcb", (L, 4 * C)),
              ("fcprojw", (L, C, 4 * C)), ("fcprojb", (L, C)), ("lnfw", (C,)), ("lnfb", (C,))]
    n = sum(int(np.prod(s)) for _, s in shapes)
    esz = 4 if hdr[1] == 3 else 2
    if len(data) != 1024 + n * esz:
        raise SystemExit("%s: size %d, expected %d" % (path, len(data), 1024 + n * esz))
    if esz == 4:
        flat = np.frombuffer(data, dtype=np.float32, offset=1024)
    else:
        flat = (np.frombuffer(data, dtype=np.uint16, offset=1024).astype(np.uint32) << 16).view(np.float32)
    out, off = {}, 0
    for name, s in shapes:
        k = int(np.prod(s))
        out[name] = flat[off:off + k].reshape(s).copy()
        off += k
    shape = dict(n_layer=L, n_head=H, n_embd=C, max_t=T, vp=Vp, vocab=V, version=int(hdr[1]))
    return shape, out
