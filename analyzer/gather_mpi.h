/* gather_mpi.h — one checkpoint's results sent from the MPI rank that computed them to the others
 * (common/mpi_shard.h, docs/cluster.md "Series across ranks").
 *
 * Job: when `mpirun -np N andrea analyze CKPT..` spreads a series' checkpoints over the ranks, each
 * rank scores its checkpoints alone; rank 0 writes every checkpoint's catalog rows, in the
 * serial order, from the results these broadcasts bring it (the scores and labels of every suite
 * and head, the run's settings, the circuit scores of `andrea circuits`).
 * Invariants: collective (every rank calls it for the same object in the same order); the ranks
 * run one build on one architecture (the bytes are the structs' own); a rank's copy is an
 * independent object its caller frees (andrea_analysis_free, andrea_circuits_free); the values
 * arrive bit for bit. A no-op in a serial run.
 * Failure contract: -1 with "mpi: ..." (mpi_shard.h) or "gather: out of memory" / "gather: damaged
 * message" on a receiving rank.
 */
#ifndef ANDREA_GATHER_MPI_H
#define ANDREA_GATHER_MPI_H

#include "../common/error.h"
#include "analysis.h"
#include "circuits.h"

/* Collective: root's *a copied into *a on every other rank (whose *a is overwritten, not freed). */
int andrea_analysis_bcast(andrea_analysis *a, int root, ae_error *err);
/* Collective: root's *c copied into *c on every other rank (the same). */
int andrea_circuits_bcast(andrea_circuits *c, int root, ae_error *err);

#endif
