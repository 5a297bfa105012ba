#!/usr/bin/env bash
# test_mpi_dump_equals_serial — `mpirun -np 2` and `-np 3` (uneven shards: 7 items in batches of 2
# are 4 batches a suite) write a dump whose every dataset equals the serial dump's bit for bit,
# with fp16 and fp32 maps, gzip, --contrib full and --heads, both as part files + master (the
# default: one part per rank, read through the master's virtual datasets) and with --single-file
# (one file through collective MPI-IO, no part); and the comparison can fail.
source "$ANDREA_SRC/tests/mpi_lib.sh"
cd "$W"
tiny_model m.bin
tiny_model other.bin 1
CMP="/usr/bin/python3 $ANDREA_SRC/tests/mpi_compare_dumps.py"
for opts in "--batch 2" "--batch 3 --maps fp32 --contrib full --gzip 3" "--batch 2 --heads 0.1,1.0" ""; do
  $A dump m.bin --n 7 --len 24 --device cpu --quiet --out serial.h5 $opts || { echo "serial dump failed"; exit 1; }
  for np in 2 3; do
    for mode in "" --single-file; do
      rm -f par.h5 par.h5.part-*
      $MR -np $np $A dump m.bin --n 7 --len 24 --device cpu --quiet --out par.h5 $opts $mode > log.txt 2>&1
      check "[ $? = 0 ]" "np $np [$opts $mode]: exit 0 ($(tail -3 log.txt))"
      check "$CMP serial.h5 par.h5 > cmp.txt" "np $np [$opts $mode]: equals serial: $(head -5 cmp.txt)"
      check "[ -z \"\$(ls | grep tmp-)\" ]" "np $np [$opts $mode]: no temporary file left"
      if [ -z "$mode" ]; then
        check "[ \$(ls par.h5.part-*-of-$np | wc -l) = $np ]" "np $np [$opts]: one part file a rank"
      else
        check "[ -z \"\$(ls | grep part-)\" ]" "np $np [$opts --single-file]: no part file"
      fi
    done
  done
done
# The comparison is not blind: another model's dump differs.
$A dump other.bin --n 7 --len 24 --device cpu --quiet --out other.h5
check "! $CMP serial.h5 other.h5 > /dev/null" "the comparison detects a different dump"
# Four ranks for six suites of 2 items (one batch each): every rank writes, some two suites.
$A dump m.bin --n 2 --len 16 --device cpu --quiet --out s4.h5
$MR -np 4 $A dump m.bin --n 2 --len 16 --device cpu --quiet --out p4.h5
check "$CMP s4.h5 p4.h5 > cmp.txt" "np 4, one batch per suite: equals serial: $(head -3 cmp.txt)"
[ $FAILS = 0 ] && echo "test_mpi_dump_equals_serial: all passed"
exit $((FAILS > 0))
