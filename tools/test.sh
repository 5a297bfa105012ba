#!/usr/bin/env bash
# test.sh — the README's test command: set up, build and run the whole test suite with ctest.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bash "$here/tools/setup.sh"
ctest --test-dir "${ANDREA_BUILD_DIR:-$here/build}" --output-on-failure -j2
