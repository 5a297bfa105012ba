/* analyze_print.c — see analyze_print.h. */
#include "analyze_print.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../analyzer/summary.h"
#include "../common/printable.h"

/* p relative to the working folder when it lies below it ("models/x.bin", not a machine path). */
static const char *shown_path(const char *p) {
    static char cwd[4096];
    if (p[0] != '/' || !getcwd(cwd, sizeof cwd)) return p;
    size_t n = strlen(cwd);
    return n > 1 && !strncmp(p, cwd, n) && p[n] == '/' ? p + n + 1 : p;
}

/* Where one checkpoint's time went (analyze --timing). */
static void print_timing(const char *ckpt, const andrea_analyze_timing *t) {
    const andrea_dump_stats *st = &t->forwards;
    const andrea_classify_timing *ct = &t->classify;
    const double *r = t->t_report_stage;
    fprintf(stderr,
            "andrea analyze: time (%s): model load + probes %.2f s, checkpoint sha256 wait %.2f s (it runs beside the load and the forwards), engine open %.2f s, "
            "forwards %.2f s, scoring + report maps %.2f s, map writes %.2f s, causal check %.2f s (clean forwards %.2f s, "
            "replacement outputs %.2f s, direct effects %.2f s, %ld ablated sets in %ld forwards %.2f s), catalog %.2f s "
            "(circuit scores %.2f s), report %.2f s (heatmaps + thumbnails %.2f s, overviews %.2f s, interactive data "
            "%.2f s, head pages %.2f s, index %.2f s), total %.2f s\n",
            ckpt, t->t_load, t->t_hash, st->t_open, st->t_forward, st->t_sinks, st->t_maps + st->t_other + st->t_close + st->t_seal,
            ct->t_causal, ct->causal.t_clean, ct->causal.t_values, ct->causal.t_direct, ct->causal.units, ct->causal.forwards,
            ct->causal.t_ablated, t->t_catalog + t->t_circuits, t->t_circuits, t->t_report, r[0], r[1], r[2], r[3], r[4],
            t->t_all);
}

/* A series' checkpoint once scored: its report comes later (the report fields are 0). */
static void print_scored_timing(void *ctx, const char *ckpt, const andrea_analyze_timing *t) {
    (void)ctx;
    char shown[4200];
    print_timing(andrea_shown(shown_path(ckpt), shown, sizeof shown), t);
}

/* The series' phases (pipeline/series.h). */
static void print_series_timing(void *ctx, int n, const double *s, const double *r) {
    (void)ctx;
    fprintf(stderr,
            "andrea analyze: time (series of %d checkpoints): scoring %.2f s (%.2f s a checkpoint), catalog %.2f s, "
            "reports %.2f s (%.2f s a checkpoint: heatmaps + thumbnails %.2f s, overviews %.2f s, interactive data "
            "%.2f s, head pages %.2f s, index %.2f s, the rest reading the catalog and maps), series page %.2f s\n",
            n, s[SERIES_SCORING], s[SERIES_SCORING] / n, s[SERIES_CATALOG], s[SERIES_REPORTS], s[SERIES_REPORTS] / n,
            r[0] / n, r[1] / n, r[2] / n, r[3] / n, r[4] / n, s[SERIES_PAGE]);
}

static void print_checkpoint(void *ctx, const andrea_analyze_done *d) {
    (void)ctx;
    char s_ck[4200], s_dump[4400], s_db[4400], s_rdir[4400];
    if (!d->analysis) { /* --maps-only: the dump is the result */
        printf("%s: maps of %d suite%s in %s\n", andrea_shown(shown_path(d->ckpt), s_ck, sizeof s_ck), d->n_suites,
               d->n_suites == 1 ? "" : "s", andrea_shown(d->dump_path, s_dump, sizeof s_dump));
        return;
    }
    printf("%s%s%s%s\n", andrea_shown(shown_path(d->ckpt), s_ck, sizeof s_ck), d->dump_path ? " (" : "",
           d->dump_path ? andrea_shown(d->dump_path, s_dump, sizeof s_dump) : "", d->dump_path ? ")" : "");
    andrea_summary_write(stdout, d->analysis);
    printf("catalog: %s\nreport:  %s/index.html\n\n", andrea_shown(d->db_path, s_db, sizeof s_db),
           andrea_shown(d->report_dir, s_rdir, sizeof s_rdir));
    if (d->timing) print_timing(d->ckpt, d->timing);
}

static void print_series(void *ctx, const series_data *d, const char *db_path, const char *page_path) {
    (void)ctx;
    char s_name[512], s_db[4200], s_page[4800];
    printf("series %s: labelled heads per step\n", andrea_shown(d->name, s_name, sizeof s_name));
    andrea_series_table_write(stdout, d);
    printf("\ncatalog: %s\nseries:  %s\n", andrea_shown(db_path, s_db, sizeof s_db), andrea_shown(page_path, s_page, sizeof s_page));
}

andrea_analyze_printer cli_analyze_printer(void) {
    return (andrea_analyze_printer){.ctx = NULL, .checkpoint = print_checkpoint, .series = print_series,
                                    .scored_timing = print_scored_timing, .series_timing = print_series_timing};
}
