/* bench_gpu_dump_stream.c — end to end through the streaming pipeline (kernels/cuda_engine.h):
 * forward + every attention map as fp16 into an HDF5 file on disk, batch k+1 computing while
 * batch k drains through the pipeline's pinned ring into the file. The attention dataset only (what bench_gpu_dump.py's HF pipeline writes),
 * same layout as `andrea dump` ([n, L, H, T, T], IEEE fp16, chunks of one map).
 * Usage: bench_gpu_dump_stream MODEL_DIR WORKDIR
 * Workloads: 512 sequences of T=128 in batches of 64; 64 of T=1024 in batches of 8. Wall clock from
 * file creation to close (model load and engine open excluded, as HF's model load is). Prints one
 * line per workload: seconds, GB of maps, GB/s.
 */
#define _POSIX_C_SOURCE 200809L
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/progress.h"
#include "../engine/forward.h"
#include "../engine/model.h"
#include "../kernels/cuda_engine.h"

#define H5CK(call)                                                                                \
    do {                                                                                          \
        if ((long long)(call) < 0) {                                                              \
            fprintf(stderr, "bench_gpu_dump_stream: HDF5 %s failed at %s:%d\n", #call, __FILE__, \
                    __LINE__);                                                                    \
            return 1;                                                                             \
        }                                                                                         \
    } while (0)


/* the batch handed back in r, piece by piece from the pipeline's pinned ring, one H5Dwrite_chunk
 * per map (as `andrea dump` writes them) */
static int write_ready(andrea_cuda_pipeline *p, hid_t ds, const andrea_cuda_ready *r, int B0, int L, int H) {
    ae_error err = {{0}};
    const size_t lh = (size_t)L * H, map_bytes = (size_t)r->T * r->T * 2;
    for (size_t first = 0, n = 0; first < (size_t)r->B * lh; first += n) {
        const void *piece;
        if (andrea_cuda_pipeline_maps(p, first, &piece, &n, &err)) {
            fprintf(stderr, "bench_gpu_dump_stream: %s\n", err.msg);
            return 1;
        }
        for (size_t i = 0; i < n; i++) {
            const size_t m = first + i;
            hsize_t off[5] = {(hsize_t)r->tag * B0 + m / lh, (m % lh) / H, (m % lh) % H, 0, 0};
            H5CK(H5Dwrite_chunk(ds, H5P_DEFAULT, 0, off, map_bytes, (const char *)piece + i * map_bytes));
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: bench_gpu_dump_stream MODEL_DIR WORKDIR\n");
        return 2;
    }
    ae_error err = {{0}};
    andrea_model m = {0};
    if (andrea_model_load(&m, argv[1], &err)) {
        fprintf(stderr, "bench_gpu_dump_stream: %s\n", err.msg);
        return 1;
    }
    const int L = m.cfg.n_layer, H = m.cfg.n_head;
    hid_t f16 = H5Tcopy(H5T_IEEE_F32LE); /* IEEE binary16, as dump/dump_write.c defines it */
    H5CK(f16);
    H5CK(H5Tset_fields(f16, 15, 10, 5, 0, 10));
    H5CK(H5Tset_size(f16, 2));
    H5CK(H5Tset_precision(f16, 16));
    H5CK(H5Tset_ebias(f16, 15));
    const int work[2][3] = {{512, 128, 64}, {64, 1024, 8}};
    for (int w = 0; w < 2; w++) {
        const int n = work[w][0], T = work[w][1], B = work[w][2];
        andrea_engine *e = andrea_cuda_engine_open(&m, NULL, B, T, &err);
        andrea_cuda_pipeline *p = e ? andrea_cuda_pipeline_open(e, B, T, 1, 1, 0, 0, &err) : NULL;
        if (!p) {
            fprintf(stderr, "bench_gpu_dump_stream: %s\n", err.msg);
            return 1;
        }
        int *tok = malloc((size_t)n * T * sizeof(int));
        if (!tok) {
            fprintf(stderr, "bench_gpu_dump_stream: out of memory\n");
            return 1;
        }
        for (size_t i = 0; i < (size_t)n * T; i++) tok[i] = (int)((i * 2654435761u) % (unsigned)m.cfg.vocab_size);
        { /* warm-up (cuBLAS plans, module load), not timed, as the HF side warms up */
            andrea_cuda_ready r;
            andrea_forward_io io = {.B = B, .T = T, .tokens = tok};
            if (andrea_cuda_pipeline_submit(p, &io, 0, &r, &err) || andrea_cuda_pipeline_flush(p, &r, &err)) {
                fprintf(stderr, "bench_gpu_dump_stream: %s\n", err.msg);
                return 1;
            }
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/stream_%d.h5", argv[2], T);
        const double t0 = andrea_now_seconds();
        hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        H5CK(f);
        hsize_t dims[5] = {(hsize_t)n, (hsize_t)L, (hsize_t)H, (hsize_t)T, (hsize_t)T};
        hsize_t chunk[5] = {1, 1, 1, (hsize_t)T, (hsize_t)T};
        hid_t sp = H5Screate_simple(5, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
        H5CK(sp);
        H5CK(dcpl);
        H5CK(H5Pset_chunk(dcpl, 5, chunk));
        hid_t ds = H5Dcreate2(f, "attention", f16, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        H5CK(ds);
        for (int k = 0; k <= n / B; k++) {
            andrea_cuda_ready r;
            int rc;
            if (k < n / B) {
                andrea_forward_io io = {.B = B, .T = T, .tokens = tok + (size_t)k * B * T};
                rc = andrea_cuda_pipeline_submit(p, &io, k, &r, &err);
            } else {
                rc = andrea_cuda_pipeline_flush(p, &r, &err);
            }
            if (rc) {
                fprintf(stderr, "bench_gpu_dump_stream: %s\n", err.msg);
                return 1;
            }
            if (r.valid && write_ready(p, ds, &r, B, L, H)) return 1;
        }
        H5CK(H5Dclose(ds)); /* writes the dataset's cached chunks: part of the timed write */
        H5Pclose(dcpl);
        H5Sclose(sp);
        H5CK(H5Fclose(f));
        const double s = andrea_now_seconds() - t0, gb = (double)n * L * H * T * T * 2 / 1e9;
        printf("stream n=%d T=%d B=%d: %.2f s, %.2f GB of fp16 maps, %.2f GB/s\n", n, T, B, s, gb, gb / s);
        fflush(stdout);
        remove(path);
        free(tok);
        andrea_cuda_pipeline_close(p);
        andrea_engine_close(e);
    }
    H5Tclose(f16);
    andrea_model_free(&m);
    return 0;
}
