/* cmd_circuits.c — `andrea circuits CKPT`: composition, copying and positional scores from the
 * weights (analyzer/circuits.h), printed and, with --db, stored in the catalog. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../catalog/catalog_circuits.h"
#include "../analyzer/circuits.h"
#include "../engine/checkpoint.h"
#include "../engine/model.h"
#include "cli.h"

static void help(FILE *f) {
    fprintf(f,
            "usage: andrea circuits CKPT [--db CATALOG] [--top N] [--weights] [--format table|csv|json]\n"
            "                             [--device auto|cpu|cuda]\n\n"
            "Scores how the heads of CKPT connect, from the weights alone (no probes, no forward):\n"
            "Q-, K- and V-composition for every pair of heads in different layers (Elhage et al. 2021:\n"
            "||M||_F / (||A||_F ||B||_F), beside the mean score of random matrices of the same shapes),\n"
            "and per head the OV copying score and the attention to the previous position predicted\n"
            "from the position embeddings. Conventions: docs/scores.md.\n"
            "  --db CATALOG  also store every score in the catalog (views head_composition and\n"
            "                head_weights, docs/catalog.md), replacing this checkpoint's earlier ones\n"
            "  --top N       print the N strongest compositions (default 20; 0: every pair)\n"
            "  --weights     print the per-head scores (copying, prev_pos) instead\n"
            "  --device D    auto (default: the GPU when there is one, in fp64 with cuBLAS), cpu or\n"
            "                cuda; both give the same scores within 1e-4 (docs/scores.md)\n");
}

int cmd_circuits(int argc, char **argv) {
    static const struct option opts[] = {
        {"db", required_argument, 0, 'd'},     {"top", required_argument, 0, 'n'},
        {"weights", no_argument, 0, 'w'},      {"format", required_argument, 0, 'f'},
        {"device", required_argument, 0, 'D'}, {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *db = NULL;
    int fmt = CATALOG_TABLE, weights = 0, c, bad;
    andrea_device dev = ANDREA_DEVICE_AUTO;
    long top = 20;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, ":", opts)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'n':
            if ((bad = cli_opt_long("circuits", "--top", optarg, 0, 1L << 30, "a count >= 0", &top))) return bad;
            break;
        case 'w': weights = 1; break;
        case 'D':
            if ((bad = cli_opt_device("circuits", optarg, &dev))) return bad;
            break;
        case 'f':
            if ((bad = cli_opt_format("circuits", optarg, &fmt))) return bad;
            break;
        case 'h': help(stdout); return cli_stdout_done();
        default: return cli_option_error("circuits", c, argv, opts);
        }
    }
    if (optind >= argc) return cli_usage_error("circuits", "CKPT is required");
    if (argc - optind > 1) return cli_usage_error("circuits", "unexpected argument '%s'", argv[optind + 1]);
    const char *ckpt = argv[optind];
    ae_error err = {{0}};
    andrea_model m;
    memset(&m, 0, sizeof m);
    andrea_circuits cs;
    catalog_rows rows;
    char hex[65];
    if (db && andrea_catalog_check_writable(db, &err)) return cli_fail(&err); /* before the work */
    if (andrea_model_load(&m, ckpt, &err)) return cli_fail(&err);
    int rc = andrea_circuits_compute_on(&m, dev, &cs, &err);
    if (!rc && db) rc = andrea_checkpoint_sha256(&m, hex, &err) || andrea_catalog_circuits_write(db, ckpt, hex, &cs, &err);
    andrea_model_free(&m);
    if (!rc) rc = andrea_circuits_rows(&cs, weights, (int)top, &rows, &err);
    andrea_circuits_free(&cs);
    if (rc) return cli_fail(&err);
    return cli_print_rows(&rows, fmt, &err);
}
