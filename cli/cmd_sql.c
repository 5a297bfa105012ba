/* cmd_sql.c — `andrea sql --db CATALOG "SELECT ..."` (or `andrea sql CATALOG "SELECT ..."`): one
 * read-only statement over the catalog. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../catalog/catalog.h"
#include "cli.h"
#include "../engine/checkpoint.h"
#include "../common/printable.h"

static void help(FILE *f) {
    fprintf(f,
            "usage: andrea sql --db CATALOG \"SELECT ...\" [--format table|csv|json] [--timeout S]\n"
            "       andrea sql CATALOG \"SELECT ...\" [--format table|csv|json] [--timeout S]\n\n"
            "Runs one SQL statement over the head catalog, opened read-only: writes, schema changes,\n"
            "ATTACH and pragma writes are refused. The view head_catalog and the tables are described\n"
            "in docs/catalog.md.\n"
            "  --timeout S   stop a query still running after S seconds (default %g; 0: no limit).\n"
            "                A result is held in memory and refused over %zu MiB (one value: over %zu MiB).\n"
            "A BLOB is shown as its SQL literal, x'00ff0a22'. In JSON, a column name given twice gets\n"
            "_2, _3, ... on its later columns (SELECT a.x, b.x: keys x and x_2).\n",
            CATALOG_TIMEOUT_DEFAULT_S, CATALOG_RESULT_MAX_BYTES >> 20, CATALOG_RESULT_MAX_BYTES >> 21);
}

/* The option a names after the positionals: "-h", or "--NAME[=V]" where NAME is all or the
 * start of exactly one of opts' names. Its val, or 0 (a positional, or no option of sql). */
static int later_option(const char *a, const struct option *opts) {
    if (!strcmp(a, "-h")) return 'h';
    if (strncmp(a, "--", 2)) return 0;
    const size_t n = strcspn(a + 2, "=");
    int found = 0, matches = 0;
    for (const struct option *o = opts; n > 0 && o->name; o++)
        if (!strncmp(o->name, a + 2, n)) {
            if (strlen(o->name) == n) return o->val;
            found = o->val, matches++;
        }
    return matches == 1 ? found : 0;
}

/* --db's value into *db: given twice it is refused; so is an empty one after the positionals, in
 * cli_getopt's words (before them cli_getopt refuses it). */
static int opt_db(const char **db, const char *v) {
    if (*db) return cli_usage_error("sql", "--db is given twice");
    if (!*v) return cli_usage_error("sql", "--db wants a catalog file, not ''");
    *db = v;
    return 0;
}

int cmd_sql(int argc, char **argv) {
    static const struct option opts[] = {
        {"db", required_argument, 0, 'd'},
        {"format", required_argument, 0, 'f'},
        {"timeout", required_argument, 0, 't'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    int fmt = CATALOG_TABLE, c, bad; /* bad: a parser's usage-error exit code */
    const char *db = NULL;           /* --db, else the first positional */
    catalog_limits lim = {CATALOG_TIMEOUT_DEFAULT_S, 0};
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, "+:", opts)) != -1) {
        switch (c) {
        case 'd':
            if ((bad = opt_db(&db, optarg))) return bad;
            break;
        case 'f':
            if ((bad = cli_opt_format("sql", optarg, &fmt))) return bad;
            break;
        case 't':
            if ((bad = cli_opt_timeout("sql", optarg, &lim))) return bad;
            break;
        case 'h': help(stdout); return cli_stdout_done();
        default: return cli_option_error("sql", c, argv, opts);
        }
    }
    /* Options may also follow the positionals, as getopt_long takes them (abbreviated, -h);
     * getopt itself stops at the first positional ("+"), so an SQL text starting with "--" (a
     * comment) is never read as an option. */
    const char *pos[2];
    int np = 0;
    for (int i = optind; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        const int o = later_option(a, opts);
        if (o == 'h' && strchr(a, '=')) return cli_usage_error("sql", "--help takes no value, not '%s'", a);
        if (o == 'h') {
            help(stdout);
            return cli_stdout_done();
        }
        if (o == 'f' || o == 't' || o == 'd') {
            const char *eq = strchr(a, '=');
            if (eq) val = eq + 1;
            else if (i + 1 < argc) val = argv[++i];
            else return cli_usage_error("sql", "%s needs a value", a);
            bad = o == 'f'   ? cli_opt_format("sql", val, &fmt)
                  : o == 't' ? cli_opt_timeout("sql", val, &lim)
                             : opt_db(&db, val);
            if (bad) return bad;
            continue;
        }
        if (np == 2) {
            char shown[64];
            andrea_printable(a, shown, sizeof shown);
            return cli_usage_error("sql", a[0] == '-' ? "unknown option '%s'" : "unexpected argument '%s'", shown);
        }
        pos[np++] = a;
    }
    /* the catalog is --db or the first of two positionals, never both */
    if (db && np == 2) {
        char shown[64];
        andrea_printable(pos[0], shown, sizeof shown);
        return cli_usage_error("sql", "the catalog is given twice: --db and '%s' (give one, then the SQL statement)",
                               shown);
    }
    if (db ? np != 1 : np != 2)
        return cli_usage_error("sql", db ? "wants one SQL statement"
                                         : "wants --db CATALOG (or CATALOG) and one SQL statement");
    ae_error err = {{0}};
    catalog_rows rows;
    if (andrea_catalog_sql(db ? db : pos[0], pos[np - 1], &lim, &rows, &err)) return cli_fail(&err);
    return cli_print_rows(&rows, fmt, &err);
}
