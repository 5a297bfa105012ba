#!/usr/bin/python3
"""mpi_compare_dumps.py A.h5 B.h5 — used by tests/test_mpi_*.sh: exit 0 when two andrea dumps hold
the same groups, datasets (shape, dtype, values bit for bit, NaN equal to NaN) and attributes,
else print every difference and exit 1. Attributes that describe the run rather than the data may
differ: the master file of an MPI dump names its part files and their seals (parts, part_seals);
the dump stores no timestamp (the list is here for when it does)."""
import sys

import h5py
import numpy as np

RUN_ATTRS = {"created", "hostname", "parts", "part_seals"}
# Dimension scales' attributes hold object references (file addresses, which differ between two
# files with the same content): compared as what they name, each dataset's axes (label, scales).
REF_ATTRS = {"DIMENSION_LIST", "REFERENCE_LIST"}


def attrs(obj):
    out = {}
    for k, v in obj.attrs.items():
        if k in RUN_ATTRS or k in REF_ATTRS:
            continue
        out[k] = v.decode() if isinstance(v, bytes) else (v.tolist() if hasattr(v, "tolist") else v)
    if isinstance(obj, h5py.Dataset) and "DIMENSION_LIST" in obj.attrs:
        out["(dims)"] = [(d.label, [v.name for v in d.values()]) for d in obj.dims]
    return out


def main(a_path, b_path):
    diffs = []
    with h5py.File(a_path, "r") as a, h5py.File(b_path, "r") as b:
        names_a, names_b = [], []
        a.visit(names_a.append)
        b.visit(names_b.append)
        if sorted(names_a) != sorted(names_b):
            diffs.append(f"objects differ: {sorted(set(names_a) ^ set(names_b))}")
        if attrs(a) != attrs(b):
            diffs.append(f"root attributes differ: {attrs(a)} vs {attrs(b)}")
        n_values = 0
        for name in sorted(set(names_a) & set(names_b)):
            x, y = a[name], b[name]
            if attrs(x) != attrs(y):
                diffs.append(f"{name}: attributes differ: {attrs(x)} vs {attrs(y)}")
            if not isinstance(x, h5py.Dataset):
                continue
            if x.shape != y.shape or x.dtype != y.dtype:
                diffs.append(f"{name}: {x.shape} {x.dtype} vs {y.shape} {y.dtype}")
                continue
            u, v = x[()], y[()]
            # bit-for-bit: compare the raw bytes, so NaN == NaN and -0.0 != 0.0
            if u.tobytes() != v.tobytes():
                same = (u == v) | (np.isnan(u) & np.isnan(v)) if u.dtype.kind == "f" else u == v
                bad = np.argwhere(~same)
                diffs.append(f"{name}: {len(bad)} values differ, first at {bad[0].tolist() if len(bad) else '(bit patterns only)'}")
            n_values += u.size
    for d in diffs:
        print("DIFF", d)
    if not diffs:
        print(f"same: {len(names_a)} objects, {n_values} values")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
