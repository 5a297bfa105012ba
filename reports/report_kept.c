/* report_kept.c — the images a report written again keeps, their list and their sections in the
 * pages (see report_kept.h). */
#include "report_kept.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/atomic_file.h"
#include "out_folder.h"

#define LIST_MAX_BYTES (1 << 20) /* a line a suite: far more than any report holds */
#define KEPT_MAX_EXAMPLES 1024   /* heatmaps looked for per head and kept suite (they form a prefix) */

void andrea_report_map_name(int l, int h, const char *suite, int e, char *out, size_t cap) {
    char tag[ANDREA_FILE_TAG_MAX];
    andrea_file_tag(suite, tag, sizeof tag);
    snprintf(out, cap, "maps/L%d_H%d/s-%s_e%d.png", l, h, tag, e);
}

void andrea_report_thumbs_name(const char *suite, char *out, size_t cap) {
    char tag[ANDREA_FILE_TAG_MAX];
    andrea_file_tag(suite, tag, sizeof tag);
    snprintf(out, cap, "overview/thumbs_s-%s.png", tag);
}

/* A regular file at out_dir/rel (no link followed). */
static int file_there(const char *out_dir, const char *rel) {
    char p[AE_PATH_MAX];
    struct stat st;
    const int w = snprintf(p, sizeof p, "%s/%s", out_dir, rel);
    return w > 0 && (size_t)w < sizeof p && lstat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int suite_of_report(const report_data *d, const char *name) {
    for (int s = 0; s < d->n_suites; s++)
        if (!strcmp(d->suites[s].name, name)) return 1;
    return 0;
}

/* "X0,Y0,CELL_W,CELL_H" into g; a field that is not that leaves g zero (the grid is not clickable). */
static void parse_grid(const char *s, plot_grid *g) {
    plot_grid t;
    int end = 0;
    memset(g, 0, sizeof *g);
    if (sscanf(s, "%9d,%9d,%9d,%9d%n", &t.x0, &t.y0, &t.cell_w, &t.cell_h, &end) == 4 && !s[end] && t.x0 >= 0 &&
        t.y0 >= 0 && t.cell_w > 0 && t.cell_h > 0)
        *g = t;
}

/* One line of the list (newline removed): marks the class it matches as kept. */
static void match_line(const report_data *d, report_earlier *e, char *line) {
    char *f[5];
    int n = 0;
    for (char *p = line;;) {
        if (n == 5) return; /* a sixth field */
        f[n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab) break;
        *tab = 0;
        p = tab + 1;
    }
    if (n != 5 || strcmp(f[1], d->sha256)) return;
    char *end;
    errno = 0;
    const long long run = strtoll(f[2], &end, 10);
    if (errno || end == f[2] || *end || run < 0) return;
    for (int i = 0; i < e->n; i++) {
        report_drawn *dr = &e->drawn[i];
        if (e->kept[i] || dr->run.id != run || strcmp(dr->tag, f[0]) || strcmp(dr->run.time, f[3])) continue;
        parse_grid(f[4], &dr->grid);
        e->kept[i] = 1;
    }
}

/* Reads out_dir's list (a regular file of at most LIST_MAX_BYTES, no link followed; else nothing). */
static void read_list(const report_data *d, const char *out_dir, report_earlier *e) {
    char p[AE_PATH_MAX];
    const int w = snprintf(p, sizeof p, "%s/%s", out_dir, ANDREA_REPORT_IMAGES_LIST);
    if (w < 0 || (size_t)w >= sizeof p) return;
    const int fd = open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0) return;
    FILE *f = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= LIST_MAX_BYTES ? fdopen(fd, "rb") : NULL;
    if (!f) {
        close(fd);
        return;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        if (line[n - 1] != '\n' || line[0] == '#') continue; /* a line cut short, or the header */
        line[n - 1] = 0;
        match_line(d, e, line);
    }
    free(line);
    fclose(f);
}

int andrea_report_earlier_find(const report_data *d, const char *out_dir, report_earlier *e, ae_error *err) {
    memset(e, 0, sizeof *e);
    int n = 0;
    for (int c = 0; c < d->n_classes; c++) n += !suite_of_report(d, d->classes[c]);
    if (n == 0) return 0;
    e->cls = calloc((size_t)n, sizeof *e->cls);
    e->drawn = calloc((size_t)n, sizeof *e->drawn);
    e->kept = calloc((size_t)n, 1);
    if (!e->cls || !e->drawn || !e->kept) {
        andrea_report_earlier_free(e);
        return andrea_fail(err, "%s: out of memory", out_dir);
    }
    for (int c = 0; c < d->n_classes; c++) {
        if (suite_of_report(d, d->classes[c])) continue;
        report_drawn *dr = &e->drawn[e->n];
        e->cls[e->n++] = c;
        andrea_file_tag(d->classes[c], dr->tag, sizeof dr->tag);
        dr->run.id = -1;
        if (d->class_runs) dr->run = d->class_runs[c];
    }
    /* only an andrea report's list (a page of another kind is refused before this) */
    if (andrea_out_folder_kind(out_dir) == OUT_FOLDER_REPORT) read_list(d, out_dir, e);
    /* a suite whose thumbnail grid is gone has lost its images: none is kept, none linked */
    for (int i = 0; i < e->n; i++) {
        char rel[512];
        andrea_report_thumbs_name(d->classes[e->cls[i]], rel, sizeof rel);
        if (e->kept[i] && !file_there(out_dir, rel)) e->kept[i] = 0;
    }
    return 0;
}

/* name is PREFIX TAG SUFFIX, SUFFIX "_e" DIGITS ".png" when digits is set, else ".png". */
static int named(const char *name, const char *prefix, const char *tag, int digits) {
    const size_t np = strlen(prefix), nt = strlen(tag);
    if (strncmp(name, prefix, np) || strncmp(name + np, tag, nt)) return 0;
    const char *p = name + np + nt;
    if (digits) {
        if (strncmp(p, "_e", 2) || p[2] < '0' || p[2] > '9') return 0;
        for (p += 2; *p >= '0' && *p <= '9'; p++) {
        }
    }
    return !strcmp(p, ".png");
}

int andrea_report_kept_file(const char *sub, const char *folder, const char *name, const void *ctx) {
    const report_earlier *e = ctx;
    const int maps = !strcmp(sub, "maps") && folder, thumbs = !strcmp(sub, "overview") && !folder;
    for (int i = 0; e && i < e->n; i++)
        if (e->kept[i] && ((maps && named(name, "s-", e->drawn[i].tag, 1)) ||
                           (thumbs && named(name, "thumbs_s-", e->drawn[i].tag, 0))))
            return 1;
    return 0;
}

/* One line of the list; the run's time with any control byte as '?' (one line, five fields). */
static void list_line(andrea_buf *b, const char *tag, const char *sha256, const report_run *run, const plot_grid *g) {
    char t[sizeof run->time];
    snprintf(t, sizeof t, "%s", run->time);
    for (char *c = t; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
    andrea_buf_printf(b, "%s\t%s\t%lld\t%s\t%d,%d,%d,%d\n", tag, sha256, run->id, t, g->x0, g->y0, g->cell_w, g->cell_h);
}

int andrea_report_images_write(const report_data *d, const report_earlier *e, const plot_grid *thumb_grids,
                               const char *out_dir, ae_error *err) {
    andrea_buf b;
    andrea_buf_init(&b);
    andrea_buf_puts(&b, "# andrea: the checkpoint and catalog run each suite's images here were drawn with "
                        "(docs/report.md)\n# suite\tcheckpoint_sha256\trun\trun_time\tthumbnail grid\n");
    for (int s = 0; s < d->n_suites; s++) {
        const report_suite *su = &d->suites[s];
        int c = -1;
        for (int k = 0; k < d->n_classes && c < 0; k++)
            if (!strcmp(d->classes[k], su->name)) c = k;
        /* a suite without scores (map-only) is never current: its images go with the next report */
        if (c < 0 || !d->class_runs || d->class_runs[c].id < 0 || su->n_examples < 1) continue;
        char tag[ANDREA_FILE_TAG_MAX];
        andrea_file_tag(su->name, tag, sizeof tag);
        list_line(&b, tag, d->sha256, &d->class_runs[c], &thumb_grids[s]);
    }
    for (int i = 0; i < e->n; i++)
        if (e->kept[i]) list_line(&b, e->drawn[i].tag, d->sha256, &e->drawn[i].run, &e->drawn[i].grid);
    char p[AE_PATH_MAX];
    int rc;
    const int w = snprintf(p, sizeof p, "%s/%s", out_dir, ANDREA_REPORT_IMAGES_LIST);
    if (andrea_buf_failed(&b)) rc = andrea_fail(err, "%s: out of memory", out_dir);
    else if (w < 0 || (size_t)w >= sizeof p) rc = andrea_fail(err, "%s: path too long", out_dir);
    else rc = andrea_write_file_atomic(p, b.s, b.len, err);
    andrea_buf_free(&b);
    return rc;
}

/* "run 3 of 2026-01-02T03:04:05Z", or "an earlier run" when the catalog did not say which. */
static void run_html(andrea_buf *b, const report_run *r) {
    if (r->id < 0) {
        andrea_buf_puts(b, "an earlier run");
        return;
    }
    andrea_buf_printf(b, "run %lld", r->id);
    if (r->time[0]) {
        andrea_buf_puts(b, " of ");
        andrea_html_add(b, r->time);
    }
}

void andrea_report_earlier_head_html(andrea_buf *b, const report_data *d, const report_earlier *e, const char *out_dir,
                                     int l, int h) {
    for (int i = 0; i < e->n; i++) {
        const char *name = d->classes[e->cls[i]];
        char rel[512];
        int n_png = 0;
        while (e->kept[i] && n_png < KEPT_MAX_EXAMPLES) {
            andrea_report_map_name(l, h, name, n_png, rel, sizeof rel);
            if (!file_there(out_dir, rel)) break;
            n_png++;
        }
        andrea_buf_puts(b, "<h2>");
        andrea_html_add(b, name);
        andrea_buf_puts(b, "</h2>\n<p class=\"note\">");
        if (n_png == 0) {
            andrea_buf_puts(b, "The heatmaps of this suite are not in this report: its scores above come from ");
            run_html(b, &e->drawn[i].run);
            andrea_buf_puts(b, ", and this folder holds no heatmap of this head drawn with that run. Analyze again "
                               "with this suite to draw them.</p>\n");
            continue;
        }
        andrea_buf_puts(b, "Not drawn by this report's run: its scores above come from ");
        run_html(b, &e->drawn[i].run);
        andrea_buf_puts(b, ", whose report drew the static heatmaps below; they are kept. Its interactive maps and "
                           "token lists are not in this report: analyze again with this suite to see them.</p>\n");
        for (int ex = 0; ex < n_png; ex++) {
            andrea_report_map_name(l, h, name, ex, rel, sizeof rel);
            andrea_buf_puts(b, "<figure><a href=\"../");
            andrea_html_add(b, rel);
            andrea_buf_puts(b, "\"><img loading=\"lazy\" src=\"../");
            andrea_html_add(b, rel);
            andrea_buf_printf(b, "\" alt=\"L%d H%d, suite ", l, h);
            andrea_html_add(b, name);
            andrea_buf_printf(b, ", example %d\"></a><figcaption>example %d (static image)</figcaption></figure>\n", ex, ex);
        }
    }
}

void andrea_report_earlier_index_html(andrea_buf *b, const report_data *d, const report_earlier *e) {
    if (e->n == 0) return;
    andrea_buf_puts(b, "<p class=\"note\">Suites of earlier runs, still current in the catalog for this checkpoint "
                       "(their scores are in the table): ");
    for (int i = 0; i < e->n; i++) {
        andrea_buf_puts(b, i ? "; " : "");
        andrea_html_add(b, d->classes[e->cls[i]]);
        andrea_buf_puts(b, " (");
        run_html(b, &e->drawn[i].run);
        andrea_buf_puts(b, e->kept[i] ? ": the images that run's report drew are kept)"
                                      : ": its heatmaps are not in this report; analyze again with this suite to draw them)");
    }
    andrea_buf_puts(b, ".</p>\n");
}

void andrea_report_earlier_free(report_earlier *e) {
    free(e->cls);
    free(e->drawn);
    free(e->kept);
    memset(e, 0, sizeof *e);
}
