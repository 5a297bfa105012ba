#!/usr/bin/env bash
# test_analyze_one_writer_per_folder — a report folder has one writer at a time: while another
# process holds DIR (here flock(1) on the folder, as a running andrea does), `analyze --out DIR`
# `render --out DIR` and `show --out DIR` say they wait, wait, and then write a whole report; two reports were
# interleaved file by file before (one run's example maps beside the other's scores).
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files models/andrea-tiny.bin
command -v flock >/dev/null || skip "flock(1) (util-linux) is not installed"
cd "$tmp"
M="$ANDREA_SRC/models/andrea-tiny.bin"
mkdir -p out
flock out sleep 3 &
holder=$!
sleep 0.5
start=$SECONDS
"$A" analyze "$M" --out out --probes bos --n 2 --len 16 --ablate-items 0 >a.out 2>a.err
rc=$?
waited=$((SECONDS - start))
wait $holder
if [[ $rc == 0 ]] && grep -q "andrea analyze: another andrea is writing into out; waiting for it" a.err && ((waited >= 2)) &&
  [[ -f out/index.html && -f out/catalog.db ]]; then
  ok "analyze waits for the folder's writer (${waited} s), then writes its report"
else
  bad "analyze wait" "exit $rc after ${waited} s: $(cat a.err)"
fi
# --quiet waits without a word
flock out sleep 2 &
holder=$!
sleep 0.5
"$A" analyze "$M" --out out --probes bos --n 2 --len 16 --ablate-items 0 --quiet >q.out 2>q.err
rc=$?
wait $holder
[[ $rc == 0 ]] && ! grep -q waiting q.err && ok "--quiet waits silently" || bad "quiet wait" "exit $rc: $(cat q.err)"
# render takes the same lock
"$A" dump "$M" --probes bos --n 2 --len 16 --device cpu --out d.h5 --quiet >/dev/null 2>&1
"$A" classify d.h5 --db r.db --ablate-items 0 >/dev/null 2>&1
mkdir -p rep
flock rep sleep 2 &
holder=$!
sleep 0.5
"$A" render d.h5 --db r.db --out rep >r.out 2>r.err
rc=$?
wait $holder
[[ $rc == 0 ]] && grep -q "andrea: another andrea is writing into rep; waiting for it" r.err && [[ -f rep/index.html ]] &&
  ok "render waits for the folder's writer too" || bad "render wait" "exit $rc: $(cat r.err)"
# show takes it too
mkdir -p page
flock page sleep 2 &
holder=$!
sleep 0.5
start=$SECONDS
"$A" show "$M" "abcabc" --out page >s.out 2>s.err
rc=$?
waited=$((SECONDS - start))
wait $holder
[[ $rc == 0 ]] && grep -q "andrea: another andrea is writing into page; waiting for it" s.err && ((waited >= 1)) &&
  [[ -f page/index.html ]] && ok "show waits for the folder's writer too" || bad "show wait" "exit $rc after ${waited} s: $(cat s.err)"
# the catalog has one writer too: while another process holds its write lock (a SQLite writer),
# a run says it waits, waits, and then lands its rows (it used to sit silent for minutes)
runs_before=$(/usr/bin/python3 -c "import sqlite3; print(sqlite3.connect('out/catalog.db').execute('SELECT count(*) FROM runs').fetchone()[0])")
/usr/bin/python3 -c "import sqlite3,time; c=sqlite3.connect('out/catalog.db', isolation_level=None); c.execute('BEGIN IMMEDIATE'); open('held', 'w').close(); time.sleep(3)" &
holder=$!
for ((i = 0; i < 100; i++)); do [[ -e held ]] && break; sleep 0.1; done
start=$SECONDS
"$A" analyze "$M" --out out --probes bos --n 3 --len 16 --ablate-items 0 >c.out 2>c.err
rc=$?
waited=$((SECONDS - start))
wait $holder
runs_after=$(/usr/bin/python3 -c "import sqlite3; print(sqlite3.connect('out/catalog.db').execute('SELECT count(*) FROM runs').fetchone()[0])")
[[ $rc == 0 ]] && grep -q "andrea: another process is writing into the catalog out/catalog.db; waiting for it" c.err &&
  ((waited >= 1 && runs_after > runs_before)) && ok "a run waits for the catalog's writer (${waited} s), then lands its rows" ||
  bad "catalog wait" "exit $rc after ${waited} s, runs $runs_before -> $runs_after: $(cat c.err)"
rm -f held
# no lock file is left in the folder
[[ -z $(ls -A out | grep -v -E '^(assets|catalog\.db.*|compare\.html|data|explore\.html|heads|index\.html|maps|overview)$') ]] &&
  ok "nothing but the report in the folder" || bad "leftovers" "$(ls -A out)"
# the waiting line names a folder with an escape sequence in its name as one line, no ESC byte
evil=$'w\e[2Jx'
mkdir -p "$evil"
flock "$evil" -c 'touch evil.held; sleep 2' &
for ((i = 0; i < 300; i++)); do [[ -e evil.held ]] && break; sleep 0.1; done
"$A" show "$M" "abc" --out "$evil" >/dev/null 2>wait.err
wait
[[ $(grep -c "another andrea is writing into w?.2Jx; waiting" wait.err) -eq 1 ]] && ! grep -q $'\e' wait.err &&
  ok "the waiting line shows control bytes of the folder's name as '?'" || bad "waiting line" "$(od -c wait.err | head -3)"
finish
