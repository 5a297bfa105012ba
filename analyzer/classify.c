/* classify.c — the analysis passes over one dump (see classify.h, docs/scores.md). */
#include "classify.h"

#include <errno.h>
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
#include "ablation.h"
#include "../common/mpi_shard.h"
#include "catalog.h"
#include "reduce_mpi.h"
#include "score.h"

void andrea_classify_options_init(andrea_classify_options *o) {
    memset(o, 0, sizeof *o);
    andrea_rules_init(&o->rules);
    o->ablate_items = ANDREA_ABLATE_ITEMS_DEFAULT;
    o->device = ANDREA_DEVICE_AUTO;
}

static char *settings_json(const andrea_analysis *a, const andrea_dump *d, int ablate_items) {
    cJSON *o = cJSON_CreateObject(), *rules = NULL, *suites = NULL;
    char *out = NULL;
    if (!o) return NULL;
    /* Bump "scoring" whenever the score definition changes: old runs must not be replaced by,
     * nor mistaken for, runs made under another definition. */
    if (!cJSON_AddNumberToObject(o, "scoring", 1)) goto done;
    if (!cJSON_AddNumberToObject(o, "ablation_items", ablate_items)) goto done;
    if (!(rules = cJSON_AddObjectToObject(o, "rules"))) goto done;
    for (int s = 0; s < a->n_suites; s++) {
        cJSON *r = cJSON_AddObjectToObject(rules, a->suites[s].name);
        if (!r || !cJSON_AddNumberToObject(r, "min_score", a->suites[s].rule.min_score) ||
            !cJSON_AddNumberToObject(r, "min_ratio", a->suites[s].rule.min_ratio) ||
            !cJSON_AddNumberToObject(r, "min_margin", a->suites[s].rule.min_margin))
            goto done;
    }
    if (!(suites = cJSON_AddArrayToObject(o, "suites"))) goto done;
    for (int s = 0; s < andrea_dump_n_suites(d); s++) {
        const andrea_dump_suite_info *si = andrea_dump_suite(d, s);
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

/* The sha256 of checkpoint path ck (a folder: its model.safetensors) into hex; -1 when unreadable. */
static int ckpt_sha256(const char *ck, char hex[65], ae_error *err) {
    struct stat sb;
    if (stat(ck, &sb) != 0) return ae_fail(err, "%s: %s", ck, strerror(errno));
    char file[4200];
    if (S_ISDIR(sb.st_mode)) snprintf(file, sizeof file, "%s/model.safetensors", ck);
    else snprintf(file, sizeof file, "%s", ck);
    return ae_sha256_file(file, hex, err);
}

/* Looks in folder dir (not below it) for a checkpoint whose sha256 is want: files named *.bin or
 * *.safetensors (the latter loads with the config.json beside it). 1 and found filled, or 0. */
static int find_by_sha256(const char *dir, const char *want, char *found, size_t cap) {
    DIR *dh = opendir(dir);
    if (!dh) return 0;
    struct dirent *e;
    int hit = 0;
    while (!hit && (e = readdir(dh)) != NULL) {
        size_t n = strlen(e->d_name);
        const int bin = n > 4 && !strcmp(e->d_name + n - 4, ".bin");
        const int st = n > 12 && !strcmp(e->d_name + n - 12, ".safetensors");
        if (!bin && !st) continue;
        char path[4400], hex[65];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat sb;
        ae_error ignored;
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || ckpt_sha256(path, hex, &ignored)) continue;
        if (ae_sha256_hex_equal(hex, want)) {
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
    if (!want || strlen(want) != 64) return ae_fail(err, "%s: the dump records no checkpoint sha256", dump_path);
    if (opt->ckpt) {
        if (stat(opt->ckpt, &sb) != 0) return ae_fail(err, "%s: %s", opt->ckpt, strerror(errno));
        char inner[4200];
        snprintf(inner, sizeof inner, "%s/model.safetensors", opt->ckpt);
        if (S_ISDIR(sb.st_mode) && stat(inner, &sb) != 0) {
            if (!find_by_sha256(opt->ckpt, want, found, sizeof found))
                return ae_fail(err, "%s: no checkpoint in this folder has the dump's sha256 (%.12s...)", opt->ckpt, want);
        } else {
            if (ckpt_sha256(opt->ckpt, hex, err)) return -1;
            if (!ae_sha256_hex_equal(hex, want))
                return ae_fail(err, "%s: sha256 %.12s... differs from the dump's checkpoint (%.12s...): not the model that was dumped",
                               opt->ckpt, hex, want);
            snprintf(found, sizeof found, "%s", opt->ckpt);
        }
    } else {
        ae_error ignored;
        int moved = !rec || !rec[0] || stat(rec, &sb) != 0;
        if (!moved && (ckpt_sha256(rec, hex, &ignored) || !ae_sha256_hex_equal(hex, want))) moved = 2;
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
                    return ae_fail(err, "%s: %s: give it with --checkpoint PATH (a file or a folder to search), or --no-causal "
                                        "to classify without the causal check", dump_path, why);
                snprintf(a->ablation_note, sizeof a->ablation_note, "%.700s: no causal check (--no-causal)", why);
                return 0;
            }
        }
    }
    if (andrea_model_load(model, found, err)) return -1;
    return 1;
}

int andrea_classify_dump(const char *dump_path, const andrea_classify_options *opt, andrea_analysis *a,
                         ae_error *err) {
    memset(a, 0, sizeof *a);
    andrea_dump *d = andrea_dump_open(dump_path, err);
    if (!d) return -1;
    int ret = -1;
    float *map = NULL, *vals = NULL;
    score_acc *acc = NULL;
    score_seq_plan *plans = NULL;
    double *dla_sum = NULL, *norm_sum = NULL;
    int64_t *dla_n = NULL, *norm_n = NULL;
    int *has_dla = NULL, *has_norm = NULL;
    probe_suite items;
    memset(&items, 0, sizeof items);
    int n_plans = 0;
    andrea_model model;
    memset(&model, 0, sizeof model);
    int model_loaded = 0;
    andrea_engine *eng = NULL;
    ae_progress prog = {0};
    int prog_on = 0;

    const andrea_config *cfg = andrea_dump_config(d);
    a->cfg = *cfg;
    snprintf(a->dump_path, sizeof a->dump_path, "%s", dump_path);
    snprintf(a->dump_seal, sizeof a->dump_seal, "%s", andrea_dump_seal_hex(d));
    snprintf(a->ckpt_path, sizeof a->ckpt_path, "%s", andrea_dump_checkpoint_path(d) ? andrea_dump_checkpoint_path(d) : "");
    snprintf(a->sha256, sizeof a->sha256, "%s", andrea_dump_checkpoint_sha256(d) ? andrea_dump_checkpoint_sha256(d) : "");
    snprintf(a->maps_dtype, sizeof a->maps_dtype, "%s", andrea_dump_maps_dtype(d) ? andrea_dump_maps_dtype(d) : "");
    if (strlen(a->sha256) != 64) {
        ae_fail(err, "%s: the dump records no checkpoint sha256", dump_path);
        goto out;
    }
    if (opt->has_step) {
        a->has_step = 1;
        a->step = opt->step;
    } else {
        a->has_step = catalog_step_from_name(a->ckpt_path, &a->step) || catalog_step_from_name(dump_path, &a->step);
    }
    int L = cfg->n_layer, H = cfg->n_head, NH = L * H, ns = andrea_dump_n_suites(d);
    if (ns <= 0) {
        ae_fail(err, "%s: the dump holds no suite", dump_path);
        goto out;
    }
    a->suites = calloc((size_t)ns, sizeof *a->suites);
    acc = calloc((size_t)NH, sizeof *acc);
    dla_sum = calloc((size_t)NH, sizeof *dla_sum);
    norm_sum = calloc((size_t)NH, sizeof *norm_sum);
    dla_n = calloc((size_t)NH, sizeof *dla_n);
    norm_n = calloc((size_t)NH, sizeof *norm_n);
    has_dla = calloc((size_t)ns, sizeof *has_dla);
    has_norm = calloc((size_t)ns, sizeof *has_norm);
    if (!a->suites || !acc || !dla_sum || !norm_sum || !dla_n || !norm_n || !has_dla || !has_norm) {
        ae_fail(err, "%s: out of memory", dump_path);
        goto out;
    }
    /* Dumps made with --contrib none carry no per-head W_O values: those statistics stay NULL. */
    for (int s = 0; s < ns; s++) {
        has_dla[s] = andrea_dump_has(d, s, "head_dla");
        has_norm[s] = andrea_dump_has(d, s, "head_out_norm");
    }

    int maxT = 0;
    uint64_t total_maps = 0;
    for (int s = 0; s < ns; s++) {
        const andrea_dump_suite_info *si = andrea_dump_suite(d, s);
        long long lo, hi; /* MPI: this rank's items (reduce_mpi.h); serial: all */
        andrea_shard(si->n_seq, andrea_mpi_rank(), andrea_mpi_size(), &lo, &hi);
        if (si->T > maxT) maxT = si->T;
        total_maps += (uint64_t)(hi - lo) * (uint64_t)NH;
    }
    size_t tt, lht;
    if (ae_mul((size_t)maxT, (size_t)maxT, &tt) || ae_mul((size_t)NH, (size_t)maxT, &lht)) {
        ae_fail(err, "%s: sequence length %d too large", dump_path, maxT);
        goto out;
    }
    map = malloc(tt * sizeof(float));
    vals = malloc(lht * sizeof(float));
    if (!map || !vals) {
        ae_fail(err, "%s: out of memory for a %d x %d map", dump_path, maxT, maxT);
        goto out;
    }

    ae_progress_begin(&prog, "classify", total_maps);
    prog_on = 1;
    for (int s = 0; s < ns; s++) {
        const andrea_dump_suite_info *si = andrea_dump_suite(d, s);
        andrea_suite_scores *su = &a->suites[s];
        a->n_suites = s + 1;
        snprintf(su->name, sizeof su->name, "%s", si->name);
        su->pass = andrea_pass_for(si->name);
        su->rule = andrea_rules_for(&opt->rules, si->name, su->pass);
        su->clean_loss = su->ablation_mean = NAN;
        su->heads = calloc((size_t)NH, sizeof *su->heads);
        if (!su->heads) {
            ae_fail(err, "%s: out of memory", dump_path);
            goto out;
        }
        if (andrea_dump_read_items(d, s, &items, err)) goto out;
        su->n_items = items.n_items;
        plans = calloc((size_t)(items.n_items ? items.n_items : 1), sizeof *plans);
        if (!plans) {
            ae_fail(err, "%s: out of memory", dump_path);
            goto out;
        }
        n_plans = items.n_items;
        for (int i = 0; i < items.n_items; i++)
            if (score_plan_build(&items.items[i], i, si->name, &plans[i], err)) {
                ae_prefix(err, "%s", dump_path);
                goto out;
            }
        memset(acc, 0, sizeof *acc * (size_t)NH);
        memset(dla_sum, 0, sizeof *dla_sum * (size_t)NH);
        memset(norm_sum, 0, sizeof *norm_sum * (size_t)NH);
        memset(dla_n, 0, sizeof *dla_n * (size_t)NH);
        memset(norm_n, 0, sizeof *norm_n * (size_t)NH);
        int T = si->T;
        /* MPI: each rank reads its shard of the items; the sums are pooled below. */
        long long item_lo, item_hi;
        andrea_shard(items.n_items, andrea_mpi_rank(), andrea_mpi_size(), &item_lo, &item_hi);
        /* Storage order of the dump: seq, layer, head — one chunk per map. */
        for (int i = (int)item_lo; i < (int)item_hi; i++) {
            const score_seq_plan *p = &plans[i];
            for (int h = 0; h < NH; h++) {
                if (p->n_queries > 0) {
                    if (andrea_dump_read_map(d, s, i, h / H, h % H, map, err)) goto out;
                    score_acc_add(&acc[h], p, map, T);
                }
                ae_progress_add(&prog, 1);
            }
            if (p->n_queries == 0) continue;
            if (has_dla[s]) {
                if (andrea_dump_read_head_values(d, s, i, "head_dla", vals, err)) goto out;
                for (int h = 0; h < NH; h++)
                    for (int q = 0; q < p->n_queries; q++) {
                        int t = p->queries[q].query;
                        float v = vals[(size_t)h * T + t];
                        if (t + 1 < p->length && isfinite(v)) {
                            dla_sum[h] += v;
                            dla_n[h]++;
                        }
                    }
            }
            if (has_norm[s]) {
                if (andrea_dump_read_head_values(d, s, i, "head_out_norm", vals, err)) goto out;
                for (int h = 0; h < NH; h++)
                    for (int q = 0; q < p->n_queries; q++) {
                        float v = vals[(size_t)h * T + p->queries[q].query];
                        if (isfinite(v)) {
                            norm_sum[h] += v;
                            norm_n[h]++;
                        }
                    }
            }
        }
        if (andrea_reduce_suite_stats(acc, dla_sum, norm_sum, dla_n, norm_n, NH, err)) goto out;
        for (int h = 0; h < NH; h++) {
            andrea_head_score *hs = &su->heads[h];
            hs->layer = h / H;
            hs->head = h % H;
            hs->score = score_acc_score(&acc[h]);
            hs->baseline = score_acc_baseline(&acc[h]);
            hs->control = score_acc_control(&acc[h]);
            hs->extra = su->pass->extra ? su->pass->extra(&acc[h]) : NAN;
            hs->dla_mean = dla_n[h] ? dla_sum[h] / (double)dla_n[h] : NAN;
            hs->norm_mean = norm_n[h] ? norm_sum[h] / (double)norm_n[h] : NAN;
            hs->ablation_delta = NAN;
            hs->label = andrea_rule_labels(&su->rule, hs->score, hs->baseline, hs->control);
        }
        su->n_queries = acc[0].n;
        for (int i = 0; i < n_plans; i++) score_plan_free(&plans[i]);
        free(plans);
        plans = NULL;
        n_plans = 0;
        probe_suite_free(&items);
        memset(&items, 0, sizeof items);
    }
    ae_progress_end(&prog);
    prog_on = 0;

    /* Causal check, suite by suite (items re-read: they are small, the maps were not kept). */
    const andrea_model *mp = NULL;
    if (opt->ablate_items <= 0) {
        snprintf(a->ablation_note, sizeof a->ablation_note, "causal check disabled (--ablate-items 0)");
    } else if (andrea_mpi_rank() != 0) {
        /* MPI: rank 0 alone runs the causal check and writes the catalog; this rank's result
         * is not used. */
        snprintf(a->ablation_note, sizeof a->ablation_note, "causal check on rank 0");
    } else if (opt->model) {
        mp = opt->model;
    } else {
        int ck = open_checkpoint(dump_path, d, opt, &model, a, err);
        if (ck < 0) goto out;
        model_loaded = ck == 1;
        if (model_loaded) mp = &model;
    }
    if (mp) {
        if (mp->cfg.n_layer != L || mp->cfg.n_head != H || mp->cfg.d_model != cfg->d_model) {
            ae_fail(err, "%s: its shape differs from the dump's config", mp->path);
            goto out;
        }
        eng = andrea_engine_open(mp, opt->device, opt->ablate_items, maxT, err);
        if (!eng) goto out;
        ae_progress_begin(&prog, "causal check", (uint64_t)ns);
        prog_on = 1;
        for (int s = 0; s < ns; s++) {
            if (andrea_dump_read_items(d, s, &items, err)) goto out;
            if (ablation_suite(eng, &mp->cfg, &items, opt->ablate_items, &a->suites[s], err)) {
                ae_prefix(err, "%s", dump_path);
                goto out;
            }
            probe_suite_free(&items);
            memset(&items, 0, sizeof items);
            ae_progress_add(&prog, 1);
        }
        ae_progress_end(&prog);
        prog_on = 0;
    }
    a->settings_json = settings_json(a, d, opt->ablate_items);
    if (!a->settings_json) {
        ae_fail(err, "%s: out of memory", dump_path);
        goto out;
    }
    ret = 0;
out:
    if (prog_on) ae_progress_end(&prog);
    for (int i = 0; i < n_plans; i++) score_plan_free(&plans[i]);
    free(plans);
    probe_suite_free(&items);
    andrea_engine_close(eng);
    if (model_loaded) andrea_model_free(&model);
    free(map);
    free(vals);
    free(acc);
    free(dla_sum);
    free(norm_sum);
    free(dla_n);
    free(norm_n);
    free(has_dla);
    free(has_norm);
    andrea_dump_close(d);
    if (ret) andrea_analysis_free(a);
    return ret;
}
