#!/usr/bin/env bash
# test_mpi_analyze_catalog_equals_serial — `mpirun -np 2|3 andrea analyze` (two checkpoints) and
# `mpirun -np 3 andrea classify` write the same dumps and the same catalog rows as the serial
# tool (REALs to 1e-12: mpi_compare_catalogs.py says why), print the same summary once, and leave
# one report.
source "$ANDREA_SRC/tests/mpi_lib.sh"
cd "$W"
tiny_model a.bin 0
tiny_model b.bin 2
DC="/usr/bin/python3 $ANDREA_SRC/tests/mpi_compare_dumps.py"
CC="/usr/bin/python3 $ANDREA_SRC/tests/mpi_compare_catalogs.py"
# Same output paths for both runs (they are stored in the catalog): run, move aside, run again.
$A analyze a.bin b.bin --out out --keep-dumps --device cpu --quiet --probes prev_token,induction,bracket > serial.txt || { echo "serial analyze failed"; exit 1; }
mv out serial
for np in 2 3; do
  rm -rf out
  $MR -np $np $A analyze a.bin b.bin --out out --keep-dumps --device cpu --quiet --probes prev_token,induction,bracket > par.txt 2> err.txt
  check "[ $? = 0 ]" "np $np: analyze exits 0 ($(tail -3 err.txt))"
  check "$CC serial/catalog.db out/catalog.db > cmp.txt" "np $np: catalog rows equal serial: $(head -5 cmp.txt)"
  check "$DC serial/a.h5 out/a.h5 > /dev/null && $DC serial/b.h5 out/b.h5 > /dev/null" "np $np: dumps equal serial"
  check "diff serial.txt par.txt > /dev/null" "np $np: the summary is printed once, as the serial tool prints it"
  check "[ -f out/a/index.html ] && [ -f out/b/index.html ]" "np $np: reports written"
done
# classify alone over an existing dump
rm -f c1.db c3.db
$A classify serial/a.h5 --db c1.db --quiet > /dev/null
$MR -np 3 $A classify serial/a.h5 --db c3.db --quiet > c3.txt 2> err.txt
check "[ $? = 0 ]" "np 3: classify exits 0 ($(tail -3 err.txt))"
check "$CC c1.db c3.db > cmp.txt" "np 3: classify catalog equals serial: $(head -5 cmp.txt)"
check "[ \$(grep -c '^catalog:' c3.txt) = 1 ]" "np 3: classify prints its summary once"
[ $FAILS = 0 ] && echo "test_mpi_analyze_catalog_equals_serial: all passed"
exit $((FAILS > 0))
