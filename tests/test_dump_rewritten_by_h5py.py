#!/usr/bin/python3
"""test_dump_rewritten_by_h5py — dumps edited with h5py and sealed again, as a user's tool would:

- a string attribute that fills its fixed length (h5py's np.bytes_, no NUL terminator) is read
  whole: maps_dtype b"fp16" is fp16 (it was read as "fp1" and refused), and a suites list naming a
  group the file lacks is refused (b"induction,bracketX" was read as "induction,bracket");
- attention compressed as one chunk of every map (andrea writes one (sequence, layer, head) map a
  chunk) is refused at open, in a fraction of a second: each map read inflated the whole chunk
  again, so classify's time grew with the square of the file's size (a 200 KB file: 44 s).
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

try:
    import h5py
    import numpy as np
except ImportError as e:  # the Debian packages python3-h5py / python3-numpy
    print(f"SKIP: {e}")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import BIN, FAILED, check  # noqa: E402  (after the skip checks above)

SRC = os.environ.get("ANDREA_SRC", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
MODEL = os.path.join(SRC, "models", "andrea-tiny.bin")


def seal(path):
    """The dump seal (docs/dump-format.md) over the edited file, in its 512-byte user block."""
    raw = bytearray(open(path, "rb").read())
    data, blk = bytes(raw[512:]), 64 << 20
    tree = hashlib.sha256(b"".join(hashlib.sha256(data[i:i + blk]).digest() for i in range(0, len(data), blk)))
    head = f"ANDREA-DUMP 1\nsha256-blocks {blk} {tree.hexdigest()}\n".encode()
    raw[:512] = head + bytes(512 - len(head))
    open(path, "wb").write(bytes(raw))


def classify(dump, db):
    return subprocess.run([BIN, "classify", dump, "--db", db, "--no-causal", "--quiet"], capture_output=True, text=True,
                          timeout=120)


def main():
    if not os.path.exists(MODEL):
        print(f"SKIP: {MODEL} not present")
        return 77
    tmp = tempfile.mkdtemp(prefix="andrea-h5edit-")
    try:
        base = os.path.join(tmp, "base.h5")
        subprocess.run([BIN, "dump", MODEL, "--probes", "induction,bracket", "--n", "4", "--len", "32", "--device", "cpu",
                        "--out", base, "--quiet"], check=True, capture_output=True)

        full = os.path.join(tmp, "full.h5")
        shutil.copy(base, full)
        with h5py.File(full, "r+") as f:
            f.attrs["maps_dtype"] = np.bytes_(b"fp16")  # exactly 4 bytes, no terminator
            f.attrs["contrib"] = np.bytes_(b"norm")
        seal(full)
        r = classify(full, os.path.join(tmp, "full.db"))
        check(r.returncode == 0, f"a string attribute that fills its length is read whole: exit {r.returncode}: {r.stderr}")

        extra = os.path.join(tmp, "extra.h5")
        shutil.copy(base, extra)
        with h5py.File(extra, "r+") as f:
            f.attrs["suites"] = np.bytes_(b"induction,bracketX")
        seal(extra)
        r = classify(extra, os.path.join(tmp, "extra.db"))
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 1 and len(lines) == 1 and "suite group /bracketX is missing" in lines[0],
              f"a suites list naming a missing group is refused: exit {r.returncode}: {r.stderr}")

        bomb = os.path.join(tmp, "bomb.h5")
        shutil.copy(base, bomb)
        with h5py.File(bomb, "r+") as f:
            g = f["induction"]
            maps = g["attention"][...]
            del g["attention"]
            g.create_dataset("attention", data=maps, chunks=maps.shape, compression="gzip")
        seal(bomb)
        start = time.monotonic()
        r = classify(bomb, os.path.join(tmp, "bomb.db"))
        took = time.monotonic() - start
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 1 and len(lines) == 1 and "/induction/attention is compressed in chunks of more than one map"
              in lines[0], f"one compressed chunk of every map is refused: exit {r.returncode}: {r.stderr}")
        check(not os.path.exists(os.path.join(tmp, "bomb.db")), "no catalog is left by the refused dump")
        print(f"refused in {took:.2f} s: {lines[0] if lines else ''}")
    finally:
        shutil.rmtree(tmp)
    print(f"{len(FAILED)} failed")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
