#!/usr/bin/env python3
"""compare_labels.py A.db B.db — the analyzer's labels in two head catalogs (e.g. the same model
analysed with --device cpu and --device cuda): prints each side's labelled heads per class and the
largest score difference, exits 1 when the labels differ. Scores may differ by the engines'
rounding (TF32 on the GPU); labels may not (issue 6)."""
import sqlite3
import sys


def catalog(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = db.execute("SELECT model, layer, head, class, score, label FROM head_catalog WHERE current").fetchall()
    db.close()
    return {(m, l, h, c): (s, lab) for m, l, h, c, s, lab in rows}


def main(a_path, b_path):
    a, b = catalog(a_path), catalog(b_path)
    if set(a) != set(b):
        print(f"compare_labels: the catalogs score different heads/classes ({len(a)} vs {len(b)} rows)")
        return 1
    la = sorted(k for k, v in a.items() if v[1])
    lb = sorted(k for k, v in b.items() if v[1])
    worst = max((abs(a[k][0] - b[k][0]), k) for k in a) if a else (0.0, None)
    for name, labels in (("A", la), ("B", lb)):
        print(f"{name}: " + ", ".join(f"{m} {c} {l}.{h}" for m, l, h, c in labels))
    print(f"max |score A - score B| = {worst[0]:.3g} ({worst[1]}); {len(a)} scores, {len(la)} labels")
    if la != lb:
        print("compare_labels: LABELS DIFFER:", sorted(set(la) ^ set(lb)))
        return 1
    print("compare_labels: same labels")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: compare_labels.py A.db B.db")
    sys.exit(main(sys.argv[1], sys.argv[2]))
