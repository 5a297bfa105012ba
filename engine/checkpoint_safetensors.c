/* checkpoint_safetensors.c — the Hugging Face GPT-2 safetensors reader (docs/checkpoints.md).
 *
 * File: 8-byte little-endian header length N, N bytes of JSON {name: {dtype, shape,
 * data_offsets: [begin, end]}, "__metadata__": {...}}, then the data section; offsets are relative
 * to the data section. The config (sizes) comes from config.json beside the file.
 * Invariants, in the order they are established:
 *   1. N <= the file and N <= ANDREA_SAFETENSORS_MAX_HEADER before the header is read;
 *   1b. the header is strict JSON (strict_input.h: nothing after it but padding, no key
 *      given twice, no NUL, UTF-8 without a byte-order mark, no raw control character), as the
 *      safetensors library reads it;
 *   2. every entry's dtype is F32/F16/BF16, its shape and offsets are written as digits only
 *      (serde's usize refuses "64.0" and "1e3"), its byte size equals prod(shape) * dtype size,
 *      its offsets lie inside the data section, and no two entries overlap;
 *   3. every GPT-2 parameter is present exactly once (with or without the `transformer.` prefix)
 *      with the shape config.json implies; unknown tensors are refused (a different architecture
 *      must not load as a wrong GPT-2); causal-mask buffers (h.N.attn.bias, h.N.attn.masked_bias)
 *      are ignored; lm_head.weight, when present, must equal wte (andrea ties the unembedding);
 *   3b. the entries tile the data section exactly (no gap, nothing after the last tensor, an
 *      empty tensor only where the one before it ends), as the safetensors library requires (checked after 3 so a dropped entry is named "missing");
 *   4. only then is the parameter buffer allocated; tensors are converted to fp32 in pieces of
 *      whole rows (<= 4 MB of the file each) on all OpenMP threads but one (that core hashes the
 *      file meanwhile, checkpoint_hash.h), each through its own bounded
 *      scratch buffer (12 MB a thread), Conv1D weights [in, out] transposed to Linear [out, in],
 *      every value checked finite as its piece is converted; the pieces go in file order
 *      (dynamic schedule), so the file is read about sequentially, once.
 * Sharded (andrea_load_safetensors_sharded, Hugging Face's model.safetensors.index.json): steps
 * 1-2 and 3b hold for each shard as for one file; 2b checks the shards against the index (every
 * tensor in the shard the weight_map names, nothing else, total_size); 3 and 4 run over all shards'
 * tensors together, so one model buffer takes every shard's values (no second copy). A shard's
 * problem names the shard, a problem of the whole (a missing tensor) the index.
 * Failure contract: one line "FILE: tensor NAME: problem" (or "FILE: problem"), model zeroed.
 */
#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/checked_size.h"
#include "checkpoint.h"
#include "../common/strict_input.h"
#include "../common/printable.h"
#include "../common/half.h"
#include "../common/finite.h"

#define SCRATCH_BYTES ((size_t)4 << 20)
#define MAX_DIMS 8

enum { DT_F32, DT_F16, DT_BF16 };
static const char *const dtype_names[] = {"F32", "F16", "BF16"};
static const size_t dtype_bytes[] = {4, 2, 2};

typedef struct {
    const char *name; /* as in the file (points into the cJSON tree) */
    char shown[112];  /* name made safe for messages (andrea_printable) */
    int shard;        /* the file that holds it (st_file.shards) */
    int dtype;
    int ndim;
    long long shape[MAX_DIMS];
    size_t begin, end; /* relative to the data section */
} st_entry;

/* Where a GPT-2 tensor goes: llm.c tensor index, its layer (-1 global), expected shape as stored
 * (Conv1D: [in, out]) and whether it is transposed on load. */
typedef struct {
    int tensor, layer, transpose, ndim;
    long long shape[2];
} st_target;

static int pread_all(int fd, void *buf, size_t n, size_t off, const char *path, ae_error *err) {
    char *p = buf;
    while (n > 0) {
        ssize_t r = pread(fd, p, n, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return andrea_fail(err, "%s: read error: %s", path, strerror(errno));
        if (r == 0) return andrea_fail(err, "%s: file ended early (it shrank while being read?)", path);
        p += r;
        n -= (size_t)r;
        off += (size_t)r;
    }
    return 0;
}

/* A JSON number written as digits only (strict_input.h) and representable exactly in a double:
 * the safetensors library reads shapes and offsets as usize, which refuses "64.0", "6.4e1" and
 * "-0" though cJSON reads each as a whole number. */
/* A size or offset: digits only, below 2^53 (every integer there is held exactly by a double;
 * 2^53 + 1 would read as 2^53, so 2^53 itself is refused too; no safetensors file is near it). 0, or JSON_SIZE_NOT_DIGITS / JSON_SIZE_TOO_LARGE
 * so the message says which. */
enum { JSON_SIZE_NOT_DIGITS = -1, JSON_SIZE_TOO_LARGE = -2 };
#define JSON_SIZE_MAX 9007199254740992.0
static int json_size(const cJSON *v, long long *out) {
    if (!andrea_json_is_digits_only(v)) return JSON_SIZE_NOT_DIGITS;
    double d = v->valuedouble;
    if (d >= JSON_SIZE_MAX) return JSON_SIZE_TOO_LARGE;
    if (d < 0 || d != (double)(long long)d) return JSON_SIZE_NOT_DIGITS;
    *out = (long long)d;
    return 0;
}

/* The one-line refusal of a size or offset json_size did not take; what names it ("shape holds
 * a size", "data_offsets holds an offset"). */
static int json_size_fail(int why, const char *path, const st_entry *e, const char *what, ae_error *err) {
    if (why == JSON_SIZE_TOO_LARGE)
        return andrea_fail(err, "%s: tensor %s: %s too large (at most 2^53 - 1 = %.0f)", path, e->shown, what,
                           JSON_SIZE_MAX - 1);
    return andrea_fail(err, "%s: tensor %s: %s that is not a non-negative integer written in digits (no '.', exponent or sign)",
                       path, e->shown, what);
}

static int parse_entry(const cJSON *item, st_entry *e, size_t data_bytes, const char *path, ae_error *err) {
    e->name = item->string;
    andrea_printable(e->name, e->shown, sizeof e->shown);
    if (!cJSON_IsObject(item)) return andrea_fail(err, "%s: tensor %s: header entry is not an object", path, e->shown);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(item, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(item, "shape");
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(item, "data_offsets");
    if (!cJSON_IsString(dt)) return andrea_fail(err, "%s: tensor %s: no dtype", path, e->shown);
    e->dtype = -1;
    for (int i = 0; i < 3; i++)
        if (strcmp(dt->valuestring, dtype_names[i]) == 0) e->dtype = i;
    if (e->dtype < 0)
    {
        char dts[40];
        return andrea_fail(err, "%s: tensor %s: dtype %s not supported (F32, F16, BF16)", path, e->shown,
                       andrea_printable(dt->valuestring, dts, sizeof dts));
    }
    if (!cJSON_IsArray(shape)) return andrea_fail(err, "%s: tensor %s: no shape", path, e->shown);
    e->ndim = cJSON_GetArraySize(shape);
    if (e->ndim > MAX_DIMS) return andrea_fail(err, "%s: tensor %s: %d dimensions", path, e->shown, e->ndim);
    int why;
    for (int i = 0; i < e->ndim; i++)
        if ((why = json_size(cJSON_GetArrayItem(shape, i), &e->shape[i])))
            return json_size_fail(why, path, e, "shape holds a size", err);
    long long b, en;
    if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2)
        return andrea_fail(err, "%s: tensor %s: data_offsets is not [begin, end] with begin <= end", path, e->shown);
    if ((why = json_size(cJSON_GetArrayItem(offs, 0), &b)) || (why = json_size(cJSON_GetArrayItem(offs, 1), &en)))
        return json_size_fail(why, path, e, "data_offsets holds an offset", err);
    if (en < b)
        return andrea_fail(err, "%s: tensor %s: data_offsets is not [begin, end] with begin <= end", path, e->shown);
    e->begin = (size_t)b;
    e->end = (size_t)en;
    size_t n, nbytes;
    if (ae_mul_dims(e->shape, e->ndim, &n) || ae_mul(n, dtype_bytes[e->dtype], &nbytes))
        return andrea_fail(err, "%s: tensor %s: shape overflows", path, e->shown);
    if (e->end > data_bytes)
        return andrea_fail(err, "%s: tensor %s: data_offsets [%zu, %zu] lie outside the data section (%zu bytes)",
                       path, e->shown, e->begin, e->end, data_bytes);
    if (e->end - e->begin != nbytes)
        return andrea_fail(err, "%s: tensor %s: data_offsets span %zu bytes, shape and dtype need %zu", path,
                       e->shown, e->end - e->begin, nbytes);
    return 0;
}

/* By (begin, end), as the safetensors library sorts: an empty tensor [k, k] comes before the
 * tensor that starts at k, so the chain check (step 3b) sees it where it belongs. */
static int by_begin(const void *a, const void *b) {
    const st_entry *x = *(st_entry *const *)a, *y = *(st_entry *const *)b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* Parses "h.<layer>.<rest>"; returns the layer or -1. No sign, no leading zeros. */
static int parse_layer(const char *name, const char **rest) {
    if (strncmp(name, "h.", 2) != 0) return -1;
    const char *p = name + 2;
    if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] >= '0' && p[1] <= '9')) return -1;
    long v = 0;
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + (*p++ - '0');
        if (v > 1000000) return -1;
    }
    if (*p != '.') return -1;
    *rest = p + 1;
    return (int)v;
}

/* Maps a (prefix-stripped) name to its target; 1 = parameter, 0 = ignored buffer, 2 = lm_head,
 * -1 = unknown. */
static int classify(const char *name, const andrea_config *c, st_target *t) {
    long long C = c->d_model, V = c->vocab_size, T = c->max_seq_len;
    static const struct { const char *suffix; int tensor, transpose, ndim, a, b; } layer_map[] = {
        /* a, b: shape in units of C (0 = no second dim) */
        {"ln_1.weight", 2, 0, 1, 1, 0},        {"ln_1.bias", 3, 0, 1, 1, 0},
        {"attn.c_attn.weight", 4, 1, 2, 1, 3}, {"attn.c_attn.bias", 5, 0, 1, 3, 0},
        {"attn.c_proj.weight", 6, 1, 2, 1, 1}, {"attn.c_proj.bias", 7, 0, 1, 1, 0},
        {"ln_2.weight", 8, 0, 1, 1, 0},        {"ln_2.bias", 9, 0, 1, 1, 0},
        {"mlp.c_fc.weight", 10, 1, 2, 1, 4},   {"mlp.c_fc.bias", 11, 0, 1, 4, 0},
        {"mlp.c_proj.weight", 12, 1, 2, 4, 1}, {"mlp.c_proj.bias", 13, 0, 1, 1, 0},
    };
    memset(t, 0, sizeof *t);
    t->layer = -1;
    if (!strcmp(name, "wte.weight")) { *t = (st_target){0, -1, 0, 2, {V, C}}; return 1; }
    if (!strcmp(name, "wpe.weight")) { *t = (st_target){1, -1, 0, 2, {T, C}}; return 1; }
    if (!strcmp(name, "ln_f.weight")) { *t = (st_target){14, -1, 0, 1, {C, 0}}; return 1; }
    if (!strcmp(name, "ln_f.bias")) { *t = (st_target){15, -1, 0, 1, {C, 0}}; return 1; }
    if (!strcmp(name, "lm_head.weight")) { *t = (st_target){0, -1, 0, 2, {V, C}}; return 2; }
    const char *rest;
    int layer = parse_layer(name, &rest);
    if (layer < 0) return -1;
    if (!strcmp(rest, "attn.bias") || !strcmp(rest, "attn.masked_bias")) return layer < c->n_layer ? 0 : -1;
    for (size_t i = 0; i < sizeof layer_map / sizeof layer_map[0]; i++) {
        if (strcmp(rest, layer_map[i].suffix)) continue;
        *t = (st_target){layer_map[i].tensor, layer, layer_map[i].transpose, layer_map[i].ndim,
                         {layer_map[i].a * C, layer_map[i].b * C}};
        return layer < c->n_layer ? 1 : -1;
    }
    return -1;
}

static void shape_str(char *buf, size_t cap, const long long *s, int n) {
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < n && k < cap; i++) k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? ", " : "", s[i]);
    if (k < cap) snprintf(buf + k, cap - k, "]");
}

/* Converts n values of dtype from src into dst. */
static void convert(float *dst, const void *src, size_t n, int dtype) {
    if (dtype == DT_F32) {
        memcpy(dst, src, n * sizeof(float));
    } else {
        const uint16_t *h = src;
        if (dtype == DT_BF16)
            for (size_t i = 0; i < n; i++) dst[i] = andrea_bf16_to_f32(h[i]);
        else
            for (size_t i = 0; i < n; i++) dst[i] = andrea_f16_to_f32(h[i]);
    }
}

/* The first non-finite value among n floats (index), or n. */
static size_t first_nonfinite(const float *p, size_t n) {
    if (!ae_any_nonfinite(p, n)) return n;
    size_t j = 0;
    while (j < n && isfinite(p[j])) j++;
    return j;
}

/* Rows r0..r0+nr-1 of entry e (stored [rows, cols]) into dst (the whole tensor's fp32 home),
 * transposed to [cols, rows] if asked; whole rows, nr * row bytes <= SCRATCH_BYTES. With
 * `compare` dst is not written: the values are compared with it and a mismatch returns 1. A
 * non-finite value returns 2 with its element index in the file's layout (row-major [rows, cols]
 * as stored, whatever andrea transposes it to: the index a user finds it at) in *bad_at, and
 * *bad_nan set when it is a NaN (else an Inf). */
static int load_piece(int fd, size_t data_start, const st_entry *e, const st_target *t, float *dst, size_t r0,
                      size_t nr, int compare, void *scratch, float *fscratch, size_t *bad_at, int *bad_nan,
                      const char *path, ae_error *err) {
    const size_t rows = (size_t)t->shape[0], cols = t->ndim == 2 ? (size_t)t->shape[1] : 1;
    const size_t row_bytes = cols * dtype_bytes[e->dtype], n = nr * cols;
    if (pread_all(fd, scratch, nr * row_bytes, data_start + e->begin + r0 * row_bytes, path, err)) return -1;
    if (compare) {
        convert(fscratch, scratch, n, e->dtype);
        return memcmp(fscratch, dst + r0 * cols, n * sizeof(float)) != 0;
    }
    if (!t->transpose) {
        convert(dst + r0 * cols, scratch, n, e->dtype);
        size_t j = first_nonfinite(dst + r0 * cols, n);
        if (j == n) return 0;
        *bad_at = r0 * cols + j;
        *bad_nan = isnan(dst[r0 * cols + j]);
        return 2;
    }
    /* src chunk: [nr, cols] rows r0.. of the [in=rows, out=cols] Conv1D weight; dst: [out=cols, in=rows] */
    convert(fscratch, scratch, n, e->dtype);
    size_t j = first_nonfinite(fscratch, n);
    if (j < n) {
        *bad_at = r0 * cols + j;
        *bad_nan = isnan(fscratch[j]);
        return 2;
    }
    /* 32 x 32 tiles keep both the strided reads and the strided writes in cache */
    for (size_t ob = 0; ob < cols; ob += 32)
        for (size_t ib = 0; ib < nr; ib += 32) {
            size_t oe = ob + 32 < cols ? ob + 32 : cols, ie = ib + 32 < nr ? ib + 32 : nr;
            for (size_t o = ob; o < oe; o++)
                for (size_t i = ib; i < ie; i++) dst[o * rows + r0 + i] = fscratch[i * cols + o];
        }
    return 0;
}

/* One piece of the load: rows r0..r0+nr-1 of entry `entry`, at most SCRATCH_BYTES of the file. */
typedef struct {
    int entry;
    size_t r0, nr;
} st_piece;

/* One safetensors file: the checkpoint's only one, or one shard of it. */
typedef struct {
    const char *path;
    int fd;
    char *hjson;
    cJSON *root;
    size_t data_start, data_bytes;
    st_entry **sorted; /* its n entries by data offset: a slice of st_file.sorted */
    int n;
} st_shard;

/* One checkpoint being read: what each step below fills in for the next. */
typedef struct {
    const char *path; /* the file, or a sharded checkpoint's index: names what no one shard is at fault for */
    const char *config_path;
    const andrea_shard_index *ix; /* NULL: one file */
    andrea_config cfg;
    size_t sizes[ANDREA_N_PARAM_TENSORS];
    st_shard *shards;
    int n_shards;
    st_entry *entries, **sorted; /* n entries of all shards; sorted: shard by shard, by data offset in each */
    int n;
    int *slot_of; /* [n_slots]: entry index of each GPT-2 parameter slot, or -1 */
    size_t n_slots;
    int lm_head; /* entry index of lm_head.weight, or -1 */
    st_target *tgt; /* [n]: where each entry goes (step 5) */
    float **dst;    /* [n]: its fp32 home in the model, or NULL (ignored buffers, lm_head) */
    st_piece *pieces;
    size_t n_pieces;
} st_file;

/* 1. The header: its length fits the file and the limit, and it is one strict JSON object. */
static int st_read_header(st_shard *f, ae_error *err) {
    const char *path = f->path;
    struct stat st;
    if (fstat(f->fd, &st) != 0) return andrea_fail(err, "%s: cannot stat: %s", path, strerror(errno));
    size_t file_bytes = (size_t)st.st_size;
    uint64_t n_hdr;
    if (file_bytes < 8)
        return andrea_fail(err, "%s: truncated: %zu bytes, shorter than the 8-byte header length", path, file_bytes);
    if (pread_all(f->fd, &n_hdr, 8, 0, path, err)) return -1;
    if (n_hdr > file_bytes - 8)
        return andrea_fail(err, "%s: header length %llu is larger than the file (%zu bytes)", path,
                       (unsigned long long)n_hdr, file_bytes);
    if (n_hdr > ANDREA_SAFETENSORS_MAX_HEADER)
        return andrea_fail(err, "%s: header length %llu exceeds the %u-byte limit", path, (unsigned long long)n_hdr,
                       ANDREA_SAFETENSORS_MAX_HEADER);
    if (!(f->hjson = malloc((size_t)n_hdr + 1))) return andrea_fail(err, "%s: out of memory", path);
    if (pread_all(f->fd, f->hjson, (size_t)n_hdr, 8, path, err)) return -1;
    f->hjson[n_hdr] = '\0';
    /* strict, as the safetensors library itself (serde_json) reads it: nothing after the JSON
     * but the padding spaces, no tensor or field given twice (cJSON would answer the first) */
    char why[160];
    size_t bad_at;
    f->root = andrea_json_parse_strict(f->hjson, (size_t)n_hdr, 1, &bad_at, why, sizeof why);
    if (!f->root || !cJSON_IsObject(f->root)) {
        if (f->root || bad_at != SIZE_MAX) return andrea_fail(err, "%s: header is not a valid JSON object", path);
        return andrea_fail(err, "%s: header: %s", path, why);
    }
    f->data_start = 8 + (size_t)n_hdr;
    f->data_bytes = file_bytes - f->data_start;
    return 0;
}

/* 2. Every entry of shard `k` on its own, then against each other: no two tensors share bytes.
 * Its entries go on at f->entries[f->n]; f->entries holds room for every shard's. */
static int st_parse_entries(st_file *f, int k, ae_error *err) {
    st_shard *sh = &f->shards[k];
    sh->sorted = f->sorted + f->n;
    for (const cJSON *it = sh->root->child; it; it = it->next) {
        if (!strcmp(it->string, "__metadata__")) {
            /* the format's metadata: a map of strings to strings, read by nothing here */
            int ok = cJSON_IsObject(it);
            for (const cJSON *m = ok ? it->child : NULL; m && ok; m = m->next) ok = cJSON_IsString(m);
            if (!ok) return andrea_fail(err, "%s: __metadata__ is not a map of strings to strings", sh->path);
            continue;
        }
        st_entry *e = &f->entries[f->n];
        if (parse_entry(it, e, sh->data_bytes, sh->path, err)) return -1;
        e->shard = k;
        sh->sorted[sh->n++] = e;
        f->n++;
    }
    qsort(sh->sorted, (size_t)sh->n, sizeof *sh->sorted, by_begin);
    const st_entry *reach = NULL; /* the non-empty entry reaching furthest so far */
    for (int i = 0; i < sh->n; i++) {
        const st_entry *e = sh->sorted[i];
        if (e->begin == e->end) continue; /* empty tensors occupy no bytes */
        if (reach && e->begin < reach->end)
            return andrea_fail(err, "%s: tensor %s: data_offsets [%zu, %zu] overlap tensor %s [%zu, %zu]", sh->path,
                           e->shown, e->begin, e->end, reach->shown, reach->begin, reach->end);
        if (!reach || e->end > reach->end) reach = e;
    }
    return 0;
}

/* 2b. (sharded) The shards against the index: every tensor of a shard is one the weight_map
 * maps to that shard (so no tensor is in two shards, and no shard holds what the index does not
 * list), every tensor of the weight_map is in its shard, and total_size, when given, is the sum
 * of the tensors' bytes. */
static int st_check_index(const st_file *f, ae_error *err) {
    const andrea_shard_index *ix = f->ix;
    char *seen = calloc(ix->n_tensors + 1, 1);
    if (!seen) return andrea_fail(err, "%s: out of memory", f->path);
    size_t bytes = 0;
    int rc = 0;
    for (int i = 0; i < f->n && !rc; i++) {
        const st_entry *e = &f->entries[i];
        const char *shard = f->shards[e->shard].path;
        const long t = andrea_shard_index_find(ix, e->name);
        char other[112];
        if (t < 0)
            rc = andrea_fail(err, "%s: tensor %s: not in the index's weight_map (a shard holds only what the index lists)",
                             shard, e->shown);
        else if (ix->shard_of[t] != e->shard)
            rc = andrea_fail(err, "%s: tensor %s: the index maps it to shard %s (a tensor in two shards, or in the wrong one)",
                             shard, e->shown, andrea_printable(ix->shards[ix->shard_of[t]], other, sizeof other));
        else if (ae_add(bytes, e->end - e->begin, &bytes))
            rc = andrea_fail(err, "%s: the shards' sizes overflow", f->path);
        else
            seen[t] = 1;
    }
    for (size_t t = 0; t < ix->n_tensors && !rc; t++)
        if (!seen[t]) {
            char name[112], shard[112];
            rc = andrea_fail(err, "%s: tensor %s: missing from shard %s, which the weight_map names for it", f->path,
                             andrea_printable(ix->names[t], name, sizeof name),
                             andrea_printable(ix->shards[ix->shard_of[t]], shard, sizeof shard));
        }
    if (!rc && ix->has_total_size && ix->total_size != bytes)
        rc = andrea_fail(err, "%s: metadata.total_size is %zu bytes, but the shards' tensors hold %zu", f->path,
                         ix->total_size, bytes);
    free(seen);
    return rc;
}

/* 3. Map entries to GPT-2 parameters. Slots: 0 wte, 1 wpe, 14 ln_f.w, 15 ln_f.b (global) and
 * 16 + layer*16 + tensor for per-layer tensors. Unknown, misshapen or doubled tensors are refused. */
static int st_map_slots(st_file *f, ae_error *err) {
    f->n_slots = 16 + (size_t)f->cfg.n_layer * 16;
    if (!(f->slot_of = malloc(f->n_slots * sizeof *f->slot_of))) return andrea_fail(err, "%s: out of memory", f->path);
    for (size_t s = 0; s < f->n_slots; s++) f->slot_of[s] = -1;
    f->lm_head = -1;
    for (int i = 0; i < f->n; i++) {
        const st_entry *e = &f->entries[i];
        const char *name = e->name;
        if (!strncmp(name, "transformer.", 12)) name += 12;
        st_target t;
        int kind = classify(name, &f->cfg, &t);
        const char *path = f->shards[e->shard].path;
        if (kind < 0)
            return andrea_fail(err, "%s: tensor %s: not a GPT-2 parameter for a %d-layer model (unexpected tensor)",
                           path, e->shown, f->cfg.n_layer);
        if (kind == 0) continue;
        char want[64], have[128];
        shape_str(want, sizeof want, t.shape, t.ndim);
        shape_str(have, sizeof have, e->shape, e->ndim);
        if (e->ndim != t.ndim || e->shape[0] != t.shape[0] || (t.ndim == 2 && e->shape[1] != t.shape[1]))
            return andrea_fail(err, "%s: tensor %s: shape %s, but %s implies %s", path, e->shown, have,
                           f->config_path, want);
        if (kind == 2) {
            f->lm_head = i;
            continue;
        }
        size_t slot = t.layer < 0 ? (size_t)t.tensor : 16 + (size_t)t.layer * 16 + (size_t)t.tensor;
        if (f->slot_of[slot] >= 0)
            return andrea_fail(err, "%s: tensor %s: appears twice (also as %s%s%s)", path, e->shown,
                           f->entries[f->slot_of[slot]].shown, f->ix ? " in shard " : "",
                           f->ix ? f->ix->shards[f->entries[f->slot_of[slot]].shard] : "");
        f->slot_of[slot] = i;
    }
    return 0;
}

/* 4b. The tensors fill shard k's data section exactly, as the safetensors library requires:
 * bytes that belong to no tensor mean a header that lost an entry or a corrupt offset. */
static int st_check_tiled(const st_shard *f, ae_error *err) {
    /* each tensor begins where the one before it (sorted) ends, empty ones included: the
     * safetensors library refuses an empty tensor off that chain, so andrea does too */
    size_t expect_at = 0;
    for (int i = 0; i < f->n; i++) {
        const st_entry *e = f->sorted[i];
        if (e->begin == e->end && e->begin != expect_at)
            return andrea_fail(err, "%s: tensor %s: empty, but its data_offsets [%zu, %zu] are not where the tensor "
                               "before it ends (byte %zu of the data section)", f->path, e->shown, e->begin, e->end,
                               expect_at);
        if (e->begin > expect_at)
            return andrea_fail(err, "%s: bytes [%zu, %zu) of the data section belong to no tensor (before tensor %s)",
                           f->path, expect_at, e->begin, e->shown);
        expect_at = e->end;
    }
    if (expect_at != f->data_bytes)
        return andrea_fail(err, "%s: trailing bytes: the tensors end at byte %zu of the data section, the file holds %zu",
                       f->path, expect_at, f->data_bytes);
    return 0;
}

/* 4. Nothing missing (the index names a sharded checkpoint's missing tensor), then every file tiled (4b). */
static int st_check_complete(const st_file *f, ae_error *err) {
    static const char *const global_names[16] = {[0] = "wte.weight", [1] = "wpe.weight",
                                                  [14] = "ln_f.weight", [15] = "ln_f.bias"};
    static const char *const layer_names[16] = {
        [2] = "ln_1.weight",  [3] = "ln_1.bias",   [4] = "attn.c_attn.weight", [5] = "attn.c_attn.bias",
        [6] = "attn.c_proj.weight", [7] = "attn.c_proj.bias", [8] = "ln_2.weight", [9] = "ln_2.bias",
        [10] = "mlp.c_fc.weight", [11] = "mlp.c_fc.bias", [12] = "mlp.c_proj.weight",
        [13] = "mlp.c_proj.bias"};
    for (size_t s = 0; s < f->n_slots; s++) {
        int layer = s < 16 ? -1 : (int)((s - 16) / 16), tensor = (int)(s % 16);
        const char *nm = layer < 0 ? global_names[tensor] : layer_names[tensor];
        if (!nm || f->slot_of[s] >= 0) continue;
        if (layer < 0) return andrea_fail(err, "%s: tensor %s: missing", f->path, nm);
        return andrea_fail(err, "%s: tensor h.%d.%s: missing", f->path, layer, nm);
    }
    for (int k = 0; k < f->n_shards; k++)
        if (st_check_tiled(&f->shards[k], err)) return -1;
    return 0;
}

/* 5a. Every entry's target and home, and the pieces to read: the parameters (role 1), then
 * lm_head (role 2, compared with wte once wte is in), each in file order, in whole rows of at
 * most SCRATCH_BYTES. */
static int st_plan(st_file *f, andrea_model *m, ae_error *err) {
    float *base[ANDREA_N_PARAM_TENSORS];
    base[0] = m->memory;
    for (int i = 1; i < ANDREA_N_PARAM_TENSORS; i++) base[i] = base[i - 1] + f->sizes[i - 1];
    if (!f->tgt) f->tgt = calloc((size_t)f->n + 1, sizeof *f->tgt);
    if (!f->dst) f->dst = calloc((size_t)f->n + 1, sizeof *f->dst);
    if (!f->tgt || !f->dst) return andrea_fail(err, "%s: out of memory", f->path);
    size_t n_pieces = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < f->n; k++) {
            const int i = (int)(f->sorted[k] - f->entries);
            const char *name = f->entries[i].name;
            if (!strncmp(name, "transformer.", 12)) name += 12;
            st_target *t = &f->tgt[i];
            const int kind = classify(name, &f->cfg, t);
            if (kind == 0 || (kind == 2) != (pass == 1)) continue;
            if (kind == 1) {
                const size_t per_layer = t->layer < 0 ? 0 : f->sizes[t->tensor] / (size_t)f->cfg.n_layer;
                f->dst[i] = base[t->tensor] + (t->layer < 0 ? 0 : (size_t)t->layer * per_layer);
            }
            const size_t rows = (size_t)t->shape[0], cols = t->ndim == 2 ? (size_t)t->shape[1] : 1;
            const size_t rows_per = SCRATCH_BYTES / (cols * dtype_bytes[f->entries[i].dtype]); /* >= 4: rows <= 1 MB */
            for (size_t r0 = 0; r0 < rows; r0 += rows_per) {
                if (f->pieces) f->pieces[n_pieces] = (st_piece){i, r0, rows - r0 < rows_per ? rows - r0 : rows_per};
                n_pieces++;
            }
        }
    f->n_pieces = n_pieces;
    return 0;
}

/* 5b. The pieces [from, to), on every OpenMP thread (each with its own scratch); the error of the
 * first failing piece in plan order is the one reported, as a serial read would. Returns 0, -1
 * (err set), 1 (lm_head differs from wte) or 2 (a non-finite value, err set). */
static int st_read_pieces(st_file *f, size_t from, size_t to, float *wte, ae_error *err) {
    size_t bad_piece = (size_t)-1;
    int bad_rc = 0;
    /* one core is left to the checkpoint's sha256, which runs beside the load (checkpoint_hash.h) */
    const int n_threads = omp_get_max_threads() > 1 ? omp_get_max_threads() - 1 : 1;
#pragma omp parallel num_threads(n_threads)
    {
        void *scratch = malloc(SCRATCH_BYTES);
        float *fscratch = malloc(SCRATCH_BYTES * 2); /* fp32 of a chunk of 2-byte values */
        ae_error perr = {{0}};
#pragma omp for schedule(dynamic, 1)
        for (long long k = (long long)from; k < (long long)to; k++) {
            size_t seen;
#pragma omp atomic read
            seen = bad_piece;
            if ((size_t)k > seen) continue; /* an earlier piece failed: its error is the answer */
            const st_piece *p = &f->pieces[k];
            const st_entry *e = &f->entries[p->entry];
            const st_shard *sh = &f->shards[e->shard];
            const int compare = f->dst[p->entry] == NULL;
            size_t bad_at = 0;
            int bad_nan = 0;
            int rc = !scratch || !fscratch ? andrea_fail(&perr, "%s: out of memory", f->path)
                                           : load_piece(sh->fd, sh->data_start, e, &f->tgt[p->entry],
                                                        compare ? wte : f->dst[p->entry], p->r0, p->nr, compare,
                                                        scratch, fscratch, &bad_at, &bad_nan, sh->path, &perr);
            if (rc == 2) { /* checked here, not only by andrea_model_load, so the message names the file's tensor */
                const size_t cols = e->ndim == 2 ? (size_t)e->shape[1] : 1;
                char at[64] = "";
                if (e->ndim == 2) snprintf(at, sizeof at, ", [%zu, %zu] as stored", bad_at / cols, bad_at % cols);
                andrea_fail(&perr, "%s: tensor %s holds a non-finite value (%s at element %zu%s)", sh->path, e->shown,
                            bad_nan ? "NaN" : "Inf", bad_at, at);
            }
            if (rc) {
#pragma omp critical(st_bad)
                if ((size_t)k < bad_piece) {
                    bad_piece = (size_t)k;
                    bad_rc = rc;
                    *err = perr;
                }
            }
        }
        free(scratch);
        free(fscratch);
    }
    return bad_rc;
}

/* 5. Allocate the model and convert every tensor into it (finite values only, checked as each
 * piece is converted); an lm_head must equal wte (tied unembedding). */
static int st_load_values(st_file *f, andrea_model *m, ae_error *err) {
    const char *path = f->path;
    if (andrea_model_alloc(m, &f->cfg, err)) return andrea_prefix(err, "%s", path);
    if (st_plan(f, m, err)) return -1; /* counts the pieces (f->pieces is NULL) */
    if (!(f->pieces = malloc((f->n_pieces + 1) * sizeof *f->pieces))) return andrea_fail(err, "%s: out of memory", path);
    if (st_plan(f, m, err)) return -1; /* fills them in */
    size_t n_params = f->n_pieces;
    for (size_t k = 0; k < f->n_pieces; k++)
        if (!f->dst[f->pieces[k].entry]) {
            n_params = k;
            break;
        }
    int r = st_read_pieces(f, 0, n_params, m->p.wte, err);
    if (r == 0) r = st_read_pieces(f, n_params, f->n_pieces, m->p.wte, err);
    if (r == 1)
        return andrea_fail(err, "%s: tensor %s: differs from wte.weight (andrea needs the unembedding tied "
                            "to the token embedding)", f->shards[f->entries[f->lm_head].shard].path,
                            f->entries[f->lm_head].shown);
    if (r) return -1;
    int dt = f->entries[f->slot_of[0]].dtype;
    for (size_t s = 0; s < f->n_slots; s++)
        if (f->slot_of[s] >= 0 && f->entries[f->slot_of[s]].dtype != dt) dt = -1;
    m->format = ANDREA_FMT_SAFETENSORS;
    snprintf(m->stored_dtype, sizeof m->stored_dtype, "%s",
             dt == DT_F32 ? "fp32" : dt == DT_F16 ? "fp16" : dt == DT_BF16 ? "bf16" : "mixed");
    return 0;
}

/* 0. Every file opened (a FIFO or folder is refused, never waited on), no shard the same file as
 * another (two names, one inode: its tensors would be read twice), every header read, and room
 * for all their entries. */
static int st_open(st_file *f, ae_error *err) {
    size_t n_items = 0;
    struct stat *ids = calloc((size_t)f->n_shards, sizeof *ids);
    if (!ids) return andrea_fail(err, "%s: out of memory", f->path);
    int rc = 0;
    for (int k = 0; k < f->n_shards && !rc; k++) {
        st_shard *sh = &f->shards[k];
        if ((sh->fd = andrea_open_regular(sh->path, err)) < 0 || st_read_header(sh, err)) {
            rc = -1;
            break;
        }
        if (fstat(sh->fd, &ids[k]) != 0) rc = andrea_fail(err, "%s: cannot stat: %s", sh->path, strerror(errno));
        for (int j = 0; j < k && !rc; j++)
            if (ids[j].st_dev == ids[k].st_dev && ids[j].st_ino == ids[k].st_ino)
                rc = andrea_fail(err, "%s: the same file as shard %s (two names in the index, one file)", sh->path,
                                 f->ix ? f->ix->shards[j] : f->shards[j].path);
        n_items += (size_t)cJSON_GetArraySize(sh->root);
    }
    free(ids);
    if (rc) return -1;
    f->entries = calloc(n_items + 1, sizeof *f->entries);
    f->sorted = calloc(n_items + 1, sizeof *f->sorted);
    if (!f->entries || !f->sorted) return andrea_fail(err, "%s: out of memory", f->path);
    return 0;
}

/* Steps 0-5 over f's files, then everything freed but the model. */
static int st_load(st_file *f, andrea_model *m, ae_error *err) {
    size_t total;
    int rc = -1;
    if (andrea_config_json_read(f->config_path, &f->cfg, err)) goto out;
    if (andrea_param_sizes(&f->cfg, f->sizes, &total, err)) {
        andrea_prefix(err, "%s", f->config_path);
        goto out;
    }
    if (st_open(f, err)) goto out;
    for (int k = 0; k < f->n_shards; k++)
        if (st_parse_entries(f, k, err)) goto out;
    if ((f->ix && st_check_index(f, err)) || st_map_slots(f, err) || st_check_complete(f, err) ||
        st_load_values(f, m, err))
        goto out;
    rc = 0;
out:
    free(f->pieces);
    free(f->tgt);
    free(f->dst);
    free(f->slot_of);
    free(f->sorted);
    free(f->entries);
    for (int k = 0; k < f->n_shards; k++) {
        cJSON_Delete(f->shards[k].root);
        free(f->shards[k].hjson);
        if (f->shards[k].fd >= 0) close(f->shards[k].fd);
    }
    return rc;
}

int andrea_load_safetensors(andrea_model *m, const char *path, const char *config_path, ae_error *err) {
    st_shard one = {.path = path, .fd = -1};
    st_file f = {.path = path, .config_path = config_path, .shards = &one, .n_shards = 1};
    return st_load(&f, m, err);
}

int andrea_load_safetensors_sharded(andrea_model *m, const char *index_path, const andrea_shard_index *ix,
                                    const char *config_path, ae_error *err) {
    char **paths = NULL;
    int n_paths = 0;
    if (andrea_shard_paths(index_path, ix, &paths, &n_paths, err)) return -1;
    st_shard *shards = calloc((size_t)ix->n_shards, sizeof *shards);
    if (!shards) {
        andrea_shard_paths_free(paths, n_paths);
        return andrea_fail(err, "%s: out of memory", index_path);
    }
    for (int k = 0; k < ix->n_shards; k++) shards[k] = (st_shard){.path = paths[1 + k], .fd = -1};
    st_file f = {.path = index_path, .config_path = config_path, .ix = ix, .shards = shards, .n_shards = ix->n_shards};
    int rc = st_load(&f, m, err);
    free(shards);
    andrea_shard_paths_free(paths, n_paths);
    return rc;
}
