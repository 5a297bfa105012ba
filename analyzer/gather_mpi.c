/* gather_mpi.c — one checkpoint's results from the rank that computed them (gather_mpi.h). */
#include "gather_mpi.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/checked_size.h"
#include "../common/mpi_shard.h"

/* A byte buffer: appended to on the root, read back in the same order on the others. */
typedef struct {
    unsigned char *p;
    size_t n, cap, at;
    int bad;
} blob;

static void put(blob *b, const void *x, size_t n) {
    if (b->bad) return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n) cap *= 2;
        unsigned char *q = realloc(b->p, cap);
        if (!q) {
            b->bad = 1;
            return;
        }
        b->p = q, b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, x, n);
    b->n += n;
}

static void get(blob *b, void *x, size_t n) {
    if (b->bad || n > b->n - b->at) {
        b->bad = 1;
        return;
    }
    memcpy(x, b->p + b->at, n);
    b->at += n;
}

/* n bytes from the blob into a new allocation (NULL and bad on failure; NULL for n == 0). */
static void *get_new(blob *b, size_t n) {
    if (b->bad || n == 0) return NULL;
    void *x = malloc(n);
    if (!x) b->bad = 1;
    else get(b, x, n);
    return x;
}

/* Root's blob to every rank (size, then bytes); the others' blob is allocated here. */
static int bcast_blob(blob *b, int root, ae_error *err) {
    uint64_t n = b->n;
    if (andrea_mpi_bcast(&n, sizeof n, root, err)) return -1;
    if (andrea_mpi_rank() != root) {
        b->n = (size_t)n, b->at = 0;
        if (n && !(b->p = malloc((size_t)n))) {
            /* the root sends anyway: receive nothing here and stop the job through the caller */
            return andrea_fail(err, "gather: out of memory for %llu bytes", (unsigned long long)n);
        }
    }
    return andrea_mpi_bcast(b->p, (size_t)n, root, err);
}

int andrea_analysis_bcast(andrea_analysis *a, int root, ae_error *err) {
    if (!andrea_mpi_parallel()) return 0;
    const int me = andrea_mpi_rank() == root;
    blob b = {0};
    int rc = -1;
    if (me) {
        const size_t NH = (size_t)a->cfg.n_layer * (size_t)a->cfg.n_head;
        const uint64_t js = a->settings_json ? strlen(a->settings_json) + 1 : 0;
        put(&b, a, sizeof *a);
        put(&b, &js, sizeof js);
        put(&b, a->settings_json, (size_t)js);
        for (int s = 0; s < a->n_suites; s++) {
            put(&b, &a->suites[s], sizeof a->suites[s]);
            put(&b, a->suites[s].heads, NH * sizeof *a->suites[s].heads);
        }
        if (b.bad) b.n = 0; /* sends an empty message: every receiver fails, and so does the root */
    }
    if (bcast_blob(&b, root, err)) goto out;
    if (me) {
        rc = b.n ? 0 : andrea_fail(err, "gather: out of memory");
        goto out;
    }
    uint64_t js = 0;
    get(&b, a, sizeof *a);
    a->settings_json = NULL, a->suites = NULL;
    get(&b, &js, sizeof js);
    if (js > b.n) b.bad = 1;
    a->settings_json = get_new(&b, (size_t)js);
    if (js && !b.bad) a->settings_json[js - 1] = 0;
    size_t NH = 0, hb = 0;
    const int n_suites = a->n_suites;
    a->n_suites = 0;
    if (!b.bad && (n_suites < 0 || n_suites > 4096 || a->cfg.n_layer < 1 || a->cfg.n_head < 1 ||
                   ae_mul((size_t)a->cfg.n_layer, (size_t)a->cfg.n_head, &NH) || ae_mul(NH, sizeof(andrea_head_score), &hb)))
        b.bad = 1;
    if (!b.bad && !(a->suites = calloc((size_t)(n_suites ? n_suites : 1), sizeof *a->suites))) b.bad = 1;
    for (int s = 0; !b.bad && s < n_suites; s++) {
        andrea_suite_scores *su = &a->suites[s];
        get(&b, su, sizeof *su);
        su->heads = NULL;
        su->name[sizeof su->name - 1] = 0;
        su->pass = andrea_pass_for(su->name);
        a->n_suites = s + 1;
        su->heads = get_new(&b, hb);
    }
    if (b.bad || b.at != b.n) {
        andrea_analysis_free(a);
        andrea_fail(err, "gather: damaged message (analysis)");
        goto out;
    }
    rc = 0;
out:
    free(b.p);
    return rc;
}

int andrea_circuits_bcast(andrea_circuits *c, int root, ae_error *err) {
    if (!andrea_mpi_parallel()) return 0;
    const int me = andrea_mpi_rank() == root;
    blob b = {0};
    int rc = -1;
    size_t NH = (size_t)c->n_layer * (size_t)c->n_head;
    if (me) {
        put(&b, c, sizeof *c);
        put(&b, c->comp, 3 * NH * NH * sizeof(double));
        put(&b, c->copying, NH * sizeof(double));
        put(&b, c->prev_pos, NH * sizeof(double));
        if (b.bad) b.n = 0;
    }
    if (bcast_blob(&b, root, err)) goto out;
    if (me) {
        rc = b.n ? 0 : andrea_fail(err, "gather: out of memory");
        goto out;
    }
    get(&b, c, sizeof *c);
    c->comp = c->copying = c->prev_pos = NULL;
    size_t nn = 0;
    NH = (size_t)(c->n_layer > 0 ? c->n_layer : 0) * (size_t)(c->n_head > 0 ? c->n_head : 0);
    if (b.bad || NH == 0 || ae_mul(NH, NH, &nn) || nn > ((size_t)1 << 32)) b.bad = 1;
    c->comp = get_new(&b, 3 * nn * sizeof(double));
    c->copying = get_new(&b, NH * sizeof(double));
    c->prev_pos = get_new(&b, NH * sizeof(double));
    if (b.bad || b.at != b.n) {
        andrea_circuits_free(c);
        andrea_fail(err, "gather: damaged message (circuits)");
        goto out;
    }
    rc = 0;
out:
    free(b.p);
    return rc;
}
