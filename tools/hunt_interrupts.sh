#!/usr/bin/env bash
# hunt_interrupts.sh — the interrupt hunt of issue 43, kept: `andrea analyze` of a training series
# (tests/data/series/dyck-step*.bin, with --keep-dumps) is stopped
#   1. by a timed signal: SIGINT, SIGTERM and SIGKILL at a sweep of delays across the run, and
#   2. by a SIGKILL just before one of its writes that make a file final or durable: the N-th
#      rename/link (a temporary becoming its final name) or fsync/fdatasync (the catalog's
#      commits), through `strace -e inject=SYSCALL:signal=KILL:when=N` (the syscall never runs),
# and after each stop the output folder is checked:
#   - the catalog, if there, opens and passes PRAGMA integrity_check (checked on a copy, so the
#     re-run finds the folder as the interrupted run left it);
#   - after a catchable signal (INT, TERM) no `*.tmp-*` is left anywhere under the folder (after
#     KILL they may be: nothing runs to remove them; the count is reported, and the re-run must
#     cope with them);
#   - every dump DIR/NAME.h5 under its final name is whole (`andrea classify` reads it: seal,
#     every map; a half-written one is refused);
#   - a series page DIR/index.html exists only while every checkpoint folder it links to holds
#     its index.html;
#   - the same command run again, uninterrupted, exits 0 and leaves the series page with every
#     linked report present, and no `*.tmp-*`.
# A violation prints "FINDING ..." with the case and the folder kept for a look (under WORK).
#
# usage: tools/hunt_interrupts.sh [--andrea BIN] [--work DIR] [--quick]
#   BIN defaults to build/andrea; WORK to a new folder under /tmp (kept when there are findings,
#   with each failing case's folder as CASE.finding). Exit 0 when nothing was found.
#   Cases: SIGINT, SIGTERM and SIGKILL at 8 delays each (every other one over a complete earlier
#   run); a SIGKILL before every 60th rename, every rename of a page, data file, dump or catalog
#   of the last checkpoint and of the series, the catalog's link and each fdatasync.
#   --quick: 3 delays and a fifth of the renames (a smoke run).
# Needs: strace (the kill-before-write part is skipped without it), /usr/bin/python3 (sqlite3).
# Not in CI: it runs the series analysis ~150 times. Measured on the 2-core CI machine, shared
# (2026-12-04, CPU build): 60 cases in 13 minutes (782 s); --quick about 5 minutes.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
A=$here/build/andrea
work=""
quick=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --andrea) A=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
    *) echo "hunt_interrupts.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -x $A ]] || { echo "hunt_interrupts.sh: no andrea binary at $A (--andrea BIN)" >&2; exit 2; }
[[ -n $work ]] || work=$(mktemp -d /tmp/andrea-hunt-XXXXXX)
mkdir -p "$work"
series=("$here"/tests/data/series/dyck-step*.bin)
args=(analyze "${series[@]}" --keep-dumps --quiet)
findings=0
cases=0
t_start=$(date +%s)

finding() { # CASE WHAT
  echo "FINDING [$1]: $2"
  findings=$((findings + 1))
  keep=1
}

# check_catalog CASE DIR: integrity of a copy of DIR/catalog.db (+ -wal)
check_catalog() {
  local c=$1 d=$2
  [[ -f $d/catalog.db ]] || return 0
  local cp=$work/catcheck
  rm -rf "$cp" && mkdir "$cp"
  cp "$d/catalog.db" "$cp/"
  [[ -f $d/catalog.db-wal ]] && cp "$d/catalog.db-wal" "$cp/"
  local out
  out=$(/usr/bin/python3 -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("PRAGMA integrity_check").fetchone()[0])
' "$cp/catalog.db" 2>&1)
  [[ $out == ok ]] || finding "$c" "catalog fails integrity_check: $out"
}

# check_dumps CASE DIR: every final DIR/*.h5 the stopped run wrote (newer than $work/stamp) is a
# whole dump
check_dumps() {
  local c=$1 d=$2 h
  for h in "$d"/*.h5; do
    [[ -f $h && $h -nt $work/stamp ]] || continue
    rm -f "$work/dumpcheck.db"
    if ! "$A" classify "$h" --db "$work/dumpcheck.db" --quiet --ablate-items 0 >/dev/null 2>"$work/dumpcheck.err"; then
      finding "$c" "dump $(basename "$h") under its final name is refused: $(head -c 300 "$work/dumpcheck.err")"
    fi
  done
}

# check_series CASE DIR: a series page links only to folders that hold their report
check_series() {
  local c=$1 d=$2 l
  [[ -f $d/index.html ]] || return 0
  grep -q "heads/" "$d/index.html" && return 0 # a single report, not a series page
  for l in $(grep -o 'href="[^"#]*/index.html"' "$d/index.html" | sed 's/href="//; s/"$//' | sort -u); do
    [[ -f $d/$l ]] || finding "$c" "series page links to $l, which is missing"
  done
}

# check_tmp CASE DIR: no temporaries left
check_tmp() {
  local n
  n=$(find "$1" -name '*.tmp-*' 2>/dev/null | wc -l)
  echo "$n"
}

# after_stop CASE DIR SIGNAL RC: the checks on an interrupted folder, then the re-run
after_stop() {
  local c=$1 d=$2 sig=$3 rc=$4 n
  cases=$((cases + 1))
  keep=0
  check_catalog "$c" "$d"
  n=$(check_tmp "$d")
  if [[ $sig != KILL && $n -gt 0 ]]; then
    finding "$c" "$n temporaries left after SIG$sig (exit $rc): $(find "$d" -name '*.tmp-*' | head -3 | tr '\n' ' ')"
  fi
  check_dumps "$c" "$d"
  check_series "$c" "$d"
  local rerun_rc before
  before=$(find "$d" -name '*.tmp-*' 2>/dev/null | sort)
  timeout -s KILL 300 "$A" "${args[@]}" --out "$d" >"$work/rerun.out" 2>"$work/rerun.err"
  rerun_rc=$?
  if [[ $rerun_rc != 0 ]]; then
    finding "$c" "re-run exit $rerun_rc: $(head -c 300 "$work/rerun.err")"
  else
    [[ -f $d/index.html ]] || finding "$c" "re-run left no series page"
    check_series "$c (re-run)" "$d"
    check_catalog "$c (re-run)" "$d"
    n=$(comm -13 <(echo "$before") <(find "$d" -name '*.tmp-*' 2>/dev/null | sort) | grep -c .)
    [[ $n == 0 ]] || finding "$c (re-run)" "$n new temporaries left by a successful re-run"
    [[ -z $before ]] || echo "  note: $(echo "$before" | wc -l) temporaries of the killed run stay after the re-run (nothing removes a dead process's)"
  fi
  echo "case $c: exit $rc$([[ -s $work/stop.err ]] && echo ": $(head -c 200 "$work/stop.err")")"
  if [[ $keep == 1 ]]; then mv "$d" "$d.finding"; else rm -rf "$d"; fi
}

# Part 1: timed signals. The series takes T seconds; delays sweep it.
rm -rf "$work/probe"
t0=$(date +%s.%N)
"$A" "${args[@]}" --out "$work/probe" >/dev/null 2>&1 || { echo "hunt: the uninterrupted run fails" >&2; exit 1; }
T=$(echo "$(date +%s.%N) - $t0" | bc)
rm -rf "$work/probe"
echo "uninterrupted run: ${T} s"
steps=8
[[ $quick == 1 ]] && steps=3
for sig in INT TERM KILL; do
  for i in $(seq 1 "$steps"); do
    delay=$(echo "scale=2; $T * $i / ($steps + 1)" | bc)
    d=$work/timed-$sig-$i
    rm -rf "$d"
    # a previous, complete run in the folder first: the interrupted one replaces it (issue 43, 3)
    [[ $((i % 2)) == 0 ]] && "$A" "${args[@]}" --out "$d" >/dev/null 2>&1
    touch "$work/stamp"
    sleep 0.01 # mtimes: what the stopped run writes is newer than the stamp
    # job control: a background job of a script otherwise starts with SIGINT ignored
    set -m
    "$A" "${args[@]}" --out "$d" >/dev/null 2>"$work/stop.err" &
    pid=$!
    set +m
    sleep "$delay"
    kill -s "$sig" "$pid" 2>/dev/null
    wait "$pid"
    rc=$?
    over=""
    [[ $((i % 2)) == 0 ]] && over=", over a complete run"
    after_stop "timed SIG$sig at ${delay}s$over" "$d" "$sig" "$rc"
  done
done

# Part 2: SIGKILL before the N-th final-making write. strace counts invocations per syscall and
# per thread; andrea makes its files final from the main thread, so the N-th line of a trace of
# that one syscall is the N-th invocation.
if command -v strace >/dev/null; then
  for sc in rename link fsync fdatasync; do
    rm -rf "$work/count"
    strace -qq -e trace="$sc" -o "$work/count.strace" "$A" "${args[@]}" --out "$work/count" >/dev/null 2>&1
    total=$(grep -c "^$sc(" "$work/count.strace")
    rm -rf "$work/count"
    [[ $total -gt 0 ]] || continue
    stride=1
    [[ $sc == rename ]] && stride=60 # ~580 renames a run, mostly PNGs: every 60th, and the picks below
    [[ $quick == 1 ]] && stride=$((stride * 5))
    picks=$(seq 1 "$stride" "$total")
    if [[ $sc == rename ]]; then # every series page, dump and catalog; the pages and data/ of the last checkpoint
      picks="$picks $total $(grep -nE 'index.html|/data/|\.h5|catalog' "$work/count.strace" |
        grep -vE '/dyck-step0(0030|0100|0300|1000|3000)/(data|heads)/' | cut -d: -f1)"
    fi
    picks=$(echo "$picks" | tr ' ' '\n' | sort -n | uniq)
    [[ $quick == 1 && $sc == rename ]] && picks=$(echo "$picks" | awk 'NR % 3 == 1')
    echo "kill before $sc: $total calls in a run, $(echo "$picks" | wc -w) cases"
    for n in $picks; do
      d=$work/kill-$sc-$n
      rm -rf "$d"
      what=$(sed -n "${n}p" "$work/count.strace" | cut -c1-150)
      touch "$work/stamp"
      strace -f -qq -o /dev/null -e trace="$sc" -e inject="$sc":signal=KILL:when="$n" \
        "$A" "${args[@]}" --out "$d" >/dev/null 2>"$work/stop.err"
      rc=$?
      after_stop "SIGKILL before $sc #$n of $total: $what" "$d" KILL "$rc"
    done
  done
else
  echo "strace not found: the kill-before-each-write part is skipped"
fi

echo "hunt: $cases cases, $findings findings, $(($(date +%s) - t_start)) s; work folder $work"
[[ $findings == 0 ]] && rm -rf "$work"
[[ $findings == 0 ]]
