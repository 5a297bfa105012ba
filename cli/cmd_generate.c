/* cmd_generate.c — `andrea generate CKPT`: the sanity check a user expects from a model.
 * Encodes the prompt (BOS first when the vocabulary has one), runs the forward engine once per new
 * token over the whole (sliding) context, picks the next token greedily or by seeded sampling
 * (engine/sample.h) and prints the prompt followed by the continuation as it is produced.
 * Stops after -n tokens or when the model produces BOS/<|endoftext|>. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../engine/checkpoint.h"
#include "../engine/forward.h"
#include "../engine/model.h"
#include "../engine/sample.h"
#include "../tokenizer/tokenizer.h"
#include "cli.h"

static void usage(FILE *f) {
    fprintf(f, "usage: andrea generate CKPT [--prompt TEXT] [-n N] [--temperature X] [--seed S]\n"
               "                       [--tokenizer DIR] [--device auto|cpu|cuda]\n\n"
               "Prints TEXT followed by N tokens the model continues it with.\n\n"
               "  --prompt TEXT      text to continue (default: empty; needs a vocabulary with BOS)\n"
               "  -n N               tokens to generate (default 64)\n"
               "  --temperature X    0 = greedy (most likely token); > 0 samples from softmax(logits/X)\n"
               "                     (default 1)\n"
               "  --seed S           seed of the sampler (default 1337): same seed, same text\n"
               "  --tokenizer DIR    folder with vocab.json + merges.txt (default: beside CKPT)\n"
               "  --device D         auto (CUDA when available), cpu or cuda (default auto)\n\n"
               "The context starts with BOS (<|endoftext|> for GPT-2 BPE, id 256 for a 257-byte\n"
               "vocabulary) when the vocabulary has one; generation stops early if the model emits it.\n"
               "A token id that vocab.json lacks (one smaller than the model's vocabulary) prints nothing;\n"
               "a note on stderr counts them. On a terminal, control bytes of the generated text (but\n"
               "newline and tab) print as \\xNN; piped, the bytes are written as they are.\n");
}

/* A generated token's bytes to stdout. On a terminal a control byte (but newline and tab) prints as
 * \xNN: a checkpoint's vocabulary is as hostile as its weights, and an escape sequence in it
 * would drive the terminal. Piped, the bytes go as they are (the text itself). */
static void put_token_text(const char *p, int n, int tty) {
    for (int i = 0; i < n; i++) {
        const unsigned char c = (unsigned char)p[i];
        if (tty && ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F)) printf("\\x%02x", c);
        else putchar(c);
    }
}

typedef struct {
    const char *prompt, *tok_dir;
    long n_new;
    double temperature;
    unsigned long long seed;
    andrea_device dev;
} generate_args;

/* Fills a from the command line: -1 to go on, else the exit code (help printed, usage error). */
static int parse_generate_args(int argc, char **argv, generate_args *a) {
    static const struct option opts[] = {{"prompt", required_argument, NULL, 'p'},
                                         {"temperature", required_argument, NULL, 't'},
                                         {"seed", required_argument, NULL, 's'},
                                         {"tokenizer", required_argument, NULL, 'k'},
                                         {"device", required_argument, NULL, 'd'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    *a = (generate_args){.prompt = "", .n_new = 64, .temperature = 1.0, .seed = 1337, .dev = ANDREA_DEVICE_AUTO};
    int c, bad; /* bad: a parser's usage-error exit code */
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, ":n:h", opts)) != -1) {
        char *end;
        switch (c) {
        case 'p': a->prompt = optarg; break;
        case 'n':
            if ((bad = cli_opt_long("generate", "-n", optarg, 0, 1000000, "a token count 0..1000000", &a->n_new))) return bad;
            break;
        case 't':
            if (cli_parse_double(optarg, &a->temperature) || a->temperature < 0)
                return cli_usage_error("generate", "--temperature wants a number >= 0, not '%s'", optarg);
            break;
        case 's':
            errno = 0;
            a->seed = strtoull(optarg, &end, 10);
            /* a digit first: strtoull would take " -1" as 2^64 - 1 */
            if (errno || !isdigit((unsigned char)optarg[0]) || *end)
                return cli_usage_error("generate", "--seed wants a non-negative integer, not '%s'", optarg);
            break;
        case 'k': a->tok_dir = optarg; break;
        case 'd':
            if ((bad = cli_opt_device("generate", optarg, &a->dev))) return bad;
            break;
        case 'h': usage(stdout); return cli_stdout_done();
        default: return cli_option_error("generate", c, argv, opts);
        }
    }
    if (argc - optind != 1) return cli_usage_error("generate", "expects exactly one checkpoint");
    return -1;
}

int cmd_generate(int argc, char **argv) {
    generate_args ga;
    int parsed = parse_generate_args(argc, argv, &ga);
    if (parsed >= 0) return parsed;
    const char *prompt = ga.prompt, *tok_dir = ga.tok_dir;
    const long n_new = ga.n_new;
    const double temperature = ga.temperature;
    const unsigned long long seed = ga.seed;
    const andrea_device dev = ga.dev;

    ae_error err = {{0}};
    andrea_model m;
    andrea_tokenizer *tok = NULL;
    andrea_engine *eng = NULL;
    int *ids = NULL, *ctx = NULL, n_ids = 0, rc = 1;
    float *logits = NULL;
    if (andrea_model_load(&m, argv[optind], &err)) return cli_fail(&err);
    const int V = m.cfg.vocab_size, maxT = m.cfg.max_seq_len;
    if (!(tok = andrea_tokenizer_open(V, m.dir, tok_dir, &err))) goto fail;
    if (andrea_tokenizer_encode(tok, prompt, strlen(prompt), &ids, NULL, &n_ids, &err)) goto fail;
    const int bos = andrea_tokenizer_bos(tok);
    /* context: [BOS] prompt generated...; at most n_prompt + n_new tokens */
    const size_t n_ctx_max = (size_t)n_ids + 1 + (size_t)n_new;
    if (!(ctx = malloc(n_ctx_max * sizeof(int)))) {
        andrea_fail(&err, "%s: out of memory for %zu context tokens", argv[optind], n_ctx_max);
        goto fail;
    }
    size_t n_ctx = 0;
    if (bos >= 0) ctx[n_ctx++] = bos;
    memcpy(ctx + n_ctx, ids, (size_t)n_ids * sizeof(int));
    n_ctx += (size_t)n_ids;
    if (n_ctx == 0) {
        rc = cli_usage_error("generate", "%s: this vocabulary has no BOS token, so give a non-empty --prompt",
                             argv[optind]);
        goto out;
    }

    /* the engine sees at most max_seq_len tokens: a sliding window over the context */
    const int window = n_ctx_max < (size_t)maxT ? (int)n_ctx_max : maxT;
    andrea_engine_options eo;
    andrea_engine_options_init(&eo);
    eo.device = dev;
    if (!(eng = andrea_engine_open(&m, &eo, 1, window, &err))) goto fail;
    if (!(logits = malloc((size_t)window * V * sizeof(float)))) {
        andrea_fail(&err, "%s: out of memory for logits of %d x %d", argv[optind], window, V);
        goto fail;
    }
    andrea_rng rng;
    andrea_rng_seed(&rng, seed);
    fputs(prompt, stdout);
    fflush(stdout);
    const int tty = isatty(STDOUT_FILENO);
    char piece[ANDREA_TOKEN_MAX_BYTES];
    long n_textless = 0, n_made = 0; /* ids the tokenizer has no text for (a vocab.json smaller than V) */
    int first_textless = -1;
    for (long i = 0; i < n_new; i++) {
        const int T = n_ctx < (size_t)window ? (int)n_ctx : window;
        andrea_forward_io io = {.B = 1, .T = T, .tokens = ctx + n_ctx - T, .logits = logits};
        if (andrea_engine_forward(eng, &io, &err)) goto fail;
        const float *last = logits + (size_t)(T - 1) * V;
        /* finite weights can still overflow fp32 in the forward; sampling would then quietly
         * pick token 0 every step (a wrong answer that looks like text) */
        for (int v = 0; v < V; v++) {
            if (isfinite(last[v])) continue;
            fputc('\n', stdout);
            andrea_fail(&err, "%s: the forward pass produced a non-finite logit (%s for token %d at generated "
                          "token %ld): the weights overflow fp32", argv[optind], isnan(last[v]) ? "NaN" : "Inf", v, i);
            goto fail;
        }
        const int next = andrea_sample(last, V, (float)temperature, &rng);
        if (next == bos) break;
        ctx[n_ctx++] = next;
        const int nb = andrea_tokenizer_token_bytes(tok, next, piece, sizeof piece);
        n_made++;
        if (nb > 0) put_token_text(piece, nb, tty);
        else if (nb < 0 && n_textless++ == 0) first_textless = next;
        if (fflush(stdout) != 0 || ferror(stdout)) break; /* reported below: no point computing on */
    }
    fputc('\n', stdout);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        andrea_fail(&err, "stdout: write failed");
        goto fail;
    }
    if (n_textless) /* printing nothing for them unsaid read as a shorter, or empty, continuation */
        fprintf(stderr, "andrea generate: note: %ld of the %ld generated tokens (first: id %d) have no text in the "
                "tokenizer (its vocab.json lacks those ids of the model's %d), so nothing was printed for them\n",
                n_textless, n_made, first_textless, V);
    rc = 0;
    goto out;
fail:
    rc = cli_fail(&err);
out:
    free(logits);
    andrea_engine_close(eng);
    free(ctx);
    free(ids);
    andrea_tokenizer_free(tok);
    andrea_model_free(&m);
    return rc;
}
