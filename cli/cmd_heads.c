/* cmd_heads.c — `andrea heads`: the catalog's heads, filtered (every filter a bound parameter). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analyzer/catalog.h"
#include "cli.h"

static void help(FILE *f) {
    fprintf(f,
            "usage: andrea heads --db CATALOG [--class C] [--layer L] [--min-score S] [--model M] [--all]\n"
            "                    [--format table|csv|json] [--timeout S]\n\n"
            "Lists the heads of the latest run of each model in the catalog; by default only the heads\n"
            "labelled with a class. --model matches the model name, its path or a sha256 prefix.\n"
            "--all lists every head and class (with label 0 or 1). causal: 1 when ablating the head raises\n"
            "its class's loss more than the mean head's, 0 when not (attention-only evidence), empty when\n"
            "not measured (docs/scores.md). --timeout S stops the query after\n"
            "S seconds (default %g; 0: no limit).\n",
            CATALOG_TIMEOUT_DEFAULT_S);
}

int cmd_heads(int argc, char **argv) {
    static const struct option opts[] = {
        {"db", required_argument, 0, 'd'},     {"class", required_argument, 0, 'c'},
        {"layer", required_argument, 0, 'l'},  {"min-score", required_argument, 0, 's'},
        {"model", required_argument, 0, 'm'},  {"all", no_argument, 0, 'a'},
        {"format", required_argument, 0, 'f'}, {"timeout", required_argument, 0, 't'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *db = NULL;
    catalog_heads_filter f = {0};
    int fmt = CATALOG_TABLE, c, bad; /* bad: a parser's usage-error exit code */
    catalog_limits lim = {CATALOG_TIMEOUT_DEFAULT_S, 0};
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        long layer;
        switch (c) {
        case 'd': db = optarg; break;
        case 'c': f.class_name = optarg; break;
        case 'l':
            if (cli_parse_long(optarg, 0, 1 << 20, &layer))
                return cli_usage_error("heads", "--layer wants a layer number, not '%s'", optarg);
            f.layer = (int)layer;
            f.has_layer = 1;
            break;
        case 's':
            if (cli_parse_double(optarg, &f.min_score)) return cli_usage_error("heads", "--min-score wants a number, not '%s'", optarg);
            f.has_min_score = 1;
            break;
        case 'm': f.model = optarg; break;
        case 'a': f.all = 1; break;
        case 'f':
            if ((bad = cli_opt_format("heads", optarg, &fmt))) return bad;
            break;
        case 't':
            if ((bad = cli_opt_timeout("heads", optarg, &lim))) return bad;
            break;
        case 'h': help(stdout); return cli_stdout_done();
        default: return cli_option_error("heads", c, argv, opts);
        }
    }
    if (!db) return cli_usage_error("heads", "--db CATALOG is required");
    if (optind < argc) return cli_usage_error("heads", "unexpected argument '%s'", argv[optind]);
    ae_error err = {{0}};
    catalog_rows rows;
    if (catalog_heads(db, &f, &lim, &rows, &err)) return cli_fail(&err);
    return cli_print_rows(&rows, fmt, &err);
}
