#!/usr/bin/python3
"""mpi_compare_catalogs.py A.db B.db — used by tests/test_mpi_*.sh: exit 0 when two head catalogs
hold the same rows in every table (runs.time and circuit_runs.time excepted: they are when the run
happened; runs.dump_seal too: the sha256 of a dump's bytes, which hold HDF5 object times), else
print the differences and exit 1. Text and integers (ids, counts, labels) must be equal; REAL
values equal to 1e-12 relative: a run under MPI pools each rank's partial sums
(analyzer/reduce_mpi.h), so a double can differ from the serial sum's rounding in its last bits,
never more. With --exact, REALs must be equal bit for bit (a series spread over ranks scores each
checkpoint on one rank, in the serial order)."""
import math
import sqlite3
import sys

SKIP = {("runs", "time"), ("runs", "dump_seal"), ("circuit_runs", "time")}
REL = 1e-12


def rows(db, table):
    cols = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
    keep = [c for c in cols if (table, c) not in SKIP]
    data = db.execute(f"SELECT {', '.join(keep)} FROM {table} ORDER BY {', '.join(keep)}").fetchall()
    return keep, data


def same(x, y):
    if isinstance(x, float) and isinstance(y, float) and REL == 0:
        return x == y or (math.isnan(x) and math.isnan(y))
    if isinstance(x, float) and isinstance(y, float):
        if math.isnan(x) or math.isnan(y):
            return math.isnan(x) and math.isnan(y)
        return abs(x - y) <= REL * max(abs(x), abs(y), 1e-300)
    return x == y


def main(a_path, b_path):
    a, b = sqlite3.connect(a_path), sqlite3.connect(b_path)
    tables = [r[0] for r in a.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    tables_b = [r[0] for r in b.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    diffs, n = [], 0
    if tables != tables_b:
        diffs.append(f"tables differ: {tables} vs {tables_b}")
    for t in tables:
        if t not in tables_b:
            continue
        ca, ra = rows(a, t)
        cb, rb = rows(b, t)
        if ca != cb or len(ra) != len(rb):
            diffs.append(f"{t}: {len(ra)} rows {ca} vs {len(rb)} rows {cb}")
            continue
        for x, y in zip(ra, rb):
            n += 1
            if not all(same(u, v) for u, v in zip(x, y)):
                diffs.append(f"{t}: {x} vs {y}")
    for d in diffs[:20]:
        print("DIFF", d)
    if not diffs:
        print(f"same: {len(tables)} tables, {n} rows")
    return 1 if diffs else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] == "--exact":
        REL = 0
        args = args[1:]
    sys.exit(main(args[0], args[1]))
