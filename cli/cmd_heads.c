/* cmd_heads.c — `andrea heads`: the catalog's heads, filtered (every filter a bound parameter). */
#include <ctype.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../catalog/catalog.h"
#include "cli.h"

static void help(FILE *f) {
    fprintf(f,
            "usage: andrea heads --db CATALOG [--class C] [--layer L] [--head L.H] [--step N] [--min-score S]\n"
            "                    [--model M] [--series NAME [--pivot step]] [--all]\n"
            "                    [--format table|csv|json] [--timeout S]\n\n"
            "Lists the current heads of every checkpoint in the catalog (for each checkpoint and class,\n"
            "the newest run that scored that class: docs/catalog.md); by default only the heads labelled\n"
            "with a class. --model matches the model name, its series (the name without its step part),\n"
            "its path or a sha256 prefix of 4+ hex digits; --series the series name. --pivot step (with\n"
            "--series) prints one row per class and head and one column per step, a labelled cell marked *.\n"
            "--all lists every head and class (with label 0 or 1). causal: 1 when ablating the head raises\n"
            "its class's loss more than the mean head's, 0 when not (attention-only evidence), NULL (empty\n"
            "in CSV, null in JSON) when not measured (docs/scores.md). A class the catalog does not hold,\n"
            "a --model or --series that matches no model, a --step no checkpoint has, or a layer/head\n"
            "beyond its models is an error (exit 2). --timeout S stops the query after S seconds\n"
            "(default %g; 0: no limit).\n",
            CATALOG_TIMEOUT_DEFAULT_S);
}

int cmd_heads(int argc, char **argv) {
    static const struct option opts[] = {
        {"db", required_argument, 0, 'd'},     {"class", required_argument, 0, 'c'},
        {"layer", required_argument, 0, 'l'},  {"min-score", required_argument, 0, 's'},
        {"model", required_argument, 0, 'm'},  {"all", no_argument, 0, 'a'},
        {"format", required_argument, 0, 'f'}, {"timeout", required_argument, 0, 't'},
        {"head", required_argument, 0, 'H'},   {"step", required_argument, 0, 'S'},
        {"series", required_argument, 0, 'e'}, {"pivot", required_argument, 0, 'p'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *db = NULL;
    catalog_heads_filter f = {0};
    int fmt = CATALOG_TABLE, c, bad; /* bad: a parser's usage-error exit code */
    catalog_limits lim = {CATALOG_TIMEOUT_DEFAULT_S, 0};
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, ":", opts)) != -1) {
        long layer;
        switch (c) {
        case 'd': db = optarg; break;
        case 'c': f.class_name = optarg; break;
        case 'l':
            if ((bad = cli_opt_long("heads", "--layer", optarg, 0, 1 << 20, "a layer number 0..1048576", &layer))) return bad;
            f.layer = (int)layer;
            f.has_layer = 1;
            break;
        case 's':
            if (cli_parse_double(optarg, &f.min_score)) return cli_usage_error("heads", "--min-score wants a number, not '%s'", optarg);
            f.has_min_score = 1;
            break;
        case 'H': {
            /* two unsigned decimals around one dot; each part alone, so '4294967296.1' is out of
             * range rather than a wrapped layer 0 */
            char part[32];
            const char *dot = strchr(optarg, '.');
            long l = -1, h = -1;
            const size_t nl = dot ? (size_t)(dot - optarg) : 0;
            if (dot && nl < sizeof part && isdigit((unsigned char)optarg[0]) && isdigit((unsigned char)dot[1])) {
                memcpy(part, optarg, nl);
                part[nl] = 0;
                if (cli_parse_long(part, 0, 1 << 20, &l) || cli_parse_long(dot + 1, 0, 1 << 20, &h)) l = -1;
            }
            if (l < 0) return cli_usage_error("heads", "--head wants LAYER.HEAD (e.g. 1.3, each 0..%d), not '%s'", 1 << 20, optarg);
            f.has_head = 1, f.head_layer = (int)l, f.head_head = (int)h;
            break;
        }
        case 'S': {
            long v;
            /* every step analyze --step and classify --step store (0..2^63 - 1), as diff's @STEP */
            if ((bad = cli_opt_long("heads", "--step", optarg, 0, LONG_MAX, "a step 0..9223372036854775807", &v))) return bad;
            f.has_step = 1, f.step = v;
            break;
        }
        case 'e': f.series = optarg; break;
        case 'p':
            if (strcmp(optarg, "step")) return cli_usage_error("heads", "--pivot wants 'step', not '%s'", optarg);
            f.pivot_step = 1;
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
    if (f.pivot_step && !f.series) return cli_usage_error("heads", "--pivot step needs --series NAME");
    ae_error err = {{0}};
    catalog_rows rows;
    int rc = andrea_catalog_heads(db, &f, &lim, &rows, &err);
    if (rc == -2) return cli_fail(&err) + 1; /* a filter naming what the catalog lacks: a usage error */
    if (rc) return cli_fail(&err);
    if (rows.note[0]) {
        char shown[600];
        fprintf(stderr, "andrea heads: note: %s\n", andrea_shown(rows.note, shown, sizeof shown));
    }
    return cli_print_rows(&rows, fmt, &err);
}
