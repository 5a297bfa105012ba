#!/usr/bin/env bash
# test_engine_settings_never_touch_the_environment.sh — settings travel in option structs: no file
# of the tool (common, tokenizer, engine, kernels, probes, dump, analyzer, reports, cli) calls
# setenv, putenv or unsetenv; an MPI rank's GPU is the engine options' device_index
# (engine/forward.h), not a narrowed CUDA_VISIBLE_DEVICES (docs/cluster.md).
# OpenBLAS takes its core choice only from the environment: engine/blas_core.c hands its one call of
# OpenBLAS's re-selection a private copy of the environment (environ pointed at it for that call,
# then back); no other file touches environ. The CUDA developer overrides are read in one place,
# andrea_engine_options_init (engine/engine.c).
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
src=(common tokenizer engine kernels probes dump analyzer reports cli)
hits=$(cd "$ANDREA_SRC" && grep -nE '\b(setenv|putenv|unsetenv|clearenv)[[:space:]]*\(' \
  "${src[@]}" -r --include='*.c' --include='*.h' --include='*.cu' 2>/dev/null)
[[ -z $hits ]] && ok "no setenv/putenv/unsetenv/clearenv in the tool's sources" || bad "environment writes" "$hits"
hits=$(cd "$ANDREA_SRC" && grep -nE '\benviron[[:space:]]*=[^=]' "${src[@]}" -r --include='*.c' --include='*.h' --include='*.cu' |
  grep -v '^engine/blas_core\.c:')
[[ -z $hits ]] && ok "only engine/blas_core.c points environ elsewhere" || bad "environ assignments" "$hits"
hits=$(cd "$ANDREA_SRC" && grep -nE 'getenv\("ANDREA_CUDA_' "${src[@]}" -r --include='*.c' --include='*.h' --include='*.cu' |
  grep -v '^engine/engine\.c:')
[[ -z $hits ]] && ok "the CUDA developer overrides are read in engine/engine.c alone" || bad "override reads" "$hits"
grep -q "int device_index;" "$ANDREA_SRC/engine/forward.h" && ok "andrea_engine_options has device_index" \
  || bad "device_index" "engine/forward.h has no device_index"
grep -q "cudaSetDevice" "$ANDREA_SRC/kernels/cuda_engine.cu" && ok "the CUDA engine selects its device with cudaSetDevice" \
  || bad "cudaSetDevice" "kernels/cuda_engine.cu does not call it"
finish
