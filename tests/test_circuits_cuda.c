/* test_circuits_cuda — the circuit scores computed on the GPU (cuBLAS, fp64) equal the CPU's
 * (OpenBLAS, float Grams summed in double) within 1e-4: every composition score relative to its
 * size and prev_pos; the copying share equal (one eigenvalue sign may differ where it is within
 * float rounding of 0: in at most 1 head of 100), for the bundled model (4 x 8), a trained series
 * checkpoint, a random model of another shape (5 heads of 32, maxT below the 128-position
 * window; NaN where a head has no output on both) and a random ANDREA-120M shape (12 x 12, d 768,
 * GPT-2 vocabulary; skipped with ANDREA_TEST_QUICK=1), printing both times (never asserted).
 * Without a CUDA device: SKIP. */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "analyzer/circuits.h"
#include "check.h"
#include "common/progress.h"
#include "engine/forward.h"
#include "engine/model.h"
#include "tests/support/model_random.h"

/* |a - b| <= 1e-4 (|a| + 1e-3): relative for scores of any size, absolute near 0 */
static int close_enough(double a, double b) {
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return fabs(a - b) <= 1e-4 * (fabs(a) + 1e-3);
}

static void same_scores(const andrea_model *m, const char *what) {
    andrea_circuits cpu, gpu;
    ae_error err = {{0}};
    const double t0 = andrea_now_seconds();
    CHECK_MSG(andrea_circuits_compute_on(m, ANDREA_DEVICE_CPU, &cpu, &err) == 0, "%s: %s", what, err.msg);
    const double t1 = andrea_now_seconds();
    CHECK_MSG(andrea_circuits_compute_on(m, ANDREA_DEVICE_CUDA, &gpu, &err) == 0, "%s: %s", what, err.msg);
    const double t2 = andrea_now_seconds();
    fprintf(stderr, "%s: circuits on the CPU %.3f s, on the GPU %.3f s\n", what, t1 - t0, t2 - t1);
    if (!cpu.comp || !gpu.comp) return;
    CHECK(gpu.gpu == 1 && cpu.gpu == 0);
    CHECK(cpu.baseline == gpu.baseline);
    const int NH = cpu.n_layer * cpu.n_head;
    double worst = 0;
    int bad = 0, n = 0;
    for (int k = 0; k < CIRCUIT_N_KINDS; k++)
        for (int s = 0; s < NH; s++)
            for (int d = 0; d < NH; d++) {
                double a = andrea_circuits_score(&cpu, k, s, d), b = andrea_circuits_score(&gpu, k, s, d);
                if (!close_enough(a, b)) {
                    if (bad++ < 5) fprintf(stderr, "%s: %s %d -> %d: cpu %.9g gpu %.9g\n", what, andrea_circuit_kind_names[k], s, d, a, b);
                } else if (!isnan(a)) {
                    n++;
                    if (fabs(a - b) / fabs(a) > worst) worst = fabs(a - b) / fabs(a);
                }
            }
    CHECK_MSG(bad == 0, "%s: %d composition scores differ", what, bad);
    CHECK_MSG(n > 0, "%s: no pair scored", what);
    /* copying counts eigenvalue signs: one eigenvalue within the CPU's float rounding of 0 may
     * fall on either side (at most one per head, in at most 1 head of 100) */
    int copy_diff = 0;
    for (int i = 0; i < NH; i++) {
        copy_diff += cpu.copying[i] != gpu.copying[i];
        CHECK_MSG(fabs(cpu.copying[i] - gpu.copying[i]) <= 1.0 / cpu.head_dim + 1e-12,
                  "%s: head %d copying cpu %.6f gpu %.6f", what, i, cpu.copying[i], gpu.copying[i]);
        CHECK_MSG(fabs(cpu.prev_pos[i] - gpu.prev_pos[i]) <= 1e-4, "%s: head %d prev_pos cpu %.9f gpu %.9f", what, i,
                  cpu.prev_pos[i], gpu.prev_pos[i]);
    }
    CHECK_MSG(copy_diff <= 1 + NH / 100, "%s: copying differs on %d of %d heads", what, copy_diff, NH);
    fprintf(stderr, "%s: %d composition scores, largest relative difference %.2e; copying differs on %d heads\n",
            what, n, worst, copy_diff);
    andrea_circuits_free(&cpu);
    andrea_circuits_free(&gpu);
}

static void same_scores_of_file(const char *rel) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", ANDREA_SOURCE_DIR, rel);
    andrea_model m;
    ae_error err = {{0}};
    CHECK_MSG(andrea_model_load(&m, path, &err) == 0, "%s", err.msg);
    if (!m.memory) return;
    same_scores(&m, rel);
    andrea_model_free(&m);
}

static void test_gpu_equals_cpu_on_the_bundled_model(void) { same_scores_of_file("models/andrea-bundled.bin"); }

static void test_gpu_equals_cpu_on_a_trained_series_checkpoint(void) {
    same_scores_of_file("tests/data/series/dyck-step08000.bin");
}

static void test_gpu_equals_cpu_on_a_random_model_of_another_shape(void) {
    andrea_config cfg = {.max_seq_len = 40, .vocab_size = 300, .padded_vocab_size = 320, .n_layer = 3, .n_head = 5,
                         .d_model = 160};
    andrea_model m;
    ae_error err = {{0}};
    CHECK_MSG(andrea_model_init_random(&m, &cfg, 7, &err) == 0, "%s", err.msg);
    same_scores(&m, "random 3 x 5, C 160");
    memset(m.p.attprojw + (size_t)160 * 160, 0, sizeof(float) * 160 * 160); /* layer 1: no output */
    same_scores(&m, "random, layer 1 without W_O");
    andrea_model_free(&m);
}

static void test_gpu_equals_cpu_on_an_andrea_120m_shape(void) {
    const char *quick = getenv("ANDREA_TEST_QUICK");
    if (quick && *quick == '1') return;
    andrea_config cfg = {.max_seq_len = 1024, .vocab_size = 50257, .padded_vocab_size = 50304, .n_layer = 12,
                         .n_head = 12, .d_model = 768};
    andrea_model m;
    ae_error err = {{0}};
    CHECK_MSG(andrea_model_init_random(&m, &cfg, 120, &err) == 0, "%s", err.msg);
    same_scores(&m, "random ANDREA-120M shape");
    andrea_model_free(&m);
}

int main(void) {
    if (!andrea_cuda_available()) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    RUN(test_gpu_equals_cpu_on_the_bundled_model);
    RUN(test_gpu_equals_cpu_on_a_trained_series_checkpoint);
    RUN(test_gpu_equals_cpu_on_a_random_model_of_another_shape);
    RUN(test_gpu_equals_cpu_on_an_andrea_120m_shape);
    return check_summary("test_circuits_cuda");
}
