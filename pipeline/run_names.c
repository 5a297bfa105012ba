/* run_names.c — see run_names.h. */
#include "run_names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analyzer/checkpoint_step.h"
#include "../reports/out_folder.h"

void andrea_run_stem(const char *path, char *out, size_t cap) {
    andrea_checkpoint_base_name(path, out, cap);
    char *dot = strrchr(out, '.');
    if (dot && dot != out) *dot = 0;
    /* The stem names the checkpoint's report folder DIR/STEM (and DIR/STEM.h5): "..", "." or a
     * hidden name would put a report above DIR, into DIR itself or out of sight, and a name the
     * series page writes beside them (index.html, catalog.db, ...) would collide with it. */
    for (char *c = out; *c == '.'; c++) *c = '_';
    static const char *const taken[] = {"index.html", "explore.html", "compare.html", "catalog.db", "catalog.db-journal",
                                        "catalog.db-wal", "catalog.db-shm", "assets", "data", "heads", "maps",
                                        "overview", ""};
    /* ... and a stem ending in ".h5" (m.h5.bin) would name a report folder where another
     * checkpoint's kept dump goes (m.bin's DIR/m.h5) */
    const size_t l0 = strlen(out);
    const int dump_like = l0 > 3 && !strcmp(out + l0 - 3, ".h5");
    for (size_t i = 0; i < sizeof taken / sizeof taken[0]; i++)
        if (dump_like || !strcmp(out, taken[i])) {
            size_t l = strlen(out);
            snprintf(out + l, cap - l, "%sckpt", l ? "-" : "");
            break;
        }
}

void andrea_run_name_and_dump(const char *ckpt, int index, const char *dir, const char *dump_file, char *name,
                              size_t name_cap, char *dump_path, size_t dump_cap) {
    andrea_run_stem(ckpt, name, name_cap);
    if (index > 0) {
        size_t l = strlen(name);
        snprintf(name + l, name_cap - l, "-%d", index + 1);
    }
    if (dump_file) snprintf(dump_path, dump_cap, "%s", dump_file);
    else snprintf(dump_path, dump_cap, "%s/%s.h5", dir, name);
}

int andrea_run_unique_names(const char *const *ckpts, int n, int *index) {
    char (*names)[300] = malloc(sizeof *names * (size_t)(n > 0 ? n : 1));
    if (!names) return -1;
    for (int i = 0; i < n; i++) {
        char base[256];
        andrea_run_stem(ckpts[i], base, sizeof base);
        for (int k = 0;; k++) {
            if (k == 0) snprintf(names[i], sizeof names[i], "%s", base);
            else snprintf(names[i], sizeof names[i], "%s-%d", base, k + 1);
            int taken = 0;
            for (int j = 0; j < i && !taken; j++) taken = !strcmp(names[i], names[j]);
            if (!taken) {
                index[i] = k;
                break;
            }
        }
    }
    free(names);
    return 0;
}

int andrea_run_check_series_folders(const char *dir, const char *const *ckpts, int n, const int *index, ae_error *err) {
    char (*names)[256] = malloc(sizeof *names * (size_t)n), dump[4400];
    const char **p = calloc((size_t)n, sizeof *p);
    int rc = !names || !p ? andrea_fail(err, "analyze: out of memory") : 0;
    for (int i = 0; i < n && !rc; i++) {
        andrea_run_name_and_dump(ckpts[i], index[i], dir, NULL, names[i], sizeof names[i], dump, sizeof dump);
        p[i] = names[i];
    }
    if (!rc) rc = andrea_out_folder_check_series(dir, p, n, err);
    for (int i = 0; i < n && !rc; i++) { /* someone's page in DIR/NAME: refused now, not after the scoring */
        char rdir[4700];
        snprintf(rdir, sizeof rdir, "%s/%s", dir, names[i]);
        rc = andrea_out_folder_check(rdir, OUT_FOLDER_REPORT, err);
    }
    free(names);
    free(p);
    return rc;
}
