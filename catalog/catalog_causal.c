/* catalog_causal.c — the causal check's evidence into a run's rows (see catalog_causal.h). */
#include "catalog_causal.h"

#include <math.h>

#include "../analyzer/ablation_stats.h"
#include "catalog_sql.h"

/* Binds values[0..n) as parameters first.. (NaN as NULL). */
static int bind_reals(sqlite3_stmt *st, int first, const double *values, int n) {
    for (int i = 0; i < n; i++) {
        const int rc = andrea_catalog_bind_real_or_null(st, first + i, values[i]);
        if (rc != SQLITE_OK) return rc;
    }
    return SQLITE_OK;
}

static int update_suite(sqlite3 *db, sqlite3_stmt *st, const char *path, const andrea_suite_scores *su, int64_t run,
                        ae_error *err) {
    const double v[] = {su->ablation_median, su->ablation_mad, su->group_delta, su->group_ci_low, su->group_ci_high,
                        su->control_median, su->control_mad, su->control_q80, su->control_max};
    SQL_CHECK(path, db, sqlite3_reset(st), SQLITE_OK);
    SQL_CHECK(path, db, bind_reals(st, 1, v, 9), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int(st, 10, su->group_size), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int(st, 11, su->n_controls), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int64(st, 12, run), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 13, su->name, -1, SQLITE_TRANSIENT), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_step(st), SQLITE_DONE);
    return 0;
fail:
    return -1;
}

static int update_head(sqlite3 *db, sqlite3_stmt *st, const char *path, const andrea_suite_scores *su,
                       const andrea_head_score *h, int64_t run, ae_error *err) {
    const double v[] = {h->ablation_ci_low, h->ablation_ci_high, h->ablation_pct, h->restore_delta, h->restore_ci_low,
                        h->restore_ci_high, h->direct_delta};
    const char *evidence = andrea_evidence_name(h->evidence);
    SQL_CHECK(path, db, sqlite3_reset(st), SQLITE_OK);
    SQL_CHECK(path, db, bind_reals(st, 1, v, 7), SQLITE_OK);
    if (evidence)
        SQL_CHECK(path, db, sqlite3_bind_text(st, 8, evidence, -1, SQLITE_STATIC), SQLITE_OK);
    else
        SQL_CHECK(path, db, sqlite3_bind_null(st, 8), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int64(st, 9, run), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int(st, 10, h->layer), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int(st, 11, h->head), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(st, 12, su->name, -1, SQLITE_TRANSIENT), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_step(st), SQLITE_DONE);
    return 0;
fail:
    return -1;
}

int andrea_catalog_insert_causal(sqlite3 *db, const char *path, const andrea_analysis *a, int64_t run, ae_error *err) {
    sqlite3_stmt *run_st = NULL, *suite_st = NULL, *head_st = NULL;
    int ret = -1;
    if (!a->ablation[0]) return 0; /* no causal check ran */
    /* the note on missing intervals joins the run's note (the CLI showed it only without --quiet) */
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db,
                                 "UPDATE runs SET ablation = ?1, ablation_note = CASE WHEN ?2 IS NULL THEN ablation_note"
                                 " WHEN ablation_note IS NULL THEN ?2 ELSE ablation_note || '; ' || ?2 END WHERE id = ?3",
                                 -1, &run_st, NULL),
              SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_text(run_st, 1, a->ablation, -1, SQLITE_STATIC), SQLITE_OK);
    if (a->interval_note[0])
        SQL_CHECK(path, db, sqlite3_bind_text(run_st, 2, a->interval_note, -1, SQLITE_STATIC), SQLITE_OK);
    else
        SQL_CHECK(path, db, sqlite3_bind_null(run_st, 2), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_bind_int64(run_st, 3, run), SQLITE_OK);
    SQL_CHECK(path, db, sqlite3_step(run_st), SQLITE_DONE);
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db,
                                 "UPDATE suites SET ablation_median = ?1, ablation_mad = ?2, group_delta = ?3,"
                                 " group_ci_low = ?4, group_ci_high = ?5, control_median = ?6, control_mad = ?7,"
                                 " control_q80 = ?8, control_max = ?9, group_size = ?10, n_controls = ?11"
                                 " WHERE run_id = ?12 AND class = ?13",
                                 -1, &suite_st, NULL),
              SQLITE_OK);
    SQL_CHECK(path, db,
              sqlite3_prepare_v2(db,
                                 "UPDATE head_scores SET ablation_ci_low = ?1, ablation_ci_high = ?2, ablation_pct = ?3,"
                                 " restore_delta = ?4, restore_ci_low = ?5, restore_ci_high = ?6, direct_delta = ?7,"
                                 " evidence = ?8 WHERE run_id = ?9 AND layer = ?10 AND head = ?11 AND class = ?12",
                                 -1, &head_st, NULL),
              SQLITE_OK);
    const int nh = a->cfg.n_layer * a->cfg.n_head;
    for (int s = 0; s < a->n_suites; s++) {
        const andrea_suite_scores *su = &a->suites[s];
        if (su->n_ablation_items <= 0) continue;
        if (update_suite(db, suite_st, path, su, run, err)) goto fail;
        for (int i = 0; i < nh; i++)
            if (isfinite(su->heads[i].ablation_delta) && update_head(db, head_st, path, su, &su->heads[i], run, err))
                goto fail;
    }
    ret = 0;
fail:
    sqlite3_finalize(run_st);
    sqlite3_finalize(suite_st);
    sqlite3_finalize(head_st);
    return ret;
}
