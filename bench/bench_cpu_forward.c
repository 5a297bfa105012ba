/* bench_cpu_forward.c — tokens/s and peak memory of the CPU forward engine.
 *
 * Random ANDREA-12M- and ANDREA-120M-shaped models and the bundled model's shape ("small": 4 layers,
 * 8 heads, d_model 256, byte vocabulary) (tests/support/model_random.h, built in memory), batch
 * B = 1..4 (--batches), T = 128 and 512 (--lengths), each run three times: "plain" (logits only: an
 * ordinary LM forward), "instr" (logits + attention maps + per-head W_O contribution norms) and
 * "maps" (attention maps + norms + DLA, no logits: what `andrea dump` asks the engine for). The
 * header names the OpenBLAS kernels in use (engine/blas_core.c). Each configuration runs in its own forked child so that its peak RSS (wait4's
 * ru_maxrss: model + engine scratch + output buffers) is its own and not the maximum of all runs
 * so far; the parent never enters an OpenMP region, so the children's OpenMP pools start clean.
 * Timing: output buffers are touched first (page faults are not forward time). A forward that
 * takes a second or more is timed once; a shorter one is repeated for about a second, the first
 * (warm-up) repetition dropped and the fastest of the rest reported, the least disturbed by other
 * processes on a shared machine.
 * Usage: bench_cpu_forward [--models 12m,120m,small] [--batches 1,2,3,4] [--lengths 128,512]
 * (default: 12m,120m)
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/progress.h"
#include "engine/forward.h"
#if __has_include("engine/blas_core.h") /* absent in trees before it: the side-by-side runs of RESULTS.md */
#include "engine/blas_core.h"
#else
#include <cblas.h>
static const char *andrea_blas_core_name(void) { return openblas_get_corename(); }
static const char *andrea_blas_core_forced(void) { return NULL; }
#endif
#include "engine/model.h"
#include "tests/support/model_random.h"

typedef struct {
    const char *name;
    andrea_config cfg;
} shape;

/* ANDREA-12M and small: byte-level vocabulary with BOS (257); ANDREA-120M: GPT-2's (50257, padded 50304). */
enum { N_SHAPES = 3, N_MODES = 3 };
static const shape shapes[N_SHAPES] = {
    {"ANDREA-12M", {.max_seq_len = 1024, .vocab_size = 257, .padded_vocab_size = 257, .n_layer = 6,
                    .n_head = 12, .d_model = 384, .head_dim = 32}},
    {"ANDREA-120M", {.max_seq_len = 1024, .vocab_size = 50257, .padded_vocab_size = 50304, .n_layer = 12,
                     .n_head = 12, .d_model = 768, .head_dim = 64}},
    {"small-4x8", {.max_seq_len = 1024, .vocab_size = 257, .padded_vocab_size = 257, .n_layer = 4,
                   .n_head = 8, .d_model = 256, .head_dim = 32}},
};
static const char *shape_flags[N_SHAPES] = {"12m", "120m", "small"};

/* Child: one configuration; mode 0 plain, 1 instr, 2 maps. Writes "seconds" to fd; exit code 0 on success. */
static int run_child(const andrea_model *m, int B, int T, int mode, int fd) {
    const andrea_config *c = &m->cfg;
    ae_error err = {{0}};
    andrea_engine *e = andrea_cpu_engine_open(m, B, T, &err);
    if (!e) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    const size_t LH = (size_t)c->n_layer * c->n_head;
    const size_t n_logits = (size_t)B * T * c->vocab_size, n_attn = (size_t)B * LH * T * T,
                 n_norm = (size_t)B * LH * T;
    const int instr = mode > 0;
    float *logits = mode < 2 ? malloc(n_logits * sizeof(float)) : NULL;
    float *attn = instr ? malloc(n_attn * sizeof(float)) : NULL;
    float *norm = instr ? malloc(n_norm * sizeof(float)) : NULL;
    float *dla = mode == 2 ? malloc(n_norm * sizeof(float)) : NULL;
    int *tok = malloc((size_t)B * T * sizeof(int));
    if ((mode < 2 && !logits) || !tok || (instr && (!attn || !norm)) || (mode == 2 && !dla)) {
        fprintf(stderr, "bench: out of memory\n");
        return 1;
    }
    if (logits) memset(logits, 0, n_logits * sizeof(float));
    if (instr) memset(attn, 0, n_attn * sizeof(float)), memset(norm, 0, n_norm * sizeof(float));
    if (dla) memset(dla, 0, n_norm * sizeof(float));
    for (size_t i = 0; i < (size_t)B * T; i++) tok[i] = (int)((i * 2654435761u) % (unsigned)c->vocab_size);
    andrea_forward_io io = {.B = B, .T = T, .tokens = tok, .logits = logits, .attn = attn, .head_out_norm = norm,
                            .head_dla = dla};
    double first = 0, best = 1e30, start = andrea_now_seconds();
    int reps = 0;
    /* a forward of a second or more is timed once (its first-touch of engine scratch is a few
     * percent at most); shorter ones repeat for about a second and the warm-up is dropped */
    while (reps == 0 || (first < 1.0 && andrea_now_seconds() - start < 1.0 + first && reps < 20)) {
        double t0 = andrea_now_seconds();
        if (andrea_engine_forward(e, &io, &err)) {
            fprintf(stderr, "bench: %s\n", err.msg);
            return 1;
        }
        double dt = andrea_now_seconds() - t0;
        if (reps == 0) first = dt;
        else if (dt < best) best = dt;
        reps++;
    }
    if (reps == 1) best = first;
    if (write(fd, &best, sizeof best) != (ssize_t)sizeof best) return 1;
    andrea_engine_close(e);
    return 0;
}

/* Parses "1,2,3" into vals (at most cap); returns the count or -1. */
static int parse_list(const char *s, int *vals, int cap) {
    int n = 0;
    char *copy = strdup(s), *save = NULL;
    if (!copy) return -1;
    for (char *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        char *end;
        long v = strtol(p, &end, 10);
        if (*end || v <= 0 || v > 1 << 20 || n == cap) {
            free(copy);
            return -1;
        }
        vals[n++] = (int)v;
    }
    free(copy);
    return n;
}

int main(int argc, char **argv) {
    int batches[16] = {1, 2, 3, 4}, nb = 4, lengths[16] = {128, 512}, nl = 2, use[N_SHAPES] = {1, 1, 0};
    static const struct option opts[] = {{"models", required_argument, NULL, 'm'},
                                         {"batches", required_argument, NULL, 'b'},
                                         {"lengths", required_argument, NULL, 'l'},
                                         {NULL, 0, NULL, 0}};
    int o;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (o == 'm') {
            memset(use, 0, sizeof use);
            char *copy = strdup(optarg), *save = NULL;
            if (!copy) return fprintf(stderr, "bench: out of memory\n"), 1;
            for (char *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
                int k = 0;
                while (k < N_SHAPES && strcmp(p, shape_flags[k])) k++;
                if (k == N_SHAPES) return fprintf(stderr, "bench: --models takes 12m, 120m, small, not '%s'\n", p), 2;
                use[k] = 1;
            }
            free(copy);
        } else if (o == 'b') {
            if ((nb = parse_list(optarg, batches, 16)) < 0) return fprintf(stderr, "bench: bad --batches\n"), 2;
        } else if (o == 'l') {
            if ((nl = parse_list(optarg, lengths, 16)) < 0) return fprintf(stderr, "bench: bad --lengths\n"), 2;
        } else {
            fprintf(stderr, "usage: bench_cpu_forward [--models 12m,120m,small] [--batches 1,2,3,4] [--lengths 128,512]\n");
            return 2;
        }
    }
    const char *threads = getenv("OMP_NUM_THREADS"), *dyn = getenv("OMP_DYNAMIC");
    const char *forced = andrea_blas_core_forced(), *user_core = getenv("OPENBLAS_CORETYPE");
    printf("CPU forward, %ld online cores, OMP_NUM_THREADS=%s, OMP_DYNAMIC=%s, OpenBLAS kernels %s (%s)\n",
           sysconf(_SC_NPROCESSORS_ONLN), threads ? threads : "(unset)",
           dyn ? dyn : "(unset: the engine lets OpenMP shrink teams under load)", andrea_blas_core_name(),
           forced ? "chosen by andrea from the CPU's features" : user_core ? "OPENBLAS_CORETYPE" : "OpenBLAS's own choice");
    printf("%-12s %2s %4s  %12s %12s %9s  %12s %12s %9s  %12s %12s %9s  %s\n", "model", "B", "T", "plain tok/s",
           "ms/forward", "peak MiB", "instr tok/s", "ms/forward", "peak MiB", "maps tok/s", "ms/forward", "peak MiB",
           "load 1/15 min");
    fflush(stdout);
    for (int s = 0; s < N_SHAPES; s++) {
        if (!use[s]) continue;
        andrea_model m;
        ae_error err = {{0}};
        memset(&m, 0, sizeof m);
        if (andrea_model_init_random(&m, &shapes[s].cfg, 42, &err)) {
            fprintf(stderr, "bench: %s\n", err.msg);
            return 1;
        }
        for (int li = 0; li < nl; li++)
            for (int bi = 0; bi < nb; bi++) {
                const int B = batches[bi], T = lengths[li];
                double sec[N_MODES] = {0}, mib[N_MODES] = {0};
                for (int instr = 0; instr < N_MODES; instr++) {
                    int fds[2];
                    if (pipe(fds)) return perror("pipe"), 1;
                    fflush(stdout);
                    pid_t pid = fork();
                    if (pid < 0) return perror("fork"), 1;
                    if (pid == 0) {
                        close(fds[0]);
                        _exit(run_child(&m, B, T, instr, fds[1]));
                    }
                    close(fds[1]);
                    int status;
                    struct rusage ru;
                    if (wait4(pid, &status, 0, &ru) < 0) return perror("wait4"), 1;
                    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
                        read(fds[0], &sec[instr], sizeof sec[instr]) != (ssize_t)sizeof sec[instr]) {
                        fprintf(stderr, "bench: %s B=%d T=%d failed\n", shapes[s].name, B, T);
                        return 1;
                    }
                    close(fds[0]);
                    mib[instr] = ru.ru_maxrss / 1024.0; /* ru_maxrss is in KiB on Linux */
                }
                double load[3] = {0, 0, 0};
                if (getloadavg(load, 3) != 3) load[0] = load[2] = -1;
                printf("%-12s %2d %4d", shapes[s].name, B, T);
                for (int k = 0; k < N_MODES; k++) printf("  %12.0f %12.1f %9.0f", B * T / sec[k], sec[k] * 1e3, mib[k]);
                printf("  %.1f/%.1f\n", load[0], load[2]);
                fflush(stdout);
            }
        andrea_model_free(&m);
    }
    return 0;
}
