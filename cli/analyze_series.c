/* analyze_series.c — the series loop of `andrea analyze` (see analyze_series.h). Wiring only. */
#include "analyze_series.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/mpi_shard.h"
#include "../common/progress.h"
#include "../reports/report.h"
#include "../reports/report_collect.h"
#include "../reports/series.h"

int analyze_series(int n, const char *const *ckpts, const char *dir, analyze_score_fn score, void *ctx, int quiet,
                   ae_error *err) {
    analyze_scored *sc = calloc((size_t)n, sizeof *sc);
    series_input *in = calloc((size_t)n, sizeof *in);
    char (*href)[300] = calloc((size_t)n, sizeof *href);
    int ret = -1;
    if (!sc || !in || !href) {
        andrea_fail(err, "%s: out of memory", dir);
        goto out;
    }
    const int root = andrea_mpi_rank() == 0;
    for (int i = 0; i < n; i++) {
        if (!quiet && root) fprintf(stderr, "andrea analyze: [%d/%d] scoring %s\n", i + 1, n, ckpts[i]);
        if (score(i, &sc[i], ctx, err)) goto out;
    }
    andrea_render_options ropt = {0};
    ropt.quiet = quiet;
    for (int i = 0; i < n; i++) {
        char rdir[4700];
        snprintf(rdir, sizeof rdir, "%s/%s", dir, sc[i].name);
        if (!quiet && root) fprintf(stderr, "andrea analyze: [%d/%d] rendering %s into %s\n", i + 1, n, ckpts[i], rdir);
        int rrc = 0;
        if (root && sc[i].collected)
            rrc = andrea_render_collected(sc[i].collected, sc[i].sha256, sc[i].dump[0] ? sc[i].dump : NULL,
                                         sc[i].maps_dtype, sc[i].db, rdir, &ropt, err);
        else if (root)
            rrc = andrea_render(sc[i].dump, sc[i].db, rdir, &ropt, err);
        andrea_report_collector_free(sc[i].collected);
        sc[i].collected = NULL;
        if (andrea_mpi_agree(rrc, err)) goto out;
        snprintf(href[i], sizeof href[i], "%s/index.html", sc[i].name);
        in[i].sha256 = sc[i].sha256;
        in[i].report_href = href[i];
    }
    series_data d;
    char page[4700];
    snprintf(page, sizeof page, "%s/index.html", dir);
    int rc = 0;
    if (root) {
        rc = andrea_series_load(sc[0].db, in, n, &d, err);
        if (!rc && (rc = andrea_series_page_write(&d, page, err)) == 0) {
            printf("series %s: labelled heads per step\n", d.name);
            andrea_series_table_write(stdout, &d);
            printf("\ncatalog: %s\nseries:  %s\n", sc[0].db, page);
        }
        if (!rc) andrea_series_free(&d);
    }
    if (andrea_mpi_agree(rc, err)) goto out;
    ret = 0;
out:
    for (int i = 0; sc && i < n; i++) andrea_report_collector_free(sc[i].collected);
    free(sc);
    free(in);
    free(href);
    return ret;
}
