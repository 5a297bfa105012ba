/* cmd_dump.c — `andrea dump CKPT`: probe suites through the instrumented forward into HDF5.
 * Wiring only: parse options, load the model and tokenizer, build the suites
 * (probes/probe.h), call andrea_dump_write (dump/dump_write.h), print one summary line. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/progress.h"
#include "../engine/checkpoint.h"
#include "../dump/dump_write.h"
#include "../engine/model.h"
#include "../engine/head_mask.h"
#include "../common/mpi_shard.h"
#include "../tokenizer/tokenizer.h"
#include "../probes/probe.h"
#include "cli.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: andrea dump CKPT [--probes SUITE|FILE.jsonl[,..]].. [--texts FILE|-] [--out dump.h5]\n"
            "                   [--device auto|cpu|cuda] [--maps fp16|fp32] [--contrib none|norm|full]\n"
            "                   [--heads L.H,..] [--batch N] [--seed S] [--n N] [--len T] [--gzip L]\n"
            "                   [--tokenizer DIR] [--precision tf32|tf32x3|fp32] [--single-file]\n"
            "                   [--quiet] [--timing]\n\n"
            "Runs CKPT over probe sequences and writes per-head attention maps and W_O contributions\n"
            "to an HDF5 file (layout: docs/dump-format.md; probes: docs/probes.md).\n\n"
            "  --probes P      built-in suites (prev_token, induction, duplicate, bracket, bracket_close,\n"
            "                  entity, bos, all; default: all) and JSON Lines probe files, in any mix,\n"
            "                  comma-separated or repeated\n"
            "  --texts FILE    plain texts, one a line ('-': standard input): one map-only suite\n"
            "                  'texts' (maps and contributions, no targets); with or without --probes\n"
            "  --out FILE      output file (default dump.h5); written under a temporary name and\n"
            "                  renamed when complete\n"
            "  --device D      auto (CUDA when available), cpu or cuda (default auto)\n"
            "  --maps T        attention stored as fp16 (default) or fp32\n"
            "  --precision P   on a GPU, matmuls in tf32 (default, fast; attention probabilities of\n"
            "                  trained models within ~4e-3 of fp32), tf32x3 (every layer matmul and\n"
            "                  attention as three TF32 products of high and low parts: maps within\n"
            "                  ~3e-5 of fp32, ~2.2x the forward time; the per-head W_O terms, their\n"
            "                  norms and DLA stay TF32, ~3e-4 relative) or fp32 (exact to ~1e-6, the\n"
            "                  slowest); the CPU is always fp32. Recorded in the dump's `precision`\n"
            "                  attribute\n"
            "  --contrib C     none: attention only; norm (default): + head_out_norm and head_dla;\n"
            "                  full: + every head's W_O contribution head_out [.., T, C] (large)\n"
            "  --heads L.H,..  also store head_out for these heads only (e.g. 0.3,2.1)\n"
            "  --batch N       sequences per forward (default: as many as fit in 512 MiB of host\n"
            "                  buffers, <= 64, and on a GPU in half of its free memory)\n"
            "  --seed S        seed of the built-in generators (default %u)\n"
            "  --n N           items per built-in suite (default %d; entity %d)\n"
            "  --len T         tokens per built-in item (default %d; entity %d; clipped to the model's max)\n"
            "  --gzip L        deflate level 1-9 for attention/head_out (default 0: none, fastest)\n"
            "  --tokenizer DIR folder with vocab.json + merges.txt (default: beside CKPT)\n"
            "  --single-file   under mpirun: every rank writes the one file through collective MPI-IO\n"
            "                  (default there: each rank writes FILE.part-R-of-N and rank 0 writes FILE,\n"
            "                  which maps them and reads like a serial dump; docs/cluster.md)\n"
            "  --quiet         no progress bar or summary\n"
            "  --timing        also print where the time went (load, hashing, engine open, file\n"
            "                  create, forwards, writes, datasets, close, seal, and what none of them\n"
            "                  covers, e.g. the final rename; a serial dump hashes the checkpoint while\n"
            "                  the engine opens)\n",
            PROBE_DEFAULT_SEED, PROBE_DEFAULT_N_ITEMS, PROBE_ENTITY_N_ITEMS, PROBE_DEFAULT_SEQ_LEN, PROBE_ENTITY_SEQ_LEN);
}

/* --out is checked before the model is even loaded: the dump is renamed over it at the end, so a
 * device or FIFO there (as root: /dev/null) would be replaced by a regular file, and a missing
 * folder would only be found once the temporary is created. (A folder is refused by
 * andrea_tmp_begin, common/atomic_file.c, for every output.) */
static int check_out_path(const char *out) {
    ae_error err = {{0}};
    struct stat st;
    if (!*out) return cli_usage_error("dump", "--out wants a file name, not ''");
    if (stat(out, &st) == 0) {
        if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) return 0;
        andrea_fail(&err, "%s: exists and is not a regular file (a device, FIFO or socket): andrea would replace "
                      "it; give the name of a file to write", out);
        return cli_fail(&err);
    }
    if (errno != ENOENT) {
        andrea_fail(&err, "%s: cannot write there: %s", out, strerror(errno));
        return cli_fail(&err);
    }
    size_t n = strlen(out);
    if (out[n - 1] == '/') {
        andrea_fail(&err, "%s: names a folder; --out names the dump file to write", out);
        return cli_fail(&err);
    }
    const char *slash = strrchr(out, '/');
    if (!slash) return 0;
    char dir[4096];
    if ((size_t)(slash - out) >= sizeof dir) {
        andrea_fail(&err, "%.200s...: path too long", out);
        return cli_fail(&err);
    }
    snprintf(dir, sizeof dir, "%.*s", slash == out ? 1 : (int)(slash - out), out);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        andrea_fail(&err, "%s: folder %s %s", out, dir, stat(dir, &st) != 0 ? "does not exist" : "is not a folder");
        return cli_fail(&err);
    }
    return 0;
}

/* The one-line summary (unless quiet) and, with --timing, where the time went (o->stats). */
static void print_done(const andrea_dump_options *o, int n_suites, int quiet, int timing, double t_load,
                       double t_probes) {
    const andrea_dump_stats *st = o->stats;
    char shown[4200];
    if (!quiet)
        fprintf(stderr, "andrea dump: wrote %s: %d suite%s, %lld sequences, %.1f MB in %.2f s (%s, batch %d)\n",
                cli_shown(o->out_path, shown, sizeof shown), n_suites, n_suites == 1 ? "" : "s", st->sequences, st->bytes / 1e6, st->seconds,
                st->engine, st->batch);
    if (timing)
        fprintf(stderr,
                "andrea dump: time: model load %.2f s, tokenizer + probes %.2f s, checkpoint sha256 %.2f s (waited "
                "%.2f s before the close), engine open %.2f s, file create %.2f s, forwards %.2f s, attention writes "
                "%.2f s, other writes %.2f s, datasets %.2f s, close %.2f s, seal %.2f s, unaccounted %.2f s\n",
                t_load, t_probes, st->t_hash, st->t_hash_wait, st->t_open, st->t_create, st->t_forward, st->t_maps,
                st->t_other, st->t_suites_rest, st->t_close, st->t_seal, st->t_unaccounted);
}

/* --heads L.H,.. into a [L*H] mask: 0, 1 (err: out of memory) or the usage-error exit code. */
static int heads_mask(const char *heads, const andrea_config *cfg, unsigned char **mask, ae_error *err) {
    if (!(*mask = malloc((size_t)cfg->n_layer * (size_t)cfg->n_head))) {
        andrea_fail(err, "out of memory");
        return 1;
    }
    if (andrea_parse_heads(heads, cfg, *mask, err) == 0) return 0;
    const int rc = cli_usage_error("dump", "%s", err->msg);
    err->msg[0] = 0;
    return rc;
}

int cmd_dump(int argc, char **argv) {
    static const struct option opts[] = {
        {"probes", required_argument, NULL, 'p'},  {"out", required_argument, NULL, 'o'},
        {"device", required_argument, NULL, 'd'},  {"maps", required_argument, NULL, 'm'},
        {"contrib", required_argument, NULL, 'c'}, {"heads", required_argument, NULL, 'H'},
        {"batch", required_argument, NULL, 'b'},   {"seed", required_argument, NULL, 's'},
        {"n", required_argument, NULL, 'n'},       {"len", required_argument, NULL, 'l'},
        {"gzip", required_argument, NULL, 'z'},    {"tokenizer", required_argument, NULL, 'k'},
        {"quiet", no_argument, NULL, 'q'},         {"help", no_argument, NULL, 'h'},
        {"timing", no_argument, NULL, 't'},        {"precision", required_argument, NULL, 'P'},
        {"single-file", no_argument, NULL, 'F'},   {"texts", required_argument, NULL, 'T'},
        {NULL, 0, NULL, 0}};
    const char *heads = NULL, *tok_dir = NULL;
    probe_sources ps;
    andrea_probe_sources_init(&ps);
    andrea_dump_options o;
    andrea_dump_options_init(&o);
    o.out_path = "dump.h5";
    probe_options po = {0, 0, 0};
    int quiet = 0, timing = 0, c, bad; /* bad: a parser's usage-error exit code */
    long v;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, ":o:qh", opts)) != -1) {
        switch (c) {
        case 'p':
            if ((bad = cli_opt_probes("dump", optarg, &ps))) goto bad_option;
            break;
        case 'T':
            if ((bad = cli_opt_texts("dump", optarg, &ps))) goto bad_option;
            break;
        case 'o': o.out_path = optarg; break;
        case 'd':
            if ((bad = cli_opt_device("dump", optarg, &o.device))) goto bad_option;
            break;
        case 'm':
            if ((bad = cli_opt_maps("dump", optarg, &o.maps_fp32))) goto bad_option;
            break;
        case 'c':
            if ((bad = cli_opt_contrib("dump", optarg, &o.contrib))) goto bad_option;
            break;
        case 'H': heads = optarg; break;
        case 'b':
            if ((bad = cli_opt_long("dump", "--batch", optarg, 1, 4096, "1..4096", &v))) goto bad_option;
            o.batch = (int)v;
            break;
        case 's':
        case 'n':
        case 'l':
            if ((bad = cli_opt_probe("dump", c, optarg, &po))) goto bad_option;
            break;
        case 'z':
            if ((bad = cli_opt_long("dump", "--gzip", optarg, 0, 9, "a level 0..9", &v))) goto bad_option;
            o.gzip = (int)v;
            break;
        case 'k': tok_dir = optarg; break;
        case 'q': quiet = 1; break;
        case 'F': o.single_file = 1; break;
        case 't': timing = 1; break;
        case 'P':
            if ((bad = cli_opt_precision("dump", optarg, &o.precision))) goto bad_option;
            break;
        case 'h': usage(stdout); andrea_probe_sources_free(&ps); return cli_stdout_done();
        default: andrea_probe_sources_free(&ps); return cli_option_error("dump", c, argv, opts);
        }
    }
    if (argc - optind != 1 && (bad = cli_usage_error("dump", "expects exactly one checkpoint"))) goto bad_option;
    if (quiet) andrea_progress_quiet = 1;
    /* Under MPI the writer's own check runs on rank 0 and is agreed by all ranks (one line for the
     * job); here every rank would print its own. */
    if (!andrea_mpi_parallel() && (bad = check_out_path(o.out_path))) goto bad_option;

    ae_error err = {{0}};
    andrea_model m;
    andrea_tokenizer *tok = NULL;
    probe_suite *suites = NULL;
    int n_suites = 0, rc = 1;
    unsigned char *mask = NULL;
    andrea_dump_stats stats;
    const double t_start = andrea_now_seconds();
    memset(&m, 0, sizeof m);
    /* the streams (--texts -, a FIFO) are read once, before the model */
    if (andrea_probe_sources_keep(&ps, 0, &err) || andrea_model_load(&m, argv[optind], &err)) goto out;
    const double t_load = andrea_now_seconds() - t_start;
    if (cli_check_output_not_input(o.out_path, &m, &ps, tok_dir, &err)) goto out;
    int tok_ok;
    tok = cli_probe_tokenizer(&m, &ps, tok_dir, &tok_ok, &err);
    if (!tok_ok) goto out;
    char tok_desc[4200];
    snprintf(tok_desc, sizeof tok_desc, "%s", tok ? andrea_tokenizer_kind(tok) : "none");
    if (po.seq_len > m.cfg.max_seq_len && andrea_probe_sources_has_builtin(&ps))
        fprintf(stderr, "andrea dump: note: --len %d is clipped to the model's max_seq_len %d\n", po.seq_len,
                m.cfg.max_seq_len);
    if (andrea_probe_sources_load(&ps, tok, m.cfg.vocab_size, m.cfg.max_seq_len, &po, &suites, &n_suites, &err)) goto out;
    if (heads && (rc = heads_mask(heads, &m.cfg, &mask, &err)) != 0) goto out;
    rc = 1;
    o.heads = mask;
    o.tokenizer = tok_desc;
    o.tok = tok; /* token_text + tokenizer_vocab_sha256 (none without a tokenizer) */
    o.stats = &stats;
    const double t_probes = andrea_now_seconds() - t_start - t_load;
    if (andrea_dump_write(&m, suites, n_suites, &o, &err)) goto out;
    if (andrea_mpi_rank() == 0) /* MPI: one summary for the job */
        print_done(&o, n_suites, quiet, timing, t_load, t_probes);
    rc = 0;
out:
    if (rc == 1 && err.msg[0]) cli_fail(&err);
    free(mask);
    andrea_probe_suites_free(suites, n_suites);
    andrea_probe_sources_free(&ps);
    andrea_tokenizer_free(tok);
    andrea_model_free(&m);
    return rc;
bad_option:
    andrea_probe_sources_free(&ps);
    return bad;
}
