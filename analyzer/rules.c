/* rules.c — label rules from defaults, a JSON rules file (read strictly) and flags (see rules.h). */
#include "rules.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/printable.h"
#include "../common/strict_input.h"

#define RULES_FILE_MAX (1 << 20)

void andrea_rules_init(andrea_rules *r) { memset(r, 0, sizeof *r); }

/* Names from the file are shown through andrea_printable: a "\n" in a key must not split the
 * one-line message. */
static int parse_entry(const char *path, const char *key_raw, const cJSON *obj, andrea_rule_override *o,
                       ae_error *err) {
    char key[64], field[64];
    andrea_printable(key_raw, key, sizeof key);
    if (!cJSON_IsObject(obj)) return andrea_fail(err, "%s: \"%s\" must be an object", path, key);
    for (const cJSON *f = obj->child; f; f = f->next) {
        double *dst;
        int *has;
        if (!strcmp(f->string, "min_score")) dst = &o->r.min_score, has = &o->has_min_score;
        else if (!strcmp(f->string, "min_ratio")) dst = &o->r.min_ratio, has = &o->has_min_ratio;
        else if (!strcmp(f->string, "min_margin")) dst = &o->r.min_margin, has = &o->has_min_margin;
        else if (!strcmp(f->string, "min_extra")) dst = &o->r.min_extra, has = &o->has_min_extra;
        else if (!strcmp(f->string, "max_extra")) dst = &o->r.max_extra, has = &o->has_max_extra;
        else
            return andrea_fail(err, "%s: \"%s\": unknown field \"%s\" (min_score, min_ratio, min_margin, min_extra, max_extra)", path,
                           key, (andrea_printable(f->string, field, sizeof field), field));
        if (!cJSON_IsNumber(f) || !isfinite(f->valuedouble))
            return andrea_fail(err, "%s: \"%s\".%s must be a finite number", path, key, f->string);
        *dst = f->valuedouble;
        *has = 1;
    }
    return 0;
}

int andrea_rules_parse(andrea_rules *r, const char *path, const char *text, size_t len, ae_error *err) {
    /* strict (common/strict_input.h): a second object after the first, a key given twice (cJSON
     * would answer the first, a Python writer meant the last) and NUL bytes are refused */
    char why[160];
    cJSON *root = andrea_json_parse_strict(text, len, 1, NULL, why, sizeof why);
    if (!root) return andrea_fail(err, "%s: %s", path, why);
    int rc = 0;
    if (!cJSON_IsObject(root)) rc = andrea_fail(err, "%s: expected a JSON object of class -> rule", path);
    for (const cJSON *e = root->child; !rc && e; e = e->next) {
        if (!strcmp(e->string, "default")) {
            rc = parse_entry(path, e->string, e, &r->file_default, err);
            continue;
        }
        if (strlen(e->string) >= sizeof r->names[0]) {
            char shown[48];
            andrea_printable(e->string, shown, sizeof shown);
            rc = andrea_fail(err, "%s: class name \"%s...\" longer than 63 bytes", path, shown);
            break;
        }
        int slot = -1;
        for (int i = 0; i < r->n; i++)
            if (!strcmp(r->names[i], e->string)) slot = i;
        if (slot < 0) {
            if (r->n >= ANDREA_RULES_MAX) {
                rc = andrea_fail(err, "%s: more than %d classes", path, ANDREA_RULES_MAX);
                break;
            }
            slot = r->n++;
            snprintf(r->names[slot], sizeof r->names[slot], "%s", e->string);
            memset(&r->file[slot], 0, sizeof r->file[slot]);
        }
        rc = parse_entry(path, e->string, e, &r->file[slot], err);
    }
    cJSON_Delete(root);
    return rc;
}

int andrea_rules_load(andrea_rules *r, const char *path, ae_error *err) {
    FILE *f = andrea_fopen_regular(path, err); /* a FIFO or folder is refused, never waited on */
    if (!f) return -1;
    char *buf = malloc(RULES_FILE_MAX + 1);
    if (!buf) {
        fclose(f);
        return andrea_fail(err, "%s: out of memory", path);
    }
    size_t n = fread(buf, 1, RULES_FILE_MAX + 1, f);
    int rd_err = ferror(f);
    fclose(f);
    if (rd_err) {
        free(buf);
        return andrea_fail(err, "%s: read error", path);
    }
    if (n > RULES_FILE_MAX) {
        free(buf);
        return andrea_fail(err, "%s: larger than %d bytes, not a rules file", path, RULES_FILE_MAX);
    }
    buf[n] = 0;
    int rc = andrea_rules_parse(r, path, buf, n, err);
    free(buf);
    return rc;
}

static void apply(andrea_label_rule *dst, const andrea_rule_override *o) {
    if (o->has_min_score) dst->min_score = o->r.min_score;
    if (o->has_min_ratio) dst->min_ratio = o->r.min_ratio;
    if (o->has_min_margin) dst->min_margin = o->r.min_margin;
    if (o->has_min_extra) dst->min_extra = o->r.min_extra;
    if (o->has_max_extra) dst->max_extra = o->r.max_extra;
}

andrea_label_rule andrea_rules_for(const andrea_rules *r, const char *name, const andrea_pass *pass) {
    andrea_label_rule out = pass->rule;
    apply(&out, &r->file_default);
    for (int i = 0; i < r->n; i++)
        if (!strcmp(r->names[i], name)) apply(&out, &r->file[i]);
    apply(&out, &r->flags);
    return out;
}
