/* bench_h5_maps.c — how fast can one thread put attention maps into HDF5? The dump's attention
 * dataset is [n, L, H, T, T] fp16 with chunks of exactly one map (docs/dump-format.md); this
 * writes N synthetic maps that way with each strategy andrea could use and prints GB/s:
 *   slab     one H5Dwrite of a whole batch's hyperslab (HDF5 splits it into chunks itself: type
 *            path, chunk cache, selection iterators per chunk)
 *   chunk    H5Dwrite_chunk per map (the bytes go straight to the file, no conversion, no cache)
 * each with the default (earliest) file format, whose chunk index is a version-1 B-tree, and with
 * libver 1.10, whose fixed-size datasets index chunks by a fixed array. The maps are 16-bit words
 * (H5T_STD_U16LE in memory and file: no conversion, as with andrea's fp16 type written from fp16).
 * Usage: bench_h5_maps DIR [N_SEQ T B]   (default 512 128 64: L=H=12, as ANDREA-120M)
 * Wall clock from create to close; the page cache absorbs the writes on a machine with memory to
 * spare, so this is HDF5's own cost plus memcpy into the cache, not the disk's. */
#define _POSIX_C_SOURCE 200809L
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/progress.h"

#define CK(call)                                                                          \
    do {                                                                                  \
        if ((long long)(call) < 0) {                                                      \
            fprintf(stderr, "bench_h5_maps: %s failed at %s:%d\n", #call, __FILE__, __LINE__); \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)


static double run(const char *path, int n, int L, int H, int T, int B, int direct, int v110, const uint16_t *buf) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    CK(fapl);
    if (v110) CK(H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110));
    double t0 = andrea_now_seconds();
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CK(f);
    hsize_t dims[5] = {(hsize_t)n, (hsize_t)L, (hsize_t)H, (hsize_t)T, (hsize_t)T}, chunk[5] = {1, 1, 1, (hsize_t)T, (hsize_t)T};
    hid_t sp = H5Screate_simple(5, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    CK(sp);
    CK(dcpl);
    CK(H5Pset_chunk(dcpl, 5, chunk));
    CK(H5Pset_fill_time(dcpl, H5D_FILL_TIME_IFSET));
    hid_t d = H5Dcreate2(f, "attention", H5T_STD_U16LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    CK(d);
    const size_t map_bytes = (size_t)T * T * 2, lh = (size_t)L * H;
    for (int b0 = 0; b0 < n; b0 += B) {
        int nb = n - b0 < B ? n - b0 : B;
        if (direct) {
            for (int b = 0; b < nb; b++)
                for (size_t k = 0; k < lh; k++) {
                    hsize_t off[5] = {(hsize_t)(b0 + b), k / H, k % H, 0, 0};
                    CK(H5Dwrite_chunk(d, H5P_DEFAULT, 0, off, map_bytes, (const char *)buf + ((size_t)b * lh + k) * map_bytes));
                }
        } else {
            hsize_t start[5] = {(hsize_t)b0, 0, 0, 0, 0}, count[5] = {(hsize_t)nb, (hsize_t)L, (hsize_t)H, (hsize_t)T, (hsize_t)T};
            hid_t fs = H5Dget_space(d), ms = H5Screate_simple(5, count, NULL);
            CK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL));
            CK(H5Dwrite(d, H5T_STD_U16LE, ms, fs, H5P_DEFAULT, buf));
            H5Sclose(ms);
            H5Sclose(fs);
        }
    }
    CK(H5Dclose(d));
    CK(H5Fclose(f));
    double t = andrea_now_seconds() - t0;
    H5Sclose(sp);
    H5Pclose(dcpl);
    H5Pclose(fapl);
    unlink(path);
    return t;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_h5_maps DIR [N_SEQ T B]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 512, T = argc > 3 ? atoi(argv[3]) : 128, B = argc > 4 ? atoi(argv[4]) : 64;
    const int L = 12, H = 12;
    size_t per_batch = (size_t)B * L * H * T * T;
    uint16_t *buf = malloc(per_batch * 2);
    if (!buf) return 1;
    for (size_t i = 0; i < per_batch; i++) buf[i] = (uint16_t)(0x3000 + (i * 2654435761u >> 20) % 0x800);
    char path[4096];
    snprintf(path, sizeof path, "%s/bench_h5_maps.h5", argv[1]);
    double gb = (double)n * L * H * T * T * 2 / 1e9;
    printf("bench_h5_maps: %d sequences x L%d H%d x T=%d, batches of %d: %.2f GB of fp16 maps, chunk %zu KB\n", n, L, H,
           T, B, gb, (size_t)T * T * 2 / 1024);
    const char *names[4] = {"slab  (H5Dwrite hyperslab), earliest format", "chunk (H5Dwrite_chunk),   earliest format",
                            "slab  (H5Dwrite hyperslab), libver 1.10   ", "chunk (H5Dwrite_chunk),   libver 1.10   "};
    for (int rep = 0; rep < 2; rep++)
        for (int s = 0; s < 4; s++) {
            double t = run(path, n, L, H, T, B, s & 1, s >> 1, buf);
            printf("  %s: %6.2f s  %5.2f GB/s%s\n", names[s], t, gb / t, rep ? "" : "  (first pass)");
        }
    free(buf);
    return 0;
}
