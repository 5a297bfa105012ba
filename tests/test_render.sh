#!/usr/bin/env bash
# test_render.sh — `andrea render` end to end: a random tiny byte-level model made here (in a
# folder whose name holds " & ' < >), dumped with `andrea dump` over a probe file whose text holds
# <script>alert(1)</script> and "&', classified with `andrea classify`, then rendered.
# Checks: the files a report must have, escaping in every page, same bytes from two renders and
# from 1 or 2 threads, --report-maps, valid PNGs without timestamps, no network reference,
# training-step section, bad inputs.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_python_modules numpy
need_built dump classify

cd "$tmp"
mdir="m\"&'<b>"
mkdir -p "$mdir"
write_tiny_bin "$mdir/tiny_step100.bin" 11
write_tiny_bin "$mdir/tiny_step200.bin" 12
cat > probes.jsonl <<'EOF'
{"suite": "prev_token", "text": "the cat sat on the mat and looked at the dog"}
{"suite": "prev_token", "text": "say \"&' <script>alert(1)</script> done"}
{"suite": "prev_token", "text": "a third line\twith a tab\nand a newline"}
{"suite": "my-suite", "text": "a \"&' b <script>alert(1)</script>", "targets": [[3, [2]], [4, [3]], [5, [0, 4]]]}
EOF
for s in 100 200; do
  "$A" dump "$mdir/tiny_step$s.bin" --probes probes.jsonl --out "d$s.h5" --quiet --device cpu
  "$A" classify "d$s.h5" --db c.db --quiet --device cpu > /dev/null
done

t0=$(date +%s%N)
out=$("$A" render d200.h5 --db c.db --out rep --report full --quiet)
t1=$(date +%s%N)
echo "render took $(( (t1 - t0) / 1000000 )) ms"
[[ $out == "report: rep/index.html" ]] && ok "render prints the index path" || bad "render output" "$out"

# --- the files of a report ---
n_heads=$(ls rep/heads/*.html | wc -l)
[[ $n_heads -eq 8 ]] && ok "one page per head (8)" || bad "head pages" "$n_heads"
# default: 2 examples shown per suite (prev_token has 3 items -> 2, my-suite 1 item -> 1), and one
# PNG per head and suite (--report-maps 1): 8 heads x 2 suites
n_maps=$(find rep/maps -name '*.png' | wc -l)
[[ $n_maps -eq 16 ]] && ok "one heatmap PNG per head and suite by default (16)" || bad "heatmaps" "$n_maps"
[[ ! -e rep/maps/L0_H0/s-prev_token_e1.png ]] && ok "no PNG of example 1 by default" || bad "default PNGs" "e1 written"
grep -q 'data-s="0" data-e="1"' rep/heads/L0_H0.html && ok "example 1 is still shown interactively" \
  || bad "interactive example 1" "no slot on the head page"
grep -q 's-prev_token_e1.png' rep/heads/L0_H0.html && bad "head page" "links a PNG that was not rendered" \
  || ok "the head page links only the PNGs rendered"
for f in overview/scores_c0-prev_token.png overview/scores_c1-my-suite.png overview/thumbs_s-prev_token.png \
         overview/thumbs_s-my-suite.png maps/L1_H3/s-my-suite_e0.png; do
  [[ -s rep/$f ]] && ok "has $f" || bad "missing" "$f"
done

# --- escaping: no raw hostile text in any page; the escaped forms are there ---
if grep -l "<script>alert" rep/index.html rep/heads/*.html; then bad "raw <script>alert in a page" "see above"
else ok "no raw <script>alert in any page"; fi
grep -qF 'm&quot;&amp;&#39;&lt;b&gt;/tiny_step200.bin' rep/index.html && ok "checkpoint path escaped on the index" \
  || bad "escaped checkpoint path" "not found"
# the token lists are in data/meta.js once (andrea.js shows them as text on the head pages): byte
# tokens of '<', '"', '&' and "'" appear there as JSON escapes, and no '<' is written raw
for ref in '"\u003c"' '"\""' '"\u0026"' "\"'\""; do
  grep -qF "$ref" rep/data/meta.js && ok "token $ref escaped in data/meta.js" || bad "token" "$ref not found in data/meta.js"
done
grep -q '<' rep/data/meta.js && bad "data/meta.js" "holds a raw <" || ok "no raw < in data/meta.js"
grep -qF '<span class="tok-slot" data-s="0" data-e="0"></span>' rep/heads/L0_H0.html && ! grep -qF '<span class="tok">' rep/heads/L0_H0.html \
  && ok "head pages hold a slot per token list, not the tokens" || bad "head page token lists" "no slot, or tokens written in the page"

# --- offline: no reference that leaves the folder ---
if grep -nE '(src|href)="(https?:|//)' rep/index.html rep/heads/*.html; then bad "network reference" "see above"
else ok "no network reference"; fi

# --- training run: two checkpoints with steps -> the step section lists both ---
grep -q "Scores against training step" rep/index.html && grep -q "steps 100, 200" rep/index.html \
  && ok "training-step section with steps 100, 200" || bad "training-step section" "missing"

# --- PNGs: valid, no tIME chunk, heatmap size sane ---
/usr/bin/python3 - rep <<'EOF' && ok "every PNG is valid RGB without tIME" || bad "PNG check" "see above"
import sys, os, struct, zlib
root = sys.argv[1]
bad = 0
for dp, _, fs in os.walk(root):
    for f in fs:
        if not f.endswith(".png"): continue
        b = open(os.path.join(dp, f), "rb").read()
        if b[:8] != b"\x89PNG\r\n\x1a\n": print("bad signature", f); bad += 1; continue
        pos, chunks = 8, []
        while pos < len(b):
            n, = struct.unpack(">I", b[pos:pos+4]); typ = b[pos+4:pos+8]; data = b[pos+8:pos+8+n]
            crc, = struct.unpack(">I", b[pos+8+n:pos+12+n])
            if zlib.crc32(typ + data) != crc: print("bad crc", f, typ); bad += 1
            chunks.append(typ); pos += 12 + n
        w, h, depth, ctype = struct.unpack(">IIBB", b[16:26])
        if b"tIME" in chunks or chunks[-1] != b"IEND" or depth != 8 or ctype != 2 or not (50 < w < 4000 and 50 < h < 4000):
            print("bad", f, chunks, w, h, depth, ctype); bad += 1
sys.exit(1 if bad else 0)
EOF

# --- determinism: a second render gives the same bytes ---
"$A" render d200.h5 --db c.db --out rep2 --report full --quiet > /dev/null
if diff -r rep rep2 > /dev/null; then ok "two renders give identical files"; else bad "determinism" "$(diff -rq rep rep2 | head -3)"; fi

# --- --report-maps: all, none, more than --examples; PNGs drawn on 1 or 2 threads are the same files ---
OMP_NUM_THREADS=1 "$A" render d200.h5 --db c.db --out rep_t1 --report-maps all --quiet > /dev/null
OMP_NUM_THREADS=2 "$A" render d200.h5 --db c.db --out rep_t2 --report-maps all --quiet > /dev/null
n=$(find rep_t1/maps -name '*.png' | wc -l)
[[ $n -eq 24 ]] && ok "--report-maps all: one PNG per head, suite and shown example (24)" || bad "--report-maps all" "$n PNGs"
grep -q 's-prev_token_e1.png' rep_t1/heads/L0_H0.html && ok "--report-maps all: the head page links example 1's PNG" \
  || bad "--report-maps all" "no link to e1"
if diff -r rep_t1 rep_t2 > /dev/null; then ok "1 and 2 threads write identical files (OMP_NUM_THREADS)"
else bad "threads" "$(diff -rq rep_t1 rep_t2 | head -3)"; fi
"$A" render d200.h5 --db c.db --out rep_none --report-maps 0 --quiet > /dev/null
[[ ! -e rep_none/maps && -s rep_none/overview/thumbs_s-prev_token.png && -s rep_none/index.html ]] \
  && ok "--report-maps 0: no heatmap PNG, the overviews stay" || bad "--report-maps 0" "$(ls rep_none)"
grep -q 'static image (PNG)' rep_none/heads/L0_H0.html && bad "--report-maps 0" "a head page offers a PNG" \
  || ok "--report-maps 0: head pages offer no PNG"
"$A" render d200.h5 --db c.db --out rep_lab --report-maps labelled --quiet > /dev/null
labelled=$(sql_rows c.db "SELECT DISTINCT 'L' || layer || '_H' || head FROM head_catalog WHERE label = 1" | sort)
pngdirs=$( (ls rep_lab/maps 2>/dev/null || true) | sort)
[[ "$pngdirs" == "$labelled" ]] && grep -q "labelled heads only" rep_lab/index.html \
  && ok "--report-maps labelled: PNGs for exactly the labelled heads ($(echo $labelled | wc -w)), the index says so" \
  || bad "--report-maps labelled" "labelled: [$labelled] PNG folders: [$pngdirs]"
"$A" render d200.h5 --db c.db --out rep_small --quiet > /dev/null
pngdirs=$( (ls rep_small/maps 2>/dev/null || true) | sort)
[[ "$pngdirs" == "$labelled" && -s rep_small/data/L0_H0.js ]] && grep -q "labelled heads only (the default, --report small)" rep_small/index.html \
  && ok "the default (--report small): PNGs for exactly the labelled heads, every head's interactive data, the index says so" \
  || bad "--report small" "labelled: [$labelled] PNG folders: [$pngdirs]"
"$A" render d200.h5 --db c.db --out rep_3 --report-maps 3 --quiet > /dev/null
[[ -s rep_3/maps/L0_H0/s-prev_token_e2.png && ! -e rep_3/maps/L0_H0/s-my-suite_e1.png ]] \
  && ok "--report-maps 3 shows 3 examples where the suite has them" || bad "--report-maps 3" "$(ls rep_3/maps/L0_H0)"

# --- --examples ---
"$A" render d200.h5 --db c.db --out rep3 --examples 1 --report full --quiet > /dev/null
n=$(find rep3/maps -name '*_e1.png' | wc -l)
[[ $n -eq 0 && -s rep3/maps/L0_H0/s-prev_token_e0.png ]] && ok "--examples 1 renders only example 0" || bad "--examples 1" "$n e1 files"

# --- bad inputs: one line naming the file, exit 1 (usage: 2) ---
expect_fail() { # NAME CODE PATTERN CMD...
  local name=$1 code=$2 pat=$3; shift 3
  local err rc=0
  err=$("$@" 2>&1 >/dev/null) || rc=$?
  if [[ $rc -eq $code && $(printf '%s\n' "$err" | wc -l) -eq 1 && $err == *"$pat"* ]]; then ok "$name"
  else bad "$name" "rc=$rc err=$err"; fi
}
expect_fail "missing catalog is refused with its name" 1 "nope.db" "$A" render d200.h5 --db nope.db --out x1 --quiet
[[ ! -e nope.db ]] && ok "a missing catalog is not created" || bad "missing catalog" "was created"
expect_fail "--report other is refused" 2 "--report is small or full" "$A" render d200.h5 --db c.db --out x0 --report big --quiet
/usr/bin/python3 -c "import sqlite3; sqlite3.connect('empty.db').execute('create table t(x)')"
expect_fail "a database without head_catalog is refused" 1 "empty.db: not an andrea catalog" "$A" render d200.h5 --db empty.db --out x2 --quiet
# an input lying where the report writes or clears (DIR/heads/..., DIR/data/..., DIR/index.html)
# is refused with the input untouched: render deleted its own catalog or dump and exited 0
cp c.db rep2/heads/L0_H0.html
cp d200.h5 rep2/data/L9_H9.js
db_sum=$(sha256sum <rep2/heads/L0_H0.html); dump_sum=$(sha256sum <rep2/data/L9_H9.js)
expect_fail "a catalog inside the report folder is refused" 1 "rep2/heads/L0_H0.html: is the catalog this command reads" \
  "$A" render d200.h5 --db rep2/heads/L0_H0.html --out rep2 --quiet
expect_fail "a dump inside the report folder is refused" 1 "rep2/data/L9_H9.js: is the dump this command reads" \
  "$A" render rep2/data/L9_H9.js --db c.db --out rep2 --quiet
[[ $(sha256sum <rep2/heads/L0_H0.html) == "$db_sum" && $(sha256sum <rep2/data/L9_H9.js) == "$dump_sum" ]] &&
  ok "both inputs are left as they were" || bad "inputs inside the report" "changed"
rm -f rep2/heads/L0_H0.html rep2/data/L9_H9.js
printf 'not hdf5' > fake.h5
expect_fail "a file that is not a dump is refused with its name" 1 "fake.h5" "$A" render fake.h5 --db c.db --out x3 --quiet
printf 'x' > afile
expect_fail "an output folder under a file is refused" 1 "afile" "$A" render d200.h5 --db c.db --out afile/rep --quiet
expect_fail "--db is required" 2 "--db" "$A" render d200.h5 --out x4
expect_fail "--examples 0 is a usage error" 2 "--examples" "$A" render d200.h5 --db c.db --out x5 --examples 0
expect_fail "--report-maps -1 is a usage error" 2 "--report-maps wants 0..1000, 'all' or 'labelled'" "$A" render d200.h5 --db c.db --out x6 --report-maps -1
expect_fail "--report-maps some is a usage error" 2 "--report-maps wants 0..1000, 'all' or 'labelled'" "$A" render d200.h5 --db c.db --out x6 --report-maps some
expect_fail "analyze --report-maps 1001 is a usage error" 2 "--report-maps wants 0..1000, 'all' or 'labelled'" "$A" analyze --out x7 --report-maps 1001
# a heatmap that cannot be written (a folder holds its name) while other threads draw: one line, no index
mkdir -p x8/maps/L1_H2/s-prev_token_e0.png
expect_fail "an unwritable heatmap stops the render with its name" 1 "s-prev_token_e0.png" \
  env OMP_NUM_THREADS=2 "$A" render d200.h5 --db c.db --out x8 --report full --quiet
[[ ! -e x8/index.html && -z $(find x8 -name '*.tmp-*') ]] && ok "... and leaves no index and no temporary file" \
  || bad "unwritable heatmap" "$(find x8 -name 'index.html' -o -name '*.tmp-*')"
[[ ! -e x1 && ! -e x2/index.html && ! -e x3/index.html ]] && ok "failed renders leave no index" || bad "failed renders" "left an index"

finish
