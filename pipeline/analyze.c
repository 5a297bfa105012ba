/* analyze.c — `andrea analyze` as one call (see analyze.h): each checkpoint's load, forwards
 * (dump/dump_write.h: the scorer and report sinks, the dump writer when asked), causal check and
 * scores (analyzer/classify.h), catalog rows (catalog/catalog.h) and report (reports/report.h);
 * a series through series.c. */
#include "analyze.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analyzer/checkpoint_step.h"
#include "../analyzer/circuits.h"
#include "../analyzer/head_scorer.h"
#include "../catalog/catalog.h"
#include "../catalog/catalog_circuits.h"
#include "../catalog/catalog_open.h"
#include "../common/mpi_shard.h"
#include "../common/printable.h"
#include "../common/progress.h"
#include "../engine/checkpoint.h"
#include "../engine/model.h"
#include "../reports/out_folder.h"
#include "../reports/report.h"
#include "../reports/report_collect.h"
#include "../run/run.h"
#include "../tokenizer/tokenizer.h"
#include "output_paths.h"
#include "run_names.h"
#include "run_notes.h"
#include "series.h"
#include "series_keep.h"

/* The run and the checkpoint's circuit scores (andrea circuits), computed first, in one
 * transaction: a failure leaves no part of them in the catalog. *t_circuits (may be NULL): the
 * seconds the circuit scores took to compute. */
static int write_catalog(const char *db_path, const andrea_analysis *a, const andrea_model *m, andrea_device dev,
                         const char *ckpt, const char *hex, double *t_circuits, ae_error *err) {
    andrea_circuits c;
    const double t0 = andrea_now_seconds();
    if (andrea_circuits_compute_on(m, dev, &c, err)) return -1;
    if (t_circuits) *t_circuits = andrea_now_seconds() - t0;
    andrea_catalog_entry e = {.analysis = a, .circuits = &c, .ckpt_path = ckpt, .sha256 = hex};
    const int rc = andrea_catalog_write_all(db_path, &e, 1, err);
    andrea_circuits_free(&c);
    andrea_note_catalog_entries("analyze", &e, rc ? 0 : 1);
    return rc;
}

static int defer_catalog(analyze_scored *scored, andrea_analysis *a, const andrea_model *m, andrea_device dev,
                         ae_error *err) {
    if (!(scored->analysis = calloc(1, sizeof *scored->analysis)) || !(scored->circuits = calloc(1, sizeof *scored->circuits)))
        return andrea_fail(err, "%s: out of memory", m->path);
    *scored->analysis = *a;
    memset(a, 0, sizeof *a);
    return andrea_circuits_compute_on(m, dev, scored->circuits, err); /* andrea circuits */
}

/* The forwards for the sinks alone (no dump file): one run (run/run.h), on the given engine (a
 * series' last checkpoint's, NULL: one opened), whose engine is handed on in *eng for the causal
 * check; its times into st (the fields a run has). MPI: every rank makes the same calls; a failure
 * at the run's agreed points fails all. */
static int run_forwards(const andrea_model *m, const probe_suite *suites, int n_suites, const andrea_run_options *ro,
                        const andrea_batch_sink *sinks, int n_sinks, andrea_dump_stats *st, andrea_engine *given,
                        andrea_engine **eng, ae_error *err) {
    andrea_run_options o = *ro;
    o.progress_label = "forward";
    int agreed = 0;
    andrea_run *r = andrea_run_new(m, suites, n_suites, &o, m->path, err);
    if (r) andrea_run_give_engine(r, given);
    else andrea_engine_close(given);
    if (andrea_run_agree(r ? 0 : -1, &agreed, err) || andrea_run_agree(andrea_run_open(r, err), &agreed, err) ||
        andrea_run_suites(r, sinks, n_sinks, &agreed, err)) {
        andrea_run_free(r);
        return -1;
    }
    andrea_run_stats rs;
    andrea_run_get_stats(r, &rs);
    memset(st, 0, sizeof *st);
    st->sequences = rs.sequences;
    st->batch = rs.batch;
    st->t_open = rs.t_open;
    st->t_forward = rs.t_forward;
    st->t_sinks = rs.t_sinks;
    st->t_suites_rest = rs.t_suites - rs.t_forward - rs.t_sinks;
    snprintf(st->engine, sizeof st->engine, "%s", andrea_engine_name(andrea_run_engine(r)));
    *eng = andrea_run_take_engine(r);
    andrea_run_free(r);
    return 0;
}

/* The dump writer's options for analyze --dump / --keep-dumps / --maps-only: the scorer and
 * report sinks beside the writer (hex: the checkpoint's sha256 the dump records). */
static void forward_options(andrea_dump_options *dopt, const andrea_analyze_plan *p, const char *dump_path, const char *hex,
                            const andrea_tokenizer *tok, const char *tok_desc, const andrea_batch_sink *sinks,
                            andrea_dump_stats *stats) {
    andrea_dump_options_init(dopt);
    dopt->out_path = dump_path;
    dopt->run = p->run; /* the plan's run and engine settings, as the option parser set them */
    dopt->run.progress_label = "forward";
    dopt->checkpoint_sha256 = hex;
    dopt->tokenizer = tok_desc;
    dopt->tok = tok; /* token_text + tokenizer_vocab_sha256 in a dump */
    dopt->sinks = sinks;
    dopt->n_sinks = p->maps_only ? 0 : 2; /* --maps-only: the dump alone */
    dopt->stats = stats;
}

/* scored != NULL (a series): score, classify and write the catalog only, and hand the report's
 * collected maps over in *scored; the series loop (analyze_series.c) renders once every
 * checkpoint is scored. */
/* The --probes / --texts suites for model m, whose tokenizer tok is (NULL: it failed to open, err
 * says why). */
static int load_probes(const andrea_analyze_plan *p, const andrea_tokenizer *tok, const andrea_model *m,
                       probe_suite **suites, int *n_suites, ae_error *err) {
    const andrea_config *cfg = &m->cfg;
    /* token-id probe files work without a tokenizer, when the model has none at all */
    if (!tok && !(andrea_probe_sources_files_only(p->ps) && andrea_tokenizer_absent(cfg->vocab_size, m->dir, p->tok_dir)))
        return -1;
    if (andrea_probe_sources_load(p->ps, tok, cfg->vocab_size, cfg->max_seq_len, &p->po, suites, n_suites, err)) return -1;
    int scored = p->maps_only; /* refused before the forwards: nothing would be scored */
    for (int s = 0; s < *n_suites; s++) scored += !(*suites)[s].map_only;
    return scored ? 0 : andrea_fail(err, "every suite is map-only (texts without targets): nothing to score; "
                                         "--maps-only writes their maps (or andrea dump)");
}

/* The dump a run writes must not be one of the files it reads (checkpoint, probes, tokenizer,
 * rules file). */
static int check_dump_target(const char *dump_path, const andrea_model *m, const andrea_analyze_plan *p, ae_error *err) {
    if (andrea_check_output_not_input(dump_path, m, p->ps, p->tok_dir, err)) return -1;
    if (p->rules_file && andrea_same_file(dump_path, p->rules_file))
        return andrea_fail(err, "%s: is the rules file this command reads; give another output path", dump_path);
    return 0;
}

/* The notes of a scored run: why the causal check did not run, the map-only suites left out,
 * --rules naming no suite of the run; unless quiet, intervals left out for too few items. */
static void print_notes(const andrea_analysis *a, const andrea_rules *rules, int quiet) {
    char shown[sizeof a->ablation_note];
    if (a->ablation_note[0]) fprintf(stderr, "andrea analyze: note: %s\n", andrea_shown(a->ablation_note, shown, sizeof shown));
    if (a->interval_note[0] && !quiet) fprintf(stderr, "andrea analyze: note: %s\n", a->interval_note);
    if (a->skipped_note[0]) fprintf(stderr, "andrea analyze: note: %s\n", andrea_shown(a->skipped_note, shown, sizeof shown));
    andrea_note_unused_rules("analyze", rules, a);
}

/* The forwards into the sinks (the scorer, the report collector): a run alone (on the engine keep
 * holds from a series' last checkpoint, if any), or with a dump (dump_path) the HDF5 file around
 * it, its writer one more sink. The engine is handed on in *eng. */
static int forwards(const andrea_analyze_plan *p, const andrea_model *m, const probe_suite *suites, int n_suites,
                    const andrea_batch_sink *sinks, const char *dump_path, const char *hex, const andrea_tokenizer *tok,
                    const char *tok_desc, series_keep *keep, andrea_dump_stats *st, andrea_engine **eng, ae_error *err) {
    if (!dump_path)
        return run_forwards(m, suites, n_suites, &p->run, sinks, 2, st, andrea_series_keep_take_engine(keep), eng, err);
    andrea_dump_options dopt;
    forward_options(&dopt, p, dump_path, hex, tok, tok_desc, sinks, st);
    dopt.keep_engine = eng;
    return andrea_dump_write(m, suites, n_suites, &dopt, err);
}

/* A series' checkpoint once scored, with --timing: its time so far to the printer. */
static void print_scored_timing(const andrea_analyze_plan *p, const char *ckpt, andrea_analyze_timing *tm, double t_start) {
    tm->t_all = andrea_now_seconds() - t_start;
    if (p->timing && p->printer.scored_timing) p->printer.scored_timing(p->printer.ctx, ckpt, tm);
}

/* Checkpoint ckpt (index: its name's suffix, pipeline/run_names.h). report_dir: where its report
 * goes (one checkpoint: DIR itself), NULL for DIR/NAME. scored != NULL (a series): score, classify
 * and write (or defer) the catalog only, and hand the report's collected maps over in *scored; the
 * series loop (series.c) renders once every checkpoint is scored. keep (NULL: none): a serial
 * series' engine and read ahead (series_keep.h), ckpt its checkpoint at. */
static int analyze_one(const andrea_analyze_plan *p, const char *ckpt, const char *report_dir, int index,
                       analyze_scored *scored, series_keep *keep, int at, ae_error *err) {
    const double t_start = andrea_now_seconds();
    const andrea_classify_options *copt = &p->classify;
    andrea_model m = {0};
    andrea_tokenizer *tok = NULL;
    probe_suite *suites = NULL;
    head_scorer *hs = NULL;
    report_collector *rcol = NULL;
    andrea_engine *eng = NULL;
    int n_suites = 0, ret = -1;
    andrea_analysis a = {0};
    andrea_analyze_timing tm;
    memset(&tm, 0, sizeof tm);
    char name[256], dump_path[4400], db_path[4400], hex[65], tok_desc[4200];
    if (keep ? andrea_series_keep_model(keep, at, &m, err) : andrea_model_load(&m, ckpt, err)) return -1;
    tok = andrea_tokenizer_open(m.cfg.vocab_size, m.dir, p->tok_dir, err);
    if (load_probes(p, tok, &m, &suites, &n_suites, err)) goto out;
    snprintf(tok_desc, sizeof tok_desc, "%s", tok ? andrea_tokenizer_kind(tok) : "none");
    tm.t_load = andrea_now_seconds() - t_start;
    andrea_run_name_and_dump(ckpt, index, p->dir, p->dump_file, name, sizeof name, dump_path, sizeof dump_path);
    const int dumping = p->dump_file || p->keep_dumps || p->maps_only;
    if (dumping && check_dump_target(dump_path, &m, p, err)) goto out;
    if (dumping && andrea_checkpoint_sha256(&m, hex, err)) goto out; /* the dump file records it */
    snprintf(db_path, sizeof db_path, "%s/catalog.db", p->dir);

    /* The forwards feed the head scorer and the report's example maps: one run (run/run.h); with
     * a dump the HDF5 file is written around it (dump/dump_write.h), its writer one more sink. */
    if (!(hs = andrea_head_scorer_open(&m.cfg, &copt->rules, n_suites, err))) goto out;
    andrea_render_options ropt = {0};
    ropt.quiet = andrea_progress_quiet;
    ropt.maps_per_suite = p->report_maps;
    ropt.full = p->report_full;
    if (!(rcol = andrea_report_collector_open(&m, n_suites, andrea_render_examples(&ropt), err))) goto out;
    andrea_batch_sink sinks[2] = {andrea_head_scorer_sink(hs), andrea_report_collector_sink(rcol)};
    if (forwards(p, &m, suites, n_suites, sinks, dumping ? dump_path : NULL, hex, tok, tok_desc, keep, &tm.forwards, &eng, err))
        goto out;
    if (p->maps_only) {
        const andrea_analyze_done d = {.ckpt = ckpt, .dump_path = dump_path, .n_suites = n_suites};
        if (andrea_mpi_rank() == 0 && p->printer.checkpoint) p->printer.checkpoint(p->printer.ctx, &d);
        ret = 0;
        goto out;
    }
    /* without a dump nothing needed the sha256 so far: its thread (started with the load,
     * engine/checkpoint_hash.h) ran beside the engine open and the forwards; its rest is waited for here */
    const double t_hash0 = andrea_now_seconds();
    if (!dumping && andrea_checkpoint_sha256(&m, hex, err)) goto out;
    tm.t_hash = andrea_now_seconds() - t_hash0;
    andrea_mpi_serial_phase(1); /* MPI: rank 0's causal check, catalog, report; the others wait */
    /* too small for the causal check's batch, or (MPI, CPU) sized for a rank's share of the cores
     * while rank 0 now has the node's: a fresh one */
    if (tm.forwards.batch < andrea_ablate_items(copt, eng && andrea_engine_has_gpu(eng)) ||
        (andrea_mpi_parallel() && eng && !andrea_engine_has_gpu(eng))) {
        andrea_engine_close(eng);
        eng = NULL;
    }
    andrea_classify_options o = *copt;
    o.engine = p->run.engine; /* the causal check's engine: the forwards' settings */
    o.tok = tok; /* the successor class's ordinal kinds */
    o.timing = &tm.classify;
    if (andrea_classify_scored(&m, hex, suites, n_suites, hs, eng, dumping ? dump_path : NULL,
                               p->run.maps_fp32 ? "fp32" : "fp16", &o, &a, err))
        goto out;
    if (dumping) /* the run records its dump's seal, so `render DUMP` finds this run */
        snprintf(a.dump_seal, sizeof a.dump_seal, "%s", tm.forwards.seal);
    /* MPI: the statistics were pooled on all ranks; rank 0 alone writes the catalog, renders and
     * prints (the others wait for its result, so a failure there stops every rank). */
    if (andrea_mpi_rank() != 0) {
        ret = andrea_mpi_agree(0, err);
        goto out;
    }
    print_notes(&a, &copt->rules, andrea_progress_quiet);
    if (scored) {
        snprintf(scored->name, sizeof scored->name, "%s", name);
        snprintf(scored->dump, sizeof scored->dump, "%s", dumping ? dump_path : "");
        snprintf(scored->db, sizeof scored->db, "%s", db_path);
        snprintf(scored->sha256, sizeof scored->sha256, "%s", hex);
        snprintf(scored->maps_dtype, sizeof scored->maps_dtype, "%s", a.maps_dtype);
        scored->collected = rcol; /* rendered and freed by the series loop */
        rcol = NULL;
        print_scored_timing(p, ckpt, &tm, t_start);
        if (scored->defer_catalog) { /* a series: its loop writes the rows once every checkpoint scored */
            ret = andrea_mpi_agree(defer_catalog(scored, &a, &m, p->run.engine.device, err), err); /* the other ranks wait on it */
            goto out;
        }
        ret = andrea_mpi_agree(write_catalog(db_path, &a, &m, p->run.engine.device, ckpt, hex, NULL, err), err);
        goto out;
    }
    /* One checkpoint: its report is DIR itself; several: DIR/NAME each. */
    char rdir[4400];
    if (report_dir) snprintf(rdir, sizeof rdir, "%s", report_dir);
    else snprintf(rdir, sizeof rdir, "%s/%s", p->dir, name);
    const double t_cat0 = andrea_now_seconds();
    int wrc = write_catalog(db_path, &a, &m, p->run.engine.device, ckpt, hex, &tm.t_circuits, err);
    const double t_rep0 = andrea_now_seconds();
    ropt.stage_seconds = tm.t_report_stage;
    if (!wrc)
        wrc = andrea_render_collected(rcol, hex, dumping ? dump_path : NULL, a.maps_dtype, db_path, rdir, &ropt, err);
    const double t_end = andrea_now_seconds();
    if (andrea_mpi_agree(wrc, err)) goto out;
    tm.t_catalog = t_rep0 - t_cat0 - tm.t_circuits;
    tm.t_report = t_end - t_rep0;
    tm.t_all = t_end - t_start;
    const andrea_analyze_done d = {.ckpt = ckpt, .dump_path = dumping ? dump_path : NULL, .n_suites = n_suites,
                                   .analysis = &a, .db_path = db_path, .report_dir = rdir,
                                   .timing = p->timing ? &tm : NULL};
    if (p->printer.checkpoint) p->printer.checkpoint(p->printer.ctx, &d);
    ret = 0;
out:
    andrea_mpi_serial_phase(0);
    andrea_analysis_free(&a);
    if (keep && !ret) andrea_series_keep_engine(keep, eng); /* the next checkpoint's, when of this shape */
    else andrea_engine_close(eng);
    andrea_head_scorer_free(hs);
    andrea_report_collector_free(rcol);
    andrea_probe_suites_free(suites, n_suites);
    andrea_tokenizer_free(tok);
    andrea_model_free(&m);
    return ret;
}

typedef struct {
    const andrea_analyze_plan *p;
    const char *const *ckpts;
    const int *index; /* [n] the suffix each checkpoint's run name takes (andrea_run_name_and_dump) */
    series_keep *keep; /* serial runs: the engine and the read ahead; NULL under MPI */
} series_job;

/* Checkpoint i of a series, under its unique name. */
static int score_one(int i, analyze_scored *out, void *ctx, ae_error *err) {
    const series_job *j = ctx;
    return analyze_one(j->p, j->ckpts[i], NULL, j->index[i], out, j->keep, i, err);
}

/* The series page's data to the caller's printer. */
static void series_page_done(void *ctx, const series_data *d, const char *db_path, const char *page_path) {
    const andrea_analyze_plan *p = ctx;
    if (p->printer.series) p->printer.series(p->printer.ctx, d, db_path, page_path);
}

/* The step of each checkpoint (analyzer/checkpoint_step.h), before any work: a trainer_state.json
 * the catalog write would refuse after the forwards is refused now, and a global_step that differs
 * from the step of the checkpoint's name is said once, in a note line. Not read under --step N.
 * 0, or -1 with err. */
static int check_steps(const char *const *ckpts, int n, const andrea_classify_options *o, ae_error *err) {
    for (int i = 0; i < n && !o->has_step; i++) {
        long long step;
        char note[4400], shown[4400];
        if (andrea_checkpoint_step(ckpts[i], &step, note, sizeof note, err) < 0) return -1;
        if (note[0] && andrea_mpi_rank() == 0) fprintf(stderr, "andrea analyze: note: %s\n", andrea_shown(note, shown, sizeof shown));
    }
    return 0;
}


void andrea_analyze_plan_init(andrea_analyze_plan *p) {
    memset(p, 0, sizeof *p);
    p->dir = "andrea-out";
    andrea_run_options_init(&p->run);
    andrea_classify_options_init(&p->classify);
}

/* A series: each checkpoint under its unique name, scored into the one catalog, then rendered. */
static int analyze_series(const andrea_analyze_plan *p, ae_error *err) {
    const int n = p->n_ckpts;
    int *index = malloc(sizeof *index * (size_t)n), rc = -1;
    /* serial: one engine for the series, the next checkpoint read ahead (MPI ranks load their own;
     * out of memory for it: nothing kept, each checkpoint on its own) */
    series_keep *keep = andrea_mpi_parallel() ? NULL : andrea_series_keep_new(p->ckpts, n);
    if (!index || andrea_run_unique_names(p->ckpts, n, index)) {
        andrea_fail(err, "analyze: out of memory");
        goto out;
    }
    /* where each checkpoint's report goes: no link, no folder twice (before any work) */
    if (andrea_run_check_series_folders(p->dir, p->ckpts, n, index, err)) goto out;
    for (int i = 0; i < n && !p->maps_only; i++) { /* nor any of the reports' files over an input */
        char name[256], rdir[4700], unused[8];
        andrea_run_name_and_dump(p->ckpts[i], index[i], p->dir, "-", name, sizeof name, unused, sizeof unused);
        snprintf(rdir, sizeof rdir, "%s/%s", p->dir, name);
        if (andrea_check_inputs_outside_page(rdir, p->ckpts, n, p->ps, p->tok_dir, p->rules_file, err)) goto out;
    }
    if (p->maps_only) { /* no scores: no series page either */
        for (int i = 0; i < n; i++)
            if (analyze_one(p, p->ckpts[i], NULL, index[i], NULL, keep, i, err)) goto out;
        rc = 0;
        goto out;
    }
    series_job job = {p, p->ckpts, index, keep};
    andrea_render_options sro = {0};
    sro.quiet = andrea_progress_quiet;
    sro.maps_per_suite = p->report_maps;
    sro.full = p->report_full;
    double seconds[SERIES_PHASES] = {0}, stages[ANDREA_REPORT_STAGES] = {0};
    const series_written on = {(void *)p, series_page_done, p->timing ? seconds : NULL, p->timing ? stages : NULL};
    rc = andrea_series_run(n, p->ckpts, p->dir, score_one, &job, &sro, &on, err);
    if (!rc && p->timing && andrea_mpi_rank() == 0 && p->printer.series_timing)
        p->printer.series_timing(p->printer.ctx, n, seconds, stages);
out:
    andrea_series_keep_free(keep);
    free(index);
    return rc;
}

int andrea_analyze(const andrea_analyze_plan *p, ae_error *err) {
    if (p->n_ckpts < 1) return andrea_fail(err, "analyze: no checkpoint given");
    /* one writer of DIR at a time (MPI: rank 0 writes it); then, before any work: a `show` page
     * there would be replaced (the report checks again itself) */
    if (andrea_mpi_rank() == 0) andrea_out_folder_lock(p->dir, "analyze", andrea_progress_quiet);
    if (!p->maps_only && andrea_out_folder_check(p->dir, p->n_ckpts > 1 ? OUT_FOLDER_SERIES : OUT_FOLDER_REPORT, err))
        return -1;
    /* one checkpoint's report is DIR itself; a series' are checked by analyze_series */
    if (!p->maps_only && p->n_ckpts == 1 &&
        andrea_check_inputs_outside_page(p->dir, p->ckpts, 1, p->ps, p->tok_dir, p->rules_file, err))
        return -1;
    char db_path[4200];
    snprintf(db_path, sizeof db_path, "%s/catalog.db", p->dir);
    if (!p->maps_only && andrea_catalog_check_writable(db_path, err)) return -1; /* before the work */
    /* streams (--texts -, --probes <(cmd)) can be read once: every checkpoint reads their bytes */
    if (andrea_probe_sources_keep(p->ps, p->n_ckpts > 1, err)) return -1;
    if (check_steps(p->ckpts, p->n_ckpts, &p->classify, err)) return -1;
    /* one checkpoint: its report is DIR itself */
    const int rc = p->n_ckpts == 1 ? analyze_one(p, p->ckpts[0], p->dir, 0, NULL, NULL, 0, err) : analyze_series(p, err);
    if (rc || p->maps_only || andrea_mpi_rank() != 0) return rc;
    ae_error tidy = {{0}};
    char shown[1024];
    if (andrea_catalog_tidy(db_path, &tidy)) /* everything is written: a note, as the others, not a failure */
        fprintf(stderr, "andrea analyze: note: %s (the catalog and report are complete)\n",
                andrea_shown(tidy.msg, shown, sizeof shown));
    return 0;
}
