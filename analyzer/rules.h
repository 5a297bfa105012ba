/* rules.h — the label rules in force for one classify run (defaults, a --rules file, flags).
 *
 * Job: resolve, per class name, the andrea_label_rule to apply, and serialise the rules in force
 * into the run's settings (so a catalog says which rule produced each label).
 * Rules file (JSON, read by common/strict_input.h: a regular file of at most 1 MiB; a second value
 * after the object, a key given twice, NUL bytes are refused): an object whose keys are class names (built-in or user
 * suite names) or "default" (every class without its own entry), each an object with any of
 * "min_score", "min_ratio", "min_margin", "min_extra", "max_extra" (finite numbers; max_extra 0: none); keys it does not set keep the pass's
 * default. Unknown fields are refused (a typo must not silently keep a default).
 * Precedence: flags (--min-score, --min-ratio, --min-margin: every class) > the file's class entry >
 * the file's "default" > the pass's built-in rule.
 * Failure contract: -1 with "FILE: problem" naming the offending key.
 */
#ifndef ANDREA_RULES_H
#define ANDREA_RULES_H

#include "pass.h"

#define ANDREA_RULES_MAX 64

typedef struct {
    int has_min_score, has_min_ratio, has_min_margin, has_min_extra, has_max_extra;
    andrea_label_rule r;
} andrea_rule_override;

typedef struct {
    char names[ANDREA_RULES_MAX][64];
    andrea_rule_override file[ANDREA_RULES_MAX];
    int n;
    andrea_rule_override file_default;  /* the file's "default" entry */
    andrea_rule_override flags;         /* command-line thresholds */
} andrea_rules;

void andrea_rules_init(andrea_rules *r);
int andrea_rules_load(andrea_rules *r, const char *path, ae_error *err);
/* The same on text[0..len) (path only names it in messages): the fuzz target's entry. */
int andrea_rules_parse(andrea_rules *r, const char *path, const char *text, size_t len, ae_error *err);
/* The rule for class `name` given its pass. */
andrea_label_rule andrea_rules_for(const andrea_rules *r, const char *name, const andrea_pass *pass);

#endif
