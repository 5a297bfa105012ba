/* test_dump_cuda.c — a dump made on the GPU (streaming pipeline for maps/norms/DLA, synchronous
 * path for head_out) holds the same values as the CPU dump. Skips without a usable GPU.
 * ANDREA_CUDA_FP32=1 selects full-fp32 matmuls and the exact attention kernel, so the GPU agrees
 * with the CPU to float rounding: tolerance 2e-5 absolute on probabilities and 1e-4 relative on
 * norms/DLA (different summation orders over C = 64). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../dump/dump.h"
#include "../dump/dump_write.h"
#include "support/model_random.h"
#include "check.h"

static andrea_model model;
static probe_suite *suites;
static int n_suites;

static int dump_gz(const char *name, andrea_device dev, int fp32, andrea_contrib contrib, int gzip, char *path) {
    ae_error err;
    snprintf(path, 4096, "%s/%s", check_tmpdir(), name);
    andrea_dump_options o;
    andrea_dump_options_init(&o);
    o.out_path = path;
    o.run.engine.device = dev;
    o.run.maps_fp32 = fp32;
    o.run.contrib = contrib;
    o.gzip = gzip; /* deflate: the maps go through H5Dwrite, not H5Dwrite_chunk */
    o.run.batch = 3;   /* several batches, the last partial: the pipeline's hand-back order matters */
    int rc = andrea_dump_write(&model, suites, n_suites, &o, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    return rc;
}

static int dump(const char *name, andrea_device dev, int fp32, andrea_contrib contrib, char *path) {
    return dump_gz(name, dev, fp32, contrib, 0, path);
}

/* Compares every map and per-head value of two dumps; tol_map is absolute, tol_val relative. */
static void compare(const char *pa, const char *pb, double tol_map, double tol_val) {
    ae_error err;
    andrea_dump *a = andrea_dump_open(pa, &err), *b = andrea_dump_open(pb, &err);
    CHECK_MSG(a && b, "%s", err.msg);
    if (!a || !b) goto out;
    const int L = model.cfg.n_layer, H = model.cfg.n_head;
    double worst_map = 0, worst_val = 0;
    for (int s = 0; s < andrea_dump_n_suites(a); s++) {
        const int T = andrea_dump_suite(a, s)->T, n = andrea_dump_suite(a, s)->n_seq;
        CHECK(andrea_dump_suite(b, s)->T == T && andrea_dump_suite(b, s)->n_seq == n);
        float *ma = malloc(sizeof(float) * (size_t)T * T), *mb = malloc(sizeof(float) * (size_t)T * T);
        float *va = malloc(sizeof(float) * (size_t)L * H * T), *vb = malloc(sizeof(float) * (size_t)L * H * T);
        for (int i = 0; i < n; i++) {
            for (int lh = 0; lh < L * H; lh++) {
                CHECK(andrea_dump_read_map(a, s, i, lh / H, lh % H, ma, &err) == 0);
                CHECK(andrea_dump_read_map(b, s, i, lh / H, lh % H, mb, &err) == 0);
                for (int k = 0; k < T * T; k++) worst_map = fmax(worst_map, fabs((double)ma[k] - mb[k]));
            }
            const char *which[2] = {"head_out_norm", "head_dla"};
            for (int w = 0; w < 2 && andrea_dump_has(a, s, which[w]); w++) {
                CHECK(andrea_dump_read_head_values(a, s, i, which[w], va, &err) == 0);
                CHECK(andrea_dump_read_head_values(b, s, i, which[w], vb, &err) == 0);
                for (int k = 0; k < L * H * T; k++) {
                    if (isnan(va[k]) || isnan(vb[k])) {
                        CHECK(isnan(va[k]) && isnan(vb[k]));
                        continue;
                    }
                    worst_val = fmax(worst_val, fabs((double)va[k] - vb[k]) / (fabs((double)va[k]) + 1e-3));
                }
            }
        }
        free(ma);
        free(mb);
        free(va);
        free(vb);
    }
    fprintf(stderr, "  %s vs %s: max map diff %.2g, max relative value diff %.2g\n", pa, pb, worst_map, worst_val);
    CHECK(worst_map <= tol_map);
    CHECK(worst_val <= tol_val);
out:
    andrea_dump_close(a);
    andrea_dump_close(b);
}

static void test_streamed_gpu_dump_equals_the_cpu_dump(void) {
    char cpu[4096], gpu[4096];
    CHECK(dump("cpu32.h5", ANDREA_DEVICE_CPU, 1, ANDREA_CONTRIB_NORM, cpu) == 0);
    CHECK(dump("gpu32.h5", ANDREA_DEVICE_CUDA, 1, ANDREA_CONTRIB_NORM, gpu) == 0);
    compare(cpu, gpu, 2e-5, 1e-4);
}

static void test_streamed_gpu_fp16_dump_equals_the_cpu_fp16_dump(void) {
    char cpu[4096], gpu[4096];
    CHECK(dump("cpu16.h5", ANDREA_DEVICE_CPU, 0, ANDREA_CONTRIB_NONE, cpu) == 0);
    CHECK(dump("gpu16.h5", ANDREA_DEVICE_CUDA, 0, ANDREA_CONTRIB_NONE, gpu) == 0);
    compare(cpu, gpu, 2e-5 + 1.0 / 2048, 0); /* one fp16 rounding step apart at most */
}

static void test_streamed_gpu_gzip_dump_equals_the_cpu_dump(void) {
    char cpu[4096], gpu[4096];
    CHECK(dump("cpu16z.h5", ANDREA_DEVICE_CPU, 0, ANDREA_CONTRIB_NONE, cpu) == 0);
    CHECK(dump_gz("gpu16z.h5", ANDREA_DEVICE_CUDA, 0, ANDREA_CONTRIB_NONE, 1, gpu) == 0);
    compare(cpu, gpu, 2e-5 + 1.0 / 2048, 0);
}

static void test_gpu_dump_with_head_out_equals_the_cpu_dump(void) {
    char cpu[4096], gpu[4096];
    CHECK(dump("cpufull.h5", ANDREA_DEVICE_CPU, 1, ANDREA_CONTRIB_FULL, cpu) == 0);
    CHECK(dump("gpufull.h5", ANDREA_DEVICE_CUDA, 1, ANDREA_CONTRIB_FULL, gpu) == 0);
    compare(cpu, gpu, 2e-5, 1e-4);
}

int main(void) {
    if (!andrea_cuda_available()) return check_skip("no usable CUDA device (or built without CUDA)");
    setenv("ANDREA_CUDA_FP32", "1", 1);
    /* pipeline pieces of 5 maps: they span sequences (4 heads x 2 layers a sequence) and the ring
     * of 4 pieces wraps within a batch of 3 sequences (kernels/cuda_pipeline.cu) */
    setenv("ANDREA_CUDA_PIECE_MAPS", "5", 1);
    ae_error err;
    andrea_config c = {0};
    c.max_seq_len = 64;
    c.vocab_size = 257;
    c.n_layer = 2;
    c.n_head = 4;
    c.d_model = 64;
    andrea_tokenizer *tok = andrea_tokenizer_open(257, NULL, NULL, &err);
    probe_options po = {7, 40, 0};
    if (!tok || andrea_model_init_random(&model, &c, 11, &err) ||
        andrea_probe_suites_builtin_list("prev_token,induction,entity", tok, 257, 64, &po, &suites, &n_suites, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    /* padding: shorter items in the first suite (rows beyond them must be zero on both paths) */
    for (int i = 1; i < suites[0].n_items; i += 3) {
        probe_item *it = &suites[0].items[i];
        it->n_tokens = 17 + i;
        int m = 0;
        for (int k = 0; k < it->n_targets; k++)
            if (it->targets[k].query < it->n_tokens) it->targets[m++] = it->targets[k];
        it->n_targets = m;
    }
    RUN(test_streamed_gpu_dump_equals_the_cpu_dump);
    RUN(test_streamed_gpu_fp16_dump_equals_the_cpu_fp16_dump);
    RUN(test_streamed_gpu_gzip_dump_equals_the_cpu_dump);
    RUN(test_gpu_dump_with_head_out_equals_the_cpu_dump);
    andrea_probe_suites_free(suites, n_suites);
    andrea_model_free(&model);
    andrea_tokenizer_free(tok);
    return check_summary("test_dump_cuda");
}
