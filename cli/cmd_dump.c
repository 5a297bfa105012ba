/* cmd_dump.c — `andrea dump CKPT`: probe suites through the instrumented forward into HDF5.
 * argv into a plan, one call to andrea_dump_run (pipeline/dump_run.h), one summary line. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/progress.h"
#include "../pipeline/dump_run.h"
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
            "                  entity, bos, positional, dormant, copy_suppression, successor, retrieval;\n"
            "                  all: every one; default: all but the opt-in retrieval) and JSON Lines\n"
            "                  probe files, in any mix, comma-separated or repeated\n"
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

/* The one-line summary (unless quiet) and, with --timing, where the time went (o->stats). */
static void print_done(const andrea_dump_options *o, const andrea_dump_result *r, int quiet, int timing) {
    const andrea_dump_stats *st = &r->stats;
    const int n_suites = r->n_suites;
    char shown[4200];
    if (!quiet)
        fprintf(stderr, "andrea dump: wrote %s: %d suite%s, %lld sequences, %.1f MB in %.2f s (%s, batch %d)\n",
                andrea_shown(o->out_path, shown, sizeof shown), n_suites, n_suites == 1 ? "" : "s", st->sequences, st->bytes / 1e6, st->seconds,
                st->engine, st->batch);
    if (timing)
        fprintf(stderr,
                "andrea dump: time: model load %.2f s, tokenizer + probes %.2f s, checkpoint sha256 %.2f s (waited "
                "%.2f s before the close), engine open %.2f s, file create %.2f s, forwards %.2f s, attention writes "
                "%.2f s, other writes %.2f s, datasets %.2f s, close %.2f s, seal %.2f s, unaccounted %.2f s\n",
                r->t_load, r->t_probes, st->t_hash, st->t_hash_wait, st->t_open, st->t_create, st->t_forward, st->t_maps,
                st->t_other, st->t_suites_rest, st->t_close, st->t_seal, st->t_unaccounted);
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
    probe_sources ps;
    andrea_probe_sources_init(&ps);
    andrea_dump_plan p = {.ps = &ps};
    andrea_dump_options_init(&p.dump);
    andrea_dump_options *o = &p.dump;
    o->out_path = "dump.h5";
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
        case 'o': o->out_path = optarg; break;
        case 'd':
            if ((bad = cli_opt_device("dump", optarg, &o->run.engine.device))) goto bad_option;
            break;
        case 'm':
            if ((bad = cli_opt_maps("dump", optarg, &o->run.maps_fp32))) goto bad_option;
            break;
        case 'c':
            if ((bad = cli_opt_contrib("dump", optarg, &o->run.contrib))) goto bad_option;
            break;
        case 'H': p.heads = optarg; break;
        case 'b':
            if ((bad = cli_opt_long("dump", "--batch", optarg, 1, 4096, "1..4096", &v))) goto bad_option;
            o->run.batch = (int)v;
            break;
        case 's':
        case 'n':
        case 'l':
            if ((bad = cli_opt_probe("dump", c, optarg, &p.po))) goto bad_option;
            break;
        case 'z':
            if ((bad = cli_opt_long("dump", "--gzip", optarg, 0, 9, "a level 0..9", &v))) goto bad_option;
            o->gzip = (int)v;
            break;
        case 'k': p.tok_dir = optarg; break;
        case 'q': quiet = 1; break;
        case 'F': o->single_file = 1; break;
        case 't': timing = 1; break;
        case 'P':
            if ((bad = cli_opt_precision("dump", optarg, &o->run.engine))) goto bad_option;
            break;
        case 'h': usage(stdout); andrea_probe_sources_free(&ps); return cli_stdout_done();
        default: andrea_probe_sources_free(&ps); return cli_option_error("dump", c, argv, opts);
        }
    }
    if (argc - optind != 1 && (bad = cli_usage_error("dump", "expects exactly one checkpoint"))) goto bad_option;
    if (quiet) andrea_progress_quiet = 1;
    p.ckpt = argv[optind];
    ae_error err = {{0}};
    andrea_dump_result r;
    int rc = 0;
    if (andrea_dump_run(&p, &r, &err)) rc = r.usage ? cli_usage_error("dump", "%s", err.msg) : cli_fail(&err);
    else if (r.prints) print_done(o, &r, quiet, timing);
    andrea_probe_sources_free(&ps);
    return rc;
bad_option:
    andrea_probe_sources_free(&ps);
    return bad;
}
