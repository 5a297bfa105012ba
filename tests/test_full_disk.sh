#!/usr/bin/env bash
# test_full_disk.sh — writers past a file size limit (`ulimit -f`) and on a file system that is
# full (a 2 MiB tmpfs, where the machine lets root mount one; else that part is skipped with a
# note): each failure is exit 1 and one line "andrea: FILE: ..." that says why in the OS's words
# ("File too large", "No space left on device"; SQLite alone says "disk I/O error"), an earlier
# catalog stays as it was and no temporary is left.
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files models/andrea-tiny.bin
M=$ANDREA_SRC/models/andrea-tiny.bin
cd "$tmp"
"$A" dump "$M" --probes bos --n 2 --len 16 --device cpu -o small.h5 --quiet >/dev/null 2>&1 || bad "fixture" "dump of small.h5 failed"
"$A" classify small.h5 --db base.db --ablate-items 1 --ablation zero --quiet >/dev/null 2>&1 || bad "fixture" "classify into base.db failed"

# a new catalog past the file size limit: SQLite's "disk I/O error" with the reason behind it
(ulimit -f 8; expect_one_line 1 'lim\.db: .*(disk I/O error \(File too large\)|database or disk is full)$' classify small.h5 --db lim.db --ablate-items 1 --ablation zero --quiet
 exit $fails) || fails=$((fails + 1))
# and leaves no catalog behind (it left a 4 KiB lim.db without tables, and its -shm and -wal)
[[ -z $(ls lim.db* 2>/dev/null) ]] && ok "no new catalog left past the file size limit" || bad "new catalog past the limit" "$(ls -l lim.db*)"

# --- a full file system
mkdir -p full
trap 'umount "$tmp/full" 2>/dev/null; rm -rf "$tmp"' EXIT
if ! mount -t tmpfs -o size=2m tmpfs full 2>/dev/null; then
  echo "note: no tmpfs could be mounted here (not root, or no mount): the full file system cases are not checked"
  finish
  exit
fi
fill() { # fill: leaves the tmpfs with no free block
  dd if=/dev/zero of=full/fill bs=4k 2>/dev/null
  return 0
}

# a new catalog on a full disk: one line, and no catalog.db left (it left an empty file, which
# `heads` then called "not an andrea catalog")
fill
expect_one_line 1 'full/new\.db: .*(No space left on device|database or disk is full)' classify small.h5 --db full/new.db --ablate-items 1 --ablation zero --quiet
[[ -z $(ls full/new.db* 2>/dev/null) ]] && ok "no new catalog left on the full disk" || bad "new catalog on a full disk" "$(ls -l full)"
rm -f full/fill

# an earlier catalog on a full disk takes no run: one line that says the disk is full, the file
# unchanged, readable again once there is room
cp base.db full/c.db
sum=$(sha256sum <full/c.db)
fill
expect_one_line 1 'full/c\.db: .*(No space left on device|database or disk is full)' classify small.h5 --db full/c.db --ablate-items 1 --ablation zero --quiet
[[ $(sha256sum <full/c.db) == "$sum" ]] && ok "the earlier catalog is unchanged" || bad "full disk catalog" "c.db changed"
# a reader on the full disk cannot make the catalog's -shm, so it reads the file as immutable
# (its -wal holds nothing), as in a read-only folder; it failed with "disk I/O error"
"$A" heads --db full/c.db --all >heads.out 2>heads.err && grep -q "prev_token\|bos" heads.out &&
  ok "a catalog on a full disk reads" || bad "reading a catalog on a full disk" "$(cat heads.err)"
"$A" render small.h5 --db full/c.db --out rep --quiet >/dev/null 2>render.err && [[ -f rep/index.html ]] &&
  ok "a report from a catalog on a full disk" || bad "render from a catalog on a full disk" "$(cat render.err)"
rm -f full/fill
"$A" heads --db full/c.db --all >/dev/null 2>&1 && ok "with room again the catalog reads" || bad "full disk catalog" "unreadable after the disk was freed"
ls full/*.tmp-* >/dev/null 2>&1 && bad "no temporary left" "$(ls full)" || ok "no temporary left"
rm -f full/c.db*

# a dump onto a disk that fills at each stage of the writer (creating the file, writing maps,
# closing a dataset, closing the file: the free room grows 4 KiB a run until the dump fits): one
# line that names the reason each time ("cannot close token_text of bos" and "cannot close a
# dataset of bos" gave none; the file's close was "HDF5 closed failed", a variable's name), no
# temporary, no file under the final name
size=$(stat -c %s small.h5)
stages=0 msgs=0
for ((room = 0; room <= size / 1024 + 8; room += 4)); do
  rm -f full/*
  dd if=/dev/zero of=full/fill bs=1k count=$((2048 - room)) 2>/dev/null
  rc=0
  "$A" dump "$M" --probes bos --n 2 --len 16 --device cpu -o full/d.h5 --quiet >/dev/null 2>err.txt || rc=$?
  if [[ $rc == 0 ]]; then
    [[ -f full/d.h5 && ! -s err.txt ]] || bad "dump with $room KiB free" "exit 0 but $(ls full) / $(cat err.txt)"
    break
  fi
  stages=$((stages + 1))
  if [[ $rc == 1 && $(wc -l <err.txt) == 1 ]] && grep -q '^andrea: full/d\.h5: .*No space left on device' err.txt &&
     ! grep -q 'HDF5 closed failed' err.txt &&
     [[ ! -e full/d.h5 ]] && ! ls full/*.tmp-* >/dev/null 2>&1; then
    msgs=$((msgs + 1))
  else
    bad "dump with $room KiB free" "exit $rc, $(ls full | tr '\n' ' '): $(cat err.txt)"
  fi
done
[[ $stages -ge 3 && $msgs == "$stages" ]] && ok "a dump onto a full disk: $stages failures, each one line naming 'No space left on device', nothing left" ||
  bad "dump onto a full disk" "$msgs of $stages failures said why"

finish
