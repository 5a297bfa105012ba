#!/usr/bin/env bash
# test_show_and_render_check_their_folder_after_waiting_for_it — `show` and `render` checked their
# output folder before waiting for its lock, not after: a report (or a series page, or someone's
# own index.html) written there while they waited was replaced (the report's heads/ and maps/
# emptied, its index.html the show page, exit 0). Now they check again once they hold the folder
# and refuse with one line, leaving what was written there as it was. A lock holder (flock(1) on
# the folder) stands in for the other writer: it copies a finished page in while they wait.
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files models/andrea-tiny.bin tests/data/series/dyck-step00030.bin
command -v flock >/dev/null || skip "flock(1) (util-linux) is not installed"
cd "$tmp"
M="$ANDREA_SRC/models/andrea-tiny.bin"
S="$ANDREA_SRC/tests/data/series"
"$A" analyze "$M" --out report --probes bos --n 2 --len 16 --ablate-items 0 --quiet >/dev/null 2>&1 || bad "setup" "analyze"
"$A" show "$M" "abc" --out page >/dev/null 2>&1 || bad "setup" "show"
"$A" analyze "$S/dyck-step00030.bin" "$S/dyck-step00100.bin" --out series --probes bos --ablate-items 0 --quiet \
  >/dev/null 2>&1 || bad "setup" "series"
"$A" dump "$M" --probes bos --n 2 --len 16 --device cpu --out d.h5 --quiet >/dev/null 2>&1
"$A" classify d.h5 --db r.db --ablate-items 0 >/dev/null 2>&1 || bad "setup" "classify"
# copy_in_while_waiting DIR FROM CMD...: holds DIR for 3 s, copying FROM's files in at the end, while
# `andrea CMD...` starts 0.5 s in and waits for it; then checks the one-line refusal and that DIR
# holds FROM's index.html and heads/ untouched.
copy_in_while_waiting() {
  local dir=$1 from=$2 what=$3 re=$4
  shift 4
  mkdir -p "$dir"
  rm -f "$dir.held"
  flock "$dir" -c "touch '$dir.held'; sleep 3; cp -a '$from'/. '$dir'/" &
  local holder=$!
  local i # until the holder has the lock (a fixed sleep can lose that race on a loaded machine)
  for ((i = 0; i < 300; i++)); do [[ -e $dir.held ]] && break; sleep 0.1; done
  local rc=0
  "$A" "$@" >"$dir.out" 2>"$dir.err" || rc=$?
  wait $holder
  local last
  last=$(grep -v "waiting for it" "$dir.err")
  if [[ $rc == 1 && $(printf '%s\n' "$last" | wc -l) == 1 ]] && [[ $last =~ $re ]] && cmp -s "$from/index.html" "$dir/index.html" &&
    { [[ ! -d $from/heads ]] || diff -r "$from/heads" "$dir/heads" >/dev/null; }; then
    ok "$what: refused once it holds the folder ($last)"
  else
    bad "$what" "exit $rc, stderr: $(cat "$dir.err"); index.html $(cmp -s "$from/index.html" "$dir/index.html" && echo kept || echo replaced)"
  fi
}
copy_in_while_waiting d1 report "show into a folder where a report was written meanwhile" \
  "^andrea: d1: holds an andrea report, whose index.html this .show. page would replace" show "$M" "x" --out d1
copy_in_while_waiting d2 page "render into a folder where a show page was written meanwhile" \
  "^andrea: d2: holds an andrea .show. page, whose index.html this report would replace" render d.h5 --db r.db --out d2
copy_in_while_waiting d3 series "render into a folder where a series page was written meanwhile" \
  "^andrea: d3: holds an andrea series page, whose index.html this report would replace" render d.h5 --db r.db --out d3
mkdir -p own
echo "<html><body>my own page</body></html>" >own/index.html
copy_in_while_waiting d4 own "render into a folder where someone's own index.html appeared meanwhile" \
  "^andrea: d4: holds an index.html that andrea did not write" render d.h5 --db r.db --out d4
copy_in_while_waiting d5 own "show into a folder where someone's own index.html appeared meanwhile" \
  "^andrea: d5: holds an index.html that andrea did not write" show "$M" "x" --out d5
# a folder that stays as it was while they wait is still written
mkdir -p d6
flock d6 -c 'touch d6.held; sleep 1.5' &
holder=$!
for ((i = 0; i < 300; i++)); do [[ -e d6.held ]] && break; sleep 0.1; done
"$A" show "$M" "x" --out d6 >/dev/null 2>d6.err && [[ -f d6/index.html ]] && ok "show writes after waiting when nothing came meanwhile" ||
  bad "show after wait" "$(cat d6.err)"
wait $holder
finish
