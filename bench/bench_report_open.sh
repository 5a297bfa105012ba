#!/usr/bin/env bash
# bench_report_open.sh — how long the report's interactive pages take to open in headless Chromium,
# for a 12 x 12-head model (random weights, d_model 96, byte vocabulary) and 32 examples of 128
# tokens (`andrea dump --probes prev_token --n 32 --len 128`, `andrea render --examples 32`).
# Each page is opened RUNS times (fresh profile each time) with a script that records, at the load
# event, performance.now() (ms since navigation start) — by then every map has been drawn (andrea.js
# draws at DOMContentLoaded, and on-demand head data delays the load event) — plus andrea.js's own
# boot time. Also prints the data sizes. Pages: a head page (32 interactive maps + 32 PNGs), the
# token view (explore.html: meta + one head), the compare page (two heads), index.html, and the page
# of `andrea show` on a 128-token prompt (token view + 144 maps, every head's data loaded).
#
# usage: [KEEP=1] bash bench/bench_report_open.sh [ANDREA_BIN] [RUNS]   (default build/andrea, 5 runs;
#        KEEP=1 keeps the report folder under /tmp)
# Needs /usr/bin/python3 with numpy and /usr/bin/chromium. Paste the output into bench/RESULTS.md.
set -euo pipefail
SRC="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${1:-$SRC/build/andrea}"
RUNS="${2:-5}"
[ -x "$BIN" ] || { echo "bench_report_open: no andrea binary at $BIN (build first or pass its path)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/andrea-bench-open-XXXXXX)
trap '[ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"' EXIT
cd "$tmp"
/usr/bin/python3 "$SRC/tests/tiny_ckpt.py" m12.bin --seed 1 --maxT 128 --L 12 --H 12 --C 96 --scale 0.3 --ln-ones
t0=$(date +%s.%N)
"$BIN" dump m12.bin --probes prev_token --n 32 --len 128 --out d.h5 --quiet --device cpu
"$BIN" classify d.h5 --db c.db --quiet --device cpu > /dev/null
t1=$(date +%s.%N)
"$BIN" render d.h5 --db c.db --out rep --examples 32 --quiet > /dev/null
t2=$(date +%s.%N)
echo "model 12 layers x 12 heads, prev_token: 32 examples x 128 tokens"
printf 'dump + classify %.1f s, render (PNGs + interactive data) %.1f s\n' "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)"
# andrea show of a 127-byte prompt (128 tokens with BOS) on the same model: 144 maps on one page
/usr/bin/python3 -c "print(('The quick brown fox jumps over the lazy dog. ' * 3)[:127], end='')" > prompt.txt
"$BIN" show m12.bin --text-file prompt.txt --out show --device cpu --quiet > /dev/null
echo "data: $(du -sh rep/data | cut -f1) in data/ ($(ls rep/data | wc -l) files; one head: $(du -h rep/data/L5_H7.js | cut -f1), meta.js $(du -h rep/data/meta.js | cut -f1)); PNGs: $(du -sh rep/maps | cut -f1)"

cat > probe.js <<'EOF'
<script>
window.addEventListener('load', function () {
  var n = performance.now(), A = window.ANDREA || {};
  var pre = document.createElement('pre');
  pre.textContent = 'ANDREA_OPEN ' + JSON.stringify({load_ms: n, boot_ms: A.bootMs || 0,
    maps: document.querySelectorAll('canvas.hm-canvas').length, errors: (A.errors || []).length});
  document.body.appendChild(pre);
});
</script>
EOF
inject() { /usr/bin/python3 -c "import sys; s=open(sys.argv[1]).read(); open(sys.argv[2],'w').write(s.replace('<head>\n', '<head>\n' + open('probe.js').read(), 1))" "$1" "$2"; }
inject rep/heads/L5_H7.html rep/heads/_b_head.html
inject rep/explore.html rep/_b_explore.html
inject rep/compare.html rep/_b_compare.html
inject rep/index.html rep/_b_index.html
inject show/index.html show/_b_show.html
printf '%-34s %5s %10s %10s %10s %6s\n' page maps "load med" "load max" "boot med" runs
for p in "heads/_b_head.html" "_b_explore.html#l=5&h=7&s=0&e=31" "_b_compare.html#a=5.7&b=3.2&s=0&e=31" "_b_index.html" \
         "../show/_b_show.html"; do
  res=()
  for i in $(seq "$RUNS"); do
    out=$(timeout 120 /usr/bin/chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
      --disable-background-networking --proxy-server=127.0.0.1:9 --host-resolver-rules="MAP * ~NOTFOUND" \
      --user-data-dir="$tmp/prof-$i" --dump-dom "file://$tmp/rep/$p" 2> /dev/null | sed -n 's/.*ANDREA_OPEN \(.*\)<\/pre>.*/\1/p' | head -1)
    res+=("$out")
  done
  /usr/bin/python3 - "$p" "${res[@]}" <<'EOF'
import json, statistics, sys
rs = [json.loads(x.replace('&quot;', '"')) for x in sys.argv[2:] if x]
if not rs: print(f"{sys.argv[1]:34s} no result"); sys.exit()
l = [r["load_ms"] for r in rs]; b = [r["boot_ms"] for r in rs]
print(f"{sys.argv[1]:34s} {rs[0]['maps']:5d} {statistics.median(l):8.0f}ms {max(l):8.0f}ms {statistics.median(b):8.0f}ms {len(rs):6d}"
      + (f"  ERRORS {rs[0]['errors']}" if rs[0]["errors"] else ""))
EOF
done
