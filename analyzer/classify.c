/* classify.c — the analysis passes over one dump (see classify.h, docs/scores.md). */
#include "classify.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "../common/checked_size.h"
#include "../common/progress.h"
#include "../common/sha256.h"
#include "../dump/dump.h"
#include "../engine/checkpoint.h"
#include "ablation.h"
#include "ablation_stats.h"
#include "../common/mpi_shard.h"
#include "checkpoint_step.h"
#include "reduce_mpi.h"
#include "head_scorer.h"
#include "score.h"
#include "weights_evidence.h"

void andrea_classify_options_init(andrea_classify_options *o) {
    memset(o, 0, sizeof *o);
    andrea_rules_init(&o->rules);
    o->ablate_items = ANDREA_ABLATE_ITEMS_AUTO;
    o->ablation = ANDREA_ABLATION_MEAN;
    andrea_engine_options_init(&o->engine);
}

int andrea_ablate_items(const andrea_classify_options *o, int gpu) {
    return o->ablate_items != ANDREA_ABLATE_ITEMS_AUTO ? o->ablate_items
                                                      : gpu ? ANDREA_ABLATE_ITEMS_GPU : ANDREA_ABLATE_ITEMS_CPU;
}

/* Whether the causal check runs on a GPU: eng's kind, else what an engine opened with the
 * options would be. */
static int check_on_gpu(const andrea_classify_options *o, const andrea_engine *eng) {
    if (eng) return andrea_engine_has_gpu(eng);
    return o->engine.device == ANDREA_DEVICE_CUDA || (o->engine.device == ANDREA_DEVICE_AUTO && andrea_cuda_available());
}

/* Whether the run scored per-head output norms (not a `--contrib none` forward or dump). */
static int has_norms(const andrea_analysis *a) {
    for (int s = 0; s < a->n_suites; s++)
        for (int i = 0; a->suites[s].heads && i < a->cfg.n_layer * a->cfg.n_head; i++)
            if (isfinite(a->suites[s].heads[i].norm_mean)) return 1;
    return 0;
}

/* The run's settings, which the catalog compares to replace a run of the same checkpoint: a run
 * without the causal check (ablate_items 0: none ran) or without per-head norms ("contrib":
 * "none") has settings of its own, so it never replaces, silently, a run holding that evidence. */
static char *settings_json(const andrea_analysis *a, const andrea_dump_suite_info *infos, int n_infos, int ablate_items,
                           const char *ablation) {
    cJSON *o = cJSON_CreateObject(), *rules = NULL, *suites = NULL;
    char *out = NULL;
    if (!o) return NULL;
    /* Bump "scoring" whenever the score definition changes: old runs must not be replaced by,
     * nor mistaken for, runs made under another definition. */
    if (!cJSON_AddNumberToObject(o, "scoring", 2)) goto done;
    if (!cJSON_AddNumberToObject(o, "ablation_items", ablate_items)) goto done;
    if (ablate_items > 0 && !cJSON_AddStringToObject(o, "ablation", ablation)) goto done;
    if (!has_norms(a) && !cJSON_AddStringToObject(o, "contrib", "none")) goto done;
    if (!(rules = cJSON_AddObjectToObject(o, "rules"))) goto done;
    for (int s = 0; s < a->n_suites; s++) {
        cJSON *r = cJSON_AddObjectToObject(rules, a->suites[s].name);
        if (!r || !cJSON_AddNumberToObject(r, "min_score", a->suites[s].rule.min_score) ||
            !cJSON_AddNumberToObject(r, "min_ratio", a->suites[s].rule.min_ratio) ||
            !cJSON_AddNumberToObject(r, "min_margin", a->suites[s].rule.min_margin) ||
            !cJSON_AddNumberToObject(r, "min_extra", a->suites[s].rule.min_extra) ||
            (a->suites[s].rule.max_extra != 0 && !cJSON_AddNumberToObject(r, "max_extra", a->suites[s].rule.max_extra)))
            goto done;
    }
    if (!(suites = cJSON_AddArrayToObject(o, "suites"))) goto done;
    for (int s = 0; s < n_infos; s++) {
        const andrea_dump_suite_info *si = &infos[s];
        cJSON *e = cJSON_CreateObject();
        if (!e || !cJSON_AddItemToArray(suites, e)) {
            cJSON_Delete(e);
            goto done;
        }
        char seed[32];
        snprintf(seed, sizeof seed, "%llu", (unsigned long long)si->seed);
        if (!cJSON_AddStringToObject(e, "name", si->name) || !cJSON_AddNumberToObject(e, "n_seq", si->n_seq) ||
            !cJSON_AddNumberToObject(e, "T", si->T) || !cJSON_AddStringToObject(e, "seed", seed))
            goto done;
    }
    out = cJSON_PrintUnformatted(o);
done:
    cJSON_Delete(o);
    return out;
}

/* The identity of checkpoint path ck into hex, as the dump recorded it (andrea_checkpoint_sha256:
 * a folder's model.safetensors, or a sharded checkpoint's index and shards); -1 when unreadable. */
static int ckpt_sha256(const char *ck, char hex[65], ae_error *err) {
    return andrea_checkpoint_sha256_path(ck, hex, err);
}

/* Looks in folder dir (not below it) for a checkpoint whose sha256 is want: files named *.bin,
 * *.safetensors (loads with the config.json beside it) or *.safetensors.index.json (a sharded
 * checkpoint: its shards and config.json beside it). 1 and found filled, or 0. */
static int find_by_sha256(const char *dir, const char *want, char *found, size_t cap) {
    DIR *dh = opendir(dir);
    if (!dh) return 0;
    struct dirent *e;
    int hit = 0;
    while (!hit && (e = readdir(dh)) != NULL) {
        size_t n = strlen(e->d_name);
        const int bin = n > 4 && !strcmp(e->d_name + n - 4, ".bin");
        const int st = (n > 12 && !strcmp(e->d_name + n - 12, ".safetensors")) ||
                       (n > 23 && !strcmp(e->d_name + n - 23, ".safetensors.index.json"));
        if (!bin && !st) continue;
        char path[4400], hex[65];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat sb;
        ae_error ignored;
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || ckpt_sha256(path, hex, &ignored)) continue;
        if (andrea_sha256_hex_equal(hex, want)) {
            snprintf(found, cap, "%s", path);
            hit = 1;
        }
    }
    closedir(dh);
    return hit;
}

/* Decides with which file the causal check runs (docs/scores.md, "Finding the checkpoint"):
 * --checkpoint PATH (a file: it must be the dumped model; a folder: searched by sha256), else the
 * path the dump records when its sha256 still matches, else a file with that sha256 beside the
 * dump. None: an error, or with opt->no_causal a note (the caller warns). Returns 1 = run it with
 * *model loaded, 0 = skip (note filled), -1 = error. */
static int open_checkpoint(const char *dump_path, const andrea_dump *d, const andrea_classify_options *opt,
                           andrea_model *model, andrea_analysis *a, ae_error *err) {
    const char *rec = andrea_dump_checkpoint_path(d), *want = andrea_dump_checkpoint_sha256(d);
    char found[4400] = "", hex[65];
    struct stat sb;
    if (!want || strlen(want) != 64) return andrea_fail(err, "%s: the dump records no checkpoint sha256", dump_path);
    if (opt->ckpt) {
        if (stat(opt->ckpt, &sb) != 0) return andrea_fail(err, "%s: %s", opt->ckpt, strerror(errno));
        char inner[4200], index[4200];
        snprintf(inner, sizeof inner, "%s/model.safetensors", opt->ckpt);
        snprintf(index, sizeof index, "%s/%s", opt->ckpt, ANDREA_SHARD_INDEX_NAME);
        if (S_ISDIR(sb.st_mode) && stat(inner, &sb) != 0 && stat(index, &sb) != 0) { /* not a checkpoint folder */
            if (!find_by_sha256(opt->ckpt, want, found, sizeof found))
                return andrea_fail(err, "%s: no checkpoint in this folder has the dump's sha256 (%.12s...)", opt->ckpt, want);
        } else {
            if (ckpt_sha256(opt->ckpt, hex, err)) return -1;
            if (!andrea_sha256_hex_equal(hex, want))
                return andrea_fail(err, "%s: sha256 %.12s... differs from the dump's checkpoint (%.12s...): not the model that was dumped",
                               opt->ckpt, hex, want);
            snprintf(found, sizeof found, "%s", opt->ckpt);
        }
    } else {
        ae_error ignored;
        int moved = !rec || !rec[0] || stat(rec, &sb) != 0;
        if (!moved && (ckpt_sha256(rec, hex, &ignored) || !andrea_sha256_hex_equal(hex, want))) moved = 2;
        if (!moved) {
            snprintf(found, sizeof found, "%s", rec);
        } else {
            char dir[4200];
            snprintf(dir, sizeof dir, "%s", dump_path);
            char *slash = strrchr(dir, '/');
            if (slash) *slash = 0;
            else snprintf(dir, sizeof dir, ".");
            if (!find_by_sha256(dir, want, found, sizeof found)) {
                char why[1200];
                snprintf(why, sizeof why, "checkpoint %.600s (recorded in the dump) %s, and no checkpoint beside the dump has its sha256 %.12s...",
                         rec && rec[0] ? rec : "(none)", moved == 2 ? "has changed since the dump" : "not found", want);
                if (!opt->no_causal)
                    return andrea_fail(err, "%s: %s: give it with --checkpoint PATH (a file or a folder to search), or --no-causal "
                                        "to classify without the causal check", dump_path, why);
                snprintf(a->ablation_note, sizeof a->ablation_note, "%.700s: no causal check (--no-causal)", why);
                return 0;
            }
        }
    }
    if (andrea_model_load(model, found, err)) return -1;
    return 1;
}

/* --step N, else the checkpoint's (trainer_state.json's global_step, its name: checkpoint_step.h),
 * else the dump's name. 0, or -1 with err (a trainer_state.json refused). */
static int set_step(andrea_analysis *a, const andrea_classify_options *opt, const char *other_name, ae_error *err) {
    if (opt->has_step) {
        a->has_step = a->step_given = 1;
        a->step = opt->step;
        return 0;
    }
    const int got = a->ckpt_path[0] ? andrea_checkpoint_step(a->ckpt_path, &a->step, NULL, 0, err) : 0;
    if (got < 0) return -1;
    a->has_step = got || andrea_step_from_name(other_name, &a->step);
    return 0;
}

/* Map-only suites (texts without targets, docs/probes.md; or a suite none of whose queries kept a
 * target): no query was scored, so every statistic would be NULL. They are left out of the
 * analysis (a->suites compacted, a->skipped_note naming them) and keep[s] is 0 for them. Returns
 * how many suites stay; 0 is an error (err): nothing to classify. */
static int drop_map_only(andrea_analysis *a, unsigned char *keep, const char *what, ae_error *err) {
    int n = 0;
    size_t used = 0;
    for (int s = 0; s < a->n_suites; s++) {
        andrea_suite_scores *su = &a->suites[s];
        keep[s] = su->n_queries > 0;
        if (keep[s]) {
            a->suites[n++] = *su;
            continue;
        }
        int w = snprintf(a->skipped_note + used, sizeof a->skipped_note - used, "%s%s", used ? ", " : "", su->name);
        if (w > 0 && used + (size_t)w < sizeof a->skipped_note) used += (size_t)w;
        free(su->heads);
    }
    if (used && used + 80 < sizeof a->skipped_note)
        snprintf(a->skipped_note + used, sizeof a->skipped_note - used, ": map-only (no targets), not scored");
    const int total = a->n_suites;
    a->n_suites = n;
    if (n == 0)
        return andrea_fail(err, "%s: %s map-only (no query has a target): nothing to classify (the maps are in the dump)",
                           what, total == 1 ? "its one suite is" : "every suite is");
    return n;
}

/* Scoring and head-value means from a dump: every map and per-head value row of this rank's
 * items handed to the head scorer, one (sequence, head) map at a time (the sink interface of the
 * forward loop, so the numbers are those `andrea analyze` computes in the forward). */
static int score_dump(andrea_dump *d, const char *dump_path, const andrea_config *cfg, head_scorer *hs, ae_error *err) {
    const andrea_batch_sink k = andrea_head_scorer_sink(hs);
    const int L = cfg->n_layer, H = cfg->n_head, NH = L * H, ns = andrea_dump_n_suites(d);
    int maxT = 0, rc = -1;
    uint64_t total_maps = 0;
    for (int s = 0; s < ns; s++) {
        const andrea_dump_suite_info *si = andrea_dump_suite(d, s);
        long long lo, hi; /* MPI: this rank's items (reduce_mpi.h); serial: all */
        andrea_shard(si->n_seq, andrea_mpi_rank(), andrea_mpi_size(), &lo, &hi);
        if (si->T > maxT) maxT = si->T;
        total_maps += (uint64_t)(hi - lo) * (uint64_t)NH;
    }
    size_t tt, lht;
    if (ae_mul((size_t)maxT, (size_t)maxT, &tt) || ae_mul((size_t)NH, (size_t)maxT, &lht))
        return andrea_fail(err, "%s: sequence length %d too large", dump_path, maxT);
    float *map = malloc(tt * sizeof(float)), *norm = malloc(lht * sizeof(float)), *dla = malloc(lht * sizeof(float));
    probe_suite items;
    memset(&items, 0, sizeof items);
    ae_progress prog;
    andrea_progress_begin(&prog, "classify", total_maps);
    if (!map || !norm || !dla) {
        andrea_fail(err, "%s: out of memory for a %d x %d map", dump_path, maxT, maxT);
        goto out;
    }
    for (int s = 0; s < ns; s++) {
        const andrea_dump_suite_info *si = andrea_dump_suite(d, s);
        /* Dumps made with --contrib none carry no per-head W_O values: those statistics stay NULL. */
        const int has_dla = andrea_dump_has(d, s, "head_dla"), has_norm = andrea_dump_has(d, s, "head_out_norm");
        if (andrea_dump_read_items(d, s, &items, err)) goto out;
        if (k.suite_begin(k.self, s, &items, err)) {
            andrea_prefix(err, "%s", dump_path);
            goto out;
        }
        long long lo, hi;
        andrea_shard(items.n_items, andrea_mpi_rank(), andrea_mpi_size(), &lo, &hi);
        for (int i = (int)lo; i < (int)hi; i++) {
            andrea_batch b = {.suite = s, .s = &items, .b0 = i, .nb = 1, .L = L, .H = H, .T = si->T,
                              .C = cfg->d_model, .lengths = &items.items[i].n_tokens};
            andrea_progress_add(&prog, (uint64_t)NH);
            if (!andrea_head_scorer_wants(hs, i)) continue;
            /* storage order of the dump: seq, layer, head — one chunk per map */
            for (int h = 0; h < NH; h++)
                if (andrea_dump_read_map(d, s, i, h / H, h % H, map, err) || k.maps(k.self, &b, (size_t)h, 1, map, err))
                    goto out;
            if (has_dla && andrea_dump_read_head_values(d, s, i, "head_dla", dla, err)) goto out;
            if (has_norm && andrea_dump_read_head_values(d, s, i, "head_out_norm", norm, err)) goto out;
            b.head_dla = has_dla ? dla : NULL;
            b.head_out_norm = has_norm ? norm : NULL;
            if (k.batch(k.self, &b, err)) goto out;
        }
        if (k.suite_end(k.self, s, err)) goto out;
        andrea_probe_suite_free(&items);
        memset(&items, 0, sizeof items);
    }
    rc = 0;
out:
    andrea_progress_end(&prog);
    andrea_probe_suite_free(&items);
    free(map);
    free(norm);
    free(dla);
    return rc;
}

/* A suite none of whose items has a position where its class's loss is measured (entity items
 * too short for a re-mention, a user suite whose targets all sit on the last token) gets no
 * causal check; the run's note says so rather than leaving its labels' NULL deltas unexplained. */
static void note_unchecked_suites(andrea_analysis *a) {
    for (int s = 0; s < a->n_suites; s++) {
        const andrea_suite_scores *su = &a->suites[s];
        char said[96], line[320]; /* said: a suite the check already explained (one item) */
        snprintf(said, sizeof said, "no causal check for %.63s:", su->name);
        if (su->n_ablation_items > 0 || strstr(a->ablation_note, said)) continue;
        int labelled = 0;
        for (int i = 0; i < a->cfg.n_layer * a->cfg.n_head; i++) labelled += su->heads[i].label != 0;
        snprintf(line, sizeof line, "no causal check for %s: none of its items has a position where %s's loss is measured%s",
                 su->name, su->name, labelled ? " (its labelled heads have no ablation_delta)" : "");
        andrea_note_append(a->ablation_note, sizeof a->ablation_note, line);
    }
}

/* Suites checked on too few items for an interval (ablation_stats.h) get deltas only; the run's
 * note says so. Not a skipped check, so CLIs show it unless --quiet. */
static void note_short_intervals(andrea_analysis *a) {
    int few = 0;
    for (int s = 0; s < a->n_suites; s++) {
        const int n = a->suites[s].n_ablation_items;
        if (n > 0 && n < ANDREA_CI_MIN_ITEMS && n > few) few = n;
    }
    if (few)
        snprintf(a->interval_note, sizeof a->interval_note,
                 "no intervals or verdicts: they need %d items a suite, the causal check ran on %d or fewer (the "
                 "suite's items, or --ablate-items)", ANDREA_CI_MIN_ITEMS, few);
}

int andrea_causal_check(const andrea_model *mp, andrea_engine *eng, const andrea_engine_options *eo, const probe_suite *suites,
                        int n_suites, const andrea_ablation_options *ao, andrea_analysis *a, ae_error *err) {
    int maxT = 0;
    for (int s = 0; s < n_suites; s++) maxT = suites[s].max_len > maxT ? suites[s].max_len : maxT;
    andrea_engine *own = NULL;
    if (!eng && !(eng = own = andrea_engine_open(mp, eo, ao->max_items, maxT, err))) return -1;
    snprintf(a->ablation, sizeof a->ablation, "%s", andrea_ablation_method_name(ao->method));
    ae_progress prog;
    andrea_progress_begin(&prog, "causal check", (uint64_t)n_suites);
    int rc = andrea_ablation_suites(eng, &mp->cfg, suites, n_suites, ao, a->suites, a->ablation_note,
                                    sizeof a->ablation_note, &prog, err);
    andrea_progress_end(&prog);
    andrea_engine_close(own);
    if (rc == 0) note_unchecked_suites(a);
    if (rc == 0) note_short_intervals(a);
    return rc;
}

/* The checkpoint of the causal check has the dump's config, every field of it: the catalog records
 * the dump's config under the checkpoint's sha256, so a dump that claims another max_seq_len or
 * vocabulary than the model that ran would be stored as that model's run. */
static int same_config(const andrea_config *m, const andrea_config *dc, const char *ckpt, const char *dump_path,
                       ae_error *err) {
    _Static_assert(sizeof(andrea_config) == 7 * sizeof(int), "a new andrea_config field is compared here too");
    const struct {
        const char *name;
        int model, dump;
    } f[] = {{"n_layer", m->n_layer, dc->n_layer},       {"n_head", m->n_head, dc->n_head},
             {"d_model", m->d_model, dc->d_model},       {"head_dim", m->head_dim, dc->head_dim},
             {"vocab_size", m->vocab_size, dc->vocab_size}, {"padded_vocab_size", m->padded_vocab_size, dc->padded_vocab_size},
             {"max_seq_len", m->max_seq_len, dc->max_seq_len}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].model != f[i].dump)
            return andrea_fail(err, "%s: its config differs from the dump's: %s %d, but %d in %s", ckpt, f[i].name, f[i].model,
                               f[i].dump, dump_path);
    return 0;
}

/* Whether the causal check runs, and on which model: *mp set (loaded into *model when
 * *loaded) = run; NULL = not (ablation_note says why). -1 = error. */
static int causal_model(const char *dump_path, andrea_dump *d, const andrea_classify_options *opt, andrea_model *model,
                        int *loaded, const andrea_model **mp, andrea_analysis *a, ae_error *err) {
    *mp = NULL;
    if (opt->ablate_items == 0) {
        snprintf(a->ablation_note, sizeof a->ablation_note, "causal check disabled (--ablate-items 0)");
    } else if (andrea_mpi_rank() != 0) {
        /* MPI: rank 0 alone runs the causal check and writes the catalog; this rank's result
         * is not used. */
        snprintf(a->ablation_note, sizeof a->ablation_note, "causal check on rank 0");
    } else if (opt->model) {
        *mp = opt->model;
    } else {
        int ck = open_checkpoint(dump_path, d, opt, model, a, err);
        if (ck < 0) return -1;
        *loaded = ck == 1;
        if (*loaded) *mp = model;
    }
    if (*mp) return same_config(&(*mp)->cfg, &a->cfg, (*mp)->path, dump_path, err);
    return 0;
}

/* The infos of the suites keep[] holds, moved to the front; their count. */
static int compact_infos(andrea_dump_suite_info *infos, int n, const unsigned char *keep) {
    int k = 0;
    for (int s = 0; s < n; s++)
        if (keep[s]) infos[k++] = infos[s];
    return k;
}

/* The suites keep[] holds, moved to the front (the others freed when owned); their count. */
static int compact_suites(probe_suite *v, int n, const unsigned char *keep, int owned) {
    int k = 0;
    for (int s = 0; s < n; s++) {
        if (keep[s]) v[k++] = v[s];
        else if (owned) andrea_probe_suite_free(&v[s]);
    }
    return k;
}

/* Every suite's items, for the causal check (they are small; the maps were never kept). */
static int read_all_items(andrea_dump *d, probe_suite **out, int *n, ae_error *err) {
    int ns = andrea_dump_n_suites(d);
    probe_suite *v = calloc((size_t)(ns > 0 ? ns : 1), sizeof *v);
    if (!v) return andrea_fail(err, "classify: out of memory");
    for (int s = 0; s < ns; s++)
        if (andrea_dump_read_items(d, s, &v[s], err)) {
            for (int i = 0; i <= s; i++) andrea_probe_suite_free(&v[i]);
            free(v);
            return -1;
        }
    *out = v;
    *n = ns;
    return 0;
}

/* The weights' part of some classes (weights_evidence.h) for a dump's checkpoint: with the
 * caller's tokenizer, else the one beside the checkpoint (a byte-level model's needs no file);
 * none: the successor share stays NULL. */
static int weights_evidence(const andrea_model *m, const andrea_classify_options *opt, andrea_analysis *a, ae_error *err) {
    ae_error ignored;
    andrea_tokenizer *own = opt->tok ? NULL : andrea_tokenizer_open(m->cfg.vocab_size, m->dir, NULL, &ignored);
    const int rc = andrea_weights_evidence(m, opt->tok ? opt->tok : own, a, err);
    andrea_tokenizer_free(own);
    return rc;
}

int andrea_classify_dump(const char *dump_path, const andrea_classify_options *opt, andrea_analysis *a,
                         ae_error *err) {
    memset(a, 0, sizeof *a);
    andrea_dump *d = andrea_dump_open(dump_path, err);
    if (!d) return -1;
    int ret = -1, model_loaded = 0, n_items = 0;
    head_scorer *hs = NULL;
    probe_suite *items = NULL;
    unsigned char *keep_mask = NULL;
    andrea_model model;
    memset(&model, 0, sizeof model);
    const andrea_model *mp = NULL;
    const andrea_config *cfg = andrea_dump_config(d);
    const int ns = andrea_dump_n_suites(d);
    andrea_dump_suite_info *infos = calloc((size_t)(ns > 0 ? ns : 1), sizeof *infos);
    a->cfg = *cfg;
    snprintf(a->dump_path, sizeof a->dump_path, "%s", dump_path);
    snprintf(a->dump_seal, sizeof a->dump_seal, "%s", andrea_dump_seal_hex(d));
    snprintf(a->ckpt_path, sizeof a->ckpt_path, "%s", andrea_dump_checkpoint_path(d) ? andrea_dump_checkpoint_path(d) : "");
    snprintf(a->sha256, sizeof a->sha256, "%s", andrea_dump_checkpoint_sha256(d) ? andrea_dump_checkpoint_sha256(d) : "");
    snprintf(a->maps_dtype, sizeof a->maps_dtype, "%s", andrea_dump_maps_dtype(d) ? andrea_dump_maps_dtype(d) : "");
    if (!infos) {
        andrea_fail(err, "%s: out of memory", dump_path);
        goto out;
    }
    if (strlen(a->sha256) != 64) {
        andrea_fail(err, "%s: the dump records no checkpoint sha256", dump_path);
        goto out;
    }
    if (set_step(a, opt, dump_path, err)) goto out;
    if (ns <= 0) {
        andrea_fail(err, "%s: the dump holds no suite", dump_path);
        goto out;
    }
    for (int s = 0; s < ns; s++) infos[s] = *andrea_dump_suite(d, s);
    double t0 = andrea_now_seconds();
    if (!(hs = andrea_head_scorer_open(cfg, &opt->rules, ns, err)) || score_dump(d, dump_path, cfg, hs, err)) goto out;
    andrea_head_scorer_take(hs, a);
    double t1 = andrea_now_seconds();
    if (opt->timing) opt->timing->t_scoring += t1 - t0;
    if (!(keep_mask = malloc((size_t)ns)) || drop_map_only(a, keep_mask, dump_path, err) <= 0) {
        if (!keep_mask) andrea_fail(err, "%s: out of memory", dump_path);
        goto out;
    }
    const int n_kept = compact_infos(infos, ns, keep_mask);
    if (causal_model(dump_path, d, opt, &model, &model_loaded, &mp, a, err)) goto out;
    andrea_ablation_options ao = {.method = opt->ablation, .max_items = andrea_ablate_items(opt, opt->ablate_items == ANDREA_ABLATE_ITEMS_AUTO && check_on_gpu(opt, NULL))};
    ao.model = mp;
    ao.timing = opt->timing ? &opt->timing->causal : NULL;
    if (mp && (weights_evidence(mp, opt, a, err) || read_all_items(d, &items, &n_items, err) ||
               (n_items = compact_suites(items, n_items, keep_mask, 1)) < 0 ||
               andrea_causal_check(mp, NULL, &opt->engine, items, n_items, &ao, a, err))) {
        andrea_prefix(err, "%s", dump_path);
        goto out;
    }
    if (opt->timing) opt->timing->t_causal += andrea_now_seconds() - t1;
    /* no model found (--no-causal, or none beside the dump): no check ran, whatever the item count */
    if (!(a->settings_json = settings_json(a, infos, n_kept, mp ? ao.max_items : 0, andrea_ablation_method_name(ao.method)))) {
        andrea_fail(err, "%s: out of memory", dump_path);
        goto out;
    }
    ret = 0;
out:
    for (int i = 0; i < n_items; i++) andrea_probe_suite_free(&items[i]);
    free(items);
    free(infos);
    free(keep_mask);
    andrea_head_scorer_free(hs);
    if (model_loaded) andrea_model_free(&model);
    andrea_dump_close(d);
    if (ret) andrea_analysis_free(a);
    return ret;
}

int andrea_classify_scored(const andrea_model *m, const char *sha256, const probe_suite *suites, int n_suites,
                           head_scorer *hs, andrea_engine *eng, const char *dump_path, const char *maps_dtype,
                           const andrea_classify_options *opt, andrea_analysis *a, ae_error *err) {
    memset(a, 0, sizeof *a);
    a->cfg = m->cfg;
    snprintf(a->dump_path, sizeof a->dump_path, "%s", dump_path ? dump_path : "");
    /* absolute, as a dump records it (dump_write.c), so the catalog's selectors by path work from
     * any folder and two runs of one file agree */
    char abs_ck[PATH_MAX];
    snprintf(a->ckpt_path, sizeof a->ckpt_path, "%s", m->path[0] && realpath(m->path, abs_ck) ? abs_ck : m->path);
    snprintf(a->sha256, sizeof a->sha256, "%s", sha256);
    snprintf(a->maps_dtype, sizeof a->maps_dtype, "%s", maps_dtype);
    if (set_step(a, opt, dump_path ? dump_path : "", err)) return -1; /* nothing taken or allocated yet */
    andrea_head_scorer_take(hs, a);
    const size_t n_alloc = (size_t)(n_suites > 0 ? n_suites : 1);
    andrea_dump_suite_info *infos = calloc(n_alloc, sizeof *infos);
    probe_suite *kept = calloc(n_alloc, sizeof *kept); /* shallow copies: the caller owns the items */
    unsigned char *keep = malloc(n_alloc);
    int rc = -1;
    if (!infos || !kept || !keep) {
        andrea_fail(err, "%s: out of memory", m->path);
        goto out;
    }
    for (int s = 0; s < n_suites; s++) {
        snprintf(infos[s].name, sizeof infos[s].name, "%s", suites[s].name);
        infos[s].n_seq = suites[s].n_items;
        infos[s].T = suites[s].max_len;
        infos[s].seed = suites[s].seed;
        kept[s] = suites[s];
    }
    if (drop_map_only(a, keep, m->path, err) <= 0) goto out;
    compact_infos(infos, n_suites, keep);
    const int n_kept = compact_suites(kept, n_suites, keep, 0);
    if (andrea_weights_evidence(m, opt->tok, a, err)) goto out;
    double t0 = andrea_now_seconds();
    const andrea_ablation_options ao = {.method = opt->ablation, .max_items = andrea_ablate_items(opt, check_on_gpu(opt, eng)),
                                        .model = m, .timing = opt->timing ? &opt->timing->causal : NULL};
    if (opt->ablate_items == 0) {
        snprintf(a->ablation_note, sizeof a->ablation_note, "causal check disabled (--ablate-items 0)");
    } else if (andrea_mpi_rank() != 0) {
        snprintf(a->ablation_note, sizeof a->ablation_note, "causal check on rank 0");
    } else {
        if (andrea_causal_check(m, eng, &opt->engine, kept, n_kept, &ao, a, err)) goto out;
    }
    if (opt->timing) opt->timing->t_causal += andrea_now_seconds() - t0;
    if (!(a->settings_json = settings_json(a, infos, n_kept, ao.max_items, andrea_ablation_method_name(ao.method)))) {
        andrea_fail(err, "%s: out of memory", m->path);
        goto out;
    }
    rc = 0;
out:
    free(infos);
    free(kept);
    free(keep);
    if (rc) andrea_analysis_free(a);
    return rc;
}
