/* output_paths.c — see output_paths.h. */
#include "output_paths.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../engine/checkpoint.h"
#include "../reports/out_folder.h"

int andrea_same_file(const char *a, const char *b) {
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* -1 (err) when out is the sharded index beside the checkpoint (dir) or one of the shards it
 * names; an index that cannot be read names no shard (the model was then read from another file). */
static int output_is_a_shard(const char *out, const char *dir, ae_error *err) {
    char ix_path[8400];
    snprintf(ix_path, sizeof ix_path, "%s/%s", dir, ANDREA_SHARD_INDEX_NAME);
    if (andrea_same_file(out, ix_path))
        return andrea_fail(err, "%s: is %s, which this command reads; give another output path", out, ix_path);
    andrea_shard_index ix;
    ae_error ignored;
    char **paths = NULL;
    int n = 0, hit = -1;
    if (access(ix_path, F_OK) != 0 || andrea_shard_index_read(ix_path, &ix, &ignored)) return 0;
    if (andrea_shard_paths(ix_path, &ix, &paths, &n, &ignored) == 0)
        for (int i = 1; i < n && hit < 0; i++)
            if (andrea_same_file(out, paths[i])) hit = i;
    int rc = 0;
    if (hit >= 0) rc = andrea_fail(err, "%s: is the shard %s, which this command reads; give another output path", out, paths[hit]);
    andrea_shard_paths_free(paths, n);
    andrea_shard_index_free(&ix);
    return rc;
}

/* 1 when path is an SQLite database (its 16-byte header): a dump written over it was a catalog's
 * runs gone, without a word. */
static int is_sqlite_file(const char *path) {
    char head[16];
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    const int yes = fread(head, 1, sizeof head, f) == sizeof head && !memcmp(head, "SQLite format 3", 16);
    fclose(f);
    return yes;
}

int andrea_check_output_not_input(const char *out, const andrea_model *m, const probe_sources *ps, const char *tok_dir,
                               ae_error *err) {
    static const char *beside[] = {"model.safetensors", "config.json", "vocab.json", "merges.txt"};
    char p[8400];
    if (is_sqlite_file(out))
        return andrea_fail(err, "%s: is an SQLite database (a catalog?), which a dump would replace; give another output path",
                           out);
    if (andrea_same_file(out, m->path)) return andrea_fail(err, "%s: is the checkpoint this command reads; give another output path", out);
    for (size_t i = 0; i < sizeof beside / sizeof beside[0]; i++) {
        const char *dir = i >= 2 && tok_dir ? tok_dir : m->dir;
        snprintf(p, sizeof p, "%s/%s", dir, beside[i]);
        if (andrea_same_file(out, p))
            return andrea_fail(err, "%s: is %s, which this command reads; give another output path", out, p);
    }
    if (output_is_a_shard(out, m->dir, err)) return -1;
    const int read = ps ? andrea_probe_sources_reads(ps, out) : 0;
    if (read)
        return andrea_fail(err, "%s: is the %s file this command reads; give another output path", out,
                           read == PROBE_SRC_TEXTS ? "--texts" : "probe");
    return 0;
}

int andrea_check_inputs_outside_page(const char *page_dir, const char *const *ckpts, int n_ckpts, const probe_sources *ps,
                                     const char *tok_dir, const char *rules_file, ae_error *err) {
    for (int i = 0; i < n_ckpts; i++)
        if (andrea_out_folder_check_input(page_dir, ckpts[i], "checkpoint", err)) return -1;
    for (int i = 0; ps && i < ps->n; i++) {
        const probe_source *s = &ps->src[i];
        if (s->kind == PROBE_SRC_BUILTIN || !strcmp(s->name, "-")) continue;
        if (andrea_out_folder_check_input(page_dir, s->name, s->kind == PROBE_SRC_TEXTS ? "--texts file" : "probe file", err))
            return -1;
    }
    if (andrea_out_folder_check_input(page_dir, tok_dir, "tokenizer folder", err)) return -1;
    return andrea_out_folder_check_input(page_dir, rules_file, "rules file", err);
}
