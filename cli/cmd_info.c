/* cmd_info.c — `andrea info CKPT`: config, head_dim, family, parameter breakdown, sha256.
 * Loads (and so fully validates) the checkpoint; the numbers come from engine/param_count.h. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../engine/checkpoint.h"
#include "../engine/model.h"
#include "../engine/param_count.h"
#include "../common/printable.h"
#include "cli.h"

static void usage(FILE *f) {
    fprintf(f, "usage: andrea info CKPT\n\n"
               "Loads and validates a checkpoint and prints its config (layers, heads, d_model, head_dim,\n"
               "vocabulary, max_seq_len, stored dtype, format), the ANDREA family its shape matches,\n"
               "the parameter breakdown (attention projections per layer and in total, MLP, LayerNorms,\n"
               "embeddings, attention share) and the sha256 of the weights file.\n\n"
               "CKPT: an ANDREA .bin (llm.c layout, v3 fp32 / v5 bf16), a folder holding\n"
               "model.safetensors + config.json (or Hugging Face's shards + model.safetensors.index.json),\n"
               "or a .safetensors file with config.json beside it. A sharded checkpoint's sha256 is that of\n"
               "sha256sum's lines of the index and the sorted shards (docs/checkpoints.md).\n");
}

/* 28311552 -> "28,311,552" */
static const char *commas(size_t v, char *buf, size_t cap) {
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%zu", v);
    size_t k = 0;
    for (int i = 0; i < n && k + 2 < cap; i++) {
        if (i > 0 && (n - i) % 3 == 0) buf[k++] = ',';
        buf[k++] = digits[i];
    }
    buf[k] = '\0';
    return buf;
}

/* 28311552 -> "28.3M"; below 1000 the plain number */
static const char *human(size_t v, char *buf, size_t cap) {
    static const char units[] = "KMBT";
    double x = (double)v;
    int u = -1;
    while (x >= 999.95 && u < 3) {
        x /= 1000.0;
        u++;
    }
    if (u < 0)
        snprintf(buf, cap, "%zu", v);
    else
        snprintf(buf, cap, "%.1f%c", x, units[u]);
    return buf;
}

static void row(const char *what, const size_t *per_layer, size_t total) {
    char a[32], b[32], h[16];
    if (per_layer)
        printf("  %-34s %12s %14s  %s\n", what, commas(*per_layer, a, sizeof a), commas(total, b, sizeof b),
               human(total, h, sizeof h));
    else
        printf("  %-34s %12s %14s  %s\n", what, "", commas(total, b, sizeof b), human(total, h, sizeof h));
}

int cmd_info(int argc, char **argv) {
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, ":h", opts)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return cli_stdout_done();
        }
        return cli_option_error("info", c, argv, opts);
    }
    if (argc - optind != 1) return cli_usage_error("info", "expects exactly one checkpoint");
    const char *path = argv[optind];

    ae_error err = {{0}};
    andrea_model m;
    if (andrea_model_load(&m, path, &err)) return cli_fail(&err);
    andrea_param_breakdown b;
    char sha[65];
    if (andrea_param_count(&m.cfg, &b, &err) || andrea_checkpoint_sha256(&m, sha, &err)) {
        andrea_model_free(&m);
        return cli_fail(&err);
    }
    const andrea_config *cf = &m.cfg;
    const char *family = andrea_family_name(cf);
    char n1[32], n2[32];
    char shown[4200]; /* a newline or escape sequence in the path reaches no terminal */
    printf("checkpoint     %s\n", andrea_shown(path, shown, sizeof shown));
    printf("sha256         %s\n", sha);
    printf("format         %s\n",
           m.format == ANDREA_FMT_BIN ? "ANDREA .bin (llm.c layout)" : "Hugging Face GPT-2 safetensors");
    printf("stored dtype   %s\n", m.stored_dtype);
    printf("family         %s\n", family ? family : "none (shape not in the family table of docs/checkpoints.md)");
    printf("layers         %d\n", cf->n_layer);
    printf("heads          %d\n", cf->n_head);
    printf("d_model        %d\n", cf->d_model);
    printf("head_dim       %d\n", cf->head_dim);
    printf("vocab          %s\n", commas((size_t)cf->vocab_size, n1, sizeof n1));
    printf("padded vocab   %s\n", commas((size_t)cf->padded_vocab_size, n2, sizeof n2));
    printf("max_seq_len    %s\n", commas((size_t)cf->max_seq_len, n1, sizeof n1));
    char all[32];
    snprintf(all, sizeof all, "all %d layers", cf->n_layer);
    printf("\nparameters%*s%12s %14s\n", 27, "", "per layer", all);
    row("attention projections, weights", &b.attn_w_layer, b.attn_w);
    row("attention projections, biases", &b.attn_b_layer, b.attn_b);
    row("MLP weights", &b.mlp_w_layer, b.mlp_w);
    row("MLP biases", &b.mlp_b_layer, b.mlp_b);
    row("LayerNorms (per layer + final)", &b.ln_layer, b.ln);
    row("token embedding (wte, tied)", NULL, b.wte);
    row("position embedding (wpe)", NULL, b.wpe);
    row("total", NULL, b.total);
    if (b.wte_padding)
        printf("  (wte also stores %s padding values for the padded vocab, not counted)\n",
               commas(b.wte_padding, n1, sizeof n1));
    printf("attention share  %.1f %% of all parameters (projection weights and biases)\n",
           100.0 * b.attn_share);
    andrea_model_free(&m);
    return cli_stdout_done();
}
