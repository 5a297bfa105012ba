/* forward.h — the instrumented forward pass, the same interface for every backend.
 *
 * Job: run an ANDREA model on a batch of token sequences and hand back, only when asked, what
 * interpretability needs: per-head attention probabilities, per-head W_O contributions, their
 * L2 norms and direct logit attributions, logits; optionally with heads ablated.
 * Every output pointer is a host buffer owned by the caller; NULL means "not requested" and costs
 * nothing in the forward (an uninstrumented pass does no extra work or memory traffic).
 *
 * Shapes (all row-major, fp32):
 *   tokens        [B, T]            ids < vocab_size; positions >= lengths[b] are padding
 *   attn          [B, L, H, T, T]   softmax probabilities, query × key; 0 above the diagonal
 *   head_out      [B, L, H, T, C]   contribution of head h = o_h · W_O[h*hd:(h+1)*hd, :]
 *                                   (no bias: sum_h head_out + attprojb == attention output)
 *   head_out_norm [B, L, H, T]      ||head_out|| over C
 *   head_dla      [B, L, H, T]      direct logit attribution toward tokens[b, t+1] (see below);
 *                                   NaN where t + 1 >= lengths[b]
 *   logits        [B, T, V]         V = vocab_size (padding rows of wte excluded)
 *   ablate        [L * H]           nonzero = drop that head's contribution from the residual
 *
 * Direct logit attribution (docs/dump-format.md) of a contribution c at position t, toward the
 * actual next token y = tokens[b, t+1], with x the final residual at t and
 * sigma = sqrt(var(x) + 1e-5) the final LayerNorm's scale:
 *   dla = sum_i (c_i - mean(c)) / sigma * lnfw_i * (wte[y, i] - mean_v wte[v, i])
 * i.e. the contribution pushed through the final LayerNorm as a linear map (frozen scale) and
 * dotted with the unembedding row of y, centred across the vocabulary.
 *
 * Padding: sequences are causal, so padding after lengths[b] never changes earlier positions;
 * outputs at padded positions are unspecified (dumps store zeros there).
 */
#ifndef ANDREA_FORWARD_H
#define ANDREA_FORWARD_H

#include "../common/error.h"
#include "model.h"

typedef struct {
    int B, T;              /* batch size, padded length (T <= max_seq_len) */
    const int *tokens;     /* [B, T] */
    const int *lengths;    /* [B], or NULL = every sequence is T long */
    const unsigned char *ablate; /* [L*H] or NULL; with ablate_per_seq: [B, L*H] */
    /* 1: ablate holds a mask for each sequence (engines with can_ablate_per_seq: the CUDA and the
     * CPU one), so one forward of K copies of the causal check's items ablates K different heads */
    int ablate_per_seq;
    /* Replacement ablation (the causal check's mean and resample methods; engines with
     * can_ablate_per_seq): an ablated head's o_h slice takes these values instead of zeros, so its
     * W_O contribution (head_out too) is the one they give. [L, ablate_values_B, T, C], head h at
     * columns h*hd.. (layer_heads' layout); sequence b reads row b % ablate_values_B: one row
     * gives every sequence the same values (mean ablation), B0 rows give the K copies of B0 items
     * each its item's own (resample). NULL: zeros (zero ablation). */
    const float *ablate_values;
    int ablate_values_B;   /* 1..B rows */
    float *attn;           /* [B, L, H, T, T] or NULL */
    float *head_out;       /* [B, L, H, T, C] or NULL */
    float *head_out_norm;  /* [B, L, H, T] or NULL */
    float *head_dla;       /* [B, L, H, T] or NULL */
    float *logits;         /* [B, T, V] or NULL */
    /* Next-token losses computed where the logits are (engines with can_token_loss: the CUDA and
     * the CPU one), so a causal check never moves [B, T, V] logits to the host, and the CPU computes
     * logits at the loss positions only: loss_targets[b*T + t] is
     * the token whose cross-entropy is wanted at position t (-1: none), token_loss[b*T + t] gets
     * -log softmax(logits[b, t])[target] (NaN where none). */
    const int *loss_targets; /* [B, T] or NULL */
    float *token_loss;       /* [B, T] or NULL (both or neither) */
    /* The residual stream after the last layer, before the final LayerNorm (the causal check's
     * direct effects read it): [B, T, C] or NULL; with token losses only asked for, valid at the
     * rows with a loss target only (the CPU runs the last layer on those rows alone). */
    float *final_resid;
    /* Resuming (engines with can_resume: the CPU and the CUDA one): ablating a head of layer l
     * leaves layers 0..l-1 as they were, so the causal check saves each layer's input once and
     * runs only layers l.. for each head of layer l. */
    float *layer_inputs;   /* [L, B, T, C] or NULL: the residual stream entering each layer, saved */
    int resume_layer;      /* 0: from the embeddings; l in 1..L-1: from layer l, with x = resume_x */
    const float *resume_x; /* [B, T, C]: the input of layer resume_layer (a layer_inputs slice of a
                              forward of the same tokens); with resume_layer > 0 only logits may be
                              asked for (the per-layer outputs of layers < l are not computed) */
    /* Skipping the attention of the resume layer too (engines with can_resume_heads: the CPU
     * one): ablation zeroes a head's output after the attention of its layer, so that layer's
     * head outputs are those of the clean forward. */
    float *layer_heads;        /* [L, B, T, C] or NULL: each layer's concatenated head outputs o
                                  (head h at columns h*hd.., before W_O and before ablation), saved
                                  (engines with can_resume; the CUDA one in forwards that ablate
                                  nothing) */
    const float *resume_heads; /* [B, T, C] or NULL: layer resume_layer's o (a layer_heads slice of a
                                  forward of the same tokens, from the same input of that layer):
                                  its LayerNorm, QKV and attention are skipped; only logits or
                                  token losses may be asked for */
    /* Replaying the causal check without moving layers through the host (engines with
     * can_keep_layers: the CUDA one). keep_layers = 1 in a forward from the embeddings that
     * ablates nothing keeps each layer's input inside the engine ([L, B, T, C], replacing what it
     * kept before). A later forward of the same T with resume_kept [B] (ascending, each in
     * 0..L-1) runs sequence b from layer resume_kept[b], with the kept input of that layer for
     * item b % (the kept forward's B): each ablated set starts at its own lowest layer, in one
     * batch. With resume_kept only logits or token losses may be asked for. */
    int keep_layers;
    const int *resume_kept;    /* [B] or NULL */
    /* 1: ablate_values are the previous forward's, unchanged (same pointer, same rows): the
     * engine may skip copying them again */
    int ablate_values_unchanged;
} andrea_forward_io;

/* A backend with scratch memory sized for at most max_B sequences of max_T tokens. */
typedef struct andrea_engine andrea_engine;

typedef enum { ANDREA_DEVICE_AUTO = 0, ANDREA_DEVICE_CPU = 1, ANDREA_DEVICE_CUDA = 2 } andrea_device;

/* How to open an engine: settings travel here, never through the environment. */
typedef struct {
    andrea_device device;   /* AUTO (default) picks CUDA when a GPU is present and the CUDA backend
                               was built, else the CPU */
    char precision[8];      /* CUDA matmuls: "tf32" (default), "tf32x3" or "fp32"; the CPU is fp32 */
    int attention_version;  /* CUDA attention kernel 1, 2 or 3; 0 = the default (3; fp32 takes 1) */
    int split_qlo_regs;     /* CUDA tf32x3 attention v3: Q's low parts in registers (benchmarks) */
    int device_index;       /* CUDA device: index % (devices visible) is made current (cudaSetDevice)
                               before anything is allocated; -1 = leave the current one. Default:
                               the MPI rank's node-local rank under mpirun (common/mpi_shard.h:
                               one GPU per rank of a node), -1 in a serial run */
    int pipeline_piece_maps; /* CUDA map pipeline: at most this many maps a host copy (0 = as many
                                as its 64 MiB pieces hold); tests make pieces span sequences */
    int threads;            /* CPU engine: the forwards' threads, a fixed team (--threads N); 0 = the
                               cores OpenMP sees, less those other processes are using when a forward starts (cpu_team.h) */
} andrea_engine_options;

/* Defaults, then the documented developer overrides of the environment (kernels/NOTES.md:
 * ANDREA_CUDA_PRECISION, ANDREA_CUDA_FP32=1, ANDREA_CUDA_ATTN=v1|v2|v3, ANDREA_CUDA_SPLIT_QLO=regs,
 * ANDREA_CUDA_PIECE_MAPS=N),
 * read here and nowhere else. */
void andrea_engine_options_init(andrea_engine_options *o);

/* Opens a backend for model m (which must outlive the engine); o NULL = andrea_engine_options_init. */
andrea_engine *andrea_engine_open(const andrea_model *m, const andrea_engine_options *o, int max_B, int max_T,
                                  ae_error *err);
int andrea_engine_forward(andrea_engine *e, const andrea_forward_io *io, ae_error *err);
/* "cpu" or "cuda" (for messages and the dump's "engine" attribute; decide on capabilities below,
 * never on the name) */
const char *andrea_engine_name(const andrea_engine *e);
/* 1 when the backend honours layer_inputs / resume_layer / resume_x (andrea_forward_io); others
 * refuse them. */
int andrea_engine_can_resume(const andrea_engine *e);
/* 1 when the backend also honours layer_heads / resume_heads; others refuse them. */
int andrea_engine_can_resume_heads(const andrea_engine *e);
/* 1 when the backend runs on a GPU (its device-side entry points, kernels/cuda_engine.h, apply). */
int andrea_engine_has_gpu(const andrea_engine *e);
/* 1 when the backend honours loss_targets / token_loss (andrea_forward_io); others refuse them. */
int andrea_engine_can_token_loss(const andrea_engine *e);
/* 1 when the backend honours keep_layers / resume_kept (andrea_forward_io); others refuse them. */
int andrea_engine_can_keep_layers(const andrea_engine *e);
/* Host memory the backend copies to and from fastest (a GPU's: page-locked), for large buffers
 * used by many forwards; NULL when it has none to give (the CPU) or none is left: use malloc.
 * Freed with andrea_engine_host_free on the same engine, before it closes. */
void *andrea_engine_host_alloc(andrea_engine *e, size_t bytes);
void andrea_engine_host_free(andrea_engine *e, void *p);
/* 1 when the backend honours ablate_per_seq (andrea_forward_io); others refuse it. */
int andrea_engine_can_ablate_per_seq(const andrea_engine *e);
/* The largest batch the engine takes now (its max_B: the one it was opened for, or reserved). */
int andrea_engine_max_batch(const andrea_engine *e);
/* The longest sequence the engine takes (its buffers are sized for it, whatever a forward's T). */
int andrea_engine_max_len(const andrea_engine *e);
/* Makes room for batches of max_B sequences (at most: -1 when the backend cannot grow, or
 * without the memory: the engine then keeps its batch, andrea_engine_max_batch says which). */
int andrea_engine_reserve_batch(andrea_engine *e, int max_B, ae_error *err);
/* Points the engine at model m, whose shape (layers, heads, width, vocabulary, context) is the one
 * it runs: from now on its forwards use m's weights (a GPU's are uploaded again); its buffers,
 * batch, plans and streams stay. A checkpoint series of one training run opens one engine for all
 * its checkpoints this way (pipeline/analyze.c). m must outlive the engine or the next swap.
 * -1 with err when the shapes differ (the engine keeps its model). */
int andrea_engine_swap_model(andrea_engine *e, const andrea_model *m, ae_error *err);
void andrea_engine_close(andrea_engine *e);

/* Backend entry points (engine.c dispatches to them). The CUDA ones exist only when built with
 * CUDA; andrea_cuda_available() returns 0 otherwise. */
andrea_engine *andrea_cpu_engine_open(const andrea_model *m, int max_B, int max_T, ae_error *err);
/* The same with the settings of o that the CPU engine reads (threads); o NULL = the defaults. */
andrea_engine *andrea_cpu_engine_open_with(const andrea_model *m, const andrea_engine_options *o, int max_B, int max_T,
                                           ae_error *err);
int andrea_cuda_available(void);
/* Makes device_index % (visible devices) the calling thread's current CUDA device (-1: leaves it).
 * Call before andrea_cuda_available / andrea_cuda_total_memory when the options name a device, so
 * that their context and numbers are that device's. 0; -1 without a usable device (always without
 * CUDA). */
int andrea_cuda_use_device(int device_index);
/* Total memory of the current CUDA device in bytes: 0, or -1 without a usable device (always
 * without CUDA). For choosing a batch: from the total, not the free memory, so that a batch and
 * with it cuBLAS's algorithms and the last bits of every result do not follow what else happens
 * to be allocated (an engine kept across a series, another process); where memory really is
 * short, opening or growing the engine fails and the caller takes the batch it can get. */
int andrea_cuda_total_memory(size_t *total_bytes);
/* GPU bytes a CUDA engine opened with o (NULL: the defaults) takes, generously, for one sequence of
 * T tokens (per_seq: the streaming pipeline's two slots of maps, norms and DLA, fp32 maps when
 * maps_fp32, and the engine's activations) and once whatever the batch (fixed: tf32x3's split
 * copies of the layer weights). For choosing a batch before the engine opens. 0, or -1 on
 * overflow (always without CUDA). */
int andrea_engine_bytes_per_seq(const andrea_config *c, const andrea_engine_options *o, int T, int maps_fp32,
                                size_t *per_seq, size_t *fixed);
/* o NULL = andrea_engine_options_init */
andrea_engine *andrea_cuda_engine_open(const andrea_model *m, const andrea_engine_options *o, int max_B, int max_T,
                                       ae_error *err);

/* Every backend's engine starts with this so engine.c can dispatch. */
struct andrea_engine {
    const char *name;
    int can_resume;  /* capabilities, set by the backend's open */
    int can_resume_heads;
    int has_gpu;
    int can_token_loss;
    int can_ablate_per_seq;
    int can_keep_layers;
    int max_B;       /* the batch it was opened for */
    int max_T;       /* the sequence length it was opened for (set by andrea_engine_open) */
    int (*forward)(andrea_engine *e, const andrea_forward_io *io, ae_error *err);
    int (*reserve_batch)(andrea_engine *e, int max_B, ae_error *err); /* NULL: the batch is fixed */
    int (*swap_model)(andrea_engine *e, const andrea_model *m, ae_error *err); /* shapes checked by engine.c */
    andrea_config cfg; /* the shape of the model it runs (set by andrea_engine_open), a copy: the
                          model struct may be reused for the next checkpoint before a swap */
    void *(*host_alloc)(size_t bytes); /* NULL: no host memory of its own (host_free too) */
    void (*host_free)(void *p);
    void (*close)(andrea_engine *e);
};

#endif
