/* report_show.c — `andrea show`'s page (see report_show.h): the prompt becomes a report_data of
 * one suite ("prompt") with one example and no targets, so the interactive writer and andrea.js
 * serve it exactly as they serve a report. */
#include "report_show.h"

#include "out_folder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/atomic_file.h"
#include "../common/progress.h"
#include "report_data.h"
#include "report_interactive.h"
#include "text.h"

typedef struct {
    const report_show_input *in;
    const float *attn; /* [L, H, n, n] of the checkpoint being written */
} show_ctx;

static int show_token_bytes(const report_data *d, int id, char *buf, size_t cap) {
    const show_ctx *c = d->ctx;
    return c->in->token_bytes ? c->in->token_bytes(c->in->ctx, id, buf, cap) : -1;
}

/* out [T, T] with T = n: the head's slice of the checkpoint's attention */
static int show_read_map(const report_data *d, int s, int e, int l, int h, float *out, ae_error *err) {
    const show_ctx *c = d->ctx;
    (void)s;
    (void)e;
    (void)err;
    size_t nn = (size_t)c->in->n * (size_t)c->in->n;
    memcpy(out, c->attn + ((size_t)l * (size_t)c->in->n_head + (size_t)h) * nn, nn * sizeof *out);
    return 0;
}

static int write_page(const report_show_input *in, const report_data *d, const char *out_dir, ae_error *err) {
    andrea_buf b;
    andrea_buf_init(&b);
    char title[512];
    snprintf(title, sizeof title, "andrea show \xC2\xB7 %s", in->model);
    andrea_report_html_head(&b, title, "");
    andrea_buf_puts(&b, "<nav><a href=\"explore.html\">token view (full page)</a><a href=\"compare.html\">compare heads</a></nav>\n"
                  "<h1>andrea show: ");
    andrea_html_add(&b, in->model);
    andrea_buf_puts(&b, "</h1>\n<table class=\"meta\">\n<tr><th>checkpoint</th><td><code>");
    andrea_html_add(&b, in->ckpt_path);
    for (int m = 0; m < in->n_also; m++) {
        andrea_buf_printf(&b, "</code></td></tr>\n<tr><th>also (checkpoint %d)</th><td><code>", m + 1);
        andrea_html_add(&b, in->also_paths[m]);
    }
    andrea_buf_printf(&b, "</code></td></tr>\n<tr><th>shape</th><td>%d layers \xC3\x97 %d heads, d_model %d, vocab %d</td></tr>\n"
                    "<tr><th>prompt</th><td>%d tokens%s, one forward on the %s engine (fp32)</td></tr>\n</table>\n",
                in->n_layer, in->n_head, in->d_model, in->vocab_size, in->n, in->bos >= 0 ? " (BOS first)" : "",
                in->engine ? in->engine : "cpu");
    if (in->note && *in->note) {
        andrea_buf_puts(&b, "<p class=\"note\">");
        andrea_html_add(&b, in->note);
        andrea_buf_puts(&b, "</p>\n");
    }
    andrea_buf_puts(&b, "<p class=\"precision\">" REPORT_PRECISION_NOTE "</p>\n<h2>Tokens</h2>\n"
                  "<p>Hover over a token (click to keep it): the other tokens take the colour of the chosen head's "
                  "attention from it; the button switches to attention to it. The grid picks the head.</p>\n"
                  "<div class=\"tv-slot\"></div>\n<h2>Every head</h2>\n"
                  "<p>Hover a map for values; the wheel, a drag or the buttons zoom and pan.</p>\n<div class=\"hm-list\">\n");
    int L = in->n_layer, H = in->n_head, shown = 0, first = -1;
    for (int i = 0; i < L * H; i++)
        if (!in->heads || in->heads[i]) {
            if (first < 0) first = i;
            shown++;
        }
    int prev = -1;
    for (int i = 0; i < L * H; i++) {
        if (in->heads && !in->heads[i]) continue;
        int other = prev >= 0 ? prev : first; /* compare with the previous shown head (the first: the next) */
        if (other == i) {
            for (int j = i + 1; j < L * H; j++)
                if (!in->heads || in->heads[j]) {
                    other = j;
                    break;
                }
        }
        andrea_buf_printf(&b, "<div class=\"show-head\"><div class=\"hm-slot\" data-l=\"%d\" data-h=\"%d\" data-size=\"%d\" "
                        "data-labels=\"%d\"></div><a href=\"compare.html#a=%d.%d&amp;b=%d.%d\">compare L%d H%d with L%d H%d</a>"
                        " \xC2\xB7 <a href=\"explore.html#l=%d&amp;h=%d\">token view</a>",
                    i / H, i % H, shown > 8 ? 288 : 448, shown > 8 ? 0 : 1, i / H, i % H, other / H, other % H, i / H,
                    i % H, other / H, other % H, i / H, i % H);
        /* the same head in the other checkpoints */
        for (int m = 0; m < in->n_also; m++) {
            andrea_buf_printf(&b, " \xC2\xB7 <a href=\"compare.html#a=0:%d.%d&amp;b=%d:%d.%d\">vs ", i / H, i % H, m + 1, i / H, i % H);
            andrea_html_add(&b, in->also_names[m]);
            andrea_buf_puts(&b, "</a>");
        }
        andrea_buf_puts(&b, "</div>\n");
        prev = i;
    }
    andrea_buf_puts(&b, "</div>\n<style>.hm-list{display:flex;flex-wrap:wrap;gap:.4em}.show-head{font-size:12px}</style>\n");
    (void)d;
    andrea_buf_puts(&b, "<script src=\"assets/andrea.js\"></script>\n<script src=\"data/meta.js\"></script>\n");
    /* no head data here: each map loads its head's file when it comes near the window */
    andrea_buf_puts(&b, "<p><small>Made by andrea " ANDREA_VERSION " (andrea show). Static and offline: open this file in any "
                  "browser.</small></p>\n</body>\n</html>\n");
    int rc = andrea_report_write_html(out_dir, "index.html", &b, err);
    andrea_buf_free(&b);
    return rc;
}

int andrea_report_write_show(const report_show_input *in, const char *out_dir, char *page_out, size_t cap, ae_error *err) {
    if (in->n < 1) return andrea_fail(err, "%s: nothing to show (no tokens)", out_dir);
    if (andrea_out_folder_check(out_dir, OUT_FOLDER_SHOW, err)) return -1;
    report_data *d = calloc(1, sizeof *d);
    report_suite *su = calloc(1, sizeof *su);
    int rc = -1, lock = -1;
    size_t nn = (size_t)in->n * (size_t)in->n;
    if (!d || !su || !(su->n_tokens = calloc(1, sizeof(int))) || !(su->target = calloc(nn, 1))) {
        andrea_fail(err, "%s: out of memory", out_dir);
        goto out;
    }
    snprintf(d->model, sizeof d->model, "%s", in->model);
    snprintf(d->ckpt_path, sizeof d->ckpt_path, "%s", in->ckpt_path);
    d->n_layer = in->n_layer;
    d->n_head = in->n_head;
    d->d_model = in->d_model;
    d->vocab_size = in->vocab_size;
    snprintf(su->name, sizeof su->name, "prompt");
    su->T = in->n;
    su->n_seq = su->n_examples = 1;
    su->n_tokens[0] = in->n;
    su->tokens = (int *)in->tokens; /* borrowed: never freed here */
    d->n_suites = 1;
    d->suites = su;
    d->token_bytes = show_token_bytes;
    d->read_map = show_read_map;
    d->bos = in->bos;
    show_ctx ctx = {in, in->attn};
    d->ctx = &ctx;
    if (andrea_report_mkdirs(out_dir, err)) goto out;
    lock = andrea_out_folder_lock(out_dir, NULL, andrea_progress_quiet); /* one page writer of the folder at a time */
    /* again, holding it: a report, series page or someone's index.html written there while this
     * waited would be replaced (the check above only spares the forward's work) */
    if (andrea_out_folder_check(out_dir, OUT_FOLDER_SHOW, err)) goto out;
    if (andrea_out_folder_clear(out_dir, NULL, NULL, err)) goto out; /* an earlier page's heads and checkpoints */
    const char *names[1 + SHOW_MAX_ALSO];
    if (in->n_also > SHOW_MAX_ALSO) {
        andrea_fail(err, "%s: at most %d more checkpoints", out_dir, SHOW_MAX_ALSO);
        goto out;
    }
    names[0] = in->model;
    for (int m = 0; m < in->n_also; m++) names[m + 1] = in->also_names[m];
    report_interactive_options io = {in->heads, 0, 1 + in->n_also, names, 0}; /* fp16: show is exact */
    if (andrea_report_write_mark(d, out_dir, &io, err) || andrea_report_write_interactive(d, out_dir, &io, err)) goto out;
    for (int m = 0; m < in->n_also; m++) {
        ctx.attn = in->also_attn[m];
        if (andrea_report_write_model_data(d, out_dir, &io, m + 1, err)) goto out;
    }
    if (write_page(in, d, out_dir, err)) goto out;
    if ((size_t)snprintf(page_out, cap, "%s/index.html", out_dir) >= cap) {
        andrea_fail(err, "%s: path too long", out_dir);
        goto out;
    }
    rc = 0;
out:
    andrea_out_folder_unlock(lock);
    if (su) {
        free(su->n_tokens);
        free(su->target);
    }
    free(su);
    free(d);
    return rc;
}
