#!/usr/bin/env bash
# test_series_rerun_stopped_midway_says_it_is_incomplete — a series run again into its folder
# kept the earlier run's series page while it rewrote the checkpoint reports one by one: stopped
# midway (Ctrl-C at the second "rendering"), the folder looked complete, its page (without the new
# run's classes) linking to a report folder without index.html and to reports of two runs. Now
# the page is replaced, before the first report is rewritten, by one saying the series is being
# written; the folder stays a series folder; the next whole run writes the series page again.
# A lock holder on the second checkpoint's folder (flock(1), as another andrea writing there)
# stops the run there, deterministically.
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files tests/data/series/dyck-step00030.bin models/andrea-tiny.bin
command -v flock >/dev/null || skip "flock(1) (util-linux) is not installed"
cd "$tmp"
S="$ANDREA_SRC/tests/data/series"
series=("$S/dyck-step00030.bin" "$S/dyck-step00100.bin" "$S/dyck-step00300.bin")
"$A" analyze "${series[@]}" --out s --probes induction,prev_token --ablate-items 0 --quiet >first.out 2>&1 ||
  bad "setup" "$(cat first.out)"
grep -q 'href="dyck-step00100/index.html"' s/index.html || bad "setup" "no link in the first series page"
# bash, not flock -c: that runs /bin/sh, Debian's dash, which has no [[ (the loop ended at once)
flock s/dyck-step00100 bash -c 'touch held; while [[ ! -e release ]]; do sleep 0.1; done' &
holder=$!
# the lock is held once the holder says so (a fixed sleep lost the race on a loaded machine)
for ((i = 0; i < 300; i++)); do [[ -e held ]] && break; sleep 0.1; done
[[ -e held ]] || bad "setup" "flock(1) did not take the folder's lock"
"$A" analyze "${series[@]}" --out s --probes bos --ablate-items 0 >again.out 2>again.err &
run=$!
for ((i = 0; i < 600; i++)); do
  grep -q "another andrea is writing into s/dyck-step00100; waiting for it" again.err && break
  sleep 0.1
done
grep -q "waiting for it" again.err || bad "setup" "the run did not reach the second report: $(cat again.err)"
# stopped while it waits at the second checkpoint: the first report is already the new run's
kill -TERM $run
wait $run
rc=$?
touch release
wait $holder
if [[ $rc == 143 ]] && grep -q "This series is being written" s/index.html && ! grep -q 'href=' s/index.html; then
  ok "a run stopped midway leaves a page saying the series is being written, linking nothing (exit $rc)"
else
  bad "stopped midway" "exit $rc; s/index.html: $(head -c 600 s/index.html)"
fi
rc=0
"$A" show "$ANDREA_SRC/models/andrea-tiny.bin" "x" --out s >show.out 2>show.err || rc=$?
[[ $rc == 1 ]] && grep -q "^andrea: s: holds an andrea series page" show.err && ok "the folder is still a series folder" ||
  bad "still a series folder" "exit $rc: $(cat show.err)"
"$A" analyze "${series[@]}" --out s --probes bos --ablate-items 0 --quiet >third.out 2>third.err &&
  grep -q 'href="dyck-step00100/index.html"' s/index.html && grep -q 'id="class-bos"' s/index.html &&
  ! grep -q "being written" s/index.html && ok "the next whole run writes the series page" ||
  bad "run again" "$(cat third.err)"
finish
