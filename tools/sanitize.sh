#!/usr/bin/env bash
# sanitize.sh — the whole ctest suite a second time, built with AddressSanitizer +
# UndefinedBehaviorSanitizer (+ LeakSanitizer), in build-asan/ (CPU only). Fails on any test
# failure and on ANY sanitizer report, including one from a process whose non-zero exit a test
# expected (a script test that checks "bad input is refused" would otherwise take an ASan abort
# for a refusal): every report goes to a log file under $build/sanitizer-logs/ and the job fails
# when that folder is not empty afterwards.
#
#   tools/sanitize.sh [ctest args...]      e.g. tools/sanitize.sh -R checkpoint
#
# Environment: SANITIZE_BUILD_DIR (default build-asan), CC (default clang; gcc works too),
# SANITIZE_JOBS (build and ctest jobs, default 2).
# Leaks inside third-party libraries only are suppressed by tests/lsan.supp (never andrea frames).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${SANITIZE_BUILD_DIR:-$here/build-asan}
cc=${CC:-clang}
jobs=${SANITIZE_JOBS:-2}
t0=$(date +%s)

bash "$here/tools/ci-install.sh"
command -v "$cc" >/dev/null || { echo "sanitize.sh: $cc not found (see tools/ci-packages.txt)" >&2; exit 2; }
cmake -S "$here" -B "$build" -DCMAKE_C_COMPILER="$cc" -DANDREA_SANITIZE=ON -DANDREA_TESTING=ON -DANDREA_CUDA=OFF \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$jobs" >"$build/sanitize-build.log" 2>&1 ||
  { tail -40 "$build/sanitize-build.log"; echo "sanitize.sh: build failed (log: $build/sanitize-build.log)" >&2; exit 2; }
t1=$(date +%s)
echo "sanitize.sh: built in $((t1 - t0)) s ($cc)"

logs=$build/sanitizer-logs
rm -rf "$logs"
mkdir -p "$logs"
# log_path: reports land in files (one per process), so none can hide behind an expected failure.
# intercept_tls_get_addr=0: clang 14's LeakSanitizer (Debian 12) keeps its own table of dynamic TLS
# blocks from intercepted __tls_get_addr calls; with glibc 2.36 that table can hold garbage, and the
# tracer that stops the world at exit then reads it ("DTLS 10 at 0x20b-0x20000130d", then "Tracer
# caught signal 11: addr=0x210"). Reproduced every time for `andrea classify` of a small dump run
# from a mktemp folder (tests/test_interactive_browser.sh), never with the option; LeakSanitizer
# still scans each thread's static TLS and stacks.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:log_path=$logs/asan:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:intercept_tls_get_addr=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$logs/ubsan"
export LSAN_OPTIONS="suppressions=$here/tests/lsan.supp:print_suppressions=0"
# One OpenBLAS thread pool fewer to leak from; tests set OMP_NUM_THREADS=2 themselves.
export OPENBLAS_NUM_THREADS=1

rc=0
ctest --test-dir "$build" --output-on-failure -j"$jobs" "$@" || rc=$?
t2=$(date +%s)
echo "sanitize.sh: ctest took $((t2 - t1)) s"

shopt -s nullglob
# LeakSanitizer's own tracer (the thread that stops the world at exit to scan for leaks) can crash
# on a heavily loaded machine: "Tracer caught signal 11 ... LeakSanitizer has encountered a fatal
# error", with no report about the program (seen once in CI-like runs at load 12, not reproducible
# in 5 reruns). That is a failure of the tool, not a finding: such a log is set aside and the
# failed tests run once more; any real report, or a second failure, still fails the stage.
tool_only=()
for r in "$logs"/*; do
  if grep -q "LeakSanitizer has encountered a fatal error" "$r" && grep -q "Tracer caught signal" "$r" &&
     ! grep -qE "ERROR: (AddressSanitizer|LeakSanitizer: detected)|runtime error:" "$r"; then
    tool_only+=("$r")
  fi
done
if ((${#tool_only[@]})); then
  echo "sanitize.sh: ${#tool_only[@]} LeakSanitizer tracer crash(es) (the tool's, not a report): rerunning the failed tests"
  mkdir -p "$build/sanitizer-tool-crashes"
  mv "${tool_only[@]}" "$build/sanitizer-tool-crashes/"
  if ((rc)); then
    rc=0
    ctest --test-dir "$build" --output-on-failure --rerun-failed || rc=$?
  fi
fi
reports=("$logs"/*)
if ((${#reports[@]})); then
  echo "sanitize.sh: ${#reports[@]} sanitizer report(s):"
  for r in "${reports[@]}"; do
    echo "==== $r"
    head -60 "$r"
  done
  rc=1
fi
echo "sanitize.sh: total $((t2 - t0)) s"
if ((rc)); then
  echo "sanitize.sh: FAILED" >&2
  exit 1
fi
echo "sanitize.sh: clean (no test failures, no sanitizer reports)"
