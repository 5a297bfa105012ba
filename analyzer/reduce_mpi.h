/* reduce_mpi.h — pooling one suite's statistics over MPI ranks (common/mpi_shard.h, docs/cluster.md).
 *
 * Job: under `mpirun -np N andrea classify|analyze`, each rank scores its shard of a suite's items;
 * every statistic of the catalog is a pooled sum over (item, query) pairs divided by a count
 * (score.h, classify.c), so summing the accumulators over the ranks gives the whole suite's.
 * Invariants: a no-op in a serial run (the accumulators are already the suite's); counts are
 * summed exactly as integers (MPI_Allreduce); sums in double are added per rank, then gathered
 * and added in rank order (0 + 1 + ... + N-1) on every rank: the same bits on every rank and in
 * every run of N ranks, but they can differ from a serial run's in the last bits (the serial run
 * adds the same terms in one sequence), never in counts, labels away from a threshold tie;
 * tests hold them to 1e-12 relative.
 * Failure contract: -1 with "mpi: ..." (mpi_shard.h) or "classify: out of memory".
 */
#ifndef ANDREA_REDUCE_MPI_H
#define ANDREA_REDUCE_MPI_H

#include <stdint.h>

#include "../common/error.h"
#include "score.h"

/* Collective: acc, dla_sum, norm_sum, dla_n, norm_n (NH entries each) summed over all ranks,
 * in place, on every rank. */
int andrea_reduce_suite_stats(score_acc *acc, double *dla_sum, double *norm_sum, int64_t *dla_n,
                              int64_t *norm_n, int NH, ae_error *err);

#endif
