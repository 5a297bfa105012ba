/* cmd_tokenize.c — `andrea tokenize CKPT TEXT`: the token ids of TEXT and the text of each.
 * Reads only the checkpoint's config (andrea_checkpoint_peek_config: the vocabulary size picks
 * the tokenizer) and prints one line per token, "ID<TAB>PIECE", PIECE double-quoted with C-style
 * escapes so that spaces, control bytes and partial UTF-8 sequences stay visible; with --ids the
 * ids alone on one line, space-separated; with --offsets each token's character span too
 * ("ID<TAB>START<TAB>END<TAB>PIECE", characters as probe files' "char_targets" count them). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/checkpoint.h"
#include "../engine/model.h"
#include "../tokenizer/tokenizer.h"
#include "cli.h"

static void usage(FILE *f) {
    fprintf(f, "usage: andrea tokenize CKPT TEXT [--ids|--offsets] [--tokenizer DIR]\n\n"
               "Prints the tokens of TEXT, one line each: the id, a tab, and the token's text in double\n"
               "quotes with C-style escapes (\\n, \\r, \\t, \\\", \\\\, \\xNN for control bytes and for bytes of a\n"
               "UTF-8 character split across tokens).\n\n"
               "  --ids            print only the ids, space-separated, on one line\n"
               "  --offsets        also each token's character span START END (END exclusive) between\n"
               "                   the id and the text: the numbers a probe file's \"char_targets\" use.\n"
               "                   Characters are code points (a byte that is not UTF-8 counts as one); a\n"
               "                   character split across tokens is in the span of each of them\n"
               "  --tokenizer DIR  folder with vocab.json + merges.txt (default: beside CKPT)\n\n"
               "The model's vocab_size picks the tokenizer: 256 or 257 is byte-level (id = byte), anything\n"
               "else GPT-2 byte-level BPE from vocab.json + merges.txt. Only the checkpoint's header (or\n"
               "config.json) is read. TEXT is taken as bytes; put `--` before a TEXT that starts with '-'.\n");
}

/* Length of the valid UTF-8 sequence at s[0..n) of 2+ bytes, or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
    size_t len = (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
    if (!len || n < len) return 0;
    unsigned cp = s[0] & (0x7F >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

static void print_piece(const char *piece, size_t n) {
    const unsigned char *s = (const unsigned char *)piece;
    putchar('"');
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t k;
        switch (c) {
        case '\n': fputs("\\n", stdout); break;
        case '\t': fputs("\\t", stdout); break;
        case '\r': fputs("\\r", stdout); break;
        case '"': fputs("\\\"", stdout); break;
        case '\\': fputs("\\\\", stdout); break;
        default:
            if (c >= 0x80 && (k = utf8_seq(s + i, n - i)) > 0) { /* a whole character: print it */
                fwrite(s + i, 1, k, stdout);
                i += k;
                continue;
            }
            if (c < 0x20 || c >= 0x7F)
                printf("\\x%02x", c);
            else
                putchar((int)c);
        }
        i++;
    }
    putchar('"');
}

int cmd_tokenize(int argc, char **argv) {
    static const struct option opts[] = {{"ids", no_argument, NULL, 'i'},
                                         {"offsets", no_argument, NULL, 'O'},
                                         {"tokenizer", required_argument, NULL, 'k'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int ids_only = 0, offsets = 0, c;
    const char *tok_dir = NULL;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, ":h", opts)) != -1) {
        switch (c) {
        case 'i': ids_only = 1; break;
        case 'O': offsets = 1; break;
        case 'k': tok_dir = optarg; break;
        case 'h': usage(stdout); return cli_stdout_done();
        default: return cli_option_error("tokenize", c, argv, opts);
        }
    }
    if (argc - optind != 2) return cli_usage_error("tokenize", "expects a checkpoint and a text");
    if (ids_only && offsets) return cli_usage_error("tokenize", "--ids prints the ids alone and --offsets the spans beside them: give one");
    const char *ckpt = argv[optind], *text = argv[optind + 1];

    ae_error err = {{0}};
    andrea_config cfg;
    char dir[4096];
    if (andrea_checkpoint_peek_config(ckpt, &cfg, dir, sizeof dir, &err)) return cli_fail(&err);
    andrea_tokenizer *tok = andrea_tokenizer_open(cfg.vocab_size, dir, tok_dir, &err);
    if (!tok) return cli_fail(&err);
    int *ids = NULL, *offs = NULL, n = 0;
    size_t *chars = NULL, len = strlen(text);
    if (andrea_tokenizer_encode(tok, text, len, &ids, &offs, &n, &err) ||
        (offsets && andrea_text_char_index(text, len, &chars, &err))) {
        free(ids);
        free(offs);
        andrea_tokenizer_free(tok);
        return cli_fail(&err);
    }
    static char piece[1 << 16]; /* far above any real token (GPT-2's longest is 128 bytes) */
    for (int i = 0; i < n; i++) {
        if (ids_only) {
            printf(i ? " %d" : "%d", ids[i]);
            continue;
        }
        int k = andrea_tokenizer_token_bytes(tok, ids[i], piece, sizeof piece);
        printf("%d\t", ids[i]);
        if (offsets) { /* the characters holding its first and last byte */
            const size_t b0 = (size_t)offs[i], b1 = i + 1 < n ? (size_t)offs[i + 1] : len;
            printf("%zu\t%zu\t", chars[b0], b1 > b0 ? chars[b1 - 1] + 1 : chars[b0]);
        }
        print_piece(piece, k > 0 ? (size_t)k : 0);
        putchar('\n');
    }
    if (ids_only) putchar('\n');
    free(ids);
    free(offs);
    free(chars);
    andrea_tokenizer_free(tok);
    return cli_stdout_done();
}
