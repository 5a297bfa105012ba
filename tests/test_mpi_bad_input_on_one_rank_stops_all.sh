#!/usr/bin/env bash
# test_mpi_bad_input_on_one_rank_stops_all — no hang when one rank fails: a truncated checkpoint
# given to rank 1 only (MPMD launch), a bad probe file on the last rank, and an output directory
# that does not exist (found by rank 0 alone) each make the job exit non-zero within seconds,
# print the andrea error line, and leave neither the output nor a temporary file.
source "$ANDREA_SRC/tests/mpi_lib.sh"
cd "$W"
tiny_model m.bin
head -c 3000 m.bin > bad.bin
printf '{"suite": "x", "tokens": [1, 2, 3], "targets": [[1, [0]]]}\n{"suite": "x", "tokens": [1, 999999], "targets": [[1, [0]]]}\n' > bad.jsonl
printf '{"suite": "x", "tokens": [1, 2, 3], "targets": [[1, [0]]]}\n{"suite": "x", "tokens": [1, 2], "targets": [[1, [0]]]}\n' > good.jsonl
D="dump --n 7 --len 24 --device cpu --quiet"
run() { # run NAME CMD...: exit code in $rc, milliseconds in $ms, stderr in NAME.err
  local name=$1; shift
  local t0=$(date +%s%N)
  timeout 60 "$@" > /dev/null 2> $name.err; rc=$?
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
}
run ckpt $MR -np 1 $A $D m.bin --out o.h5 : -np 1 $A $D bad.bin --out o.h5
check "[ $rc != 0 ] && [ $rc != 124 ]" "truncated checkpoint on rank 1: non-zero exit without hanging (rc $rc)"
check "grep -q '^andrea: bad.bin: truncated' ckpt.err" "truncated checkpoint on rank 1: its one-line error is printed"
check "[ $ms -lt 20000 ]" "truncated checkpoint on rank 1: the job ends promptly (${ms} ms)"
run probes $MR -np 2 $A $D m.bin --probes good.jsonl --out o.h5 : -np 1 $A $D m.bin --probes bad.jsonl --out o.h5
check "[ $rc != 0 ] && [ $rc != 124 ]" "bad probe file on rank 2: non-zero exit without hanging (rc $rc)"
check "grep -q '^andrea: bad.jsonl' probes.err" "bad probe file on rank 2: its error names the file"
run outdir $MR -np 3 $A $D m.bin --out nodir/o.h5
check "[ $rc = 1 ]" "missing output directory: every rank exits 1 (rc $rc)"
check "[ \$(grep -c '^andrea: ' outdir.err) = 1 ] && grep -q 'nodir/o.h5: cannot create' outdir.err" "missing output directory: one error line for the job"
check "[ ! -e o.h5 ] && [ -z \"\$(ls | grep tmp-)\" ]" "nothing left behind"
[ $FAILS = 0 ] && echo "test_mpi_bad_input_on_one_rank_stops_all: all passed"
exit $((FAILS > 0))
