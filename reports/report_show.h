/* report_show.h — the offline page of `andrea show`: one prompt, its tokens, every head's map.
 *
 * Job: from the attention of one forward over one prompt (already computed), write
 * out_dir/index.html (a token view and the interactive maps of the chosen heads, each linking to
 * the compare page) plus the interactive data, assets, explore.html and compare.html
 * (report_interactive.h). Nothing else: no PNGs, no catalog.
 * Invariants: the page states the precision of what it shows and any cut of the prompt (note);
 * token text is escaped as everywhere in reports/.
 * Failure contract: -1 with "FILE: problem"; files go through andrea_write_file_atomic.
 */
#ifndef ANDREA_REPORT_SHOW_H
#define ANDREA_REPORT_SHOW_H

#include <stddef.h>

#include "../common/error.h"

#define SHOW_MAX_ALSO 8

typedef struct {
    const char *model;            /* display name */
    const char *ckpt_path;
    int n_layer, n_head, d_model, vocab_size;
    int n;                        /* tokens of the prompt (BOS included) */
    const int *tokens;            /* [n] */
    const float *attn;            /* [L, H, n, n] query × key, fp32 from the engine */
    const unsigned char *heads;   /* [L * H] nonzero = shown; NULL = all */
    /* token text: bytes of id into buf (<= cap), -1 when unknown */
    int (*token_bytes)(void *ctx, int id, char *buf, size_t cap);
    void *ctx;
    int bos;                      /* BOS id or -1 */
    const char *note;             /* shown on the page (e.g. the prompt was cut), or NULL */
    const char *engine;           /* "cpu" / "cuda" */
    /* more checkpoints of the same shape on the same tokens (andrea show --also), e.g. other
     * steps of one training run: compared head by head on the compare page */
    int n_also;
    const char *const *also_names; /* [n_also] display names */
    const char *const *also_paths; /* [n_also] */
    const float *const *also_attn; /* [n_also] of [L, H, n, n] */
} report_show_input;

/* Writes the page; page_out (cap bytes) gets the path of index.html. The folder is checked
 * (andrea_out_folder_check) before the work and again once its lock is held: a report, series
 * page or someone's index.html written there while this waited is refused, never replaced. */
int andrea_report_write_show(const report_show_input *in, const char *out_dir, char *page_out, size_t cap, ae_error *err);

#endif
