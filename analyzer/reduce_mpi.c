/* reduce_mpi.c — pooling one suite's statistics over MPI ranks (reduce_mpi.h). */
#include "reduce_mpi.h"

#include <stdlib.h>

#include "../common/checked_size.h"
#include "../common/mpi_shard.h"

#define N_OFF ANDREA_POS_MAX_OFFSET
/* per head: score, control, baseline, top1, hard_top1, dla, norm, control_top1 sums, then the
 * offset hits and bases 1..N_OFF */
#define N_F64 (8 + 2 * N_OFF)
#define N_I64 4 /* per head: n, n_hard, dla_n, norm_n */

/* A field added to score_acc must be pooled here too. */
_Static_assert(sizeof(score_acc) == (6 + 2 * (N_OFF + 1)) * sizeof(double) + 2 * sizeof(int64_t),
               "score_acc changed: pool its new fields in andrea_reduce_suite_stats");

/* v[k] = rank 0's v[k] + rank 1's v[k] + ... added in rank order, on every rank: MPI_Allreduce
 * may add in any order (Open MPI picks its algorithm by size and rank count), this one gives the
 * same bits on every rank and in every run with as many ranks. n doubles from every rank. */
static int sum_in_rank_order(double *v, size_t n, ae_error *err) {
    const int size = andrea_mpi_size();
    size_t bytes, all_bytes;
    if (ae_mul(n, sizeof(double), &bytes) || ae_mul(bytes, (size_t)size, &all_bytes))
        return andrea_fail(err, "classify: %zu sums cannot be reduced", n);
    double *all = malloc(all_bytes ? all_bytes : 1);
    if (!all) return andrea_fail(err, "classify: out of memory");
    int rc = andrea_mpi_allgather(v, bytes, all, err);
    for (size_t k = 0; !rc && k < n; k++) {
        double sum = all[k];
        for (int r = 1; r < size; r++) sum += all[(size_t)r * n + k];
        v[k] = sum;
    }
    free(all);
    return rc;
}

int andrea_reduce_suite_stats(score_acc *acc, double *dla_sum, double *norm_sum, int64_t *dla_n,
                              int64_t *norm_n, int NH, ae_error *err) {
    if (!andrea_mpi_parallel()) return 0;
    size_t nf, ni;
    if (NH < 1 || ae_mul((size_t)NH, N_F64 * sizeof(double), &nf) || ae_mul((size_t)NH, N_I64 * sizeof(int64_t), &ni))
        return andrea_fail(err, "classify: %d heads cannot be reduced", NH);
    double *f = malloc(nf);
    int64_t *i = malloc(ni);
    int rc = -1;
    if (!f || !i) {
        andrea_fail(err, "classify: out of memory");
        goto out;
    }
    /* one buffer per type, so two collectives per suite whatever the model's size */
    for (int h = 0; h < NH; h++) {
        double *pf = f + (size_t)h * N_F64;
        int64_t *pi = i + (size_t)h * N_I64;
        pf[0] = acc[h].score_sum, pf[1] = acc[h].control_sum, pf[2] = acc[h].baseline_sum;
        pf[3] = acc[h].top1_sum, pf[4] = acc[h].hard_top1_sum, pf[5] = dla_sum[h], pf[6] = norm_sum[h];
        pf[7] = acc[h].control_top1_sum;
        for (int k = 1; k <= N_OFF; k++) pf[7 + k] = acc[h].offset_hits[k], pf[7 + N_OFF + k] = acc[h].offset_base[k];
        pi[0] = acc[h].n, pi[1] = acc[h].n_hard, pi[2] = dla_n[h], pi[3] = norm_n[h];
    }
    if (sum_in_rank_order(f, (size_t)NH * N_F64, err) || andrea_mpi_sum_i64(i, (size_t)NH * N_I64, err)) goto out;
    for (int h = 0; h < NH; h++) {
        const double *pf = f + (size_t)h * N_F64;
        const int64_t *pi = i + (size_t)h * N_I64;
        acc[h].score_sum = pf[0], acc[h].control_sum = pf[1], acc[h].baseline_sum = pf[2];
        acc[h].top1_sum = pf[3], acc[h].hard_top1_sum = pf[4], dla_sum[h] = pf[5], norm_sum[h] = pf[6];
        acc[h].control_top1_sum = pf[7];
        for (int k = 1; k <= N_OFF; k++) acc[h].offset_hits[k] = pf[7 + k], acc[h].offset_base[k] = pf[7 + N_OFF + k];
        acc[h].n = pi[0], acc[h].n_hard = pi[1], dla_n[h] = pi[2], norm_n[h] = pi[3];
    }
    rc = 0;
out:
    free(f);
    free(i);
    return rc;
}
