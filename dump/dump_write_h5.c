/* dump_write_h5.c — the dump writer's HDF5 helpers (dump_write_impl.h): the IEEE fp16 file type,
 * attributes, dataset creation, hyperslab writes, and the attention-map writers (one chunk per
 * H5Dwrite_chunk, or HDF5's own path where a filter or MPI-IO needs it).
 * Failure contract: a negative hid_t/herr_t; the caller's H5_TRY (dump_h5.h) makes the message.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <hdf5_hl.h>
#include <openssl/evp.h>
#include <zlib.h>

#include "../engine/checkpoint.h"
#include "dump.h"
#include "dump_write_impl.h"
#include "../common/half.h"
#include "../tokenizer/tokenizer.h"

static int a_close_failed; /* a dump file's H5Fclose failed: HDF5's own cleanup would crash */

int andrea_h5_skip_exit_cleanup(void) { return H5dont_atexit() < 0 ? -1 : 0; }

void andrea_h5_finish(void) {
    if (!a_close_failed) (void)H5close(); /* its failure at exit changes nothing that is left to do */
}

herr_t andrea_dw_fclose(hid_t f) {
    const herr_t r = H5Fclose(f);
    if (r < 0) a_close_failed = 1;
    return r;
}

/* The IEEE binary16 file type: HDF5 1.10 has no predefined half type, so derive one from the
 * 32-bit IEEE type (sign bit 15, exponent bits 10-14 with bias 15, mantissa bits 0-9); h5py and
 * h5dump read it as float16. */
hid_t andrea_dw_make_f16_type(void) {
    hid_t t = H5Tcopy(H5T_IEEE_F32LE);
    if (t < 0) return -1;
    if (H5Tset_fields(t, 15, 10, 5, 0, 10) < 0 || H5Tset_size(t, 2) < 0 || H5Tset_precision(t, 16) < 0 ||
        H5Tset_ebias(t, 15) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

/* ---- attributes ---- */

static herr_t attr_write(hid_t loc, const char *name, hid_t type, const void *value) {
    hid_t sp = H5Screate(H5S_SCALAR);
    if (sp < 0) return -1;
    hid_t a = H5Acreate2(loc, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = a < 0 ? -1 : H5Awrite(a, type, value);
    if (a >= 0 && H5Aclose(a) < 0) rc = -1;
    H5Sclose(sp);
    return rc;
}

/* Fixed-length, NUL-terminated UTF-8 strings, stored inside the attribute message. Not
 * variable-length ones: those live in the global heap, and HDF5 1.10 crashes reading a damaged
 * global heap, which the reader must survive. h5py reads them as numpy.bytes_ (.decode()). */
herr_t andrea_dw_attr_str(hid_t loc, const char *name, const char *value) {
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0) return -1;
    herr_t rc = H5Tset_size(t, strlen(value) + 1);
    if (rc >= 0) rc = H5Tset_strpad(t, H5T_STR_NULLTERM);
    if (rc >= 0) rc = H5Tset_cset(t, H5T_CSET_UTF8);
    if (rc >= 0) rc = attr_write(loc, name, t, value);
    H5Tclose(t);
    return rc;
}

herr_t andrea_dw_attr_int(hid_t loc, const char *name, int v) { return attr_write(loc, name, H5T_NATIVE_INT, &v); }

herr_t andrea_dw_attr_u64(hid_t loc, const char *name, uint64_t v) {
    return attr_write(loc, name, H5T_NATIVE_UINT64, &v);
}

/* ---- datasets ---- */

/* Creates a dataset of rank n; chunk == NULL means contiguous. gzip applies to chunked ones. */
hid_t andrea_dw_dset_create(hid_t group, const char *name, hid_t type, int rank, const hsize_t *dims,
                         const hsize_t *chunk, int gzip, int fill_nan) {
    hid_t sp = H5Screate_simple(rank, dims, NULL);
    if (sp < 0) return -1;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t d = -1;
    int ok = dcpl >= 0;
    int empty = 0;
    for (int i = 0; i < rank; i++) empty |= dims[i] == 0;
    if (ok && chunk && !empty) {
        ok = H5Pset_chunk(dcpl, rank, chunk) >= 0;
        if (ok && gzip > 0) ok = H5Pset_deflate(dcpl, (unsigned)gzip) >= 0;
    }
    if (ok && fill_nan) {
        float nan = NAN;
        ok = H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, &nan) >= 0;
    }
    /* Chunks are allocated as they are written: no time spent pre-filling a file we overwrite. */
    if (ok && chunk && !empty) ok = H5Pset_fill_time(dcpl, H5D_FILL_TIME_IFSET) >= 0;
    if (ok) d = H5Dcreate2(group, name, type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (dcpl >= 0) H5Pclose(dcpl);
    H5Sclose(sp);
    return d;
}

/* Writes buf (memory type mtype, shape count) at offset start of d through transfer list dxpl.
 * active == 0 (MPI: this rank has nothing for a collective write) selects nothing. */
herr_t andrea_dw_dset_write_slab(hid_t d, hid_t dxpl, int active, hid_t mtype, int rank, const hsize_t *start,
                              const hsize_t *count, const void *buf) {
    hid_t fs = H5Dget_space(d);
    if (fs < 0) return -1;
    hid_t ms = H5Screate_simple(rank, count, NULL);
    herr_t rc = ms < 0 ? -1 : active ? H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL)
                                     : H5Sselect_none(fs) < 0 ? -1 : H5Sselect_none(ms);
    if (rc >= 0) rc = H5Dwrite(d, mtype, ms, fs, dxpl, buf);
    if (ms >= 0) H5Sclose(ms);
    H5Sclose(fs);
    return rc;
}

/* Whether the attention maps can go to the file with H5Dwrite_chunk (dw_write_maps_direct): one
 * process writing the file (MPI-IO writes collectively through H5Dwrite; a part file of an MPI dump
 * has one writer) and a little-endian host, so the
 * bytes in memory are the file type's bytes (IEEE fp16/fp32 LE). With --gzip the chunks are
 * deflated here, on every core, instead of by HDF5's filter on one. */
int andrea_dw_maps_direct_ok(const par_state *par) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return !par->collective;
#else
    (void)par;
    return 0;
#endif
}

/* Map i of `maps` (a piece whose maps are contiguous) with its query rows t >= len zeroed: the
 * source itself when nothing is padded, else a copy in stage. */
static const void *map_padded(const void *maps, size_t i, size_t map_bytes, size_t T, size_t esz, size_t len,
                              void *stage) {
    const char *src = (const char *)maps + i * map_bytes;
    if (len >= T) return src;
    memcpy(stage, src, len * T * esz);
    memset((char *)stage + len * T * esz, 0, map_bytes - len * T * esz);
    return stage;
}

/* --gzip on the direct path: deflated in groups of maps on every OpenMP thread (zlib's compress2:
 * the zlib stream HDF5's own deflate filter writes and reads), then written in chunk order. HDF5
 * applies a filter on the calling thread only: at level 1 that made the map writing of a CPU dump
 * 2x slower on 2 cores (bench/RESULTS.md). Two groups of maps (sizes below): while thread 0 writes
 * group g (HDF5 is only ever called from that one thread), the others deflate group g + 1, and
 * thread 0 joins them when its writes are done, so the job takes about max(deflate, write) rather
 * than their sum. That pays where writes are slow (the GPU host's 19 GB dumps go at disk
 * writeback speed); on the 2-core dev VM, whose writes land in the page cache, both schedules take
 * the same time (RESULTS.md). Maps [first, first + n) of the batch, as andrea_dw_write_maps. */
static herr_t write_maps_deflated(hid_t d, int b0, size_t first, size_t n, int L, int H, int T, size_t esz,
                                  const void *maps, const int *lengths, int level) {
    const size_t lh = (size_t)L * H, map_bytes = (size_t)T * T * esz;
    const uLong bound = compressBound((uLong)map_bytes);
    /* memory: at most 64 MB of stage (one map a thread, so fewer threads for big maps on many
     * cores) and two groups of max(64 MB, 2 maps a thread) of deflated output */
    const size_t mb64 = (size_t)64 << 20, max_threads = mb64 / map_bytes > 0 ? mb64 / map_bytes : 1;
    int threads = omp_get_max_threads() > 0 ? omp_get_max_threads() : 1;
    if ((size_t)threads > max_threads) threads = (int)max_threads;
    size_t group = mb64 / ((size_t)bound + 1);
    if (group < (size_t)threads * 2) group = (size_t)threads * 2;
#ifdef ANDREA_TESTING
    const char *forced = getenv("ANDREA_TEST_DEFLATE_GROUP"); /* test builds: force several groups */
    if (forced && atoi(forced) > 0) group = (size_t)atoi(forced);
#endif
    if (group > n) group = n;
    const long long n_groups = group ? (long long)((n + group - 1) / group) : 0;
    unsigned char *out[2] = {malloc((group ? group : 1) * (size_t)bound), malloc((group ? group : 1) * (size_t)bound)};
    uLongf *out_len[2] = {malloc((group ? group : 1) * sizeof(uLongf)), malloc((group ? group : 1) * sizeof(uLongf))};
    unsigned char *stage = lengths ? malloc((size_t)threads * map_bytes) : NULL;
    herr_t rc = -1;
    int failed = 0;
    if (!out[0] || !out[1] || !out_len[0] || !out_len[1] || (lengths && !stage)) goto done;
    /* step g: write group g (g >= 0) while deflating group g + 1 (if any) */
    for (long long g = -1; g < n_groups && !failed; g++) {
        const size_t w0 = (size_t)(g < 0 ? 0 : g) * group, wn = g < 0 ? 0 : (n - w0 < group ? n - w0 : group);
        const size_t c0 = (size_t)(g + 1) * group, cn = g + 1 < n_groups ? (n - c0 < group ? n - c0 : group) : 0;
        unsigned char *wbuf = out[g & 1], *cbuf = out[(g + 1) & 1];
        const uLongf *wlen = out_len[g & 1];
        uLongf *clen = out_len[(g + 1) & 1];
        size_t next = 0; /* the next map of group g + 1 to deflate, taken by any thread */
#pragma omp parallel num_threads(threads)
        {
            if (omp_get_thread_num() == 0)
                for (size_t k = 0; k < wn; k++) {
                    int stop;
#pragma omp atomic read
                    stop = failed;
                    if (stop) break;
                    const size_t m = first + w0 + k;
                    hsize_t off[5] = {(hsize_t)b0 + m / lh, (hsize_t)((m % lh) / (size_t)H), (hsize_t)(m % (size_t)H),
                                      0, 0};
                    if (H5Dwrite_chunk(d, H5P_DEFAULT, 0, off, wlen[k], wbuf + k * bound) < 0) {
#pragma omp atomic write
                        failed = 1;
                    }
                }
            void *st = stage ? stage + (size_t)omp_get_thread_num() * map_bytes : NULL;
            for (;;) {
                size_t k;
#pragma omp atomic capture
                k = next++;
                if (k >= cn) break;
                const size_t i = c0 + k, len = lengths ? (size_t)lengths[(first + i) / lh] : (size_t)T;
                const void *src = map_padded(maps, i, map_bytes, (size_t)T, esz, len, st);
                clen[k] = bound;
                if (compress2(cbuf + k * bound, &clen[k], src, (uLong)map_bytes, level) != Z_OK) {
#pragma omp atomic write
                    failed = 1; /* only Z_MEM_ERROR is possible with a full-size bound */
                }
            }
        }
    }
    rc = failed ? -1 : 0;
done:
    for (int b = 0; b < 2; b++) {
        free(out[b]);
        free(out_len[b]);
    }
    free(stage);
    return rc;
}

/* Writes maps [first, first + n) of a batch whose sequence 0 is the dump's sequence b0 (map m of
 * the batch is sequence m / (L*H), head m % (L*H), in [B, L, H, T, T] order; `maps` holds them
 * contiguously, esz bytes a value). direct (andrea_dw_maps_direct_ok): one H5Dwrite_chunk per map —
 * why: H5Dwrite runs HDF5's selection, type-path and chunk-cache machinery per chunk, the direct
 * write is one index update and one pwrite, 1.5x the rate on the H200 host (bench/bench_h5_maps.c);
 * with gzip > 0 the chunks are deflated first, on every core (write_maps_deflated); else one
 * hyperslab H5Dwrite per map (mtype: the maps' memory type; MPI-IO, where HDF5 applies the filter).
 * lengths (may be NULL: rows already zeroed): query rows t >= lengths[b] are written as zeros,
 * through a one-map copy in stage (the source may be a buffer the caller must not change). */
herr_t andrea_dw_write_maps(hid_t d, hid_t dxpl, hid_t mtype, int direct, int b0, size_t first, size_t n, int L, int H,
                     int T, size_t esz, const void *maps, const int *lengths, void *stage, int gzip) {
    if (direct && gzip > 0) return write_maps_deflated(d, b0, first, n, L, H, T, esz, maps, lengths, gzip);
    const size_t map_bytes = (size_t)T * T * esz, lh = (size_t)L * H;
    for (size_t i = 0; i < n; i++) {
        const size_t m = first + i, b = m / lh, k = m % lh;
        const size_t len = lengths ? (size_t)lengths[b] : (size_t)T;
        const void *src = map_padded(maps, i, map_bytes, (size_t)T, esz, len, stage);
        hsize_t off[5] = {(hsize_t)b0 + b, (hsize_t)(k / (size_t)H), (hsize_t)(k % (size_t)H), 0, 0};
        hsize_t one[5] = {1, 1, 1, (hsize_t)T, (hsize_t)T};
        if (direct ? H5Dwrite_chunk(d, H5P_DEFAULT, 0, off, map_bytes, src) < 0
                   : andrea_dw_dset_write_slab(d, dxpl, 1, mtype, 5, off, one, src) < 0)
            return -1;
    }
    return 0;
}

/* ---- dimension scales (H5DS, the hdf5_hl library) ---- */

/* A dimension scale /<suite>/<name>: int32 [n] holding 0..n-1, so netCDF readers (xarray through
 * h5netcdf) name the axis `name` with its index as the coordinate. MPI: rank 0 writes its values
 * (root), every rank makes the calls. */
hid_t andrea_dw_scale_create(hid_t g, const char *name, hsize_t n, hid_t dxpl, int root) {
    hid_t d = andrea_dw_dset_create(g, name, H5T_STD_I32LE, 1, &n, NULL, 0, 0);
    if (d < 0) return -1;
    int *v = malloc((n ? n : 1) * sizeof *v);
    herr_t rc = v ? 0 : -1;
    for (hsize_t i = 0; v && i < n; i++) v[i] = (int)i;
    hsize_t zero = 0;
    if (rc >= 0 && n) rc = andrea_dw_dset_write_slab(d, dxpl, root, H5T_NATIVE_INT, 1, &zero, &n, v);
    free(v);
    if (rc >= 0) rc = H5DSset_scale(d, name);
    if (rc < 0) {
        H5Dclose(d);
        return -1;
    }
    return d;
}

/* Attaches scales[i] to dimension i of d and labels the dimension with the scale's name. */
herr_t andrea_dw_scales_attach(hid_t d, int rank, const hid_t *scales, const char *const *names) {
    for (int i = 0; i < rank; i++) {
        if (H5DSattach_scale(d, scales[i], (unsigned)i) < 0) return -1;
        if (H5DSset_label(d, (unsigned)i, names[i]) < 0) return -1;
    }
    return 0;
}

/* ---- token text ---- */

/* Appends the UTF-8 text of src[0..n) to dst (cap bytes, NUL-terminated): valid UTF-8 is copied,
 * every byte that does not start a valid sequence (a token holding part of a character) and NUL
 * become U+FFFD. Returns the bytes written (without the NUL). */
size_t andrea_dw_utf8_clean(const unsigned char *src, size_t n, char *dst, size_t cap) {
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        unsigned c = src[i];
        size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        int ok = c != 0 && len && i + len <= n;
        for (size_t k = 1; ok && k < len; k++) ok = (src[i + k] & 0xc0) == 0x80;
        if (ok && len == 2) ok = c >= 0xc2;                                              /* overlong */
        if (ok && len == 3) ok = !(c == 0xe0 && src[i + 1] < 0xa0) && !(c == 0xed && src[i + 1] >= 0xa0);
        if (ok && len == 4) ok = c <= 0xf4 && !(c == 0xf0 && src[i + 1] < 0x90) && !(c == 0xf4 && src[i + 1] >= 0x90);
        if (!ok) len = 1;
        const char *put = ok ? (const char *)src + i : "\xef\xbf\xbd";
        size_t plen = ok ? len : 3;
        if (o + plen + 1 > cap) break;
        memcpy(dst + o, put, plen);
        o += plen;
        i += len;
    }
    if (cap) dst[o] = 0;
    return o;
}

/* The tokenizer's identity: sha256 over ids 0..vocab_size-1 of each token's bytes, each preceded
 * by its length as 4 bytes little-endian (0xffffffff for an id the tokenizer has no text for), in
 * lowercase hex. Two tokenizers with the same text for every id have the same digest, whatever
 * files they were read from (docs/dump-format.md). */
int andrea_dump_tokenizer_sha256(const andrea_tokenizer *tok, int vocab_size, char hex[65]) {
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1;
    char buf[ANDREA_TOKEN_MAX_BYTES];
    for (int id = 0; ok && id < vocab_size; id++) {
        int nb = andrea_tokenizer_token_bytes(tok, id, buf, sizeof buf);
        uint32_t len = nb < 0 ? 0xffffffffu : (uint32_t)nb;
        unsigned char le[4] = {(unsigned char)len, (unsigned char)(len >> 8), (unsigned char)(len >> 16),
                               (unsigned char)(len >> 24)};
        ok = EVP_DigestUpdate(ctx, le, 4) == 1 && (nb <= 0 || EVP_DigestUpdate(ctx, buf, (size_t)nb) == 1);
    }
    ok = ok && EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 && mdlen == 32;
    EVP_MD_CTX_free(ctx);
    if (!ok) return -1;
    for (unsigned i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
    return 0;
}
