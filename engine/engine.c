#include "forward.h"

#include "../common/mpi_shard.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void andrea_engine_options_init(andrea_engine_options *o) {
    memset(o, 0, sizeof *o);
    o->device = ANDREA_DEVICE_AUTO;
    o->device_index = andrea_mpi_device_index(); /* -1 unless started by mpirun (one GPU a rank) */
    const char *prec = getenv("ANDREA_CUDA_PRECISION"), *fp32 = getenv("ANDREA_CUDA_FP32");
    const char *attn = getenv("ANDREA_CUDA_ATTN"), *qlo = getenv("ANDREA_CUDA_SPLIT_QLO");
    if (prec) snprintf(o->precision, sizeof o->precision, "%.7s", prec); /* checked at open */
    else if (fp32 && !strcmp(fp32, "1")) snprintf(o->precision, sizeof o->precision, "fp32");
    if (attn) o->attention_version = !strcmp(attn, "v1") ? 1 : !strcmp(attn, "v2") ? 2 : !strcmp(attn, "v3") ? 3 : 0;
    o->split_qlo_regs = qlo && !strcmp(qlo, "regs");
    const char *piece = getenv("ANDREA_CUDA_PIECE_MAPS");
    const long n = piece ? strtol(piece, NULL, 10) : 0;
    o->pipeline_piece_maps = n > 0 && n < INT_MAX ? (int)n : 0;
}

andrea_engine *andrea_engine_open(const andrea_model *m, const andrea_engine_options *o, int max_B, int max_T,
                                  ae_error *err) {
    andrea_engine_options def;
    if (!o) {
        andrea_engine_options_init(&def);
        o = &def;
    }
    const andrea_device dev = o->device;
    andrea_engine *e;
    if (dev != ANDREA_DEVICE_CPU) (void)andrea_cuda_use_device(o->device_index); /* before any CUDA context */
    if (dev == ANDREA_DEVICE_CUDA && !andrea_cuda_available()) {
        andrea_fail(err, "%s: --device cuda asked for, but no CUDA device is usable", m->path);
        return NULL;
    }
    if (dev == ANDREA_DEVICE_CUDA || (dev == ANDREA_DEVICE_AUTO && andrea_cuda_available()))
        e = andrea_cuda_engine_open(m, o, max_B, max_T, err);
    else
        e = andrea_cpu_engine_open_with(m, o, max_B, max_T, err);
    if (e) e->max_T = max_T;
    if (e) e->cfg = m->cfg;
    return e;
}

/* Same shape: every size the engine's buffers, plans and weight offsets were made for. */
static int same_shape(const andrea_config *a, const andrea_config *b) {
    return a->n_layer == b->n_layer && a->n_head == b->n_head && a->d_model == b->d_model &&
           a->vocab_size == b->vocab_size && a->padded_vocab_size == b->padded_vocab_size &&
           a->max_seq_len == b->max_seq_len;
}

int andrea_engine_swap_model(andrea_engine *e, const andrea_model *m, ae_error *err) {
    if (!same_shape(&e->cfg, &m->cfg))
        return andrea_fail(err, "%s: another shape than the engine's model (%d layers x %d heads, d_model %d, vocab %d, "
                                "context %d)", m->path, e->cfg.n_layer, e->cfg.n_head, e->cfg.d_model,
                           e->cfg.vocab_size, e->cfg.max_seq_len);
    if (!e->swap_model) return andrea_fail(err, "the %s engine cannot change its model", e->name);
    if (e->swap_model(e, m, err)) return -1;
    e->cfg = m->cfg;
    return 0;
}

int andrea_engine_max_len(const andrea_engine *e) { return e->max_T; }

int andrea_engine_forward(andrea_engine *e, const andrea_forward_io *io, ae_error *err) {
    if ((io->layer_inputs || io->resume_layer || io->resume_x || io->layer_heads || io->resume_heads) &&
        !andrea_engine_can_resume(e))
        return andrea_fail(err, "the %s engine cannot resume a forward at a layer", e->name);
    if (io->resume_heads && !e->can_resume_heads)
        return andrea_fail(err, "the %s engine cannot resume a forward after a layer's attention", e->name);
    if (io->ablate_values && (!io->ablate || !e->can_ablate_per_seq || io->ablate_values_B < 1 || io->ablate_values_B > io->B))
        return andrea_fail(err, "the %s engine: replacement values for ablated heads need a mask and 1..%d rows (got %d)",
                           e->name, io->B, io->ablate_values_B);
    if ((io->loss_targets || io->token_loss) && (!e->can_token_loss || !io->loss_targets || !io->token_loss))
        return andrea_fail(err, "the %s engine cannot compute token losses (or only one of loss_targets, token_loss given)",
                       e->name);
    if ((io->keep_layers || io->resume_kept) && !e->can_keep_layers)
        return andrea_fail(err, "the %s engine cannot keep a forward's layers or resume from them", e->name);
    if (io->ablate_per_seq && !e->can_ablate_per_seq)
        return andrea_fail(err, "the %s engine cannot ablate heads per sequence", e->name);
    return e->forward(e, io, err);
}

int andrea_engine_can_resume(const andrea_engine *e) { return e->can_resume; }

int andrea_engine_can_resume_heads(const andrea_engine *e) { return e->can_resume_heads; }

int andrea_engine_has_gpu(const andrea_engine *e) { return e->has_gpu; }

int andrea_engine_can_token_loss(const andrea_engine *e) { return e->can_token_loss; }

int andrea_engine_can_keep_layers(const andrea_engine *e) { return e->can_keep_layers; }

void *andrea_engine_host_alloc(andrea_engine *e, size_t bytes) { return e->host_alloc ? e->host_alloc(bytes) : NULL; }

void andrea_engine_host_free(andrea_engine *e, void *p) {
    if (p && e->host_free) e->host_free(p);
}

int andrea_engine_can_ablate_per_seq(const andrea_engine *e) { return e->can_ablate_per_seq; }

int andrea_engine_max_batch(const andrea_engine *e) { return e->max_B; }

int andrea_engine_reserve_batch(andrea_engine *e, int max_B, ae_error *err) {
    if (max_B <= e->max_B) return 0;
    if (!e->reserve_batch) return andrea_fail(err, "the %s engine cannot grow its batch", e->name);
    return e->reserve_batch(e, max_B, err);
}

const char *andrea_engine_name(const andrea_engine *e) { return e->name; }

void andrea_engine_close(andrea_engine *e) {
    if (e) e->close(e);
}
