/* cmd_show.c — `andrea show CKPT TEXT`: one forward over one prompt -> an offline interactive page.
 * Wiring only: read the text, load the model and tokenizer, encode (BOS first when the vocabulary
 * has one), run the engine once for the attention maps, hand them to andrea_report_write_show
 * (reports/report_show.h) and print the page's path. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/checked_size.h"
#include "../common/finite.h"
#include "../engine/head_mask.h"
#include "../engine/model.h"
#include "../reports/out_folder.h"
#include "../reports/report_show.h"
#include "../tokenizer/tokenizer.h"
#include "../common/strict_input.h"
#include "cli.h"

/* The page holds every shown head's n(n+1)/2 values; beyond this the browser gets slow. */
#define SHOW_MAX_TOKENS 1024
#define SHOW_MAX_TEXT_BYTES (16u << 20)

/* One prompt's engine: fp32 matmuls on a GPU too (one forward: exact maps cost nothing). */
static andrea_engine *show_engine_open(const andrea_model *m, andrea_device dev, int T, ae_error *err) {
    andrea_engine_options o;
    andrea_engine_options_init(&o);
    o.device = dev;
    snprintf(o.precision, sizeof o.precision, "fp32");
    return andrea_engine_open(m, &o, 1, T, err);
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: andrea show CKPT TEXT [--heads L.H,..] [--out DIR] [--device auto|cpu|cuda] [--also CKPT2]\n"
            "       andrea show CKPT --text-file FILE [...]\n\n"
            "Runs CKPT once over one prompt and writes an offline page: the prompt as tokens (hover or\n"
            "click a token to colour the others by a head's attention) and the interactive attention\n"
            "map of every head (docs/report.md). Prints the page's path.\n\n"
            "  --heads L.H,..  show only these heads (e.g. 0.3,2.1; default: all)\n"
            "  --out DIR       output folder (default andrea-show); index.html, assets/ and data/ inside\n"
            "  --device D      auto (CUDA when available), cpu or cuda (default auto)\n"
            "  --text-file F   read the prompt from F (UTF-8) instead of the TEXT argument\n"
            "  --tokenizer DIR folder with vocab.json + merges.txt (default: beside CKPT)\n"
            "  --also CKPT2    also run CKPT2 (same shape, same tokens; e.g. another step of the\n"
            "                  same training run): the compare page then puts a head of CKPT beside\n"
            "                  the same head of CKPT2 (repeatable, up to %d)\n"
            "  --quiet         print nothing but the page's path\n\n"
            "BOS comes first when the vocabulary has one. A prompt longer than the model's context (or\n"
            "than %d tokens) is cut to its first tokens, and the page and stderr say so.\n",
            SHOW_MAX_ALSO, SHOW_MAX_TOKENS);
}

static char *read_text_file(const char *path, size_t *len, ae_error *err) {
    /* a regular file: a folder read as "read failed", a FIFO without a writer waited forever */
    FILE *f = andrea_fopen_regular(path, err);
    if (!f) return NULL;
    char *buf = malloc(SHOW_MAX_TEXT_BYTES + 1);
    if (!buf) {
        fclose(f);
        andrea_fail(err, "%s: out of memory", path);
        return NULL;
    }
    size_t n = fread(buf, 1, SHOW_MAX_TEXT_BYTES + 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        andrea_fail(err, "%s: read failed", path);
        return NULL;
    }
    if (n > SHOW_MAX_TEXT_BYTES) {
        free(buf);
        andrea_fail(err, "%s: larger than %u MiB; andrea show takes one prompt", path, SHOW_MAX_TEXT_BYTES >> 20);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

typedef struct {
    andrea_tokenizer *tok;
} tok_ctx;

static int tok_bytes(void *ctx, int id, char *buf, size_t cap) {
    return andrea_tokenizer_token_bytes(((tok_ctx *)ctx)->tok, id, buf, cap);
}

/* The prompt's tokens: BOS first when the vocabulary has one, cut to the model's context (and
 * SHOW_MAX_TOKENS), the cut stated in note (empty when none). *toks is malloc'd. */
static int prompt_tokens(const andrea_tokenizer *tok, const char *text, size_t len, int max_seq_len, int **toks,
                         int *n_out, char *note, size_t note_cap, ae_error *err) {
    int *ids = NULL, n_ids = 0;
    if (andrea_tokenizer_encode(tok, text, len, &ids, NULL, &n_ids, err)) return -1;
    const int bos = andrea_tokenizer_bos(tok);
    int n_all = n_ids + (bos >= 0), limit = max_seq_len < SHOW_MAX_TOKENS ? max_seq_len : SHOW_MAX_TOKENS;
    int n = n_all < limit ? n_all : limit;
    note[0] = 0;
    if (n_all > limit)
        snprintf(note, note_cap, "The prompt has %d tokens%s; %s %d: showing its first %d tokens.", n_all,
                 bos >= 0 ? " with BOS" : "", limit == max_seq_len ? "the model's context is" : "andrea show keeps at most",
                 limit, n);
    if (!(*toks = malloc((size_t)(n > 0 ? n : 1) * sizeof **toks))) {
        free(ids);
        return andrea_fail(err, "out of memory for %d tokens", n);
    }
    int at = 0;
    if (bos >= 0) (*toks)[at++] = bos;
    if (n > at) memcpy(*toks + at, ids, (size_t)(n - at) * sizeof **toks);
    free(ids);
    *n_out = n;
    return 0;
}

/* One forward for the maps attn [L, H, n, n]. The CPU engine refuses a forward that overflows
 * float32 itself; the CUDA engine does not scan what it computes, so NaN maps would be drawn on
 * the page as if they were attention: refused here, naming the first head that holds one. */
static int show_forward(andrea_engine *eng, const andrea_model *m, const int *toks, int n, float *attn, ae_error *err) {
    andrea_forward_io io = {.B = 1, .T = n, .tokens = toks, .attn = attn};
    if (andrea_engine_forward(eng, &io, err)) return -1;
    const size_t per = (size_t)n * (size_t)n, lh = (size_t)m->cfg.n_layer * (size_t)m->cfg.n_head;
    for (size_t k = 0; k < lh; k++)
        if (ae_any_nonfinite(attn + k * per, per))
            return andrea_fail(err, "%s: the forward overflows float32 (non-finite attention in layer %zu, head %zu): "
                                    "the checkpoint's weights are far outside a trained model's range",
                               m->path, k / (size_t)m->cfg.n_head, k % (size_t)m->cfg.n_head);
    return 0;
}

/* The attention of another checkpoint (--also) on the same tokens; its shape must match cfg. */
static int run_also(const char *path, const andrea_config *cfg, andrea_device dev, const int *toks, int n, float *attn,
                    ae_error *err) {
    andrea_model m;
    if (andrea_model_load(&m, path, err)) return -1;
    int rc = -1;
    andrea_engine *eng = NULL;
    if (m.cfg.n_layer != cfg->n_layer || m.cfg.n_head != cfg->n_head || m.cfg.vocab_size != cfg->vocab_size) {
        andrea_fail(err, "%s: %d layers x %d heads, vocab %d; --also wants the shape of the first checkpoint (%d x %d, vocab %d)",
                path, m.cfg.n_layer, m.cfg.n_head, m.cfg.vocab_size, cfg->n_layer, cfg->n_head, cfg->vocab_size);
        goto out;
    }
    if (m.cfg.max_seq_len < n) {
        andrea_fail(err, "%s: its context is %d tokens, the prompt has %d", path, m.cfg.max_seq_len, n);
        goto out;
    }
    if (!(eng = show_engine_open(&m, dev, n, err))) goto out;
    rc = show_forward(eng, &m, toks, n, attn, err);
out:
    andrea_engine_close(eng);
    andrea_model_free(&m);
    return rc;
}

typedef struct {
    const char *also[SHOW_MAX_ALSO];
    int n_also, quiet;
    const char *heads, *out, *text_file, *tok_dir;
    andrea_device dev;
} show_args;

/* Fills a from the command line: -1 to go on (argv[optind] the checkpoint), else the exit code. */
static int parse_show_args(int argc, char **argv, show_args *a) {
    static const struct option opts[] = {
        {"heads", required_argument, NULL, 'H'},     {"out", required_argument, NULL, 'o'},
        {"device", required_argument, NULL, 'd'},    {"text-file", required_argument, NULL, 'f'},
        {"tokenizer", required_argument, NULL, 'k'}, {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},            {"also", required_argument, NULL, 'a'},
        {"texts", required_argument, NULL, 'X'},     {NULL, 0, NULL, 0}};
    memset(a, 0, sizeof *a);
    a->out = "andrea-show";
    a->dev = ANDREA_DEVICE_AUTO;
    int c, bad;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, ":o:qh", opts)) != -1) {
        switch (c) {
        case 'H': a->heads = optarg; break;
        case 'o': a->out = optarg; break;
        case 'd':
            if ((bad = cli_opt_device("show", optarg, &a->dev))) return bad;
            break;
        case 'f': a->text_file = optarg; break;
        case 'k': a->tok_dir = optarg; break;
        case 'q': a->quiet = 1; break;
        case 'a':
            if (a->n_also == SHOW_MAX_ALSO) return cli_usage_error("show", "--also takes at most %d checkpoints", SHOW_MAX_ALSO);
            a->also[a->n_also++] = optarg;
            break;
        case 'X': /* one page per text would be a page per line: dump and analyze take many */
            return cli_usage_error("show", "shows one text (TEXT or --text-file FILE, one page); --texts FILE, many texts "
                                           "in one map-only suite, is for dump and analyze");
        case 'h': usage(stdout); return cli_stdout_done();
        default: return cli_option_error("show", c, argv, opts);
        }
    }
    int n_pos = argc - optind;
    if (n_pos < 1) return cli_usage_error("show", "expects a checkpoint and a text (or --text-file FILE)");
    if (a->text_file ? n_pos != 1 : n_pos != 2)
        return cli_usage_error("show", a->text_file ? "takes the text from --text-file: give only the checkpoint"
                                                    : "expects exactly a checkpoint and one text (quote it)");
    if (!*a->out) return cli_usage_error("show", "--out wants a folder name, not ''");
    return -1;
}

int cmd_show(int argc, char **argv) {
    show_args sa;
    int parsed = parse_show_args(argc, argv, &sa);
    if (parsed >= 0) return parsed;
    const char *const *also = sa.also;
    const int n_also = sa.n_also, quiet = sa.quiet;
    const char *heads = sa.heads, *out = sa.out, *text_file = sa.text_file, *tok_dir = sa.tok_dir;
    const andrea_device dev = sa.dev;
    const char *ckpt = argv[optind];

    ae_error err = {{0}};
    andrea_model m;
    andrea_tokenizer *tok = NULL;
    andrea_engine *eng = NULL;
    unsigned char *mask = NULL;
    int *toks = NULL, rc = 1;
    float *attn = NULL, *also_attn[SHOW_MAX_ALSO] = {NULL};
    char *file_text = NULL;
    size_t text_len = 0;
    const char *text;
    /* the page's files are written over (or cleared) whatever lies there: never over an input */
    int inside = andrea_out_folder_check_input(out, ckpt, "checkpoint", &err) ||
                 andrea_out_folder_check_input(out, text_file, "--text-file", &err) ||
                 andrea_out_folder_check_input(out, tok_dir, "tokenizer folder", &err);
    for (int i = 0; i < n_also && !inside; i++) inside = andrea_out_folder_check_input(out, also[i], "--also checkpoint", &err);
    if (inside) return cli_fail(&err);
    if (text_file) {
        if (!(file_text = read_text_file(text_file, &text_len, &err))) return cli_fail(&err);
        text = file_text;
    } else {
        text = argv[optind + 1];
        text_len = strlen(text);
    }
    if (text_len == 0) {
        free(file_text);
        return cli_usage_error("show", "the text is empty%s%s: give a prompt to look at", text_file ? " in " : "",
                               text_file ? text_file : "");
    }
    if (andrea_model_load(&m, ckpt, &err)) {
        free(file_text);
        return cli_fail(&err);
    }
    const int L = m.cfg.n_layer, H = m.cfg.n_head;
    if (heads) {
        if (!(mask = calloc((size_t)L * (size_t)H, 1))) {
            andrea_fail(&err, "out of memory");
            goto fail;
        }
        if (andrea_parse_heads(heads, &m.cfg, mask, &err)) {
            rc = cli_usage_error("show", "%s", err.msg);
            goto out;
        }
    }
    if (!(tok = andrea_tokenizer_open(m.cfg.vocab_size, m.dir, tok_dir, &err))) goto fail;
    const int bos = andrea_tokenizer_bos(tok);
    char note[512] = "";
    int n = 0;
    if (prompt_tokens(tok, text, text_len, m.cfg.max_seq_len, &toks, &n, note, sizeof note, &err)) goto fail;
    char note_shown[sizeof note];
    if (note[0] && !quiet) fprintf(stderr, "andrea show: %s\n", andrea_shown(note, note_shown, sizeof note_shown)); /* the page states it too */
    size_t n_attn;
    if (ae_mul((size_t)L * (size_t)H, (size_t)n * (size_t)n, &n_attn) || !(attn = malloc(n_attn * sizeof *attn))) {
        andrea_fail(&err, "%s: out of memory for %d x %d maps of %d tokens", ckpt, L, H, n);
        goto fail;
    }
    if (!(eng = show_engine_open(&m, dev, n, &err))) goto fail;
    if (show_forward(eng, &m, toks, n, attn, &err)) goto fail;
    for (int i = 0; i < n_also; i++) {
        if (!(also_attn[i] = malloc(n_attn * sizeof(float)))) {
            andrea_fail(&err, "%s: out of memory for its maps", also[i]);
            goto fail;
        }
        if (run_also(also[i], &m.cfg, dev, toks, n, also_attn[i], &err)) goto fail;
    }

    const char *base = strrchr(ckpt, '/');
    char name[256];
    snprintf(name, sizeof name, "%s", base && base[1] ? base + 1 : ckpt);
    tok_ctx tc = {tok};
    char also_names[SHOW_MAX_ALSO][256];
    const char *also_np[SHOW_MAX_ALSO];
    for (int i = 0; i < n_also; i++) {
        const char *ab = strrchr(also[i], '/');
        snprintf(also_names[i], sizeof also_names[i], "%s", ab && ab[1] ? ab + 1 : also[i]);
        also_np[i] = also_names[i];
    }
    report_show_input in = {name, ckpt, L, H, m.cfg.d_model, m.cfg.vocab_size, n, toks, attn, mask, tok_bytes, &tc,
                            bos, note, andrea_engine_name(eng), n_also, also_np, also, (const float *const *)also_attn};
    char page[4200];
    if (andrea_report_write_show(&in, out, page, sizeof page, &err)) goto fail;
    char s_page[4200];
    printf("%s\n", andrea_shown(page, s_page, sizeof s_page));
    char shown[4400];
    if (!quiet)
        fprintf(stderr, "andrea show: %d tokens, %d layers x %d heads (%s): open %s\n", n, L, H, andrea_engine_name(eng),
                andrea_shown(page, shown, sizeof shown));
    rc = cli_stdout_done();
    goto out;
fail:
    rc = cli_fail(&err);
out:
    andrea_engine_close(eng);
    free(attn);
    for (int i = 0; i < n_also; i++) free(also_attn[i]);
    free(toks);
    free(mask);
    free(file_text);
    andrea_tokenizer_free(tok);
    andrea_model_free(&m);
    return rc;
}
