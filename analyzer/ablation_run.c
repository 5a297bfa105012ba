/* ablation_run.c — the causal check's forwards: the clean one, the replacement values of the
 * method, and every unit's (see ablation_internal.h). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../common/checked_size.h"
#include "../common/progress.h"
#include "../common/rng.h"
#include "ablation_internal.h"

/* Per-item sums of the token losses [B*T] at a member's positions: sum[b] (and npos[b] when not
 * NULL). *bad = 1 when a used loss is not finite (the forward overflowed). */
static void item_sums(const float *loss, const unsigned char *use, int B, int T, double *sum, double *npos, int *bad) {
    for (int b = 0; b < B; b++) {
        double s = 0, n = 0;
        for (int t = 0; t + 1 < T; t++) {
            const size_t r = (size_t)b * T + t;
            if (!use[r]) continue;
            if (!isfinite(loss[r])) *bad = 1;
            s += loss[r];
            n++;
        }
        sum[b] = s;
        if (npos) npos[b] = n;
    }
}

/* Where a unit's per-item sums go for member k; NULL when k does not read it. */
static double *unit_sums(const ablation_group *g, const ablation_unit *u, int k) {
    const ablation_member *m = &g->m[k];
    const int reads = u->member == k || (u->member >= 0 && m->shares == u->member);
    switch (u->kind) {
    case UNIT_HEAD: return m->head_sum + (size_t)u->index * g->B;
    case UNIT_GROUP: return reads ? m->group_sum : NULL;
    case UNIT_CONTROL: return reads ? m->control_sum + (size_t)u->index * g->B : NULL;
    default: return reads ? m->loo_sum + (size_t)u->index * g->B : NULL;
    }
}

/* Where the engine can resume, the clean forward saves each layer's input ([L, B, T, C]), and
 * the ablated forwards of a chunk whose lowest layer is l run layers l.. only. Left NULL (too
 * large, out of memory): the whole forward each time. */
static float *resume_inputs(size_t btc_all) {
    return btc_all > ((size_t)1 << 30) / sizeof(float) ? NULL : malloc(btc_all * sizeof(float));
}

/* Units a forward holds. On a GPU: up to UNITS_PER_FORWARD while K copies of the B items fit in a
 * quarter of the GPU's total memory (not its free memory: K sets the matmuls' shapes, and with
 * them the deltas' last bits, which must not follow an engine kept across a series; forward.h):
 * the engine's activations, sized for its own max_T (the run's longest suite, which may be far
 * longer than this group's T), ~16 C max_T floats a sequence, and the logits of the forward's
 * loss rows, at most T V floats. On
 * the CPU, whose forwards resume after the attention of a chunk's lowest layer: at most
 * ABLATE_CPU_ROWS rows (its matmuls run in blocks of 128 rows; a few blocks per thread keep both
 * cores busy; more rows only cost memory: bench/RESULTS.md). The engine is grown to that batch
 * where it can be, else K is what its batch holds. */
#define UNITS_PER_FORWARD 64
#define ABLATE_CPU_ROWS 4096
static int units_per_forward(andrea_engine *e, const andrea_config *cfg, int n_units, int B, int T) {
    int K = n_units < UNITS_PER_FORWARD ? n_units : UNITS_PER_FORWARD;
    size_t total_bytes;
    const double T_eng = andrea_engine_max_len(e) > T ? andrea_engine_max_len(e) : T;
    const double per_seq = (T_eng * 16.0 * cfg->d_model + (double)T * cfg->vocab_size) * sizeof(float);
    if (andrea_engine_can_resume_heads(e)) {
        if (K > cfg->n_head) K = cfg->n_head;
        if ((double)K * B * T > ABLATE_CPU_ROWS) K = (int)(ABLATE_CPU_ROWS / ((double)B * T));
    } else if (andrea_cuda_total_memory(&total_bytes) == 0 && (double)K * B * per_seq > (double)total_bytes / 4) {
        K = (int)((double)total_bytes / 4 / per_seq / B);
    }
    if (K < 1) K = 1;
    ae_error ignored;
    if (K * B > andrea_engine_max_batch(e) && andrea_engine_reserve_batch(e, K * B, &ignored) != 0)
        K = andrea_engine_max_batch(e) / B; /* out of memory: the batch it has */
    return K > 1 ? K : 1;
}

/* The method's replacement outputs from the clean forward's head outputs heads [L, B, T, C], one
 * row per item ([L, B, T, C]). mean: each position's mean over the OTHER items that reach it (with
 * the item itself in the mean, a check of B items would leave 1/B of the head's own output in
 * place: nothing at all with one item); a position no other item reaches: zeros. resample: item b
 * takes item perm[b]'s outputs (perm a seeded cyclic permutation: no item keeps its own), and the
 * mean where perm[b] is shorter than b. NULL for zero, or out of memory (*oom). */
static float *replacement_values(andrea_engine *e, const ablation_group *g, const andrea_config *cfg, const float *heads,
                                 const int *lengths, uint64_t seed, int *oom) {
    const int B = g->B, T = g->T, L = cfg->n_layer, C = cfg->d_model;
    const size_t tc = (size_t)T * C;
    *oom = 0;
    if (g->method == ANDREA_ABLATION_ZERO) return NULL;
    float *out = andrea_ablation_host_buf(e, g->values_buf, (size_t)L * B * tc);
    const int n_threads = omp_get_max_threads();
    double *sums = malloc(sizeof(double) * (size_t)C * (size_t)n_threads);
    int *perm = malloc(sizeof(int) * (size_t)B);
    if (!out || !sums || !perm) {
        out = NULL;
        *oom = 1;
        goto done;
    }
    /* each (layer, position) on its own: the values never depend on the number of threads */
#pragma omp parallel for schedule(dynamic, 4) num_threads(n_threads)
    for (long long lt = 0; lt < (long long)L * T; lt++) {
        const int l = (int)(lt / T), t = (int)(lt % T);
        double *sum = sums + (size_t)omp_get_thread_num() * C;
        int n = 0;
        memset(sum, 0, sizeof(double) * (size_t)C);
        for (int b = 0; b < B; b++) {
            if (lengths[b] <= t) continue;
            const float *src = heads + (((size_t)l * B + b) * T + t) * C;
            for (int c = 0; c < C; c++) sum[c] += src[c];
            n++;
        }
        for (int b = 0; b < B; b++) {
            const int own = lengths[b] > t, others = n - own;
            const float *src = heads + (((size_t)l * B + b) * T + t) * C;
            float *dst = out + (((size_t)l * B + b) * T + t) * C;
            if (others == 0) {
                memset(dst, 0, sizeof(float) * (size_t)C);
                continue;
            }
            for (int c = 0; c < C; c++) dst[c] = (float)((sum[c] - (own ? src[c] : 0.0)) / others);
        }
    }
    if (g->method == ANDREA_ABLATION_MEAN) goto done;
    /* Sattolo's shuffle: a uniformly drawn cyclic permutation, so no item keeps its own outputs */
    uint64_t state = seed ^ 0x726573616d706c65ull; /* "resample" */
    for (int b = 0; b < B; b++) perm[b] = b;
    for (int i = B - 1; i > 0; i--) {
        const int j = (int)ae_rng_below(&state, (uint64_t)i), x = perm[i];
        perm[i] = perm[j];
        perm[j] = x;
    }
    /* in place: row b's mean stays where perm[b] does not reach */
#pragma omp parallel for schedule(static) num_threads(n_threads)
    for (int l = 0; l < L; l++)
        for (int b = 0; b < B; b++)
            for (int t = 0; t < T && t < lengths[perm[b]]; t++)
                memcpy(out + (((size_t)l * B + b) * T + t) * C, heads + (((size_t)l * B + perm[b]) * T + t) * C,
                       sizeof(float) * C);
done:
    free(sums);
    free(perm);
    return out;
}

/* The buffers of the batched forwards: K copies of the items, their losses and masks. */
typedef struct {
    int *tokens, *lengths, *targets, *resume;
    float *loss, *x;
    unsigned char *mask;
} copies;

static void copies_free(copies *c) {
    free(c->tokens);
    free(c->lengths);
    free(c->targets);
    free(c->resume);
    free(c->loss);
    free(c->x);
    free(c->mask);
}

/* Each unit's per-item sums, K units a forward: the batch holds K copies of the B items, copy j
 * with unit j's heads ablated. Units are sorted by their lowest layer. Where the engine kept the
 * clean forward's layers (kept), copy j starts at its own unit's lowest layer; else the chunk
 * resumes at its lowest layer from the clean forward's layer inputs (layer_inputs [L, B, T, C],
 * or NULL: from the embeddings), and on the CPU (resume after attention) a chunk holds units of
 * one lowest layer and resumes after that layer's attention with the clean forward's head
 * outputs (layer_heads). */
static int ablate_units(andrea_engine *e, const andrea_forward_io *clean_io, const andrea_config *cfg, int K,
                        const ablation_group *g, int kept, const float *layer_inputs, const float *layer_heads,
                        ae_error *err) {
    const int B = clean_io->B, T = clean_io->T, NH = cfg->n_layer * cfg->n_head;
    const size_t bt = (size_t)B * (size_t)T, btc = bt * (size_t)cfg->d_model;
    copies c = {.tokens = malloc(sizeof(int) * bt * (size_t)K), .lengths = malloc(sizeof(int) * (size_t)B * (size_t)K),
                .targets = malloc(sizeof(int) * bt * (size_t)K), .loss = malloc(sizeof(float) * bt * (size_t)K),
                .x = layer_inputs && !kept ? malloc(sizeof(float) * btc * (size_t)K) : NULL,
                .resume = kept ? malloc(sizeof(int) * (size_t)B * (size_t)K) : NULL,
                .mask = calloc((size_t)K * (size_t)B, (size_t)NH)};
    float *o = layer_heads && c.x ? malloc(sizeof(float) * btc * (size_t)K) : NULL;
    int ret = -1, bad = 0;
    if (!c.tokens || !c.lengths || !c.targets || !c.loss || !c.mask || (layer_heads && c.x && !o) || (kept && !c.resume)) {
        andrea_fail(err, "%s: out of memory for the causal check", g->m[0].s->name);
        goto out;
    }
    for (int j = 0; j < K; j++) {
        memcpy(c.tokens + (size_t)j * bt, clean_io->tokens, sizeof(int) * bt);
        memcpy(c.lengths + (size_t)j * B, clean_io->lengths, sizeof(int) * (size_t)B);
        memcpy(c.targets + (size_t)j * bt, clean_io->loss_targets, sizeof(int) * bt);
    }
    andrea_forward_io io = *clean_io; /* the clean forward's, on K copies of its items */
    io.tokens = c.tokens;
    io.lengths = c.lengths;
    io.loss_targets = c.targets;
    io.token_loss = c.loss;
    io.ablate = c.mask;
    io.ablate_per_seq = 1;
    io.layer_inputs = io.layer_heads = NULL;
    for (int u0 = 0, k; u0 < g->n_units; u0 += k) {
        const ablation_unit *uc = g->units + u0;
        const int from = c.x ? uc[0].min_layer : 0;
        for (k = 1; k < K && u0 + k < g->n_units && (!o || uc[k].min_layer == from);) k++;
        memset(c.mask, 0, (size_t)K * (size_t)B * (size_t)NH);
        for (int j = 0; j < k; j++)
            for (int h = 0; h < uc[j].n; h++)
                for (int b = 0; b < B; b++) c.mask[((size_t)j * B + b) * (size_t)NH + (size_t)g->unit_heads[uc[j].first + h]] = 1;
        for (int j = 0; j < k && from > 0; j++) memcpy(c.x + (size_t)j * btc, layer_inputs + (size_t)from * btc, sizeof(float) * btc);
        for (int j = 0; j < k && o; j++) memcpy(o + (size_t)j * btc, layer_heads + (size_t)from * btc, sizeof(float) * btc);
        for (int j = 0; j < k && kept; j++)
            for (int b = 0; b < B; b++) c.resume[(size_t)j * B + (size_t)b] = uc[j].min_layer;
        io.B = k * B;
        io.resume_layer = from;
        io.resume_x = from > 0 ? c.x : NULL;
        io.resume_heads = o;
        io.resume_kept = c.resume;
        if (andrea_engine_forward(e, &io, err)) goto out;
        io.ablate_values_unchanged = 1;
        if (g->timing) g->timing->forwards++;
        for (int j = 0; j < k; j++)
            for (int m = 0; m < g->n_members; m++) {
                double *sums = unit_sums(g, &uc[j], m);
                if (sums) item_sums(c.loss + (size_t)j * bt, g->m[m].use, B, T, sums, NULL, &bad);
            }
    }
    ret = 0;
out:
    copies_free(&c);
    free(o);
    return ret;
}

/* Saved layer inputs and head outputs of the clean forward: inputs where the engine resumes (and
 * some chunk starts above layer 0, or heads are resumed), head outputs where the engine resumes
 * after attention, the method replaces outputs or direct effects are measured (then required);
 * the final residual for direct effects. */
typedef struct {
    float *inputs, *heads, *final;
} saved_layers;

/* Whether the group measures direct effects: a model given and some member with labelled heads. */
static int wants_direct(const ablation_group *g) {
    for (int k = 0; g->model && k < g->n_members; k++)
        if (g->m[k].k > 0) return 1;
    return 0;
}

static int save_layers(andrea_engine *e, const andrea_config *cfg, const ablation_group *g, saved_layers *s) {
    size_t btc_all;
    memset(s, 0, sizeof *s);
    if (ae_mul((size_t)g->B * (size_t)g->T, (size_t)cfg->d_model, &btc_all) || ae_mul(btc_all, (size_t)cfg->n_layer, &btc_all))
        return -1;
    const int resume_heads = andrea_engine_can_resume_heads(e);
    const int replace = g->method != ANDREA_ABLATION_ZERO || wants_direct(g);
    int some_above_0 = 0;
    for (int u = 0; u < g->n_units; u++) some_above_0 |= g->units[u].min_layer > 0;
    if (andrea_engine_can_resume(e) && !andrea_engine_can_keep_layers(e) && (resume_heads || some_above_0))
        s->inputs = resume_inputs(btc_all);
    if ((resume_heads && s->inputs) || replace) {
        /* replacement values need them whatever their size (2 GiB at most: the caller's check) */
        s->heads = btc_all <= ((size_t)1 << 29) || replace ? andrea_ablation_host_buf(e, g->heads_buf, btc_all) : NULL;
        if (!s->heads && replace) return -1;
    }
    if (wants_direct(g) && !(s->final = malloc(btc_all / (size_t)cfg->n_layer * sizeof(float)))) return -1;
    return 0;
}

float *andrea_ablation_host_buf(andrea_engine *e, ablation_host_buf *b, size_t n) {
    if (n <= b->cap) return b->p;
    andrea_ablation_host_buf_free(e, b);
    size_t bytes;
    if (ae_mul(n, sizeof(float), &bytes)) return NULL;
    b->p = andrea_engine_host_alloc(e, bytes);
    b->from_engine = b->p != NULL;
    if (!b->p) b->p = malloc(bytes);
    b->cap = b->p ? n : 0;
    return b->p;
}

void andrea_ablation_host_buf_free(andrea_engine *e, ablation_host_buf *b) {
    if (b->from_engine) andrea_engine_host_free(e, b->p);
    else free(b->p);
    *b = (ablation_host_buf){NULL, 0, 0};
}

/* Adds the seconds since t0 to *to and returns now. */
static double lap(double *to, double t0) {
    const double now = andrea_now_seconds();
    *to += now - t0;
    return now;
}

int andrea_ablation_run_group(andrea_engine *e, const andrea_config *cfg, ablation_group *g, const int *tokens,
                              const int *lengths, const unsigned char *use, uint64_t seed, ae_error *err) {
    const int B = g->B, T = g->T;
    const size_t bt = (size_t)B * (size_t)T;
    const char *name = g->m[0].s->name;
    if (!andrea_engine_can_token_loss(e) || !andrea_engine_can_ablate_per_seq(e))
        return andrea_fail(err, "%s: the %s engine cannot run the causal check (token losses, a head ablated per "
                                "sequence)", name, andrea_engine_name(e));
    saved_layers saved = {NULL, NULL, NULL};
    float *tloss = malloc(bt * sizeof(float)), *values = NULL;
    int *targets = malloc(bt * sizeof(int)), ret = -1, bad = 0, oom = 0;
    if (!tloss || !targets || save_layers(e, cfg, g, &saved)) {
        andrea_fail(err, "%s: out of memory for the causal check (%d items x %d tokens)", name, B, T);
        goto out;
    }
    const int K = units_per_forward(e, cfg, g->n_units, B, T);
    andrea_forward_io io = {.B = B, .T = T, .tokens = tokens, .lengths = lengths, .layer_inputs = saved.inputs,
                            .layer_heads = saved.heads, .loss_targets = targets, .token_loss = tloss,
                            .final_resid = saved.final, .keep_layers = andrea_engine_can_keep_layers(e)};
    for (size_t r = 0; r < bt; r++) targets[r] = (r % (size_t)T) + 1 < (size_t)T && use[r] ? tokens[r + 1] : -1;
    andrea_ablation_timing untimed = {0}, *tm = g->timing ? g->timing : &untimed;
    double t = andrea_now_seconds();
    if (andrea_engine_forward(e, &io, err)) goto out;
    t = lap(&tm->t_clean, t);
    for (int k = 0; k < g->n_members; k++) item_sums(tloss, g->m[k].use, B, T, g->m[k].clean, g->m[k].npos, &bad);
    /* A forward that overflowed float32 (the CPU engine refuses it itself; a GPU's shows here)
     * would make every loss and delta NaN, stored as if nothing had been measured. */
    if (bad) {
        andrea_fail(err, "%s: causal check: the forward overflows float32 (non-finite logits): the checkpoint's weights are "
                         "far outside a trained model's range", name);
        goto out;
    }
    values = replacement_values(e, g, cfg, saved.heads, lengths, seed, &oom);
    t = lap(&tm->t_values, t);
    if (oom) {
        andrea_fail(err, "%s: out of memory for the causal check's replacement outputs", name);
        goto out;
    }
    if (saved.final && andrea_ablation_direct(g->model, g, tokens, saved.final, saved.heads, values, err)) goto out;
    t = lap(&tm->t_direct, t);
    io.final_resid = NULL;
    io.keep_layers = 0;
    io.ablate_values = values;
    io.ablate_values_B = B;
    /* the CPU resumes after attention only from the clean head outputs with the inputs beside them */
    if (ablate_units(e, &io, cfg, K, g, andrea_engine_can_keep_layers(e), saved.inputs, andrea_engine_can_resume_heads(e) && saved.inputs ? saved.heads : NULL,
                     err))
        goto out;
    lap(&tm->t_ablated, t);
    tm->units += g->n_units;
    ret = 0;
out:
    free(tloss);
    free(targets);
    free(saved.inputs);
    free(saved.final);
    return ret;
}
