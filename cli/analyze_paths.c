/* analyze_paths.c — see analyze_paths.h. */
#include "analyze_paths.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../reports/out_folder.h"
#include "cli.h"

/* The real path of p, also when its last components do not exist yet (DIR/data before the first
 * report): the longest existing prefix resolved, the rest appended as written. 0, or -1. */
static int real_path_of(const char *p, char *out, size_t cap) {
    char head[4096], real[PATH_MAX];
    snprintf(head, sizeof head, "%s", p);
    size_t n = strlen(head);
    while (n > 0) {
        if (realpath(head, real)) {
            const int w = snprintf(out, cap, "%s%s", real, p + n);
            return w < 0 || (size_t)w >= cap ? -1 : 0;
        }
        while (n > 0 && head[n - 1] != '/') n--; /* drop the last component */
        while (n > 1 && head[n - 1] == '/') n--;
        head[n] = 0;
    }
    return realpath(".", real) && snprintf(out, cap, "%s/%s", real, p) < (int)cap ? 0 : -1;
}

/* --dump FILE must not be one of the files analyze writes into DIR itself (the catalog, the
 * report's pages) nor lie in a folder of the report (data/, heads/, maps/, ...: cleared and
 * rewritten by every report): the dump would replace the catalog's runs, or the report the dump.
 * Compared by real paths, so any spelling of DIR counts. 0 or the usage-error code. */
static int check_dump_not_in_report(const char *dump, const char *dir) {
    /* the folder resolved, the name kept: renaming the dump over a symlink replaces the link */
    const char *slash0 = strrchr(dump, '/'), *base = slash0 ? slash0 + 1 : dump, *name;
    char parent[4096], d[PATH_MAX + 8], f[PATH_MAX + 4096];
    snprintf(parent, sizeof parent, "%.*s", slash0 ? (int)(slash0 - dump) + (slash0 == dump) : 1, slash0 ? dump : ".");
    if (!realpath(dir, d) || real_path_of(parent, f, sizeof f - strlen(base) - 2)) return 0;
    if (strcmp(f, "/")) strcat(f, "/");
    strcat(f, base);
    switch (andrea_out_folder_place(d, f, &name)) {
    case OUT_PLACE_CATALOG:
    case OUT_PLACE_PAGE:
        return cli_usage_error("analyze", "--dump %s is the %s analyze writes into %s: name the dump otherwise", dump,
                               strncmp(name, "catalog", 7) ? "report page" : "catalog", dir);
    case OUT_PLACE_FOLDER: /* a file there would stop the report from making its folder */
        return cli_usage_error("analyze", "--dump %s is the report's folder %s/%s: name the dump otherwise", dump, dir, name);
    case OUT_PLACE_IN_FOLDER:
        return cli_usage_error("analyze", "--dump %s lies in the report's folder %s/%s, which every report clears and "
                               "rewrites: name the dump otherwise", dump, dir, name);
    default:
        return 0;
    }
}

/* Two of the n checkpoints that are one file (given twice, a link, an overlapping glob): refused
 * before any work, which the series' sha256 check (analyze_series.c) would only find after
 * scoring the first of them. Paths that cannot be stat'ed are left to the load's error. 0, or the
 * usage-error code. */
static int check_no_file_twice(const char *const *ckpts, int n) {
    struct stat *st = calloc((size_t)n, sizeof *st);
    char *ok = calloc((size_t)n, 1);
    int ret = 0;
    for (int i = 0; st && ok && i < n && !ret; i++) {
        ok[i] = stat(ckpts[i], &st[i]) == 0;
        for (int j = 0; j < i && ok[i] && !ret; j++)
            if (ok[j] && st[j].st_dev == st[i].st_dev && st[j].st_ino == st[i].st_ino) {
                char a[4200], b[4200];
                ret = cli_usage_error("analyze", "%s and %s are the same checkpoint file: give each once",
                                      andrea_shown(ckpts[j], a, sizeof a), andrea_shown(ckpts[i], b, sizeof b));
            }
    }
    free(st);
    free(ok);
    return ret;
}

/* The paths of the plan, once DIR exists, before any work: --dump not into the report, no
 * checkpoint twice. 0 or the usage-error code. */
int cli_analyze_check_paths(const andrea_analyze_plan *p) {
    const int bad = p->dump_file ? check_dump_not_in_report(p->dump_file, p->dir) : 0;
    return bad ? bad : p->n_ckpts > 1 ? check_no_file_twice(p->ckpts, p->n_ckpts) : 0;
}
