/* test_engine_swap_model.c — andrea_engine_swap_model (engine/forward.h), which a checkpoint
 * series uses to run every checkpoint on one engine: after a swap, the engine's forwards equal,
 * bit for bit, those of an engine opened for the new model (attention maps, head norms and direct
 * logit attribution, logits, token losses, an ablated forward); a model of another shape is
 * refused with a message naming it, and the engine goes on running its model. CPU always; CUDA
 * too when a device is present (else that part says it skipped).
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "engine/forward.h"
#include "engine/model.h"
#include "support/model_random.h"

enum { B = 2, T = 16 };

typedef struct {
    float *attn, *norm, *dla, *logits, *loss;
    size_t n_attn, n_lh, n_logits;
} outputs;

static void outputs_alloc(outputs *o, const andrea_config *c) {
    o->n_attn = (size_t)B * c->n_layer * c->n_head * T * T;
    o->n_lh = (size_t)B * c->n_layer * c->n_head * T;
    o->n_logits = (size_t)B * T * c->vocab_size;
    o->attn = calloc(o->n_attn, sizeof(float));
    o->norm = calloc(o->n_lh, sizeof(float));
    o->dla = calloc(o->n_lh, sizeof(float));
    o->logits = calloc(o->n_logits, sizeof(float));
    o->loss = calloc((size_t)B * T, sizeof(float));
    if (!o->attn || !o->norm || !o->dla || !o->logits || !o->loss) exit(2);
}

static void outputs_free(outputs *o) {
    free(o->attn);
    free(o->norm);
    free(o->dla);
    free(o->logits);
    free(o->loss);
}

/* Two forwards of fixed tokens: every output, then token losses with head (0, 1) ablated. */
static int run(andrea_engine *e, const andrea_config *c, outputs *o, ae_error *err) {
    int tokens[B * T], lengths[B] = {T, T - 5}, targets[B * T];
    for (int i = 0; i < B * T; i++) {
        tokens[i] = (i * 7 + 3) % c->vocab_size;
        targets[i] = i % T + 1 < T ? (i * 5 + 1) % c->vocab_size : -1;
    }
    andrea_forward_io io = {.B = B, .T = T, .tokens = tokens, .lengths = lengths, .attn = o->attn,
                            .head_out_norm = o->norm, .head_dla = o->dla, .logits = o->logits};
    if (andrea_engine_forward(e, &io, err)) return -1;
    unsigned char *ablate = calloc((size_t)c->n_layer * c->n_head, 1);
    if (!ablate) exit(2);
    ablate[1] = 1;
    andrea_forward_io ab = {.B = B, .T = T, .tokens = tokens, .lengths = lengths, .ablate = ablate,
                            .loss_targets = targets, .token_loss = o->loss};
    const int rc = andrea_engine_forward(e, &ab, err);
    free(ablate);
    return rc;
}

/* Bytes equal where defined (NaN DLA at the last position of each sequence compares as bytes too). */
static int same(const float *a, const float *b, size_t n) { return !memcmp(a, b, n * sizeof(float)); }

static void swap_on(andrea_device dev, const char *name) {
    andrea_config c = {.max_seq_len = 32, .vocab_size = 97, .n_layer = 2, .n_head = 4, .d_model = 32};
    andrea_config other = c;
    other.n_head = 2;
    andrea_model a, b, x;
    ae_error err = {{0}};
    if (andrea_model_init_random(&a, &c, 1, &err) || andrea_model_init_random(&b, &c, 2, &err) ||
        andrea_model_init_random(&x, &other, 3, &err)) {
        fprintf(stderr, "random model: %s\n", err.msg);
        exit(2);
    }
    andrea_engine_options eo;
    andrea_engine_options_init(&eo);
    eo.device = dev;
    outputs swapped, fresh;
    outputs_alloc(&swapped, &c);
    outputs_alloc(&fresh, &c);
    andrea_engine *e = andrea_engine_open(&a, &eo, B, T, &err), *f = andrea_engine_open(&b, &eo, B, T, &err);
    CHECK_MSG(e && f, "%s: open: %s", name, err.msg);
    if (!e || !f) goto out;
    CHECK_MSG(!run(e, &c, &swapped, &err), "%s: forward of model a: %s", name, err.msg);
    CHECK_MSG(!andrea_engine_swap_model(e, &b, &err), "%s: swap to b: %s", name, err.msg);
    CHECK_MSG(!run(e, &c, &swapped, &err) && !run(f, &c, &fresh, &err), "%s: forwards of b: %s", name, err.msg);
    CHECK_MSG(same(swapped.attn, fresh.attn, swapped.n_attn), "%s: maps after the swap differ from a fresh engine's", name);
    CHECK_MSG(same(swapped.norm, fresh.norm, swapped.n_lh) && same(swapped.dla, fresh.dla, swapped.n_lh),
              "%s: head norms or DLA after the swap differ", name);
    CHECK_MSG(same(swapped.logits, fresh.logits, swapped.n_logits), "%s: logits after the swap differ", name);
    CHECK_MSG(same(swapped.loss, fresh.loss, (size_t)B * T), "%s: ablated token losses after the swap differ", name);
    /* another shape: refused, named; the engine still runs b */
    ae_error why = {{0}};
    CHECK_MSG(andrea_engine_swap_model(e, &x, &why) == -1 && strstr(why.msg, "another shape"),
              "%s: a model of another shape: '%s'", name, why.msg);
    memset(swapped.logits, 0, swapped.n_logits * sizeof(float));
    CHECK_MSG(!run(e, &c, &swapped, &err) && same(swapped.logits, fresh.logits, swapped.n_logits),
              "%s: the engine no longer runs b after the refused swap", name);
out:
    andrea_engine_close(e);
    andrea_engine_close(f);
    outputs_free(&swapped);
    outputs_free(&fresh);
    andrea_model_free(&a);
    andrea_model_free(&b);
    andrea_model_free(&x);
}

int main(void) {
    swap_on(ANDREA_DEVICE_CPU, "cpu");
    if (andrea_cuda_available()) swap_on(ANDREA_DEVICE_CUDA, "cuda");
    else printf("cuda: skipped (no CUDA device here)\n");
    return check_summary("engine_swap_model");
}
