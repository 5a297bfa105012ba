/* series.c — the series loop of `andrea analyze` (see series.h). */
#include "series.h"

#include "run_notes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../catalog/catalog.h"
#include "../catalog/catalog_circuits.h"
#include "../catalog/catalog_report.h"
#include "../analyzer/gather_mpi.h"
#include "../common/mpi_shard.h"
#include "../common/percent_encode.h"
#include "../common/printable.h"
#include "../common/progress.h"
#include "../reports/report.h"
#include "../reports/out_folder.h"
#include "../reports/report_collect.h"
#include "../reports/series.h"

/* Spread over MPI ranks: the rank whose contiguous share holds checkpoint i (andrea_shard). */
static int owner_of(int i, int n) {
    for (int r = 0; r < andrea_mpi_size(); r++) {
        long long lo, hi;
        andrea_shard(n, r, andrea_mpi_size(), &lo, &hi);
        if (i >= lo && i < hi) return r;
    }
    return 0;
}

/* Spread: each rank scores its own checkpoints alone (no collective: each is a serial run), then
 * every checkpoint's rows go to rank 0, which writes them in checkpoint order, as the serial loop
 * does (run and model ids included). Collective; -1 on every rank when any failed. */
/* same_checkpoint_twice for checkpoint j against those before it: the serial loop asks after each
 * checkpoint is scored, so a copy given twice stops the series there, not after all of it. */
static int same_as_earlier(int j, const char *const *ckpts, const analyze_scored *sc, ae_error *err) {
    for (int i = 0; i < j; i++)
        if (sc[i].sha256[0] && !strcmp(sc[i].sha256, sc[j].sha256))
            return andrea_fail(err, "%s and %s are the same checkpoint (sha256 %.12s...): give each once", ckpts[i], ckpts[j],
                               sc[i].sha256);
    return 0;
}

/* The catalog keeps one model per sha256: two files with the same bytes would be one row with one
 * of the names, one run would replace the other, and the series table would show it twice.
 * -1 with "A and B are the same checkpoint ..." when two of the n have one sha256. */
static int same_checkpoint_twice(int n, const char *const *ckpts, const analyze_scored *sc, ae_error *err) {
    for (int j = 1; j < n; j++)
        if (same_as_earlier(j, ckpts, sc, err)) return -1;
    return 0;
}

static int score_spread(int n, const char *const *ckpts, analyze_scored *sc, analyze_score_fn score, void *ctx,
                        int quiet, ae_error *err) {
    const int root = andrea_mpi_rank() == 0;
    long long lo, hi;
    andrea_shard(n, andrea_mpi_rank(), andrea_mpi_size(), &lo, &hi);
    if (!quiet && root)
        fprintf(stderr, "andrea analyze: %d checkpoints over %d MPI ranks (rank 0: %lld)\n", n, andrea_mpi_size(), hi - lo);
    int rc = 0;
    andrea_mpi_set_alone(1);
    for (long long i = lo; i < hi && !rc; i++) {
        char shown[4200];
        if (!quiet && root)
            fprintf(stderr, "andrea analyze: [%lld/%d] scoring %s\n", i + 1, n, andrea_shown(ckpts[i], shown, sizeof shown));
        sc[i].defer_catalog = 1;
        rc = score((int)i, &sc[i], ctx, err);
    }
    andrea_mpi_set_alone(0);
    if (andrea_mpi_agree(rc, err)) return -1;
    /* rank 0 gathers every checkpoint's rows (its own are in sc), then writes them in one
     * transaction, as the serial series does */
    andrea_analysis *a = calloc((size_t)n, sizeof *a);
    andrea_circuits *c = calloc((size_t)n, sizeof *c);
    andrea_catalog_entry *e = calloc((size_t)n, sizeof *e);
    int bad = andrea_mpi_agree(!a || !c || !e ? andrea_fail(err, "out of memory for the series' rows") : 0, err);
    int got = 0; /* entries whose copies rank 0 holds */
    for (int i = 0; i < n && !bad; i++, got++) {
        const int from = owner_of(i, n), mine = andrea_mpi_rank() == from;
        if (mine) a[i] = *sc[i].analysis, c[i] = *sc[i].circuits;
        /* the names rank 0 renders the series page with; then the rows */
        bad = andrea_mpi_bcast(sc[i].name, sizeof sc[i].name, from, err) ||
              andrea_mpi_bcast(sc[i].db, sizeof sc[i].db, from, err) ||
              andrea_mpi_bcast(sc[i].sha256, sizeof sc[i].sha256, from, err) ||
              andrea_analysis_bcast(&a[i], from, err) || andrea_circuits_bcast(&c[i], from, err);
        e[i] = (andrea_catalog_entry){.analysis = &a[i], .circuits = &c[i], .ckpt_path = ckpts[i], .sha256 = sc[i].sha256};
    }
    if (!bad) bad = andrea_mpi_agree(root ? same_checkpoint_twice(n, ckpts, sc, err) : 0, err);
    if (!bad) {
        const int wrc = root ? andrea_catalog_write_all(sc[0].db, e, n, err) : 0;
        if (root) andrea_note_catalog_entries("analyze", e, wrc ? 0 : n);
        bad = andrea_mpi_agree(wrc, err);
    }
    for (int i = 0; i < got && a && c; i++)
        if (andrea_mpi_rank() != owner_of(i, n)) { /* received copies; sc keeps its own */
            andrea_analysis_free(&a[i]);
            andrea_circuits_free(&c[i]);
        }
    free(a);
    free(c);
    free(e);
    return bad ? -1 : 0;
}

/* Serial (and MPI-pooled) series: every checkpoint is scored before any row is written, so one
 * that fails (truncated, no tokenizer, a shape the probes do not fit) leaves the catalog as it
 * was instead of holding the runs before it without their reports. Rank 0 writes; collective. */
static int write_deferred(int n, const char *const *ckpts, analyze_scored *sc, ae_error *err) {
    if (andrea_mpi_agree(same_checkpoint_twice(n, ckpts, sc, err), err)) return -1; /* rank 0 holds the hashes (MPI) */
    int wrc = 0;
    if (andrea_mpi_rank() == 0) {
        andrea_catalog_entry *e = calloc((size_t)n, sizeof *e);
        if (!e) wrc = andrea_fail(err, "%s: out of memory", sc[0].db);
        for (int i = 0; i < n && e; i++)
            e[i] = (andrea_catalog_entry){.analysis = sc[i].analysis, .circuits = sc[i].circuits, .ckpt_path = ckpts[i],
                                          .sha256 = sc[i].sha256};
        /* one transaction: a failure while writing leaves none of the series' runs */
        if (e) wrc = andrea_catalog_write_all(sc[0].db, e, n, err);
        if (e) andrea_note_catalog_entries("analyze", e, wrc ? 0 : n);
        free(e);
    }
    return andrea_mpi_agree(wrc, err);
}

/* The deferred rows of spread scoring (analyze_scored.analysis, .circuits). */
static void free_deferred(analyze_scored *sc) {
    if (sc->analysis) andrea_analysis_free(sc->analysis);
    if (sc->circuits) andrea_circuits_free(sc->circuits);
    free(sc->analysis);
    free(sc->circuits);
    sc->analysis = NULL;
    sc->circuits = NULL;
}

/* Between scoring and the first report written (rank 0, collective): the reports' folders are
 * checked again (a link made there during the scoring, out_folder.h), and the series page is
 * replaced by the page saying the series is being written: an earlier run's page, kept while
 * the reports it links to are rewritten, looked complete when this run was stopped midway. */
static int begin_rendering(int n, const char *dir, const analyze_scored *sc, const char *page, ae_error *err) {
    int rc = 0;
    if (andrea_mpi_rank() == 0) {
        const char **names = malloc(sizeof *names * (size_t)n);
        if (!names) rc = andrea_fail(err, "%s: out of memory", dir);
        for (int i = 0; i < n && names; i++) names[i] = sc[i].name;
        if (!rc) rc = andrea_out_folder_check_series(dir, names, n, err);
        if (!rc) rc = andrea_series_page_write_pending(page, err);
        free(names);
    }
    return andrea_mpi_agree(rc, err);
}

/* A note (rank 0, unless quiet) for each report this run writes over one of another checkpoint
 * under the same name (a second training run analysed into the series folder): the catalog keeps
 * the earlier checkpoint's runs, but its report goes, which happened without a word. */
static int note_replaced_reports(int n, const char *dir, const analyze_scored *sc, int quiet, ae_error *err) {
    out_folder_report *found = NULL;
    int n_found = 0;
    if (quiet || andrea_mpi_rank() != 0) return 0;
    if (andrea_out_folder_reports(dir, &found, &n_found, err)) return -1;
    for (int k = 0; k < n_found; k++)
        for (int i = 0; i < n; i++)
            if (!strcmp(found[k].name, sc[i].name) && strcmp(found[k].sha256, sc[i].sha256)) {
                char shown[4800];
                char path[4700];
                snprintf(path, sizeof path, "%s/%s", dir, sc[i].name);
                fprintf(stderr, "andrea analyze: note: %s held the report of another checkpoint (sha256 %.12s...), "
                                "replaced by this one's (the catalog keeps both)\n",
                        andrea_shown(path, shown, sizeof shown), found[k].sha256);
            }
    free(found);
    return 0;
}

/* The series page (rank 0), handed to on->page once written, of the n checkpoints of this run (given: their
 * sha256 and report links) and of every complete checkpoint report already in dir under another
 * name (a run over more checkpoints before this one) whose checkpoint the catalog holds in this
 * series (series_data.c keeps only those): a run over a subset of the series' checkpoints left
 * the others' reports in the folder, unlinked. */
static int write_page(int n, const char *dir, const char *page, const analyze_scored *sc, const series_input *given,
                      const series_written *on, ae_error *err) {
    out_folder_report *found = NULL;
    int n_found = 0, m = n;
    if (andrea_out_folder_reports(dir, &found, &n_found, err)) return -1;
    series_input *in = calloc((size_t)(n + n_found), sizeof *in);
    char (*href)[1024] = calloc((size_t)(n_found > 0 ? n_found : 1), sizeof *href);
    int rc = !in || !href ? andrea_fail(err, "%s: out of memory", dir) : 0;
    for (int i = 0; i < n && !rc; i++) in[i] = given[i];
    for (int k = 0; k < n_found && !rc; k++) {
        int mine = 0; /* rendered by this run: given already */
        for (int i = 0; i < n && !mine; i++) mine = !strcmp(found[k].name, sc[i].name);
        if (mine) continue;
        andrea_percent_encode(found[k].name, "", href[k], sizeof href[k] - 16);
        strcat(href[k], "/index.html");
        in[m++] = (series_input){.sha256 = found[k].sha256, .report_href = href[k], .found = 1};
    }
    series_data d;
    if (!rc && !(rc = andrea_series_load(sc[0].db, in, m, &d, err))) {
        if (!(rc = andrea_series_page_write(&d, page, err)) && on->page) on->page(on->ctx, &d, sc[0].db, page);
        andrea_series_free(&d);
    }
    free(found);
    free(in);
    free(href);
    return rc;
}

/* The wall time since *t into secs[phase]; *t moves on to now. */
static void phase_done(double *secs, int phase, double *t) {
    const double now = andrea_now_seconds();
    secs[phase] = now - *t;
    *t = now;
}

int andrea_series_run(int n, const char *const *ckpts, const char *dir, analyze_score_fn score, void *ctx,
                      const andrea_render_options *ropt_in, const series_written *on, ae_error *err) {
    const int quiet = ropt_in->quiet;
    analyze_scored *sc = calloc((size_t)n, sizeof *sc);
    series_input *in = calloc((size_t)n, sizeof *in);
    char (*href)[1024] = calloc((size_t)n, sizeof *href);
    int ret = -1;
    if (!sc || !in || !href) {
        andrea_fail(err, "%s: out of memory", dir);
        goto out;
    }
    const int root = andrea_mpi_rank() == 0;
    double t = andrea_now_seconds(), unused[SERIES_PHASES];
    double *secs = on->seconds ? on->seconds : unused;
    /* MPI with at least a checkpoint a rank: whole checkpoints over the ranks (header) */
    const int spread = andrea_mpi_parallel() && n >= andrea_mpi_size();
    if (spread && score_spread(n, ckpts, sc, score, ctx, quiet, err)) goto out;
    for (int i = 0; i < n && !spread; i++) {
        char shown[4200];
        if (!quiet && root)
            fprintf(stderr, "andrea analyze: [%d/%d] scoring %s\n", i + 1, n, andrea_shown(ckpts[i], shown, sizeof shown));
        sc[i].defer_catalog = 1;
        if (score(i, &sc[i], ctx, err)) goto out;
        if (andrea_mpi_agree(root ? same_as_earlier(i, ckpts, sc, err) : 0, err)) goto out; /* rank 0 holds the hashes */
    }
    phase_done(secs, SERIES_SCORING, &t);
    if (!spread && write_deferred(n, ckpts, sc, err)) goto out;
    phase_done(secs, SERIES_CATALOG, &t); /* spread: in the scoring phase */
    char page[4700];
    snprintf(page, sizeof page, "%s/index.html", dir);
    if (note_replaced_reports(n, dir, sc, quiet, err) || begin_rendering(n, dir, sc, page, err)) goto out;
    andrea_render_options ropt = *ropt_in;
    /* every report shows the whole series' steps: read once (NULL, out of memory: each reads them) */
    ropt.catalog_cache = andrea_catalog_report_cache_new();
    ropt.stage_seconds = on->report_stages;
    for (int i = 0; i < n; i++) {
        char rdir[4700];
        snprintf(rdir, sizeof rdir, "%s/%s", dir, sc[i].name);
        /* spread: the rank that scored a checkpoint renders it (its example maps are there) */
        const int renders = spread ? owner_of(i, n) == andrea_mpi_rank() : root;
        char shown_ck[4200], shown_dir[4800];
        if (!quiet && root && renders)
            fprintf(stderr, "andrea analyze: [%d/%d] rendering %s into %s\n", i + 1, n, andrea_shown(ckpts[i], shown_ck, sizeof shown_ck),
                    andrea_shown(rdir, shown_dir, sizeof shown_dir));
        int rrc = 0;
        if (renders && sc[i].collected)
            rrc = andrea_render_collected(sc[i].collected, sc[i].sha256, sc[i].dump[0] ? sc[i].dump : NULL,
                                         sc[i].maps_dtype, sc[i].db, rdir, &ropt, err);
        else if (renders)
            rrc = andrea_render(sc[i].dump, sc[i].db, rdir, &ropt, err);
        andrea_report_collector_free(sc[i].collected);
        sc[i].collected = NULL;
        if (andrea_mpi_agree(rrc, err)) {
            andrea_catalog_report_cache_free(ropt.catalog_cache);
            goto out;
        }
        andrea_percent_encode(sc[i].name, "", href[i], sizeof href[i] - 16); /* one URL path segment: "run#1?x" links to its folder */
        strcat(href[i], "/index.html");
        in[i].sha256 = sc[i].sha256;
        in[i].report_href = href[i];
    }
    andrea_catalog_report_cache_free(ropt.catalog_cache);
    phase_done(secs, SERIES_REPORTS, &t);
    if (andrea_mpi_agree(root ? write_page(n, dir, page, sc, in, on, err) : 0, err)) goto out;
    phase_done(secs, SERIES_PAGE, &t);
    ret = 0;
out:
    for (int i = 0; sc && i < n; i++) {
        andrea_report_collector_free(sc[i].collected);
        free_deferred(&sc[i]);
    }
    free(sc);
    free(in);
    free(href);
    return ret;
}
