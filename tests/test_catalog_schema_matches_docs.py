#!/usr/bin/python3
"""test_catalog_schema_matches_docs — docs/catalog.md's schema is the code's: every table the docs'
CREATE TABLE blocks define exists in a catalog andrea writes, with the same columns in the same order
and the same declared types, and no table of andrea's is missing from the docs; the views'
columns (head_catalog's table of columns, head_composition and head_weights) are the views' own.
A catalog is written by `andrea analyze` of the tiny model (every table and view, the circuit ones
included); SQLite's PRAGMA table_info reads what it holds.
"""
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import BIN, FAILED, check  # noqa: E402

SRC = os.environ["ANDREA_SRC"]
DOC = os.path.join(SRC, "docs", "catalog.md")
CONSTRAINTS = ("PRIMARY", "UNIQUE", "FOREIGN", "CHECK", "CONSTRAINT")


def split_top(body):
    """body's comma-separated parts, commas inside parentheses left alone."""
    parts, depth, cur = [], 0, ""
    for ch in body:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


def doc_tables(text):
    """{table: [(column, type), ...]} from the docs' ```sql blocks."""
    tables = {}
    for block in re.findall(r"```sql\n(.*?)```", text, re.S):
        sql = "\n".join(line.split("--", 1)[0] for line in block.splitlines())
        for name, body in re.findall(r"CREATE TABLE (\w+)\((.*?)\)\s*(?:WITHOUT ROWID)?\s*;", sql, re.S):
            cols = []
            for part in split_top(body):
                words = part.split()
                if words and words[0].upper() not in CONSTRAINTS:
                    cols.append((words[0], words[1].upper() if len(words) > 1 else ""))
            tables[name] = cols
    return tables


def doc_views(text):
    """{view: set of columns}: head_catalog's table of columns and the circuit views' table."""
    views = {}
    section = text.split("## The view `head_catalog`", 1)[1].split("\n## ", 1)[0]
    cols = set()
    for row in re.findall(r"^\| ([^|]+) \|", section, re.M):
        if row.strip() not in ("column", "---"):
            cols.update(c.strip() for c in row.split(","))
    views["head_catalog"] = cols
    for name, row in re.findall(r"^\| `(head_\w+)` \| ([^|]+) \|", text, re.M):
        views[name] = {c.strip() for c in re.sub(r"\([^)]*\)", "", row).split(",")}
    return views


def main():
    with open(DOC, encoding="utf-8") as fh:
        text = fh.read()
    tables, views = doc_tables(text), doc_views(text)
    check(len(tables) >= 8, f"docs/catalog.md defines {len(tables)} tables: {sorted(tables)}")
    check({"head_catalog", "head_composition", "head_weights"} <= set(views), f"views in the docs: {sorted(views)}")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "o")
        r = subprocess.run([BIN, "analyze", os.path.join(SRC, "models", "andrea-tiny.bin"), "--out", out,
                            "--quiet", "--report-maps", "0", "--ablate-items", "0"], capture_output=True, text=True)
        check(r.returncode == 0, f"analyze: {r.stderr.strip()}")
        if r.returncode:
            return
        db = sqlite3.connect(os.path.join(out, "catalog.db"))
        kinds = dict(db.execute("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') "
                                "AND name NOT LIKE 'sqlite_%'").fetchall())
        for name, cols in tables.items():
            got = [(c[1], c[2].upper()) for c in db.execute(f"PRAGMA table_info({name})")]
            check(kinds.get(name) == "table", f"table {name} of the docs is not in the catalog")
            check(got == cols, f"table {name}: the docs say {cols}, the catalog has {got}")
        for name in sorted(n for n, k in kinds.items() if k == "table"):
            check(name in tables, f"table {name} of the catalog is not in docs/catalog.md")
        for name, cols in views.items():
            got = {c[1] for c in db.execute(f"PRAGMA table_info({name})")}
            check(kinds.get(name) == "view", f"view {name} of the docs is not in the catalog")
            check(got == cols, f"view {name}: in the docs, not the view: {sorted(cols - got)}; "
                               f"in the view, not the docs: {sorted(got - cols)}")
        db.close()


main()
print("test_catalog_schema_matches_docs:", "FAILED" if FAILED else "ok")
sys.exit(1 if FAILED else 0)
