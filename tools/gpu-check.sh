#!/usr/bin/env bash
# tools/gpu-check.sh — everything the CUDA backend needs checked on the GPU machine, in one call:
# unpack carried -dev packages, build (sm_90), run the test suite, compute-sanitizer memcheck and
# racecheck on the CUDA tests, then the benchmarks (bench_gpu_forward + bench_gpu_hf.py on the
# same weights). Logs and results go under $OUT (the device tool brings them back).
# Usage (on the device machine, repo root, carry=[".carry/debs"]):
#   bash tools/gpu-check.sh [quick|dev|full|bench|final|validate|e2e|check|rest|gap]
#   quick: build, tests, sanitizer, short benchmark;  full: the same with full benchmark repeats;
#   dev: build, tests, per-kernel times under ncu, short benchmark;  bench: build + benchmark only;
#   final: tests, sanitizers, full benchmarks, end to end without re-timing the CLI dump;
#   validate: the whole ctest suite on the GPU, compute-sanitizer on the CUDA forward and dump tests,
#             analyzer labels with --device cuda vs --device cpu on the fixture models;
#   e2e: HDF5 map-writing strategies (bench_h5_maps; E2E_SKIP_H5=1 skips them) and the end-to-end
#        dump benchmark only (BENCH_ONLY_T=128|1024: that workload alone, for short leases);
#   check: one lease's correctness pass: CUDA forward and dump tests, their sanitizers, labels in
#          tf32 and tf32x3 against the CPU, the forward benchmark in both precisions beside HF;
#          each step skipped when it would run past CHECK_BUDGET_S (default 540) seconds;
#   rest: the ctest suite without the two CUDA tests, then e2e;
#   gap: andrea dump --timing at T=128 and T=1024 alone (where the end-to-end time goes).
set -u
MODE=${1:-quick}
OUT=${OUT:-/tmp/andrea-gpu-out}
mkdir -p "$OUT"
LOG=$OUT/log.txt
exec > >(tee -a "$LOG") 2>&1
PFX=/tmp/andrea-prefix
BUILD_ANDREA=andrea; ANDREA_BIN=./build-gpu/andrea
# final: the CLI dump was timed in an earlier call (bench/RESULTS.md); skip it to fit the lease
if [ "$MODE" = final ]; then BUILD_ANDREA=; ANDREA_BIN=-; fi
mkdir -p $PFX
for f in .carry/debs/*.deb; do dpkg -x "$f" $PFX; done
export LD_LIBRARY_PATH=$PFX/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export NVIDIA_TF32_OVERRIDE= # never let the driver override the engine's precision choice
unset NVIDIA_TF32_OVERRIDE
echo "== device"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.used,temperature.gpu --format=csv
echo "== build"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DANDREA_EXTRA_PREFIX=$PFX > $OUT/build.txt 2>&1 \
  || { tail -30 $OUT/build.txt; exit 1; }
# only what this script runs: other modules may be mid-change in the shared tree
cmake --build build-gpu -j16 >> $OUT/build.txt 2>&1 || { grep -E "error|Error" $OUT/build.txt | head -30; exit 1; }
grep -E "warning" $OUT/build.txt | head -10
if [ "$MODE" = validate ]; then
  echo "== ctest (all tests; python tests run with /usr/bin/python3)"
  (cd build-gpu && ctest -j8 --output-on-failure --timeout 300 > $OUT/ctest.txt 2>&1); grep -E "tests passed|Failed|\*\*\*|Skipped|Not Run" $OUT/ctest.txt | head -30
  echo "== test_dump_cuda (verbose)"; (cd build-gpu/tests && ./test_dump_cuda 2>&1 | tail -12)
  for t in test_cuda_forward test_dump_cuda; do for tool in memcheck racecheck; do
    extra=; [ $tool = memcheck ] && extra="--leak-check no"
    (cd build-gpu/tests && ANDREA_TEST_QUICK=1 timeout 200 compute-sanitizer --tool $tool $extra --error-exitcode 9 ./$t > $OUT/$tool-$t.txt 2>&1; echo "$tool $t rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $OUT/$tool-$t.txt | tail -1)
  done; done
  echo "== labels: andrea analyze --device cuda vs --device cpu"
  for m in models/andrea-tiny.bin models/andrea-bundled.bin; do
    n=$(basename $m .bin)
    for d in cpu cuda; do
      t0=$(date +%s.%N)
      ./build-gpu/andrea analyze $m --device $d --out /tmp/lab-$n-$d > /tmp/lab-$n-$d.txt 2>&1 || { echo "analyze $n $d failed"; tail -3 /tmp/lab-$n-$d.txt; }
      echo "$n --device $d: $(python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')") s wall"
    done
    python3 tools/compare_labels.py /tmp/lab-$n-cpu/catalog.db /tmp/lab-$n-cuda/catalog.db
  done
  cp /tmp/lab-andrea-bundled-cuda.txt $OUT/analyze-bundled-cuda.txt
  echo "== done"; exit 0
fi
if [ "$MODE" = check ]; then
  BUDGET=${CHECK_BUDGET_S:-540} # seconds since this script started (the build included)
  # step NAME SECONDS CMD...: run CMD only if SECONDS more still fit in the budget
  step() { local name=$1 need=$2; shift 2; local used=$SECONDS
    if [ $((used + need)) -gt "$BUDGET" ]; then echo "-- SKIPPED $name (at ${used}s, needs ${need}s)"; return; fi
    echo "== $name (at ${used}s)"; "$@"; }
  verbose_test() { (cd build-gpu/tests && timeout 150 ./$1 2>&1 | tail -$2); }
  forward_bench() {
    local BD=/tmp/andrea-bench; mkdir -p $BD
    # the last run's times are the ones bench_gpu_hf.py sets beside HF's
    for p in tf32 tf32x3:regs tf32x3:shared; do
      local prec=${p%:*} qlo=; [ "$p" != "$prec" ] && qlo=${p#*:}
      echo "-- ANDREA_CUDA_PRECISION=$prec${qlo:+ (attention v3, Q low parts in: $qlo)}"
      ANDREA_CUDA_SPLIT_QLO=$qlo ANDREA_CUDA_PRECISION=$prec ./build-gpu/bench/bench_gpu_forward $BD 2>&1 | tee $OUT/bench_andrea_${p/:/_}.txt; done
    PYTHONUNBUFFERED=1 timeout 150 python3 bench/bench_gpu_hf.py $BD 2>&1 | grep -v Warning | tee $OUT/bench_hf.txt; }
  labels() {
    for m in models/andrea-tiny.bin models/andrea-bundled.bin; do local n; n=$(basename $m .bin)
      for d in cpu tf32 tf32x3; do local a="--device cuda --precision $d"; [ $d = cpu ] && a="--device cpu"
        local t0; t0=$(date +%s.%N)
        ./build-gpu/andrea analyze $m $a --out /tmp/lab-$n-$d > /tmp/lab-$n-$d.txt 2>&1 || { echo "analyze $n $d failed"; tail -3 /tmp/lab-$n-$d.txt; }
        echo "$n $d: $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s wall"
      done
      for d in tf32 tf32x3; do echo "-- $n cpu vs $d"; python3 tools/compare_labels.py /tmp/lab-$n-cpu/catalog.db /tmp/lab-$n-$d/catalog.db; done
    done; cp /tmp/lab-andrea-bundled-tf32x3.txt $OUT/analyze-bundled-tf32x3.txt; }
  sanitize() { local tool=$1 t=$2 limit=$3 extra=; [ $tool = memcheck ] && extra="--leak-check no"
    (cd build-gpu/tests && ANDREA_TEST_QUICK=1 timeout $limit compute-sanitizer --tool $tool $extra --error-exitcode 9 ./$t > $OUT/$tool-$t.txt 2>&1
     echo "$tool $t rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $OUT/$tool-$t.txt | tail -1); }
  step "test_cuda_forward (tf32, fp32, tf32x3 vs CPU)" 90 verbose_test test_cuda_forward 70
  step "test_dump_cuda (ring of pinned pieces)" 60 verbose_test test_dump_cuda 14
  step "forward benchmark tf32 / tf32x3 / HF" 150 forward_bench
  step "labels: analyze cpu vs cuda tf32 vs cuda tf32x3" 60 labels
  for t in test_cuda_forward test_dump_cuda; do for tool in memcheck racecheck; do
    limit=100; [ $tool-$t = racecheck-test_cuda_forward ] && limit=220 # racecheck: ~100x slower
    step "$tool $t" $limit sanitize $tool $t $limit; done; done
  echo "== done at ${SECONDS}s"; exit 0
fi
if [ "$MODE" = rest ]; then
  echo "== ctest without the CUDA tests (python tests with /usr/bin/python3)"
  (cd build-gpu && ctest -j12 -E "test_cuda_forward|test_dump_cuda" --output-on-failure --timeout 200 > $OUT/ctest.txt 2>&1); grep -E "tests passed|Failed|\*\*\*|Skipped|Not Run" $OUT/ctest.txt | head -30
  MODE=e2e
fi
if [ "$MODE" = gap ]; then # where andrea dump's time goes at T=1024 (its --timing breakdown)
  BD=/tmp/andrea-bench; mkdir -p $BD /tmp/gap
  ./build-gpu/bench/bench_gpu_forward $BD --profile > $OUT/bench_model.txt 2>&1 || { tail -3 $OUT/bench_model.txt; exit 1; }
  python3 -c "
import json, random
random.seed(0)
for n, T in ((512, 128), (64, 1024)):
    with open(f'/tmp/gap/p{T}.jsonl', 'w') as f:
        for _ in range(n): f.write(json.dumps({'suite': 'prev_token', 'tokens': [random.randrange(50257) for _ in range(T)]}) + '\\n')
"
  which perf strace 2>&1 | head -2
  for T in 1024 128 1024; do B=8; [ $T = 128 ] && B=64
    grep -E "^(Dirty|Writeback):" /proc/meminfo | tr -s ' ' | paste -sd' '
    t0=$(date +%s.%N)
    ./build-gpu/andrea dump $BD/model --probes /tmp/gap/p$T.jsonl --out /tmp/gap/a$T.h5 --device cuda --maps fp16 --contrib none --batch $B --timing 2>&1 | grep -v "^dump" | tail -2
    echo "T=$T whole $(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $t0}") s"; rm -f /tmp/gap/a$T.h5
  done
  echo "== done at ${SECONDS}s"; exit 0
fi
if [ "$MODE" = e2e ]; then
  if [ -z "${E2E_SKIP_H5:-}" ]; then
    echo "== HDF5 map-write strategies (one thread, page cache)"; df -h /tmp | tail -1
    ./build-gpu/bench/bench_h5_maps /tmp 512 128 64
    ./build-gpu/bench/bench_h5_maps /tmp 16 1024 8
  fi
  BD=/tmp/andrea-bench; mkdir -p $BD
  ./build-gpu/bench/bench_gpu_forward $BD --profile > $OUT/bench_model.txt 2>&1 # writes the model (one forward per shape)
  echo "== end to end: andrea dump vs HF + h5py"
  PYTHONUNBUFFERED=1 timeout 400 python3 bench/bench_gpu_dump.py ./build-gpu/andrea $BD/model /tmp/andrea-e2e ./build-gpu/bench/bench_gpu_dump_stream 2>&1 | grep -v Warning | tee $OUT/bench_dump.txt
  echo "== done"; exit 0
fi
if [ "$MODE" != bench ]; then
  echo "== tests"
  (cd build-gpu && ctest --output-on-failure --timeout 300 -R test_forward_cpu > $OUT/ctest.txt 2>&1); tail -5 $OUT/ctest.txt
  echo "== test_cuda_forward (verbose)"
  (cd build-gpu/tests && ./test_cuda_forward 2>&1 | tail -40)
fi
if [ "$MODE" = dev ]; then
  echo "== ncu per-kernel times (one forward per shape, fp32 maps)"
  mkdir -p /tmp/andrea-prof
  timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel \
    ./build-gpu/bench/bench_gpu_forward /tmp/andrea-prof --profile > $OUT/ncu.txt 2>&1; echo "ncu rc=$?"
  grep -E "^  [a-zA-Z_].*\(|gpu__time_duration" $OUT/ncu.txt | paste - - | awk '{print}' | cut -c1-160 | head -40
fi
if [ "$MODE" = quick ] || [ "$MODE" = full ] || [ "$MODE" = final ]; then
  echo "== compute-sanitizer memcheck"
  (cd build-gpu/tests && ANDREA_TEST_QUICK=1 timeout 120 compute-sanitizer --tool memcheck --leak-check no --error-exitcode 9 ./test_cuda_forward > $OUT/memcheck.txt 2>&1; echo "memcheck rc=$?"; tail -4 $OUT/memcheck.txt)
  echo "== compute-sanitizer racecheck"
  (cd build-gpu/tests && ANDREA_TEST_QUICK=1 timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 ./test_cuda_forward > $OUT/racecheck.txt 2>&1; echo "racecheck rc=$?"; tail -4 $OUT/racecheck.txt)
fi
echo "== benchmark"
Q=--quick; [ "$MODE" = quick ] || Q=
BD=/tmp/andrea-bench; mkdir -p $BD
./build-gpu/bench/bench_gpu_forward $BD $Q 2>&1 | tee $OUT/bench_andrea.txt
PYTHONUNBUFFERED=1 python3 bench/bench_gpu_hf.py $BD $Q 2>&1 | grep -v Warning | tee $OUT/bench_hf.txt
if [ "$MODE" != quick ]; then
  echo "== end to end: andrea dump vs HF + h5py"; df -h /tmp | tail -1
  PYTHONUNBUFFERED=1 timeout 220 python3 bench/bench_gpu_dump.py $ANDREA_BIN $BD/model /tmp/andrea-e2e ./build-gpu/bench/bench_gpu_dump_stream 2>&1 | grep -v Warning | tee $OUT/bench_dump.txt
fi
echo "== done"
