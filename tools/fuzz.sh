#!/usr/bin/env bash
# fuzz.sh — build the libFuzzer targets (tests/fuzz/) with clang in build-fuzz/ and run each one
# for SECONDS (default 30) on its seed corpus, one after the other; fail if any target crashes,
# leaks, times out or runs out of memory.
#
#   tools/fuzz.sh [SECONDS] [TARGET ...]        (default: every target that has seeds)
#
# The committed seeds (tests/fuzz/corpus/<target>/, made by tools/make_fuzz_seeds.py) are only
# read; new inputs the fuzzer finds go to $FUZZ_BUILD_DIR/corpus-work/<target>/. A failing input
# is written to $FUZZ_CRASH_DIR (default $FUZZ_BUILD_DIR/crashes/) and printed (name, size,
# first bytes); replay it with `$FUZZ_BUILD_DIR/tests/fuzz/<target> FILE`.
# Environment: FUZZ_BUILD_DIR (default build-fuzz), FUZZ_CRASH_DIR, FUZZ_JOBS (build jobs, 2),
# FUZZ_RSS_MB (per-target memory limit, 2048), FUZZ_NICE (nice level of the runs, 0),
# FUZZ_KEEP_GOING=1 (long runs: libFuzzer's fork mode, which records every crash, timeout and OOM
# in $FUZZ_CRASH_DIR and keeps fuzzing instead of stopping at the first; the target still fails),
# ANDREA_FUZZ_DUMP_SEALED=1 (fuzz_dump_reader seals each input so mutations reach HDF5 itself;
# off in CI, where HDF5 1.10.8's own bugs would fail every run: docs/reliability.md).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-30}
shift || true
build=${FUZZ_BUILD_DIR:-$here/build-fuzz}
crashes=${FUZZ_CRASH_DIR:-$build/crashes}
jobs=${FUZZ_JOBS:-2}
rss=${FUZZ_RSS_MB:-2048}
nicelvl=${FUZZ_NICE:-0}

all_targets=(fuzz_checkpoint_bin fuzz_safetensors fuzz_bpe_files fuzz_bpe_encode fuzz_probe_jsonl fuzz_rules_json fuzz_dump_reader)
targets=("$@")
((${#targets[@]})) || targets=("${all_targets[@]}")

bash "$here/tools/ci-install.sh"
command -v clang >/dev/null || { echo "fuzz.sh: clang not found (see tools/ci-packages.txt)" >&2; exit 2; }
t0=$(date +%s)
cmake -S "$here" -B "$build" -DCMAKE_C_COMPILER=clang -DANDREA_FUZZ=ON -DANDREA_CUDA=OFF \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$jobs" --target "${targets[@]}" >"$build/fuzz-build.log" 2>&1 ||
  { tail -40 "$build/fuzz-build.log"; echo "fuzz.sh: build failed (log: $build/fuzz-build.log)" >&2; exit 2; }
echo "fuzz.sh: built ${#targets[@]} targets in $(($(date +%s) - t0)) s"

mkdir -p "$crashes"
# Leaks inside third-party libraries only (never andrea's own frames): see tests/lsan.supp.
export LSAN_OPTIONS="suppressions=$here/tests/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

failed=()
for t in "${targets[@]}"; do
  seeds=$here/tests/fuzz/corpus/$t
  if [[ ! -d $seeds ]] || [[ -z $(ls -A "$seeds") ]]; then
    echo "fuzz.sh: $t: SKIP, no seeds in tests/fuzz/corpus/$t (run tools/make_fuzz_seeds.py)"
    continue
  fi
  work=$build/corpus-work/$t
  mkdir -p "$work"
  log=$build/fuzz-$t.log
  rm -f "$crashes/$t-"* # findings of an earlier run of this target
  rc=0
  keep=()
  [[ ${FUZZ_KEEP_GOING:-0} == 1 ]] && keep=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  nice -n "$nicelvl" "$build/tests/fuzz/$t" "${keep[@]}" -max_total_time="$secs" -timeout=20 \
      -rss_limit_mb="$rss" -malloc_limit_mb="$rss" -print_final_stats=1 \
      -artifact_prefix="$crashes/$t-" "$work" "$seeds" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  # fork mode prints "#RUNS: cov: N ft: N corp: N exec/s: N oom/timeout/crash: a/b/c time: Ns"
  [[ -z $execs ]] && execs=$(grep -o '^#[0-9]*: cov' "$log" | tail -1 | tr -dc 0-9)
  if ((rc == 0)) && ls "$crashes/$t-"* >/dev/null 2>&1; then rc=1; fi
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  echo "fuzz.sh: $t: ${execs:-?} runs in ${secs}s, cov ${cov:-?}, ft ${ft:-?}, corpus $(ls "$work" | wc -l) files, exit $rc"
  if ((rc != 0)); then
    failed+=("$t")
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log" | head -5 || true
    tail -60 "$log"
  fi
done

shopt -s nullglob
found=()
for t in "${targets[@]}"; do found+=("$crashes/$t-"*); done
if ((${#found[@]})); then
  echo "fuzz.sh: failing inputs in $crashes:"
  for f in "${found[@]}"; do
    echo "  $f ($(stat -c %s "$f") bytes): $(head -c 64 "$f" | od -An -c | tr -s ' \n' ' ' | cut -c1-160)"
  done
fi
echo "fuzz.sh: total $(($(date +%s) - t0)) s"
if ((${#failed[@]})); then
  echo "fuzz.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz.sh: no crashes"
