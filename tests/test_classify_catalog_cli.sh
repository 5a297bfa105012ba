#!/usr/bin/env bash
# test_classify_catalog_cli.sh — `andrea classify` on one catalog, through the CLI:
#   - a classify killed (SIGKILL, test hook ANDREA_TEST_CRASH_AT=mid-run) inside its transaction
#     leaves a catalog that passes PRAGMA integrity_check and holds none of that run;
#   - two classify processes started together on one catalog both land;
#   - classifying the same dump with the same settings again replaces its run;
#   - a dump whose checkpoint is gone still classifies, with NULL ablation and a note.
# Uses the tiny fixture model; skips (77) while it is absent.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
m=$ANDREA_SRC/models/andrea-tiny.bin
need_files models/andrea-tiny.bin
q() { /usr/bin/python3 -c 'import sqlite3,sys; print(sqlite3.connect("file:"+sys.argv[1]+"?mode=ro", uri=True).execute(sys.argv[2]).fetchone()[0])' "$@"; }
cp "$m" "$tmp/tiny_step300.bin"
"$ANDREA_BIN" dump "$tmp/tiny_step300.bin" --probes prev_token,induction,bos --n 4 --len 48 --out "$tmp/t.h5" --device cpu --quiet
db=$tmp/c.db
"$ANDREA_BIN" classify "$tmp/t.h5" --db "$db" --device cpu --quiet >/dev/null
[[ $(q "$db" "SELECT count(*) FROM runs") == 1 ]] || { echo "FAIL: first run missing"; exit 1; }
[[ $(q "$db" "SELECT step FROM models") == 300 ]] || { echo "FAIL: step not parsed from the file name"; exit 1; }
[[ $(q "$db" "SELECT count(*) FROM head_scores WHERE ablation_delta IS NOT NULL") -gt 0 ]] || { echo "FAIL: no ablation"; exit 1; }

# crash inside the transaction (different settings, so it would have added a run); the hook
# exists in test builds only (-DANDREA_TESTING=ON, as tools/test.sh builds)
if [[ ${ANDREA_TEST_HOOKS:-0} != 1 ]]; then
  echo "SKIP: the crash hook is compiled into test builds only (configure with -DANDREA_TESTING=ON)"; exit 77
fi
set +e
ANDREA_TEST_CRASH_AT=mid-run "$ANDREA_BIN" classify "$tmp/t.h5" --db "$db" --min-score 0.5 --device cpu --quiet >/dev/null 2>&1
rc=$?
set -e
[[ $rc == 137 ]] || { echo "FAIL: crash hook did not kill the process (rc $rc)"; exit 1; }
[[ $(q "$db" "PRAGMA integrity_check") == ok ]] || { echo "FAIL: integrity_check after the crash"; exit 1; }
[[ $(q "$db" "SELECT count(*) FROM runs") == 1 ]] || { echo "FAIL: part of the crashed run landed"; exit 1; }
[[ $(q "$db" "SELECT count(*) FROM head_scores") == $((3 * 2 * 4)) ]] || { echo "FAIL: head_scores changed by the crash"; exit 1; }

# two writers at once (different settings: two new runs)
"$ANDREA_BIN" classify "$tmp/t.h5" --db "$db" --min-score 0.6 --device cpu --quiet >/dev/null & p1=$!
"$ANDREA_BIN" classify "$tmp/t.h5" --db "$db" --min-score 0.7 --device cpu --quiet >/dev/null & p2=$!
wait $p1 || { echo "FAIL: writer 1"; exit 1; }
wait $p2 || { echo "FAIL: writer 2"; exit 1; }
[[ $(q "$db" "SELECT count(*) FROM runs") == 3 ]] || { echo "FAIL: concurrent runs did not both land"; exit 1; }

# same settings again: replaced, not duplicated
"$ANDREA_BIN" classify "$tmp/t.h5" --db "$db" --min-score 0.7 --device cpu --quiet >/dev/null
[[ $(q "$db" "SELECT count(*) FROM runs") == 3 ]] || { echo "FAIL: same settings duplicated the run"; exit 1; }

# checkpoint gone: an error naming the way out; with --no-causal classify works, ablation NULL,
# a warning printed and the note stored
rm "$tmp/tiny_step300.bin"
"$ANDREA_BIN" classify "$tmp/t.h5" --db "$db" --min-score 0.8 --device cpu --quiet >/dev/null 2>"$tmp/err" \
  && { echo "FAIL: a missing checkpoint skipped the causal check with exit 0"; exit 1; }
grep -q "no-causal" "$tmp/err" || { echo "FAIL: no hint about --no-causal"; cat "$tmp/err"; exit 1; }
"$ANDREA_BIN" classify "$tmp/t.h5" --db "$db" --min-score 0.8 --device cpu --quiet --no-causal >/dev/null 2>"$tmp/err"
grep -q "warning: .*not found" "$tmp/err" || { echo "FAIL: no warning about the missing checkpoint"; cat "$tmp/err"; exit 1; }
[[ $(q "$db" "SELECT count(*) FROM head_catalog WHERE run = (SELECT max(id) FROM runs) AND ablation_delta IS NOT NULL") == 0 ]] \
  || { echo "FAIL: ablation stored without a checkpoint"; exit 1; }
[[ $(q "$db" "SELECT ablation_note IS NOT NULL FROM runs ORDER BY id DESC LIMIT 1") == 1 ]] || { echo "FAIL: note not stored"; exit 1; }

# --ckpt with another model's file is refused
"$ANDREA_BIN" classify "$tmp/t.h5" --db "$db" --ckpt "$ANDREA_SRC/models/andrea-bundled.bin" --quiet >/dev/null 2>"$tmp/err2" \
  && { echo "FAIL: a checkpoint with another sha256 was accepted"; exit 1; }
grep -q "sha256" "$tmp/err2" || [[ ! -f $ANDREA_SRC/models/andrea-bundled.bin ]] || { echo "FAIL: no sha256 message"; cat "$tmp/err2"; exit 1; }
# a user probe file: an unknown suite name is scored with the generic rule under its own name,
# a built-in name selects its class even with explicit targets
/usr/bin/python3 - "$tmp/user.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(3):
        toks = [256] + [(7 * i + 13 * j) % 200 + 30 for j in range(20)]
        f.write(json.dumps({"suite": "my_heads", "tokens": toks, "targets": [[q, [q // 2]] for q in range(2, 21)]}) + "\n")
        f.write(json.dumps({"suite": "bos", "tokens": toks, "targets": [[q, [0]] for q in range(1, 21)]}) + "\n")
PY
"$ANDREA_BIN" dump "$ANDREA_SRC/models/andrea-tiny.bin" --probes "$tmp/user.jsonl" --out "$tmp/u.h5" --device cpu --quiet
"$ANDREA_BIN" classify "$tmp/u.h5" --db "$tmp/u.db" --ablate-items 0 --quiet >/dev/null 2>&1
[[ $(q "$tmp/u.db" "SELECT count(*) FROM head_scores WHERE class = 'my_heads' AND extra_name = 'top1' AND n_queries = 57") == 8 ]] \
  || { echo "FAIL: user suite not scored under its own name"; exit 1; }
[[ $(q "$tmp/u.db" "SELECT count(*) FROM head_scores WHERE class = 'bos' AND extra_name IS NULL AND n_queries = 60") == 8 ]] \
  || { echo "FAIL: a file suite named bos is not the bos class"; exit 1; }
# a run without the causal check, or without per-head norms (--contrib none), is a run of its own:
# it replaced, silently, the run of the same dump that held that evidence
cp "$m" "$tmp/ev.bin"
"$ANDREA_BIN" dump "$tmp/ev.bin" --probes bos,prev_token --n 4 --len 24 --out "$tmp/ev.h5" --device cpu --quiet
"$ANDREA_BIN" classify "$tmp/ev.h5" --db "$tmp/ev.db" --quiet >/dev/null 2>&1 || { echo "FAIL: classify ev"; exit 1; }
mkdir -p "$tmp/away" && mv "$tmp/ev.bin" "$tmp/away/ev.bin" # not beside the dump: no checkpoint found
"$ANDREA_BIN" classify "$tmp/ev.h5" --db "$tmp/ev.db" --no-causal --quiet >/dev/null 2>&1 || { echo "FAIL: classify --no-causal"; exit 1; }
[[ $(q "$tmp/ev.db" "SELECT count(*) FROM runs") == 2 &&
   $(q "$tmp/ev.db" "SELECT count(*) FROM head_scores WHERE ablation_delta IS NOT NULL") -gt 0 ]] ||
  { echo "FAIL: a --no-causal run replaced the run with the causal check"; exit 1; }
"$ANDREA_BIN" dump "$tmp/away/ev.bin" --probes bos,prev_token --n 4 --len 24 --contrib none --out "$tmp/ev0.h5" --device cpu --quiet
"$ANDREA_BIN" classify "$tmp/ev0.h5" --db "$tmp/ev.db" --no-causal --quiet >/dev/null 2>&1 || { echo "FAIL: classify contrib none"; exit 1; }
[[ $(q "$tmp/ev.db" "SELECT count(*) FROM runs") == 3 && $(q "$tmp/ev.db" "SELECT count(*) FROM head_scores WHERE norm_mean IS NOT NULL") -gt 0 ]] ||
  { echo "FAIL: a --contrib none run replaced a run with norms"; exit 1; }
echo "ok"
