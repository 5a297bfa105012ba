#!/usr/bin/env bash
# bench/gpu_startup.sh — on the GPU machine: the CUDA build with lazily loaded cuBLAS (kernels/
# cublas_lazy.h) checked and timed in one call. Run from the repository root of the device's copy:
#   SRC=.gpu-src bash bench/gpu_startup.sh      (carry .carry/debs and the source folder SRC)
# 1. the default build (no CMAKE_CUDA_ARCHITECTURES: native where a GPU is present) and its CUDA
#    tests against the CPU; 2. `andrea --version` of that build beside a CPU-only build, alternating,
#    20 runs each; 3. a PTX-only build (-DCMAKE_CUDA_ARCHITECTURES=80-virtual, the fastest to build):
#    `andrea analyze` of the bundled model twice with an empty driver cache (the first run compiles
#    the PTX), beside the native build's. Results under $OUT.
set -u
OUT=${OUT:-/tmp/andrea-startup-out}; SRC=${SRC:-.}
mkdir -p "$OUT"; exec > >(tee -a "$OUT/log.txt") 2>&1
PFX=/tmp/andrea-prefix; mkdir -p $PFX
for f in .carry/debs/*.deb; do dpkg -x "$f" $PFX; done
export LD_LIBRARY_PATH=$PFX/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
build() { # DIR ARGS...
  local d=$1; shift
  cmake -S "$SRC" -B "$d" -DCMAKE_BUILD_TYPE=Release -DANDREA_TESTING=ON -DANDREA_EXTRA_PREFIX=$PFX "$@" >"$OUT/$(basename $d).txt" 2>&1 &&
    cmake --build "$d" -j16 >>"$OUT/$(basename $d).txt" 2>&1 || { grep -E "error:|Error [0-9]" "$OUT/$(basename $d).txt" | head -20; return 1; }
  grep -E "^CMAKE_CUDA_ARCHITECTURES" "$d/CMakeCache.txt" || true
}
t0=$SECONDS; build /tmp/b-native || exit 1; echo "native build (all targets): $((SECONDS - t0)) s"
echo "== libraries loaded at start-up"; ldd /tmp/b-native/andrea | grep -E "cuda|cublas" || echo "(no CUDA library)"
echo "== CUDA tests"
(cd /tmp/b-native && ctest -R "cuda|gpu" --output-on-failure --timeout 300 2>&1 | tail -15)
echo "== analyze --device cuda vs cpu (labels)"
for d in cpu cuda; do /tmp/b-native/andrea analyze models/andrea-bundled.bin --device $d --out /tmp/lab-$d > /tmp/lab-$d.txt 2>&1 || tail -3 /tmp/lab-$d.txt; done
python3 tools/compare_labels.py /tmp/lab-cpu/catalog.db /tmp/lab-cuda/catalog.db | tail -5
t0=$SECONDS; build /tmp/b-cpu -DANDREA_CUDA=OFF || exit 1; echo "cpu build: $((SECONDS - t0)) s"
echo "== andrea --version, 20 runs each, alternating (seconds per run)"
python3 - <<'PY'
import subprocess, time, statistics
bins = {"cuda (lazy cuBLAS)": "/tmp/b-native/andrea", "cpu-only": "/tmp/b-cpu/andrea"}
t = {k: [] for k in bins}
for _ in range(20):
    for k, b in bins.items():
        s = time.perf_counter(); subprocess.run([b, "--version"], stdout=subprocess.DEVNULL, check=True); t[k].append(time.perf_counter() - s)
for k, v in t.items(): print(f"{k}: median {statistics.median(v)*1e3:.1f} ms, min {min(v)*1e3:.1f} ms, max {max(v)*1e3:.1f} ms")
PY
t0=$SECONDS; build /tmp/b-ptx -DCMAKE_CUDA_ARCHITECTURES=80-virtual || exit 1; echo "80-virtual build: $((SECONDS - t0)) s"
echo "== analyze of the bundled model: PTX build with an empty driver cache, then warm; native build"
export CUDA_CACHE_PATH=/tmp/nv-cache; rm -rf $CUDA_CACHE_PATH
for run in "ptx first" "ptx second" "native"; do
  b=/tmp/b-ptx/andrea; [ "$run" = native ] && b=/tmp/b-native/andrea
  s=$(date +%s.%N); $b analyze models/andrea-bundled.bin --device cuda --out /tmp/ptx-out --quiet >/tmp/ptx.txt 2>&1 || tail -3 /tmp/ptx.txt
  echo "$run: $(python3 -c "print(f'{$(date +%s.%N) - $s:.2f}')") s"
done
python3 tools/compare_labels.py /tmp/lab-cuda/catalog.db /tmp/ptx-out/catalog.db | tail -3
echo "== done at ${SECONDS}s"
