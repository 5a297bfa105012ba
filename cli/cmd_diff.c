/* cmd_diff.c — `andrea diff`: per (layer, head, class), what changed between two checkpoints of a
 * catalog, or of two catalogs (catalog/catalog_diff.h). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../catalog/catalog_diff.h"
#include "cli.h"

static void help(FILE *f) {
    fprintf(f,
            "usage: andrea diff --db CATALOG [--db CATALOG2] --from NAME[@STEP] --to NAME[@STEP] [--class C]\n"
            "                   [--changed] [--format table|csv|json]\n\n"
            "One row per (layer, head, class): the score and label in each checkpoint, delta = to - from,\n"
            "and change (gained / lost: the label), sorted by |delta| descending.\n"
            "With two --db, --from is looked up in the first catalog and --to in the second (two runs\n"
            "analysed into two folders); with one, both in it.\n"
            "NAME is a model name (the checkpoint file name without .bin) or a series (that name without\n"
            "its trailing step part: run-step00400 -> run), else the checkpoint's path or a prefix of its\n"
            "sha256 (4+ hex digits); of several matches the highest step is used, @STEP picks one, and\n"
            "two checkpoints tied there are ambiguous (exit 2, listed with sha256 and path). Each\n"
            "checkpoint is read from its current runs (each class from the newest run that scored it).\n"
            "  --class C   only class C\n"
            "  --changed   only rows whose label changed\n"
            "A selector that matches nothing exits 2 and lists the checkpoints the catalog holds;\n"
            "checkpoints of different shapes are refused.\n");
}

int cmd_diff(int argc, char **argv) {
    static const struct option opts[] = {
        {"db", required_argument, 0, 'd'},    {"from", required_argument, 0, 'F'},
        {"to", required_argument, 0, 'T'},    {"class", required_argument, 0, 'c'},
        {"changed", no_argument, 0, 'x'},     {"format", required_argument, 0, 'f'},
        {"help", no_argument, 0, 'h'},        {0, 0, 0, 0},
    };
    const char *db[2] = {NULL, NULL};
    catalog_diff_options o = {0};
    int fmt = CATALOG_TABLE, c, bad, n_db = 0;
    optind = 1;
    cli_getopt_repeatable("db"); /* two catalogs: it counts them itself */
    opterr = 0;
    while ((c = cli_getopt(argc, argv, ":", opts)) != -1) {
        switch (c) {
        case 'd':
            if (n_db == 2) return cli_usage_error("diff", "--db is given more than twice (--from's catalog, --to's)");
            db[n_db++] = optarg;
            break;
        case 'F': o.from = optarg; break;
        case 'T': o.to = optarg; break;
        case 'c': o.class_name = optarg; break;
        case 'x': o.changed_only = 1; break;
        case 'f':
            if ((bad = cli_opt_format("diff", optarg, &fmt))) return bad;
            break;
        case 'h': help(stdout); return cli_stdout_done();
        default: return cli_option_error("diff", c, argv, opts);
        }
    }
    if (!n_db) return cli_usage_error("diff", "--db CATALOG is required");
    if (!o.from || !o.to) return cli_usage_error("diff", "--from and --to are both required");
    if (!*o.from || !*o.to) return cli_usage_error("diff", "--from and --to want NAME[@STEP], not an empty string");
    if (optind < argc) return cli_usage_error("diff", "unexpected argument '%s'", argv[optind]);
    ae_error err = {{0}};
    catalog_rows rows;
    int rc = andrea_catalog_diff(db[0], db[1], &o, &rows, &err);
    if (rc == CATALOG_DIFF_USAGE) {
        cli_fail(&err);
        return 2;
    }
    if (rc) return cli_fail(&err);
    return cli_print_rows(&rows, fmt, &err);
}
