/* bench_causal_cpu.c — the causal check alone (analyzer/ablation.c) on a checkpoint, in-process.
 *
 * What `andrea analyze` runs after its forwards: for every built-in suite, the clean loss and each
 * head's ablated loss on the first --items items (every head, as for a model of at most 64 heads),
 * on the CPU engine. The check runs --reps times (the first a warm-up, not counted); the fastest and
 * the median of the rest are printed, with the matmul FLOPs the check needs at least (every
 * ablated forward resumed after its layer's attention, the last layer's W_O and MLP at the loss
 * rows only) and the rate that makes. In-process, so a change to the engine or the check can be
 * timed without the forwards, report and catalog around it, and side by side with another build:
 * run both binaries alternately (RESULTS.md). A checksum of every delta tells whether two builds
 * measured the same numbers.
 * The check is that of andrea analyze: the method (--ablation, default mean), each class's labelled
 * set (the heads labelled in the checkpoint's card are unknown here: none, so the check is the
 * single heads' and the numbers compare with builds before the sets).
 * Usage: bench_causal_cpu [--reps N] [--items N] [--ablation mean|resample|zero] CKPT
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyzer/ablation.h"
#include "analyzer/analysis.h"
#include "engine/forward.h"
#include "engine/model.h"
#include "probes/probe.h"
#include "tokenizer/tokenizer.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The matmul FLOPs of one suite's check at least: the clean forward, then per head of layer l the
 * layers l.. of B x T rows (layer l from its W_O on), the last layer's Q, W_O and MLP at the loss
 * rows only (approximated here by all rows for K and V, none for the rest), attention ~T/2 keys. */
static double check_flops(const andrea_config *c, int rows, int T) {
    const double C = c->d_model, layer = 2.0 * rows * (12.0 * C * C) + 2.0 * 2.0 * rows * (T / 2.0) * C;
    const double from_wo = 2.0 * rows * (9.0 * C * C), last_kv = 2.0 * rows * (2.0 * C * C);
    double total = c->n_layer * layer; /* clean */
    for (int l = 0; l < c->n_layer; l++)
        total += c->n_head * (l + 1 < c->n_layer ? from_wo + (c->n_layer - 2 - l) * layer + last_kv : 0.0);
    return total;
}

int main(int argc, char **argv) {
    int reps = 6, items = 4, c;
    andrea_ablation_method method = ANDREA_ABLATION_MEAN;
    static const struct option opts[] = {{"reps", required_argument, NULL, 'r'}, {"items", required_argument, NULL, 'i'},
                                         {"ablation", required_argument, NULL, 'a'}, {NULL, 0, NULL, 0}};
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'r') reps = atoi(optarg);
        else if (c == 'i') items = atoi(optarg);
        else if (c != 'a' || andrea_ablation_method_parse(optarg, &method)) return 2;
    }
    if (optind != argc - 1 || reps < 2 || items < 1) {
        fprintf(stderr, "usage: bench_causal_cpu [--reps N>=2] [--items N>=1] [--ablation mean|resample|zero] CKPT\n");
        return 2;
    }
    ae_error err = {{0}};
    andrea_model m;
    if (andrea_model_load(&m, argv[optind], &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    andrea_tokenizer *tok = andrea_tokenizer_open(m.cfg.vocab_size, NULL, NULL, &err);
    probe_suite *suites = NULL;
    int n = 0;
    const probe_options po = {0, 0, 0};
    if (!tok || andrea_probe_suites_builtin_list(NULL, tok, m.cfg.vocab_size, m.cfg.max_seq_len, &po, &suites, &n, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    const int NH = m.cfg.n_layer * m.cfg.n_head;
    int maxT = 0;
    double flops = 0;
    for (int s = 0; s < n; s++) {
        maxT = suites[s].max_len > maxT ? suites[s].max_len : maxT;
        /* a suite whose items are an earlier suite's shares that suite's forwards */
        int shared = 0;
        for (int u = 0; u < s && !shared; u++)
            shared = suites[u].n_items > 0 && suites[s].n_items > 0 &&
                     suites[u].items[0].n_tokens == suites[s].items[0].n_tokens &&
                     !memcmp(suites[u].items[0].tokens, suites[s].items[0].tokens,
                             sizeof(int) * (size_t)suites[s].items[0].n_tokens);
        int rows = 0;
        for (int i = 0; i < items && i < suites[s].n_items; i++) rows += suites[s].items[i].n_tokens;
        if (!shared) flops += check_flops(&m.cfg, rows, suites[s].max_len);
    }
    andrea_suite_scores *sc = calloc((size_t)n, sizeof *sc);
    andrea_head_score *heads = calloc((size_t)n * (size_t)NH, sizeof *heads);
    double *t = calloc((size_t)reps, sizeof *t);
    andrea_engine_options eo;
    andrea_engine_options_init(&eo);
    eo.device = ANDREA_DEVICE_CPU;
    andrea_engine *e = sc && heads && t ? andrea_engine_open(&m, &eo, items, maxT, &err) : NULL;
    if (!e) {
        fprintf(stderr, "%s\n", err.msg[0] ? err.msg : "out of memory");
        return 1;
    }
    double sum = 0;
    for (int r = 0; r < reps; r++) {
        for (int s = 0; s < n; s++) {
            memset(&sc[s], 0, sizeof sc[s]);
            snprintf(sc[s].name, sizeof sc[s].name, "%s", suites[s].name);
            sc[s].heads = heads + (size_t)s * NH;
        }
        const double t0 = now();
        const andrea_ablation_options ao = {.method = method, .max_items = items};
        if (andrea_ablation_suites(e, &m.cfg, suites, n, &ao, sc, NULL, 0, NULL, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        t[r] = now() - t0;
        sum = 0;
        for (int s = 0; s < n; s++)
            for (int i = 0; i < NH; i++)
                if (isfinite(sc[s].heads[i].ablation_delta)) sum += sc[s].heads[i].ablation_delta * (1 + i + 97 * s);
    }
    qsort(t + 1, (size_t)reps - 1, sizeof *t, cmp_double);
    const double best = t[1], median = t[1 + (reps - 1) / 2];
    printf("causal check (%d suites, %d items, %d heads): best %.3f s, median %.3f s of %d; >= %.1f GFLOP, %.1f GFLOP/s "
           "at best; delta checksum %.9e\n",
           n, items, NH, best, median, reps - 1, flops / 1e9, flops / 1e9 / best, sum);
    andrea_engine_close(e);
    free(t);
    free(heads);
    free(sc);
    andrea_probe_suites_free(suites, n);
    andrea_tokenizer_free(tok);
    andrea_model_free(&m);
    return 0;
}
