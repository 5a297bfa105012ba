#!/usr/bin/env bash
# test_mpi_analyze_catalog_equals_serial — `mpirun -np N andrea analyze` and `mpirun -np 3 andrea
# classify` write the same dumps, catalog rows and reports as the serial tool, and print the same
# summary once:
#  - 2 checkpoints at np 3 (fewer checkpoints than ranks: each checkpoint's sequences sharded over
#    all ranks, statistics pooled with MPI_Allreduce: REALs to 1e-12, mpi_compare_catalogs.py
#    says why), and the report's example maps, kept by whichever rank computed them, identical;
#  - 2 checkpoints at np 2 and 3 checkpoints at np 2 and 3 (at least one a rank: whole
#    checkpoints spread over the ranks, each scored alone, rank 0 writing every row in order):
#    REALs bit for bit, run ids as serial, each report rendered by its rank, identical.
source "$ANDREA_SRC/tests/mpi_lib.sh"
cd "$W"
tiny_model a.bin 0
tiny_model b.bin 2
tiny_model c.bin 4
DC="/usr/bin/python3 $ANDREA_SRC/tests/mpi_compare_dumps.py"
CC="/usr/bin/python3 $ANDREA_SRC/tests/mpi_compare_catalogs.py"
AN="analyze --keep-dumps --device cpu --quiet --probes prev_token,induction,bracket --out out"
# reports equal: every page, data file and PNG (the catalog and dumps are compared by value);
# overview/images.tsv without its 4th column, the time of the run that drew the images (the
# serial and the MPI run are two runs, whose times differ as their catalogs' do)
same_reports() {
  diff -r -x catalog.db -x 'catalog.db-*' -x '*.h5' -x '*.h5.part-*' -x images.tsv "$1" "$2" > rdiff.txt || return 1
  local f
  for f in $(cd "$1" && find . -name images.tsv); do
    diff <(cut -f1-3,5- "$1/$f") <(cut -f1-3,5- "$2/$f") >> rdiff.txt || return 1
  done
  [ "$(cd "$1" && find . -name images.tsv | sort)" = "$(cd "$2" && find . -name images.tsv | sort)" ] || { echo "images.tsv files differ" >> rdiff.txt; return 1; }
}
# Same output paths for both runs (they are stored in the catalog): run, move aside, run again.
series() { # NAME NP EXACT CKPT...: serial, then mpirun -np NP, compared
  local name=$1 np=$2 exact=$3; shift 3
  rm -rf out serial
  $A $AN "$@" > serial.txt || { echo "serial analyze failed"; exit 1; }
  mv out serial
  $MR -np $np $A $AN "$@" > par.txt 2> err.txt
  check "[ $? = 0 ]" "$name: analyze exits 0 ($(tail -3 err.txt))"
  check "$CC $exact serial/catalog.db out/catalog.db > cmp.txt" "$name: catalog rows equal serial ($exact): $(head -5 cmp.txt)"
  for k in "$@"; do
    check "$DC serial/${k%.bin}.h5 out/${k%.bin}.h5 > /dev/null" "$name: dump of $k equals serial"
  done
  check "diff serial.txt par.txt > /dev/null" "$name: the summary is printed once, as the serial tool prints it"
  check "same_reports serial out" "$name: reports identical to serial: $(head -3 rdiff.txt)"
}
series "2 checkpoints, np 3 (sharded)" 3 "" a.bin b.bin
series "2 checkpoints, np 2 (spread)" 2 --exact a.bin b.bin
series "3 checkpoints, np 2 (spread, uneven)" 2 --exact a.bin b.bin c.bin
series "3 checkpoints, np 3 (spread)" 3 --exact a.bin b.bin c.bin
# one checkpoint over 2 ranks: its report's example maps of every suite (not only rank 0's)
rm -rf out one1 && $A $AN a.bin > /dev/null && mv out one1
$MR -np 2 $A $AN a.bin > /dev/null 2> err.txt
check "[ $? = 0 ] && same_reports one1 out" "1 checkpoint, np 2: report identical to serial: $(tail -2 err.txt; head -3 rdiff.txt)"
# classify alone over an existing dump
rm -f c1.db c3.db
$A classify serial/a.h5 --db c1.db --quiet > /dev/null
$MR -np 3 $A classify serial/a.h5 --db c3.db --quiet > c3.txt 2> err.txt
check "[ $? = 0 ]" "np 3: classify exits 0 ($(tail -3 err.txt))"
check "$CC c1.db c3.db > cmp.txt" "np 3: classify catalog equals serial: $(head -5 cmp.txt)"
check "[ \$(grep -c '^catalog:' c3.txt) = 1 ]" "np 3: classify prints its summary once"
[ $FAILS = 0 ] && echo "test_mpi_analyze_catalog_equals_serial: all passed"
exit $((FAILS > 0))
