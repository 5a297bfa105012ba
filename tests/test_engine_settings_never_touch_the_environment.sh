#!/usr/bin/env bash
# test_engine_settings_never_touch_the_environment.sh — settings travel in option structs: no file
# of the tool (common, tokenizer, engine, kernels, probes, dump, analyzer, reports, cli) calls
# setenv, putenv or unsetenv; an MPI rank's GPU is the engine options' device_index
# (engine/forward.h), not a narrowed CUDA_VISIBLE_DEVICES (docs/cluster.md).
# One exception, for a library and not a setting of ours: engine/blas_core.c sets
# OPENBLAS_CORETYPE around its one call of OpenBLAS's re-selection (the variable is that function's
# only input) and removes it again before main runs; no other variable, no other file.
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
hits=$(cd "$ANDREA_SRC" && grep -nE '\b(setenv|putenv|unsetenv)[[:space:]]*\(' \
  common tokenizer engine kernels probes dump analyzer reports cli -r --include='*.c' --include='*.h' --include='*.cu' 2>/dev/null |
  grep -vE '^engine/blas_core\.c:[0-9]+:.*(setenv\("OPENBLAS_CORETYPE"|unsetenv\("OPENBLAS_CORETYPE"\))')
[[ -z $hits ]] && ok "no setenv/putenv/unsetenv in the tool's sources" || bad "environment writes" "$hits"
grep -q "int device_index;" "$ANDREA_SRC/engine/forward.h" && ok "andrea_engine_options has device_index" \
  || bad "device_index" "engine/forward.h has no device_index"
grep -q "cudaSetDevice" "$ANDREA_SRC/kernels/cuda_engine.cu" && ok "the CUDA engine selects its device with cudaSetDevice" \
  || bad "cudaSetDevice" "kernels/cuda_engine.cu does not call it"
finish
