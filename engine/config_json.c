/* config_json.c — reads a Hugging Face GPT-2 config.json (cJSON) into an andrea_config.
 *
 * Invariant: every setting that would change the computation away from the ANDREA model of docs/checkpoints.md
 * is refused here, by name, rather than silently ignored: a model that loads computes what its
 * trainer computed. Sizes are range-checked again by andrea_param_sizes before any allocation.
 */
#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint.h"
#include "../common/strict_input.h"
#include "../common/printable.h"

/* The file, read whole (bounded by ANDREA_CONFIG_JSON_MAX) and NUL-terminated; NULL on failure.
 * A FIFO or folder is refused before anything is read (a FIFO would block). */
static char *slurp(const char *path, size_t *len, ae_error *err) {
    FILE *f = andrea_fopen_regular(path, err);
    if (!f) return NULL;
    struct stat st;
    char *buf = NULL;
    if (fstat(fileno(f), &st) != 0) {
        andrea_fail(err, "%s: cannot stat: %s", path, strerror(errno));
    } else if ((unsigned long long)st.st_size > ANDREA_CONFIG_JSON_MAX) {
        andrea_fail(err, "%s: %lld bytes, too large for a config.json (limit %u)", path,
                (long long)st.st_size, ANDREA_CONFIG_JSON_MAX);
    } else if (!(buf = malloc((size_t)st.st_size + 1))) {
        andrea_fail(err, "%s: out of memory", path);
    } else if (fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
        andrea_fail(err, "%s: read error", path);
        free(buf);
        buf = NULL;
    } else {
        buf[st.st_size] = '\0';
        *len = (size_t)st.st_size;
    }
    fclose(f);
    return buf;
}

/* A positive integer field written as digits (64.0 would make Hugging Face's nn.Linear fail);
 * `alt` (may be NULL) is an older name for the same field, `hf` (may be NULL) the name Hugging
 * Face's GPT2Config maps onto it (attribute_map: hidden_size -> n_embd, ...). Hugging Face lets
 * `hf` win when both are given, so a config whose two values differ would build another model
 * there: refused; `hf` alone is read as the field. */
static int get_int(const cJSON *root, const char *key, const char *alt, const char *hf, int *out, const char *path,
                   ae_error *err) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v && alt) v = cJSON_GetObjectItemCaseSensitive(root, alt);
    const cJSON *h = hf ? cJSON_GetObjectItemCaseSensitive(root, hf) : NULL;
    const char *name = v ? key : hf;
    if (!v && h) v = h;
    if (!v) return andrea_fail(err, "%s: missing \"%s\"", path, key);
    if (!cJSON_IsNumber(v)) return andrea_fail(err, "%s: \"%s\" is not a number", path, name);
    double d = v->valuedouble;
    if (!andrea_json_is_digits_only(v) || d < 1 || d > 2147483647.0)
        return andrea_fail(err, "%s: \"%s\" = %g is not a positive integer written as digits", path, name, d);
    if (h && h != v && !(cJSON_IsNumber(h) && h->valuedouble == d))
        return andrea_fail(err, "%s: \"%s\" and \"%s\" (its Hugging Face name, which wins there) disagree: give one", path,
                           key, hf);
    *out = (int)d;
    return 0;
}

/* A boolean field that, when present, must have the value andrea implements. */
static int want_bool(const cJSON *root, const char *key, int want, const char *path, ae_error *err) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsBool(v)) return andrea_fail(err, "%s: \"%s\" is not true/false", path, key);
    if (cJSON_IsTrue(v) != want)
        return andrea_fail(err, "%s: \"%s\": %s is not supported (ANDREA models use %s)", path, key,
                       want ? "false" : "true", want ? "true" : "false");
    return 0;
}

int andrea_config_json_read(const char *path, andrea_config *cfg, ae_error *err) {
    size_t len = 0;
    char *text = slurp(path, &len, err);
    if (!text) return -1;
    int rc = -1;
    char why[160];
    size_t bad_at;
    /* strict: a key given twice would be read as its first value here and as its last by
     * Hugging Face (Python's json), so the two would build different models */
    cJSON *root = andrea_json_parse_strict(text, len, 1, &bad_at, why, sizeof why);
    if (!root) {
        if (bad_at != SIZE_MAX)
            andrea_fail(err, "%s: not a JSON object (invalid JSON near byte %zu)", path, bad_at);
        else
            andrea_fail(err, "%s: %s", path, why);
        goto done;
    }
    if (!cJSON_IsObject(root)) {
        andrea_fail(err, "%s: not a JSON object", path);
        goto done;
    }
    andrea_config c = {0};
    if (get_int(root, "n_embd", NULL, "hidden_size", &c.d_model, path, err) ||
        get_int(root, "n_layer", NULL, "num_hidden_layers", &c.n_layer, path, err) ||
        get_int(root, "n_head", NULL, "num_attention_heads", &c.n_head, path, err) ||
        get_int(root, "n_positions", "n_ctx", "max_position_embeddings", &c.max_seq_len, path, err) ||
        get_int(root, "vocab_size", NULL, NULL, &c.vocab_size, path, err))
        goto done;
    c.padded_vocab_size = c.vocab_size;
    c.head_dim = c.d_model / c.n_head;

    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "model_type");
    if (v && !(cJSON_IsString(v) && strcmp(v->valuestring, "gpt2") == 0)) {
        andrea_fail(err, "%s: model_type is not \"gpt2\"", path);
        goto done;
    }
    v = cJSON_GetObjectItemCaseSensitive(root, "layer_norm_epsilon");
    if (v && !(cJSON_IsNumber(v) && fabs(v->valuedouble - 1e-5) <= 1e-12)) {
        andrea_fail(err, "%s: layer_norm_epsilon must be 1e-5 (ANDREA models use 1e-5)", path);
        goto done;
    }
    v = cJSON_GetObjectItemCaseSensitive(root, "activation_function");
    /* gelu_new and gelu_pytorch_tanh are the same tanh approximation of GELU */
    if (v && !(cJSON_IsString(v) && (strcmp(v->valuestring, "gelu_new") == 0 ||
                                     strcmp(v->valuestring, "gelu_pytorch_tanh") == 0))) {
        char shown[48];
        if (cJSON_IsString(v))
            andrea_fail(err, "%s: activation_function \"%s\" is not supported (ANDREA models use gelu_new)",
                    path, andrea_printable(v->valuestring, shown, sizeof shown));
        else
            andrea_fail(err, "%s: activation_function is not a string", path);
        goto done;
    }
    v = cJSON_GetObjectItemCaseSensitive(root, "n_inner");
    if (v && !cJSON_IsNull(v) &&
        !(cJSON_IsNumber(v) && v->valuedouble == 4.0 * (double)c.d_model)) {
        andrea_fail(err, "%s: n_inner must be null or 4*n_embd = %d (ANDREA MLPs are 4*C wide)", path,
                4 * c.d_model);
        goto done;
    }
    if (want_bool(root, "scale_attn_weights", 1, path, err) ||
        want_bool(root, "scale_attn_by_inverse_layer_idx", 0, path, err) ||
        want_bool(root, "tie_word_embeddings", 1, path, err))
        goto done;
    *cfg = c;
    rc = 0;
done:
    cJSON_Delete(root);
    free(text);
    return rc;
}
