#!/usr/bin/env bash
# test_mpi_dump_master_reads_like_serial — the master file of `mpirun -np 2|3|4 andrea dump` (part
# files + virtual datasets) reads like the serial dump: h5py sees the serial layout and values
# from any working folder, its virtual datasets map every row from the part files, `andrea
# classify` of it writes the serial catalog's labels and scores (also under mpirun), `andrea
# render` draws it; a missing part, a part replaced by another file, a part opened alone, and
# the master alone in another folder are each one error line.
source "$ANDREA_SRC/tests/mpi_lib.sh"
cd "$W"
tiny_model m.bin
CMP="/usr/bin/python3 $ANDREA_SRC/tests/mpi_compare_dumps.py"
CC="/usr/bin/python3 $ANDREA_SRC/tests/mpi_compare_catalogs.py"
D="dump ../m.bin --n 5 --len 20 --batch 2 --device cpu --quiet --out d.h5"
mkdir s && (cd s && $A $D && $A classify d.h5 --db c.db --quiet > /dev/null) || { echo "serial dump/classify failed"; exit 1; }
for np in 2 3 4; do
  rm -rf p && mkdir p
  (cd p && $MR -np $np $A $D > ../log.txt 2>&1)
  check "[ $? = 0 ]" "np $np: dump exits 0 ($(tail -3 log.txt))"
  check "[ \$(ls p | grep -c '^d.h5.part-[0-9]*-of-$np\$') = $np ]" "np $np: one part file a rank beside the master"
  check "(cd / && $CMP $W/s/d.h5 $W/p/d.h5) > cmp.txt" "np $np: master equals serial through h5py from another folder: $(head -3 cmp.txt)"
  /usr/bin/python3 - p/d.h5 $np > vds.txt 2>&1 <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
n = int(sys.argv[2])
parts = f.attrs["parts"].decode().split(",")
assert parts == [f"d.h5.part-{r}-of-{n}" for r in range(n)], parts
for g in f.attrs["suites"].decode().split(","):
    for name in ("attention", "head_out_norm", "head_dla"):
        d = f[g][name]
        assert d.is_virtual, (g, name)
        rows = sorted((m.vspace.get_select_bounds()[0][0], m.vspace.get_select_bounds()[1][0]) for m in d.virtual_sources())
        assert rows[0][0] == 0 and rows[-1][1] == d.shape[0] - 1, rows
        assert all(a[1] + 1 == b[0] for a, b in zip(rows, rows[1:])), rows
        assert all(m.file_name in parts and m.dset_name == f"/{g}/{name}" for m in d.virtual_sources())
    for name in ("tokens", "lengths", "targets", "token_text"):
        assert not f[g][name].is_virtual, (g, name)
print("ok")
PY
  check "grep -q '^ok' vds.txt" "np $np: maps and values are virtual over the parts, every row once: $(tail -2 vds.txt)"
  (cd p && $A classify d.h5 --db c.db --quiet > /dev/null 2> ../err.txt)
  check "[ $? = 0 ] && $CC s/c.db p/c.db > cmp.txt" "np $np: classify of the master gives the serial catalog: $(cat err.txt; head -3 cmp.txt)"
  rm -f p/c.db
  (cd p && $MR -np $np $A classify d.h5 --db c.db --quiet > /dev/null 2> ../err.txt)
  check "[ $? = 0 ] && $CC s/c.db p/c.db > cmp.txt" "np $np: mpirun classify of the master gives the serial catalog: $(tail -2 err.txt; head -3 cmp.txt)"
done
# render reads the master (last np: 4)
(cd p && $A render d.h5 --db c.db --out r --quiet > /dev/null 2> ../err.txt)
check "[ $? = 0 ] && [ -f p/r/index.html ]" "render draws the master's maps ($(tail -2 err.txt))"
# failures: one line each, naming the file
one_line() { # NAME PATTERN CMD...: exit non-zero, stderr one line matching PATTERN
  local name=$1 pat=$2; shift 2
  "$@" > /dev/null 2> $name.err; local rc=$?
  check "[ $rc != 0 ] && [ \$(wc -l < $name.err) = 1 ] && grep -q \"$pat\" $name.err" "$name: one error line ($(cat $name.err))"
}
mv p/d.h5.part-1-of-4 held
one_line missing "^andrea: p/d.h5: part file p/d.h5.part-1-of-4 is missing" $A classify p/d.h5 --db x.db
one_line missing-render "part file p/d.h5.part-1-of-4 is missing" $A render p/d.h5 --db p/c.db --out rr
cp p/d.h5.part-2-of-4 p/d.h5.part-1-of-4
one_line replaced "^andrea: p/d.h5: part file p/d.h5.part-1-of-4 is not the one this master file was written with" $A classify p/d.h5 --db x.db
mv held p/d.h5.part-1-of-4
printf 'X' | dd of=p/d.h5.part-3-of-4 bs=1 seek=5000 conv=notrunc 2> /dev/null
one_line damaged "^andrea: p/d.h5.part-3-of-4: damaged file: content checksum" $A classify p/d.h5 --db x.db
one_line part-alone "^andrea: p/d.h5.part-0-of-4: a part file of an MPI dump, not a dump by itself: open its master file d.h5" $A classify p/d.h5.part-0-of-4 --db x.db
mkdir away && cp p/d.h5 away/
one_line master-alone "^andrea: away/d.h5: part file away/d.h5.part-0-of-4 is missing" $A classify away/d.h5 --db x.db
[ $FAILS = 0 ] && echo "test_mpi_dump_master_reads_like_serial: all passed"
exit $((FAILS > 0))
