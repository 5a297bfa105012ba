/* bench_gpu_forward.c — the CUDA engine's forward with every attention map kept on the GPU,
 * against its floor, measured in the same process.
 *
 * Usage: bench_gpu_forward OUTDIR [--quick|--profile]
 *   Makes a random ANDREA-120M-shaped model (L12 H12 C768, vocab 50257, maxT 1024, seed 1), saves
 *   it as OUTDIR/model (Hugging Face GPT-2 safetensors, for bench_gpu_hf.py to load the SAME
 *   weights), measures the two ceilings (a TF32 cuBLAS 8192^3 SGEMM on random data; a 2 GiB
 *   device-to-device copy, bytes read + written), then times andrea's forward at B=64 T=128 and
 *   B=8 T=1024 with no maps, fp32 maps and fp16 maps written to device buffers [B, L, H, T, T].
 *   Floor = matmul FLOPs / TF32 rate + map bytes / copy bandwidth; matmul FLOPs are the
 *   projections (24 N C^2 per layer, N = B*T) plus causal attention (2 B H T^2 hd per layer).
 *   Times: CUDA events on the engine's stream, 3 warm-ups, median of 10 (5 with --quick).
 *   Results go to stdout and, as key=value lines, to OUTDIR/andrea_results.txt.
 */
#define _POSIX_C_SOURCE 200809L
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/forward.h"
#include "../tests/support/model_random.h"
#include "../kernels/cuda_engine.h"

#define CK(call)                                                                                  \
    do {                                                                                          \
        cudaError_t rc_ = (call);                                                                 \
        if (rc_ != cudaSuccess) {                                                                 \
            fprintf(stderr, "bench_gpu_forward: %s failed at %s:%d: %s\n", #call, __FILE__, __LINE__, \
                    cudaGetErrorString(rc_));                                                     \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)
#define CKB(call)                                                                                  \
    do {                                                                                           \
        cublasStatus_t rc_ = (call);                                                               \
        if (rc_ != CUBLAS_STATUS_SUCCESS) {                                                        \
            fprintf(stderr, "bench_gpu_forward: %s failed at %s:%d: %s\n", #call, __FILE__, __LINE__, \
                    cublasGetStatusString(rc_));                                                   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static int cmpf(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}
static float median(float *v, int n) {
    qsort(v, (size_t)n, sizeof(float), cmpf);
    return v[n / 2];
}

static void fill_random(float *d, size_t n, uint64_t seed) {
    float *h = malloc(n * sizeof(float));
    if (!h) {
        fprintf(stderr, "bench_gpu_forward: out of memory for %zu floats\n", n);
        exit(1);
    }
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        h[i] = (float)((s >> 40) & 0xffffff) / 16777216.0f - 0.5f;
    }
    CK(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
    free(h);
}

static double tf32_rate(int reps) {
    const int n = 8192;
    float *a, *b, *c, t[20];
    CK(cudaMalloc((void **)&a, (size_t)n * n * 4));
    CK(cudaMalloc((void **)&b, (size_t)n * n * 4));
    CK(cudaMalloc((void **)&c, (size_t)n * n * 4));
    fill_random(a, (size_t)n * n, 1);
    fill_random(b, (size_t)n * n, 2);
    cublasHandle_t h;
    CKB(cublasCreate(&h));
    CKB(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    const float one = 1, zero = 0;
    for (int r = -3; r < reps; r++) {
        CK(cudaEventRecord(e0, 0));
        CKB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n));
        CK(cudaEventRecord(e1, 0));
        CK(cudaEventSynchronize(e1));
        if (r >= 0) CK(cudaEventElapsedTime(&t[r], e0, e1));
    }
    double ms = median(t, reps);
    cublasDestroy(h);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    return 2.0 * n * n * (double)n / (ms * 1e-3);
}

static double copy_bw(int reps) {
    const size_t bytes = (size_t)2 << 30;
    void *a, *b;
    float t[20];
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMemset(a, 1, bytes));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int r = -3; r < reps; r++) {
        CK(cudaEventRecord(e0, 0));
        CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0));
        CK(cudaEventRecord(e1, 0));
        CK(cudaEventSynchronize(e1));
        if (r >= 0) CK(cudaEventElapsedTime(&t[r], e0, e1));
    }
    double ms = median(t, reps);
    cudaFree(a);
    cudaFree(b);
    return 2.0 * bytes / (ms * 1e-3);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_gpu_forward OUTDIR [--quick|--profile]\n");
        return 2;
    }
    const char *dir = argv[1];
    const int quick = argc > 2 && strcmp(argv[2], "--quick") == 0;
    const int profile = argc > 2 && strcmp(argv[2], "--profile") == 0; /* one forward per shape, for ncu */
    const int reps = quick ? 5 : profile ? 1 : 10;
    if (!andrea_cuda_available()) {
        fprintf(stderr, "bench_gpu_forward: no usable CUDA device\n");
        return 1;
    }
    ae_error err = {{0}};
    andrea_model m = {0};
    andrea_config cfg = {0};
    cfg.max_seq_len = 1024;
    cfg.vocab_size = 50257;
    cfg.n_layer = 12;
    cfg.n_head = 12;
    cfg.d_model = 768;
    char path[4096], rpath[4096];
    snprintf(path, sizeof path, "%s/model", dir);
    snprintf(rpath, sizeof rpath, "%s/andrea_results.txt", dir);
    if (andrea_model_init_random(&m, &cfg, 1, &err) || andrea_model_save_safetensors(&m, path, "F32", 0, &err)) {
        fprintf(stderr, "bench_gpu_forward: %s\n", err.msg);
        return 1;
    }
    FILE *rf = fopen(rpath, "w");
    if (!rf) {
        perror(rpath);
        return 1;
    }
    struct cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const double tf32 = profile ? 4e14 : tf32_rate(reps), bw = profile ? 4e12 : copy_bw(reps);
    printf("device %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    printf("ceilings: TF32 SGEMM 8192^3 %.1f TFLOP/s, D2D copy %.0f GB/s (read+write)\n", tf32 / 1e12, bw / 1e9);
    fprintf(rf, "tf32_tflops=%.2f\ncopy_gbs=%.1f\n", tf32 / 1e12, bw / 1e9);

    const int shapes[2][2] = {{64, 128}, {8, 1024}};
    const int L = 12, H = 12, C = 768, hd = 64;
    for (int s = 0; s < 2; s++) {
        const int B = shapes[s][0], T = shapes[s][1];
        const double N = (double)B * T;
        const double flops = L * (24.0 * N * C * C + 2.0 * B * H * (double)T * T * hd);
        const size_t maps = (size_t)B * L * H * T * T;
        andrea_engine *e = andrea_cuda_engine_open(&m, NULL, B, T, &err);
        if (!e) {
            fprintf(stderr, "bench_gpu_forward: %s\n", err.msg);
            return 1;
        }
        int *tok = malloc((size_t)B * T * sizeof(int));
        if (!tok) {
            fprintf(stderr, "bench_gpu_forward: out of memory\n");
            return 1;
        }
        for (int i = 0; i < B * T; i++) tok[i] = (int)((i * 2654435761u) % 50257u);
        void *d32, *d16;
        CK(cudaMalloc(&d32, maps * 4));
        CK(cudaMalloc(&d16, maps * 2));
        cudaStream_t st = (cudaStream_t)andrea_cuda_stream(e);
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        const char *modes[3] = {"no maps", "fp32 maps", "fp16 maps"};
        for (int mode = profile ? 1 : 0; mode < (profile ? 2 : 3); mode++) {
            andrea_forward_io io = {.B = B, .T = T, .tokens = tok};
            andrea_cuda_device_outputs out = {mode == 0 ? NULL : mode == 1 ? d32 : d16, mode == 2, NULL, NULL, NULL};
            float t[20];
            for (int r = profile ? -1 : -3; r < reps; r++) {
                CK(cudaEventRecord(e0, st));
                if (andrea_cuda_forward_device(e, &io, &out, &err)) {
                    fprintf(stderr, "bench_gpu_forward: %s\n", err.msg);
                    return 1;
                }
                CK(cudaEventRecord(e1, st));
                CK(cudaEventSynchronize(e1));
                if (r >= 0) CK(cudaEventElapsedTime(&t[r], e0, e1));
            }
            const double ms = median(t, reps);
            const double mbytes = mode == 0 ? 0 : (double)maps * (mode == 1 ? 4 : 2);
            const double floor_ms = (flops / tf32 + mbytes / bw) * 1e3;
            printf("andrea B=%-3d T=%-5d %-9s %8.3f ms  floor %7.3f ms (%.2fx)  %.1f TFLOP/s matmul, maps %.2f GB\n", B, T,
                   modes[mode], ms, floor_ms, ms / floor_ms, flops / (ms * 1e-3) / 1e12, mbytes / 1e9);
            fprintf(rf, "andrea_B%d_T%d_mode%d_ms=%.4f\nfloor_B%d_T%d_mode%d_ms=%.4f\n", B, T, mode, ms, B, T, mode,
                    floor_ms);
        }
        andrea_engine_close(e);
        /* the earlier attention kernel version, same weights and outputs, for kernels/NOTES.md */
        for (int ver = 2; ver >= 1 && !quick && !profile; ver--) {
            setenv("ANDREA_CUDA_ATTN", ver == 2 ? "v2" : "v1", 1);
            e = andrea_cuda_engine_open(&m, NULL, B, T, &err);
            unsetenv("ANDREA_CUDA_ATTN");
            if (!e) {
                fprintf(stderr, "bench_gpu_forward: %s\n", err.msg);
                return 1;
            }
            st = (cudaStream_t)andrea_cuda_stream(e);
            andrea_forward_io io = {.B = B, .T = T, .tokens = tok};
            andrea_cuda_device_outputs out = {d32, 0, NULL, NULL, NULL};
            float t[20];
            for (int r = -1; r < 3; r++) {
                CK(cudaEventRecord(e0, st));
                if (andrea_cuda_forward_device(e, &io, &out, &err)) {
                    fprintf(stderr, "bench_gpu_forward: %s\n", err.msg);
                    return 1;
                }
                CK(cudaEventRecord(e1, st));
                CK(cudaEventSynchronize(e1));
                if (r >= 0) CK(cudaEventElapsedTime(&t[r], e0, e1));
            }
            printf("andrea B=%-3d T=%-5d fp32 maps, attention v%d: %8.3f ms (median of 3)\n", B, T, ver, median(t, 3));
            andrea_engine_close(e);
        }
        cudaFree(d32);
        cudaFree(d16);
        free(tok);
    }
    if (ferror(rf) | fclose(rf)) { /* both: fclose also when a write already failed */
        fprintf(stderr, "bench_gpu_forward: %s: write failed\n", rpath);
        return 1;
    }
    andrea_model_free(&m);
    return 0;
}
