/* dump_read.c — the checked dump reader (dump.h).
 *
 * Job: open an HDF5 file, prove it is an andrea dump whose datasets agree with its root config,
 * and read items, maps and per-head values back.
 * Invariants: after andrea_dump_open succeeds, every suite listed in the root "suites" attribute
 * has tokens [n, T], lengths [n], targets [k, 3], entities [m, 3] (int32), attention
 * [n, L, H, T, T] (2- or 4-byte float, as maps_dtype says), head_out_norm / head_dla [n, L, H, T]
 * (float32, unless contrib is "none") and head_out [n, L, H, T, C] where present, with
 * 1 <= T <= max_seq_len; values (token ids, lengths, target positions) are checked when read.
 * Failure contract: NULL / -1 with "FILE: problem"; the HDF5 library never prints, and nothing a
 * file says is trusted for an allocation before the overflow-checked size math.
 * andrea_dump_check_isolated (dump_isolated.c) runs all of the above in a forked child, so a
 * crash inside HDF5 itself on a crafted file becomes a refusal in the caller.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/checked_size.h"
#include "../common/printable.h"
#include "../common/strict_input.h"
#include "../common/sha256.h"
#include "../engine/checkpoint.h"
#include "dump.h"
#include "dump_h5.h"
#include "../common/half.h"

enum { DS_TOKENS, DS_LENGTHS, DS_TARGETS, DS_ENTITIES, DS_ATTENTION, DS_NORM, DS_DLA, DS_OUT, DS_COUNT };
static const char *const ds_names[DS_COUNT] = {"tokens",    "lengths",       "targets",  "entities",
                                               "attention", "head_out_norm", "head_dla", "head_out"};

typedef struct {
    andrea_dump_suite_info info;
    hid_t group;
    hid_t ds[DS_COUNT]; /* -1 when absent */
    int attn_bytes;     /* 2 or 4 */
    int *lengths;       /* [n_seq], each in 1..T: loaded by the first map read (suite_lengths) */
} suite_rec;

struct andrea_dump {
    char path[4096];
    hid_t file;
    andrea_config cfg;
    char version[64];
    char ckpt_path[4096];
    char sha256[80];
    char maps[8];
    char contrib[8];
    char tokenizer[512];
    char tokenizer_sha[65];
    char seal[65];      /* the content checksum of the user block (hex) */
    char *parts;        /* a master file (MPI dump): its part files' names "a,b,c"; else NULL */
    int n_suites;
    suite_rec *suites;
    /* token text by id from the suites' token_text (andrea_dump_token_text): loaded on first use */
    char **id_text;     /* [vocab_size], NULL entries for ids never seen */
    int id_text_state;  /* 0 not loaded, 1 loaded, -1 failed (err in id_text_err) */
    ae_error id_text_err;
};

/* ---- attributes ---- */

/* Opens attribute `name` of loc with its type and dataspace (the caller closes what is >= 0);
 * an absent attribute means the file is not an andrea dump. */
static int attr_open(hid_t loc, const char *name, hid_t *a_out, hid_t *t_out, hid_t *sp_out, const char *h5_path,
                     ae_error *err) {
    htri_t ex = H5Aexists(loc, name);
    if (ex <= 0) return andrea_fail(err, "%s: not an andrea dump (attribute '%s' missing)", h5_path, name);
    hid_t a, t, sp;
    H5_ID(a, H5Aopen(loc, name, H5P_DEFAULT));
    *a_out = a;
    H5_ID(t, H5Aget_type(a));
    *t_out = t;
    H5_ID(sp, H5Aget_space(a));
    *sp_out = sp;
    return 0;
fail:
    return -1;
}

/* Reads a fixed-length string attribute into out; -1 with a message if absent or not one.
 * Variable-length strings are refused unread: andrea never writes them, and reading a damaged
 * one makes HDF5 1.10 crash inside its global heap code. */
static int attr_string(hid_t loc, const char *name, char *out, size_t cap, const char *h5_path, ae_error *err) {
    hid_t a = -1, t = -1, mt = -1, sp = -1;
    char *buf = NULL;
    int rc = -1;
    if (attr_open(loc, name, &a, &t, &sp, h5_path, err)) goto fail;
    if (H5Tget_class(t) != H5T_STRING || H5Sget_simple_extent_npoints(sp) != 1 || H5Tis_variable_str(t) != 0) {
        andrea_fail(err, "%s: attribute '%s' is not a fixed-length string", h5_path, name);
        goto fail;
    }
    size_t n = H5Tget_size(t);
    if (n == 0 || n > (1u << 16)) {
        andrea_fail(err, "%s: attribute '%s' has an absurd size (%zu bytes)", h5_path, name, n);
        goto fail;
    }
    if (!(buf = calloc(1, n + 2))) {
        andrea_fail(err, "%s: out of memory", h5_path);
        goto fail;
    }
    /* memory type: one byte longer, NUL-terminated, so a string that fills its n bytes (h5py's
     * fixed-length strings do) comes back whole: at the same length HDF5 keeps the last byte
     * for the terminator ("fp16" read as "fp1") */
    H5_ID(mt, H5Tcopy(H5T_C_S1));
    H5_TRY(H5Tset_size(mt, n + 1));
    H5_TRY(H5Tset_cset(mt, H5Tget_cset(t) == H5T_CSET_UTF8 ? H5T_CSET_UTF8 : H5T_CSET_ASCII));
    H5_TRY(H5Tset_strpad(mt, H5T_STR_NULLTERM));
    H5_TRY(H5Aread(a, mt, buf));
    buf[n + 1] = 0;
    snprintf(out, cap, "%s", buf);
    rc = 0;
fail:
    free(buf);
    if (mt >= 0) H5Tclose(mt);
    if (sp >= 0) H5Sclose(sp);
    if (t >= 0) H5Tclose(t);
    if (a >= 0) H5Aclose(a);
    return rc;
}

/* Reads a scalar integer attribute (any integer type) as long long. */
static int attr_ll(hid_t loc, const char *name, long long *out, const char *h5_path, ae_error *err) {
    hid_t a = -1, t = -1, sp = -1;
    int rc = -1;
    if (attr_open(loc, name, &a, &t, &sp, h5_path, err)) goto fail;
    if (H5Tget_class(t) != H5T_INTEGER || H5Sget_simple_extent_npoints(sp) != 1) {
        andrea_fail(err, "%s: attribute '%s' is not a single integer", h5_path, name);
        goto fail;
    }
    H5_TRY(H5Aread(a, H5T_NATIVE_LLONG, out));
    rc = 0;
fail:
    if (sp >= 0) H5Sclose(sp);
    if (t >= 0) H5Tclose(t);
    if (a >= 0) H5Aclose(a);
    return rc;
}

/* A suite's "seed": one unsigned integer (andrea writes uint64). Another type was read by a bare
 * H5Aread whose failure said only "HDF5 r failed: no detail". */
static int attr_seed(hid_t group, const char *suite, uint64_t *out, const char *h5_path, ae_error *err) {
    hid_t a = -1, t = -1, sp = -1;
    int rc = -1;
    if (attr_open(group, "seed", &a, &t, &sp, h5_path, err)) goto fail;
    if (H5Tget_class(t) != H5T_INTEGER || H5Sget_simple_extent_npoints(sp) != 1) {
        andrea_fail(err, "%s: /%s: attribute 'seed' is not a single integer (the suite's probe seed, uint64)", h5_path, suite);
        goto fail;
    }
    if (H5Tget_sign(t) == H5T_SGN_2) { /* a signed seed is taken only when it is not negative */
        long long v;
        H5_TRY(H5Aread(a, H5T_NATIVE_LLONG, &v));
        if (v < 0) {
            andrea_fail(err, "%s: /%s: attribute 'seed' = %lld is negative (the suite's probe seed, uint64)", h5_path, suite, v);
            goto fail;
        }
        *out = (uint64_t)v;
    } else {
        H5_TRY(H5Aread(a, H5T_NATIVE_UINT64, out));
    }
    rc = 0;
fail:
    if (sp >= 0) H5Sclose(sp);
    if (t >= 0) H5Tclose(t);
    if (a >= 0) H5Aclose(a);
    return rc;
}

static int attr_int_range(hid_t loc, const char *name, int lo, int hi, int *out, const char *h5_path,
                          ae_error *err) {
    long long v;
    if (attr_ll(loc, name, &v, h5_path, err)) return -1;
    if (v < lo || v > hi) return andrea_fail(err, "%s: attribute '%s' = %lld is outside %d..%d", h5_path, name, v, lo, hi);
    *out = (int)v;
    return 0;
}

/* ---- datasets ---- */

/* A master file's virtual dataset as andrea writes it: every mapping reads /suite/name of one of
 * the part files the master lists (parts: "a,b,c"; checked against their seals at open), never
 * another file. */
static int virtual_ok(hid_t dcpl, const char *suite, const char *name, const char *parts) {
    size_t n = 0;
    char want[512], file[4096], dset[512];
    if (H5Pget_virtual_count(dcpl, &n) < 0 || n < 1 || n > (1u << 20)) return 0;
    snprintf(want, sizeof want, "/%s/%s", suite, name);
    for (size_t i = 0; i < n; i++) {
        ssize_t fl = H5Pget_virtual_filename(dcpl, i, file, sizeof file);
        ssize_t dl = H5Pget_virtual_dsetname(dcpl, i, dset, sizeof dset);
        if (fl <= 0 || fl >= (ssize_t)sizeof file || dl <= 0 || dl >= (ssize_t)sizeof dset || strcmp(dset, want)) return 0;
        const size_t len = strlen(file);
        int listed = 0;
        for (const char *p = parts; *p && !listed; p = strchr(p, ',') ? strchr(p, ',') + 1 : p + strlen(p))
            listed = !strncmp(p, file, len) && (p[len] == ',' || p[len] == 0);
        if (!listed) return 0;
    }
    return 1;
}

/* ---- nothing outside the file ---- */

/* What is wrong with a dataset's creation properties, or NULL when they are as andrea writes them:
 * values stored in this file (no external raw-data files: HDF5 would read another file, which the
 * seal does not cover, or block forever on a FIFO), a contiguous or chunked layout (virtual only
 * where allow_virtual: a master file's maps, whose mappings virtual_ok checks), no filter but
 * deflate. */
static const char *dcpl_problem(hid_t dcpl, int allow_virtual) {
    H5D_layout_t lay = H5Pget_layout(dcpl);
    int nf = H5Pget_nfilters(dcpl);
    if (H5Pget_external_count(dcpl) != 0) return "stores its values in external files (a dump must not make HDF5 read other files)";
    if (lay == H5D_VIRTUAL && !allow_virtual) return "is a virtual dataset (a dump must not make HDF5 read other files)";
    if (lay != H5D_CONTIGUOUS && lay != H5D_CHUNKED && lay != H5D_VIRTUAL) return "has a storage layout andrea does not write";
    if (nf < 0 || nf > 1) return "has filters andrea does not write";
    if (nf == 1) {
        unsigned flags, cv[8];
        size_t ncv = 8;
        char fname[64];
        if (H5Pget_filter2(dcpl, 0, &flags, &ncv, cv, sizeof fname, fname, NULL) != H5Z_FILTER_DEFLATE)
            return "has a filter other than deflate";
        /* andrea compresses maps and head outputs only, one (sequence, layer, head) a chunk. A
         * compressed chunk of many maps is inflated whole for every map read from it once it
         * outgrows HDF5's chunk cache: a 200 KB file of one such chunk took 44 s to classify,
         * and the time grows with the square of its size. */
        hsize_t chunk[8];
        if (H5Pget_chunk(dcpl, 8, chunk) != 5 || chunk[0] != 1 || chunk[1] != 1 || chunk[2] != 1)
            return "is compressed in chunks of more than one map (andrea writes one (sequence, layer, head) a chunk)";
    }
    return NULL;
}

typedef struct {
    int check_datasets; /* open every dataset and check its creation properties */
    char bad[320];      /* the link refused, and why */
} outside_ctx;

/* H5Lvisit callback: 1 (stop) at the first link andrea does not write. */
static herr_t outside_cb(hid_t group, const char *name, const H5L_info_t *info, void *data) {
    outside_ctx *c = data;
    if (info->type != H5L_TYPE_HARD) {
            snprintf(c->bad, sizeof c->bad, "/%.200s is a%s link (a dump must not make HDF5 read other files)", name,
                 info->type == H5L_TYPE_EXTERNAL ? "n external" : info->type == H5L_TYPE_SOFT ? " soft" : " user-defined");
        return 1;
    }
    if (!c->check_datasets) return 0;
    hid_t o = H5Oopen(group, name, H5P_DEFAULT);
    if (o < 0) {
        snprintf(c->bad, sizeof c->bad, "/%.200s cannot be opened", name);
        return 1;
    }
    const char *why = NULL;
    if (H5Iget_type(o) == H5I_DATASET) {
        hid_t dcpl = H5Dget_create_plist(o);
        why = dcpl < 0 ? "has no readable creation properties" : dcpl_problem(dcpl, 0);
        if (dcpl >= 0) H5Pclose(dcpl);
        if (why) snprintf(c->bad, sizeof c->bad, "/%.200s %s", name, why);
    }
    H5Oclose(o);
    return why ? 1 : 0;
}

/* Refuses a file whose links could make HDF5 open another file: andrea writes hard links only,
 * and HDF5 follows an external link (or a user-defined one) wherever it points, without the
 * seal's protection, and blocks forever on a FIFO there. H5Lvisit itself recurses through hard
 * links only, so this walk opens nothing outside. With check_datasets (a file without virtual
 * datasets: a serial dump or a part file), every dataset's storage is checked as well
 * (dcpl_self_contained); a master file's datasets are checked as they are opened (open_checked). */
static int refuse_links_outside(hid_t file, const char *path, int check_datasets, ae_error *err) {
    const char *h5_path = path;
    outside_ctx c = {check_datasets, ""};
    herr_t r = H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, outside_cb, &c);
    if (r > 0 || c.bad[0])
        return andrea_fail(err, "%s: %s, which andrea never writes", path, c.bad);
    H5_TRY(r);
    return 0;
fail:
    return -1;
}

/* Opens group/name and checks rank, dims (a -1 in want means "any, returned in got") and type
 * class/size (size 0 = any of 2 or 4 for floats). */
static hid_t open_checked(hid_t group, const char *suite, const char *name, int rank, const long long *want,
                          long long *got, H5T_class_t cls, size_t size, int *size_out, const char *h5_path,
                          ae_error *err, const char *parts) {
    hid_t d = -1, sp = -1, t = -1, dcpl = -1;
    htri_t ex = H5Lexists(group, name, H5P_DEFAULT);
    if (ex <= 0) {
        andrea_fail(err, "%s: /%s/%s is missing", h5_path, suite, name);
        goto fail;
    }
    H5_ID(d, H5Dopen2(group, name, H5P_DEFAULT));
    /* Storage first, before anything (the extent of a virtual dataset) reads through it: andrea
     * writes contiguous and chunked datasets only, with their values in this file. HDF5 1.10
     * trusts a compact dataset's stored size when reading (a damaged one overflows its own
     * buffer), so compact layouts are refused, and contiguous data must hold every element it
     * claims (below). */
    H5_ID(dcpl, H5Dget_create_plist(d));
    const char *why = dcpl_problem(dcpl, parts != NULL);
    if (why) {
        andrea_fail(err, "%s: /%s/%s %s, which andrea never writes", h5_path, suite, name, why);
        goto fail;
    }
    const H5D_layout_t lay = H5Pget_layout(dcpl);
    if (lay == H5D_VIRTUAL && !virtual_ok(dcpl, suite, name, parts)) { /* a master's maps: from its parts only */
        andrea_fail(err, "%s: /%s/%s has a storage layout andrea does not write (damaged file?)", h5_path, suite, name);
        goto fail;
    }
    H5_ID(sp, H5Dget_space(d));
    H5_ID(t, H5Dget_type(d));
    int r = H5Sget_simple_extent_ndims(sp);
    hsize_t dims[8];
    if (r != rank || H5Sget_simple_extent_dims(sp, dims, NULL) != rank) {
        andrea_fail(err, "%s: /%s/%s has rank %d, expected %d", h5_path, suite, name, r, rank);
        goto fail;
    }
    for (int i = 0; i < rank; i++) {
        if (dims[i] > (hsize_t)1 << 40) {
            andrea_fail(err, "%s: /%s/%s dimension %d is absurd (%llu)", h5_path, suite, name, i, (unsigned long long)dims[i]);
            goto fail;
        }
        if (want[i] >= 0 && (long long)dims[i] != want[i]) {
            char shape[160] = "", exp[160] = "";
            for (int k = 0; k < rank; k++) {
                size_t n1 = strlen(shape), n2 = strlen(exp);
                snprintf(shape + n1, sizeof shape - n1, "%s%llu", k ? ", " : "", (unsigned long long)dims[k]);
                snprintf(exp + n2, sizeof exp - n2, "%s%lld", k ? ", " : "", want[k] >= 0 ? want[k] : (long long)dims[k]);
            }
            andrea_fail(err, "%s: /%s/%s has shape [%s], expected [%s] from the root config", h5_path, suite, name, shape, exp);
            goto fail;
        }
        if (got) got[i] = (long long)dims[i];
    }
    H5T_class_t c = H5Tget_class(t);
    size_t sz = H5Tget_size(t);
    int ok = c == cls && (size ? sz == size : (sz == 2 || sz == 4));
    if (!ok) {
        andrea_fail(err, "%s: /%s/%s has type %s of %zu bytes, expected %s%s", h5_path, suite, name,
                c == H5T_INTEGER ? "integer" : c == H5T_FLOAT ? "float" : "other", sz,
                cls == H5T_INTEGER ? "int32" : "float", size == 4 ? "32" : size == 0 ? "16/32" : "");
        goto fail;
    }
    int layout_ok = 1;
    if (lay == H5D_CHUNKED) {
        /* Chunks as andrea writes them: within the dataset, whole rows (last dimension complete).
         * HDF5 1.10 overflows its buffers on some damaged chunk shapes. */
        hsize_t cd[8];
        layout_ok = H5Pget_chunk(dcpl, rank, cd) == rank && cd[rank - 1] == dims[rank - 1];
        for (int i = 0; i < rank && layout_ok; i++) layout_ok = cd[i] >= 1 && cd[i] <= dims[i];
    }
    if (!layout_ok) {
        andrea_fail(err, "%s: /%s/%s has a storage layout andrea does not write (damaged file?)", h5_path, suite, name);
        goto fail;
    }
    if (lay == H5D_CONTIGUOUS || (lay == H5D_CHUNKED && cls == H5T_INTEGER)) {
        /* The values must be in the file: contiguous data exactly; chunked integers (tokens,
         * lengths, targets, entities: every chunk written) at least whole uncompressed, within
         * deflate's ~1032:1 compressed. A chunked dataset of 40000 x 32000 tokens with no chunk
         * written (HDF5 reads zeros) took 10 GB from a 166 KB file. Float datasets may lack
         * chunks (`--heads` writes the chosen heads' outputs only); their reads are one map or
         * one head's values at a time, within the config's bounds. */
        hssize_t npts = H5Sget_simple_extent_npoints(sp);
        const hsize_t stored = H5Dget_storage_size(d), want = npts > 0 ? (hsize_t)npts * sz : 0;
        const int deflated = H5Pget_nfilters(dcpl) == 1;
        const int short_of = lay == H5D_CONTIGUOUS ? stored != want
                           : deflated         ? want / 1100 > stored + ((hsize_t)1 << 20) / 1100
                                              : stored < want;
        if (npts < 0 || (npts > 0 && short_of)) {
            andrea_fail(err, "%s: /%s/%s stores %llu bytes for %lld elements of %zu bytes (damaged file?)", h5_path, suite,
                    name, (unsigned long long)stored, (long long)npts, sz);
            goto fail;
        }
    }
    if (size_out) *size_out = (int)sz;
    H5Pclose(dcpl);
    H5Tclose(t);
    H5Sclose(sp);
    return d;
fail:
    if (dcpl >= 0) H5Pclose(dcpl);
    if (t >= 0) H5Tclose(t);
    if (sp >= 0) H5Sclose(sp);
    if (d >= 0) H5Dclose(d);
    return -1;
}

/* Reads a hyperslab of an opened dataset into buf with memory type mtype. */
static int read_slab(hid_t d, hid_t mtype, int rank, const hsize_t *start, const hsize_t *count, void *buf,
                     const char *h5_path, const char *what, ae_error *err) {
    hid_t fs = -1, ms = -1;
    int rc = -1;
    H5_ID(fs, H5Dget_space(d));
    H5_ID(ms, H5Screate_simple(rank, count, NULL));
    H5_TRY(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL));
    H5_TRY(H5Dread(d, mtype, ms, fs, H5P_DEFAULT, buf));
    rc = 0;
fail:
    if (rc) andrea_prefix(err, "%s", what);
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    return rc;
}

/* ---- open / close ---- */

void andrea_dump_close(andrea_dump *d) {
    if (!d) return;
    for (int i = 0; i < d->n_suites; i++) {
        for (int k = 0; k < DS_COUNT; k++)
            if (d->suites[i].ds[k] >= 0) H5Dclose(d->suites[i].ds[k]);
        if (d->suites[i].group >= 0) H5Gclose(d->suites[i].group);
        free(d->suites[i].lengths);
    }
    free(d->suites);
    if (d->id_text)
        for (int i = 0; i < d->cfg.vocab_size; i++) free(d->id_text[i]);
    free(d->id_text);
    free(d->parts);
    if (d->file >= 0) H5Fclose(d->file);
    free(d);
}

static int open_suite(andrea_dump *d, suite_rec *s, const char *name, ae_error *err) {
    const char *h5_path = d->path;
    const andrea_config *c = &d->cfg;
    for (int k = 0; k < DS_COUNT; k++) s->ds[k] = -1;
    s->group = -1;
    snprintf(s->info.name, sizeof s->info.name, "%s", name);
    /* only what a probe file may name (andrea writes no other): a name becomes a class, a file
     * slug and a page anchor (the series page's #class-NAME) */
    if (!andrea_probe_suite_name_valid(name))
        return andrea_fail(err, "%s: suite name '%.80s' in attribute 'suites' is not 1-63 letters, digits, '_' or '-'",
                           h5_path, name);
    htri_t ex = H5Lexists(d->file, name, H5P_DEFAULT);
    if (ex <= 0) return andrea_fail(err, "%s: suite group /%s is missing", h5_path, name);
    H5_ID(s->group, H5Gopen2(d->file, name, H5P_DEFAULT));
    htri_t has_seed = H5Aexists(s->group, "seed");
    H5_TRY(has_seed);
    if (has_seed > 0 && attr_seed(s->group, name, &s->info.seed, h5_path, err)) return -1;

    long long got[5], want2[2] = {-1, -1};
    s->ds[DS_TOKENS] = open_checked(s->group, name, "tokens", 2, want2, got, H5T_INTEGER, 4, NULL, h5_path, err, NULL);
    if (s->ds[DS_TOKENS] < 0) return -1;
    long long n = got[0], T = got[1];
    if (n < 1) return andrea_fail(err, "%s: /%s/tokens holds no sequences", h5_path, name);
    if (T < 1 || T > c->max_seq_len)
        return andrea_fail(err, "%s: /%s/tokens length %lld is outside 1..max_seq_len %d", h5_path, name, T, c->max_seq_len);
    if (n > (1LL << 30)) return andrea_fail(err, "%s: /%s has an absurd number of sequences (%lld)", h5_path, name, n);
    /* the group's own n_seq and T attributes (what h5py readers see first) must tell the same */
    static const char *const shape_attrs[2] = {"n_seq", "T"};
    for (int k = 0; k < 2; k++) {
        htri_t has = H5Aexists(s->group, shape_attrs[k]);
        H5_TRY(has);
        long long v, want = k == 0 ? n : T;
        if (has > 0 && attr_ll(s->group, shape_attrs[k], &v, h5_path, err)) return -1;
        if (has > 0 && v != want)
            return andrea_fail(err, "%s: /%s: attribute %s = %lld, but tokens is [%lld, %lld]", h5_path, name,
                               shape_attrs[k], v, n, T);
    }
    s->info.n_seq = (int)n;
    s->info.T = (int)T;
    long long wl[1] = {n}, wt[2] = {-1, 3}, wa[5] = {n, c->n_layer, c->n_head, T, T}, wv[4] = {n, c->n_layer, c->n_head, T},
              wo[5] = {n, c->n_layer, c->n_head, T, c->d_model};
    if ((s->ds[DS_LENGTHS] = open_checked(s->group, name, "lengths", 1, wl, NULL, H5T_INTEGER, 4, NULL, h5_path, err, NULL)) < 0)
        return -1;
    if ((s->ds[DS_TARGETS] = open_checked(s->group, name, "targets", 2, wt, NULL, H5T_INTEGER, 4, NULL, h5_path, err, NULL)) < 0)
        return -1;
    if ((s->ds[DS_ENTITIES] = open_checked(s->group, name, "entities", 2, wt, NULL, H5T_INTEGER, 4, NULL, h5_path, err, NULL)) < 0)
        return -1;
    size_t want_att = !strcmp(d->maps, "fp16") ? 2 : 4;
    if ((s->ds[DS_ATTENTION] = open_checked(s->group, name, "attention", 5, wa, NULL, H5T_FLOAT, want_att,
                                            &s->attn_bytes, h5_path, err, d->parts)) < 0)
        return -1;
    if (strcmp(d->contrib, "none") != 0) {
        if ((s->ds[DS_NORM] = open_checked(s->group, name, "head_out_norm", 4, wv, NULL, H5T_FLOAT, 4, NULL, h5_path, err, d->parts)) < 0)
            return -1;
        if ((s->ds[DS_DLA] = open_checked(s->group, name, "head_dla", 4, wv, NULL, H5T_FLOAT, 4, NULL, h5_path, err, d->parts)) < 0)
            return -1;
    }
    htri_t has_out = H5Lexists(s->group, "head_out", H5P_DEFAULT);
    if (!strcmp(d->contrib, "full") && has_out <= 0)
        return andrea_fail(err, "%s: /%s/head_out is missing (contrib is \"full\")", h5_path, name);
    if (has_out > 0 &&
        (s->ds[DS_OUT] = open_checked(s->group, name, "head_out", 5, wo, NULL, H5T_FLOAT, 4, NULL, h5_path, err, d->parts)) < 0)
        return -1;
    return 0;
fail:
    return -1;
}

/* The seal of path checked against its content (want: the seal's hex digest): HDF5 parses
 * nothing of a file whose bytes are not the ones written. 0 or -1. */
static int check_seal(const char *path, char want[65], ae_error *err) {
    FILE *raw = fopen(path, "rb");
    if (!raw) {
        andrea_fail(err, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    char block[ANDREA_DUMP_USERBLOCK + 1];
    size_t got = fread(block, 1, ANDREA_DUMP_USERBLOCK, raw);
    block[got] = 0;
    size_t ml = strlen(ANDREA_DUMP_MAGIC);
    if (got < ANDREA_DUMP_USERBLOCK || memcmp(block, ANDREA_DUMP_MAGIC, ml) != 0) {
        fclose(raw);
        htri_t is = H5Fis_hdf5(path);
        if (is <= 0)
            andrea_fail(err, "%s: not an HDF5 file (an andrea dump is HDF5; was this written by `andrea dump`?)", path);
        else
            andrea_fail(err, "%s: not an andrea dump (HDF5, but without the andrea header in its user block)", path);
        h5_last_error(block);
        return -1;
    }
    /* the block-tree checksum the writer makes, or the plain sha256 of dumps written before it */
    char have[65];
    want[0] = 0;
    const char *tree = "sha256-blocks ";
    int hrc;
    if (strncmp(block + ml, tree, strlen(tree)) == 0) {
        fclose(raw);
        char *end;
        errno = 0;
        unsigned long long block_size = strtoull(block + ml + strlen(tree), &end, 10);
        if (errno || block_size < 4096 || block_size > (1ull << 30) || sscanf(end, " %64[0-9a-f]", want) != 1 ||
            strlen(want) != 64) {
            andrea_fail(err, "%s: damaged andrea header (bad sha256-blocks line)", path);
            return -1;
        }
        hrc = andrea_sha256_blocks(path, ANDREA_DUMP_USERBLOCK, (size_t)block_size, have, err);
    } else if (sscanf(block + ml, "sha256 %64[0-9a-f]", want) == 1 && strlen(want) == 64) {
        hrc = andrea_sha256_stream(raw, ANDREA_DUMP_USERBLOCK, have, path, err);
        fclose(raw);
    } else {
        fclose(raw);
        andrea_fail(err, "%s: damaged andrea header (no sha256 line)", path);
        return -1;
    }
    if (hrc) return -1;
    if (!andrea_sha256_hex_equal(want, have)) {
        andrea_fail(err, "%s: damaged file: content checksum does not match its header (truncated, corrupted, or "
                     "modified after andrea wrote it)", path);
        return -1;
    }
    return 0;
}

/* One part of a master file: present beside it, intact (its own seal), and the very file the master
 * was written with (its seal equals the one the master recorded, which the master's seal covers). */
static int check_part(const char *master, const char *dir, const char *name, const char *recorded, int n_parts,
                      ae_error *err) {
    char full[8200], have[65];
    if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..") || strlen(recorded) != 64)
        return andrea_fail(err, "%s: damaged master file (bad part list)", master);
    snprintf(full, sizeof full, "%s%s", dir, name);
    struct stat st;
    if (stat(full, &st) != 0 || !S_ISREG(st.st_mode))
        return andrea_fail(err, "%s: part file %s is missing (this master file of an MPI dump maps its values from %d part "
                            "files beside it; docs/dump-format.md)", master, full, n_parts);
    if (check_seal(full, have, err)) return -1;
    if (!andrea_sha256_hex_equal(have, recorded))
        return andrea_fail(err, "%s: part file %s is not the one this master file was written with (its seal differs)",
                       master, full);
    /* the master's virtual datasets read the part's datasets through whatever links they hold */
    hid_t f = H5Fopen(full, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        char m[200];
        return andrea_fail(err, "%s: damaged HDF5 file, cannot open it (%s)", full, h5_last_error(m));
    }
    int rc = refuse_links_outside(f, full, 1, err);
    H5Fclose(f);
    return rc;
}

/* A master file (root attribute "parts"): every part checked (check_part), their names kept in
 * d->parts for the virtual datasets' check. A part file itself is refused with its master's name. */
static int check_parts(andrea_dump *d, ae_error *err) {
    const char *path = d->path, *h5_path = d->path;
    if (H5Aexists(d->file, "andrea_part") > 0) {
        char master[4096] = "?";
        (void)attr_string(d->file, "master", master, sizeof master, h5_path, err);
        return andrea_fail(err, "%s: a part file of an MPI dump, not a dump by itself: open its master file %s", path,
                       master);
    }
    if (H5Aexists(d->file, "parts") <= 0) return 0;
    const size_t cap = (size_t)1 << 16;
    char *names = malloc(cap + 1), *seals = malloc(cap + 1), dir[4200];
    int rc = -1, n = 1, n_seals = 1;
    if (!names || !seals) {
        andrea_fail(err, "%s: out of memory", path);
        goto out;
    }
    if (attr_string(d->file, "parts", names, cap + 1, h5_path, err) ||
        attr_string(d->file, "part_seals", seals, cap + 1, h5_path, err))
        goto out;
    for (const char *p = names; *p; p++) n += *p == ',';
    for (const char *p = seals; *p; p++) n_seals += *p == ',';
    if (n != n_seals) {
        andrea_fail(err, "%s: damaged master file (%d parts, %d seals)", path, n, n_seals);
        goto out;
    }
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path + 1) : 0, path);
    if (!(d->parts = strdup(names))) {
        andrea_fail(err, "%s: out of memory", path);
        goto out;
    }
    char *sn = NULL, *ss = NULL, *name = strtok_r(names, ",", &sn), *seal = strtok_r(seals, ",", &ss);
    for (int i = 0; i < n; i++, name = strtok_r(NULL, ",", &sn), seal = strtok_r(NULL, ",", &ss))
        if (check_part(path, dir, name ? name : "", seal ? seal : "", n, err)) goto out;
    rc = 0;
out:
    free(names);
    free(seals);
    return rc;
}

/* The root `config` attribute (JSON of the same numbers, for readers such as h5py) against the
 * int attributes andrea reads: a reader of either must see one model. Keys it lacks are not
 * checked (the ints are the record); a key that is there must hold the same integer. 0 or -1. */
static int check_config_json(andrea_dump *d, ae_error *err) {
    if (H5Aexists(d->file, "config") <= 0) return 0;
    char *text = malloc((1u << 16) + 2);
    if (!text) return andrea_fail(err, "%s: out of memory", d->path);
    int rc = attr_string(d->file, "config", text, (1u << 16) + 2, d->path, err);
    cJSON *root = NULL;
    if (!rc) {
        char why[160];
        root = andrea_json_parse_strict(text, strlen(text), 1, NULL, why, sizeof why);
        if (!cJSON_IsObject(root)) rc = andrea_fail(err, "%s: root attribute 'config' is not a JSON object", d->path);
    }
    const andrea_config *c = &d->cfg;
    const struct {
        const char *key;
        int value;
    } want[] = {{"n_layer", c->n_layer},       {"n_head", c->n_head},
                {"d_model", c->d_model},       {"head_dim", c->head_dim},
                {"vocab_size", c->vocab_size}, {"padded_vocab_size", c->padded_vocab_size},
                {"max_seq_len", c->max_seq_len}};
    for (size_t i = 0; !rc && i < sizeof want / sizeof *want; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, want[i].key);
        if (v && !(andrea_json_is_digits_only(v) && v->valuedouble == (double)want[i].value))
            rc = andrea_fail(err, "%s: root attribute 'config' says %s is not %d, the %s attribute's value (a damaged or "
                                  "edited dump)", d->path, want[i].key, want[i].value, want[i].key);
    }
    cJSON_Delete(root);
    free(text);
    return rc;
}

/* The root attributes of d's open file: the model shape, the checkpoint, maps_dtype, contrib, the
 * tokenizer, and the suites' names into suites (cap bytes). 0 or -1. */
static int read_root_attrs(andrea_dump *d, char *suites, size_t cap, ae_error *err) {
    const char *path = d->path, *h5_path = d->path;
    if (attr_string(d->file, "andrea_version", d->version, sizeof d->version, h5_path, err)) return -1;
    andrea_config *c = &d->cfg;
    if (attr_int_range(d->file, "n_layer", 1, 1024, &c->n_layer, h5_path, err) ||
        attr_int_range(d->file, "n_head", 1, 1024, &c->n_head, h5_path, err) ||
        attr_int_range(d->file, "d_model", 1, 65536, &c->d_model, h5_path, err) ||
        attr_int_range(d->file, "head_dim", 1, 65536, &c->head_dim, h5_path, err) ||
        attr_int_range(d->file, "vocab_size", 1, 1 << 24, &c->vocab_size, h5_path, err) ||
        attr_int_range(d->file, "padded_vocab_size", 1, 1 << 24, &c->padded_vocab_size, h5_path, err) ||
        attr_int_range(d->file, "max_seq_len", 1, 1 << 20, &c->max_seq_len, h5_path, err))
        return -1;
    size_t sizes[ANDREA_N_PARAM_TENSORS], total;
    if (andrea_param_sizes(c, sizes, &total, err)) {
        andrea_prefix(err, "%s: root config is not a valid model shape", path);
        return -1;
    }
    if (check_config_json(d, err)) return -1;
    if (attr_string(d->file, "checkpoint_path", d->ckpt_path, sizeof d->ckpt_path, h5_path, err) ||
        attr_string(d->file, "checkpoint_sha256", d->sha256, sizeof d->sha256, h5_path, err) ||
        attr_string(d->file, "maps_dtype", d->maps, sizeof d->maps, h5_path, err) ||
        attr_string(d->file, "contrib", d->contrib, sizeof d->contrib, h5_path, err) ||
        attr_string(d->file, "suites", suites, cap, h5_path, err))
        return -1;
    if (H5Aexists(d->file, "tokenizer") > 0 &&
        attr_string(d->file, "tokenizer", d->tokenizer, sizeof d->tokenizer, h5_path, err))
        return -1;
    if (H5Aexists(d->file, "tokenizer_vocab_sha256") > 0 &&
        attr_string(d->file, "tokenizer_vocab_sha256", d->tokenizer_sha, sizeof d->tokenizer_sha, h5_path, err))
        return -1;
    if (strcmp(d->maps, "fp16") && strcmp(d->maps, "fp32")) {
        andrea_fail(err, "%s: maps_dtype '%s' is neither fp16 nor fp32", path, d->maps);
        return -1;
    }
    if (strcmp(d->contrib, "none") && strcmp(d->contrib, "norm") && strcmp(d->contrib, "full")) {
        andrea_fail(err, "%s: contrib '%s' is not none, norm or full", path, d->contrib);
        return -1;
    }
    return 0;
}

andrea_dump *andrea_dump_open(const char *path, ae_error *err) {
    h5_silence();
    struct stat st;
    if (stat(path, &st) != 0) {
        andrea_fail(err, "%s: cannot open: no such file", path);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        andrea_fail(err, "%s: not a regular file", path);
        return NULL;
    }
    char want[65];
    if (check_seal(path, want, err)) return NULL;
    andrea_dump *d = calloc(1, sizeof *d);
    if (!d) {
        andrea_fail(err, "%s: out of memory", path);
        return NULL;
    }
    d->file = -1;
    snprintf(d->path, sizeof d->path, "%s", path);
    snprintf(d->seal, sizeof d->seal, "%s", want);
    d->file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (d->file < 0) {
        char m[200];
        andrea_fail(err, "%s: damaged HDF5 file, cannot open it (%s)", path, h5_last_error(m));
        free(d);
        return NULL;
    }
    char suites[4096];
    /* parts first: a master's datasets are virtual, checked as they are opened (open_suite) */
    if (check_parts(d, err) || refuse_links_outside(d->file, path, d->parts == NULL, err) ||
        read_root_attrs(d, suites, sizeof suites, err))
        goto fail;
    int n = 1;
    for (const char *p = suites; *p; p++) n += *p == ',';
    if (!suites[0]) {
        andrea_fail(err, "%s: attribute 'suites' is empty", path);
        goto fail;
    }
    /* strtok_r below would pass over an empty name ("a,", ",a", "a,,b"): andrea writes none */
    if (suites[0] == ',' || suites[strlen(suites) - 1] == ',' || strstr(suites, ",,")) {
        char shown[96];
        andrea_fail(err, "%s: attribute 'suites' ('%s') holds an empty suite name (names are separated by single commas)",
                    path, andrea_printable(suites, shown, sizeof shown));
        goto fail;
    }
    d->suites = calloc((size_t)n, sizeof *d->suites);
    if (!d->suites) {
        andrea_fail(err, "%s: out of memory", path);
        goto fail;
    }
    char *save = NULL;
    for (char *name = strtok_r(suites, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        suite_rec *s = &d->suites[d->n_suites++];
        if (open_suite(d, s, name, err)) goto fail;
        for (int j = 0; j < d->n_suites - 1; j++)
            if (!strcmp(d->suites[j].info.name, name)) {
                andrea_fail(err, "%s: suite '%s' listed twice", path, name);
                goto fail;
            }
    }
    return d;
fail:
    andrea_dump_close(d);
    return NULL;
}

/* ---- accessors ---- */

const andrea_config *andrea_dump_config(const andrea_dump *d) { return &d->cfg; }
const char *andrea_dump_checkpoint_path(const andrea_dump *d) { return d->ckpt_path; }
const char *andrea_dump_checkpoint_sha256(const andrea_dump *d) { return d->sha256; }
const char *andrea_dump_maps_dtype(const andrea_dump *d) { return d->maps; }
const char *andrea_dump_seal_hex(const andrea_dump *d) { return d->seal; }
const char *andrea_dump_contrib(const andrea_dump *d) { return d->contrib; }
const char *andrea_dump_tokenizer(const andrea_dump *d) { return d->tokenizer; }
const char *andrea_dump_tokenizer_vocab_sha256(const andrea_dump *d) { return d->tokenizer_sha; }
int andrea_dump_n_suites(const andrea_dump *d) { return d->n_suites; }
const andrea_dump_suite_info *andrea_dump_suite(const andrea_dump *d, int i) {
    return i >= 0 && i < d->n_suites ? &d->suites[i].info : NULL;
}

int andrea_dump_has(const andrea_dump *d, int suite, const char *dataset) {
    if (suite < 0 || suite >= d->n_suites) return 0;
    for (int k = 0; k < DS_COUNT; k++)
        if (!strcmp(ds_names[k], dataset)) return d->suites[suite].ds[k] >= 0;
    return 0;
}

/* ---- reads ---- */

static int read_ints(hid_t ds, long long rows, int cols, int **out, const char *h5_path, const char *what,
                     ae_error *err) {
    size_t n;
    *out = NULL;
    if (ae_mul((size_t)rows, (size_t)cols, &n) || ae_mul(n ? n : 1, sizeof(int), &n))
        return andrea_fail(err, "%s: %s too large", h5_path, what);
    int *buf = malloc(n);
    if (!buf) return andrea_fail(err, "%s: out of memory reading %s", h5_path, what);
    if (rows > 0) {
        hsize_t st[2] = {0, 0}, cnt[2] = {(hsize_t)rows, (hsize_t)cols};
        if (read_slab(ds, H5T_NATIVE_INT, cols > 1 ? 2 : 1, st, cnt, buf, h5_path, what, err)) {
            free(buf);
            return -1;
        }
    }
    *out = buf;
    return 0;
}

static long long ds_rows(hid_t ds) {
    hid_t sp = H5Dget_space(ds);
    if (sp < 0) return -1;
    hsize_t dims[2] = {0, 0};
    int r = H5Sget_simple_extent_dims(sp, dims, NULL);
    H5Sclose(sp);
    return r < 1 ? -1 : (long long)dims[0];
}

int andrea_dump_read_items(andrea_dump *d, int suite, probe_suite *out, ae_error *err) {
    const char *h5_path = d->path;
    memset(out, 0, sizeof *out);
    if (suite < 0 || suite >= d->n_suites) return andrea_fail(err, "%s: no suite %d", h5_path, suite);
    suite_rec *s = &d->suites[suite];
    const int n = s->info.n_seq, T = s->info.T;
    char what[128];
    int *tokens = NULL, *lengths = NULL, *targets = NULL, *ents = NULL;
    long long n_t = ds_rows(s->ds[DS_TARGETS]), n_e = ds_rows(s->ds[DS_ENTITIES]);
    if (n_t < 0 || n_e < 0) return andrea_fail(err, "%s: /%s: cannot read the targets' shape", h5_path, s->info.name);
    snprintf(what, sizeof what, "/%s/tokens", s->info.name);
    if (read_ints(s->ds[DS_TOKENS], n, T, &tokens, h5_path, what, err)) goto fail;
    snprintf(what, sizeof what, "/%s/lengths", s->info.name);
    if (read_ints(s->ds[DS_LENGTHS], n, 1, &lengths, h5_path, what, err)) goto fail;
    snprintf(what, sizeof what, "/%s/targets", s->info.name);
    if (read_ints(s->ds[DS_TARGETS], n_t, 3, &targets, h5_path, what, err)) goto fail;
    snprintf(what, sizeof what, "/%s/entities", s->info.name);
    if (read_ints(s->ds[DS_ENTITIES], n_e, 3, &ents, h5_path, what, err)) goto fail;

    snprintf(out->name, sizeof out->name, "%s", s->info.name);
    snprintf(out->source, sizeof out->source, "%.255s", h5_path);
    out->seed = s->info.seed;
    out->items = calloc((size_t)n, sizeof *out->items);
    if (!out->items) {
        andrea_fail(err, "%s: out of memory", h5_path);
        goto fail;
    }
    out->n_items = n;
    /* Count per-item targets and spans, checking every row before it is used. */
    for (long long r = 0; r < n_t; r++) {
        int q = targets[3 * r + 1], k = targets[3 * r + 2], i = targets[3 * r];
        if (i < 0 || i >= n) {
            andrea_fail(err, "%s: /%s/targets row %lld names sequence %d of %d", h5_path, s->info.name, r, i, n);
            goto fail;
        }
        if (k < 0 || k > q || q >= lengths[i]) {
            andrea_fail(err, "%s: /%s/targets row %lld: (query %d, key %d) is not 0 <= key <= query < length %d",
                    h5_path, s->info.name, r, q, k, lengths[i]);
            goto fail;
        }
        out->items[i].n_targets++;
    }
    for (long long r = 0; r < n_e; r++) {
        int i = ents[3 * r], a = ents[3 * r + 1], b = ents[3 * r + 2];
        if (i < 0 || i >= n || a < 0 || a >= b || b > lengths[i]) {
            andrea_fail(err, "%s: /%s/entities row %lld is not a span of a sequence", h5_path, s->info.name, r);
            goto fail;
        }
        out->items[i].n_entities++;
    }
    for (int i = 0; i < n; i++) {
        probe_item *it = &out->items[i];
        int len = lengths[i];
        if (len < 1 || len > T) {
            andrea_fail(err, "%s: /%s/lengths[%d] = %d is outside 1..%d", h5_path, s->info.name, i, len, T);
            goto fail;
        }
        it->tokens = malloc(sizeof(int) * (size_t)len);
        it->targets = malloc(sizeof(probe_target) * (size_t)(it->n_targets ? it->n_targets : 1));
        if (it->n_entities) it->entities = malloc(sizeof(int) * 2 * (size_t)it->n_entities);
        if (!it->tokens || !it->targets || (it->n_entities && !it->entities)) {
            andrea_fail(err, "%s: out of memory", h5_path);
            goto fail;
        }
        for (int t = 0; t < len; t++) {
            int id = tokens[(size_t)i * T + t];
            if (id < 0 || id >= d->cfg.vocab_size) {
                andrea_fail(err, "%s: /%s/tokens[%d, %d] = %d is outside the vocabulary 0..%d", h5_path, s->info.name, i,
                        t, id, d->cfg.vocab_size - 1);
                goto fail;
            }
            it->tokens[t] = id;
        }
        it->n_tokens = len;
        if (len > out->max_len) out->max_len = len;
        it->n_targets = 0;
        it->n_entities = 0;
    }
    for (long long r = 0; r < n_t; r++) {
        probe_item *it = &out->items[targets[3 * r]];
        it->targets[it->n_targets].query = targets[3 * r + 1];
        it->targets[it->n_targets++].key = targets[3 * r + 2];
    }
    for (long long r = 0; r < n_e; r++) {
        probe_item *it = &out->items[ents[3 * r]];
        it->entities[2 * it->n_entities] = ents[3 * r + 1];
        it->entities[2 * it->n_entities++ + 1] = ents[3 * r + 2];
    }
    for (int i = 0; i < n; i++)
        out->items[i].n_targets = andrea_probe_targets_normalize(out->items[i].targets, out->items[i].n_targets);
    free(tokens);
    free(lengths);
    free(targets);
    free(ents);
    return 0;
fail:
    free(tokens);
    free(lengths);
    free(targets);
    free(ents);
    andrea_probe_suite_free(out);
    return -1;
}

static int check_shl(const andrea_dump *d, int suite, int seq, int layer, int head, ae_error *err) {
    if (suite < 0 || suite >= d->n_suites) return andrea_fail(err, "%s: no suite %d", d->path, suite);
    const suite_rec *s = &d->suites[suite];
    if (seq < 0 || seq >= s->info.n_seq) return andrea_fail(err, "%s: /%s has no sequence %d", d->path, s->info.name, seq);
    if (layer < 0 || layer >= d->cfg.n_layer || head < 0 || head >= d->cfg.n_head)
        return andrea_fail(err, "%s: no head %d.%d", d->path, layer, head);
    return 0;
}

/* Every row of a map as the format promises it: a live query (q < length) holds a probability
 * distribution over the keys up to it: values finite in [0, 1], zeros after the query, a sum of 1
 * within 1e-2 (fp16 storage moves a row's sum by at most ~5e-4, TF32 by less). A padded query
 * (q >= length) is all zeros as written, or anything causal the engine computed there (it is never
 * scored). The writer writes every head's map (--heads selects head_out only), so a live row of
 * zeros is never andrea's: a map that is not a distribution (NaN from a model that overflowed,
 * zeros or values edited in a file that was sealed again) would be scored as if it were
 * attention; it is refused by name instead. */
static int check_map_rows(const float *map, size_t T, int length, const char *h5_path, const char *what, ae_error *err) {
    for (size_t q = 0; q < T; q++) {
        const float *row = map + q * T;
        double sum = 0;
        int bad = 0;
        size_t at = 0;
        for (size_t k = 0; k < T && !bad; k++) {
            const float v = row[k];
            if (!(v >= 0.0f && v <= 1.001f) || (k > q && v != 0.0f)) bad = 1, at = k;
            sum += v;
        }
        if (bad)
            return andrea_fail(err, "%s: %s row %zu holds %g at key %zu, not a causal attention probability (damaged or "
                                "modified dump?)", h5_path, what, q, (double)row[at], at);
        if (q < (size_t)length && fabs(sum - 1.0) > 1e-2)
            return andrea_fail(err, "%s: %s row %zu sums to %g, not 1 (query %zu < length %d; damaged or modified dump?)",
                               h5_path, what, q, sum, q, length);
        if (sum != 0.0 && fabs(sum - 1.0) > 1e-2)
            return andrea_fail(err, "%s: %s row %zu sums to %g, not 1 (damaged or modified dump?)", h5_path, what, q, sum);
    }
    return 0;
}

/* The suite's lengths (read once, each checked to be in 1..T), or NULL with err. */
static const int *suite_lengths(andrea_dump *d, suite_rec *s, ae_error *err) {
    if (s->lengths) return s->lengths;
    char what[128];
    int *v = NULL;
    snprintf(what, sizeof what, "/%s/lengths", s->info.name);
    if (read_ints(s->ds[DS_LENGTHS], s->info.n_seq, 1, &v, d->path, what, err)) return NULL;
    for (int i = 0; i < s->info.n_seq; i++)
        if (v[i] < 1 || v[i] > s->info.T) {
            andrea_fail(err, "%s: /%s/lengths[%d] = %d is outside 1..%d", d->path, s->info.name, i, v[i], s->info.T);
            free(v);
            return NULL;
        }
    return s->lengths = v;
}

int andrea_dump_read_map(andrea_dump *d, int suite, int seq, int layer, int head, float *out, ae_error *err) {
    if (check_shl(d, suite, seq, layer, head, err)) return -1;
    suite_rec *s = &d->suites[suite];
    const size_t T = (size_t)s->info.T;
    hsize_t st[5] = {(hsize_t)seq, (hsize_t)layer, (hsize_t)head, 0, 0}, cnt[5] = {1, 1, 1, T, T};
    char what[128];
    snprintf(what, sizeof what, "/%s/attention[%d, %d, %d]", s->info.name, seq, layer, head);
    const int *lengths = suite_lengths(d, s, err);
    if (!lengths) return -1;
    if (s->attn_bytes == 4) {
        if (read_slab(s->ds[DS_ATTENTION], H5T_NATIVE_FLOAT, 5, st, cnt, out, d->path, what, err)) return -1;
        return check_map_rows(out, T, lengths[seq], d->path, what, err);
    }
    /* fp16: read the raw halves (memory type = file type, no HDF5 conversion) and widen them
     * in place from the back, so the caller's [T, T] float buffer is all the memory needed. */
    const char *h5_path = d->path;
    hid_t ft = -1;
    int rc = -1;
    H5_ID(ft, H5Dget_type(s->ds[DS_ATTENTION]));
    uint16_t *half = (uint16_t *)out;
    if (read_slab(s->ds[DS_ATTENTION], ft, 5, st, cnt, half, d->path, what, err)) goto fail;
    andrea_f16_to_f32_n(out, half, T * T); /* in place, from the back */
    rc = check_map_rows(out, T, lengths[seq], d->path, what, err);
fail:
    if (ft >= 0) H5Tclose(ft);
    return rc;
}

/* [L, H, T] values of one sequence as the writer leaves them: norms finite and >= 0 everywhere
 * (0 at padded positions); DLA finite where it is defined, t + 1 < length (NaN beyond: no next
 * token; not read there). The writer refuses a forward whose norms or DLA are not finite, so a
 * value that is not (or a negative norm) was edited into a file sealed again, and would be
 * averaged into the catalog as a result; it is refused by position instead. */
static int check_head_values(const float *v, int L, int H, int T, int length, int is_norm, const char *h5_path,
                             const char *what, ae_error *err) {
    const int upto = is_norm ? T : length - 1;
    for (int lh = 0; lh < L * H; lh++)
        for (int t = 0; t < upto; t++) {
            const float x = v[(size_t)lh * (size_t)T + (size_t)t];
            if (isfinite(x) && (!is_norm || x >= 0.0f)) continue;
            return andrea_fail(err, "%s: %s holds %g at head %d.%d, position %d, not a %s (damaged or modified dump?)",
                               h5_path, what, (double)x, lh / H, lh % H, t,
                               is_norm ? "norm (finite, >= 0)" : "finite logit attribution (position + 1 < length)");
        }
    return 0;
}

int andrea_dump_read_head_values(andrea_dump *d, int suite, int seq, const char *which, float *out, ae_error *err) {
    if (check_shl(d, suite, seq, 0, 0, err)) return -1;
    suite_rec *s = &d->suites[suite];
    int k = !strcmp(which, "head_out_norm") ? DS_NORM : !strcmp(which, "head_dla") ? DS_DLA : -1;
    if (k < 0) return andrea_fail(err, "%s: '%s' is not head_out_norm or head_dla", d->path, which);
    if (s->ds[k] < 0)
        return andrea_fail(err, "%s: /%s/%s is not in this dump (written with --contrib none)", d->path, s->info.name, which);
    hsize_t st[4] = {(hsize_t)seq, 0, 0, 0}, cnt[4] = {1, (hsize_t)d->cfg.n_layer, (hsize_t)d->cfg.n_head, (hsize_t)s->info.T};
    char what[128];
    snprintf(what, sizeof what, "/%s/%s[%d]", s->info.name, which, seq);
    const int *lengths = suite_lengths(d, s, err);
    if (!lengths || read_slab(s->ds[k], H5T_NATIVE_FLOAT, 4, st, cnt, out, d->path, what, err)) return -1;
    return check_head_values(out, d->cfg.n_layer, d->cfg.n_head, s->info.T, lengths[seq], k == DS_NORM, d->path, what, err);
}

int andrea_dump_read_head_out(andrea_dump *d, int suite, int seq, int layer, int head, float *out, ae_error *err) {
    if (check_shl(d, suite, seq, layer, head, err)) return -1;
    suite_rec *s = &d->suites[suite];
    if (s->ds[DS_OUT] < 0)
        return andrea_fail(err, "%s: /%s/head_out is not in this dump (written without --contrib full or --heads)", d->path,
                       s->info.name);
    hsize_t st[5] = {(hsize_t)seq, (hsize_t)layer, (hsize_t)head, 0, 0},
            cnt[5] = {1, 1, 1, (hsize_t)s->info.T, (hsize_t)d->cfg.d_model};
    char what[128];
    snprintf(what, sizeof what, "/%s/head_out[%d, %d, %d]", s->info.name, seq, layer, head);
    return read_slab(s->ds[DS_OUT], H5T_NATIVE_FLOAT, 5, st, cnt, out, d->path, what, err);
}

/* ---- token text (docs/dump-format.md) ---- */

/* Longest token_text entry accepted (bytes): the writer's longest is 3 x ANDREA_TOKEN_MAX_BYTES. */
#define TOKEN_TEXT_MAX 4096

/* Reads suite s's token_text into d->id_text: per sequence, the text at positions < length is the
 * text of the token id there. An absent token_text is no error (an older dump, or one written
 * without a tokenizer); a malformed one is. */
static int load_suite_text(andrea_dump *d, suite_rec *s, ae_error *err) {
    const char *h5_path = d->path;
    const int n = s->info.n_seq, T = s->info.T;
    hid_t ds = -1, t = -1;
    int *tokens = NULL, *lengths = NULL, rc = -1;
    char *row = NULL, what[128];
    htri_t ex = H5Lexists(s->group, "token_text", H5P_DEFAULT);
    H5_TRY(ex);
    if (!ex) return 0;
    H5_ID(ds, H5Dopen2(s->group, "token_text", H5P_DEFAULT));
    H5_ID(t, H5Dget_type(ds));
    size_t w = H5Tget_size(t);
    if (H5Tget_class(t) != H5T_STRING || H5Tis_variable_str(t) != 0 || w < 1 || w > TOKEN_TEXT_MAX) {
        andrea_fail(err, "%s: /%s/token_text is not fixed-length strings of 1..%d bytes", h5_path, s->info.name,
                TOKEN_TEXT_MAX);
        goto fail;
    }
    H5Dclose(ds);
    long long want[2] = {n, T};
    if ((ds = open_checked(s->group, s->info.name, "token_text", 2, want, NULL, H5T_STRING, w, NULL, h5_path, err, NULL)) < 0)
        goto fail;
    snprintf(what, sizeof what, "/%s/tokens", s->info.name);
    if (read_ints(s->ds[DS_TOKENS], n, T, &tokens, h5_path, what, err)) goto fail;
    snprintf(what, sizeof what, "/%s/lengths", s->info.name);
    if (read_ints(s->ds[DS_LENGTHS], n, 1, &lengths, h5_path, what, err)) goto fail;
    if (!(row = malloc((size_t)T * w))) {
        andrea_fail(err, "%s: out of memory reading /%s/token_text", h5_path, s->info.name);
        goto fail;
    }
    snprintf(what, sizeof what, "/%s/token_text", s->info.name);
    for (int i = 0; i < n; i++) {
        hsize_t st[2] = {(hsize_t)i, 0}, cnt[2] = {1, (hsize_t)T};
        if (read_slab(ds, t, 2, st, cnt, row, h5_path, what, err)) goto fail; /* memory type = file type */
        const int len = lengths[i] < 0 ? 0 : lengths[i] > T ? T : lengths[i];
        for (int p = 0; p < len; p++) {
            int id = tokens[(size_t)i * T + p];
            if (id < 0 || id >= d->cfg.vocab_size || d->id_text[id]) continue;
            const char *cell = row + (size_t)p * w;
            size_t k = strnlen(cell, w);
            if (!(d->id_text[id] = malloc(k + 1))) {
                andrea_fail(err, "%s: out of memory reading /%s/token_text", h5_path, s->info.name);
                goto fail;
            }
            memcpy(d->id_text[id], cell, k);
            d->id_text[id][k] = 0;
        }
    }
    rc = 0;
fail:
    free(row);
    free(tokens);
    free(lengths);
    if (t >= 0) H5Tclose(t);
    if (ds >= 0) H5Dclose(ds);
    return rc;
}

int andrea_dump_token_text(andrea_dump *d, int id, char *buf, size_t cap, ae_error *err) {
    if (d->id_text_state == 0) {
        d->id_text_state = -1;
        if (!(d->id_text = calloc((size_t)(d->cfg.vocab_size > 0 ? d->cfg.vocab_size : 1), sizeof *d->id_text))) {
            andrea_fail(&d->id_text_err, "%s: out of memory", d->path);
        } else {
            int bad = 0;
            for (int s = 0; s < d->n_suites && !bad; s++) bad = load_suite_text(d, &d->suites[s], &d->id_text_err);
            if (!bad) d->id_text_state = 1;
        }
    }
    if (d->id_text_state < 0) {
        if (err) *err = d->id_text_err;
        return -2;
    }
    if (id < 0 || id >= d->cfg.vocab_size || !d->id_text[id]) return -1;
    size_t k = strlen(d->id_text[id]);
    if (cap == 0) return -1;
    if (k >= cap) k = cap - 1;
    memcpy(buf, d->id_text[id], k);
    buf[k] = 0;
    return (int)k;
}
