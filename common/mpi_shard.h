/* mpi_shard.h — MPI ranks, each rank's device index and work shards for `mpirun -np N andrea dump|analyze|classify`
 * (docs/cluster.md).
 *
 * Job: start MPI when the process was launched by an MPI launcher (mpirun, srun), give each rank
 * the index of its GPU (its node-local rank), cut work into contiguous shards, and give the rest of andrea
 * a few collectives (agreement on failure, sums, broadcast) that are no-ops in a serial run.
 * Invariants:
 *  - A build without ANDREA_HAVE_MPI, or a process not started by a launcher, is ONE rank of ONE
 *    (rank 0, size 1): every function below is then a no-op or the identity, and every caller's
 *    serial code path is taken unchanged.
 *  - Shards are contiguous and cover [0, n) exactly once; the first n % size ranks hold one item
 *    more (uneven shards are normal; a rank may hold none).
 *  - Nothing here touches the environment or CUDA: a rank's GPU is a device index
 *    (andrea_mpi_device_index: its node-local rank) that andrea_engine_options_init puts in the
 *    engine's options, and the CUDA engine selects device index % (devices it sees) with
 *    cudaSetDevice; with no GPU the CPU engine runs.
 *  - The CPU engine's OpenMP team is divided among the ranks of a node unless OMP_NUM_THREADS is set;
 *    rank 0's serial phases (andrea_mpi_serial_phase) take the whole node's team back, and ranks
 *    waiting in andrea_mpi_agree / andrea_mpi_barrier sleep between tests instead of spinning.
 * Failure contract: collectives return -1 with "mpi: CALL failed: <MPI's message> (file:line)".
 * andrea_mpi_agree is the no-hang rule: every rank calls it at the same points, and when any rank
 * failed, ALL ranks return -1 (the failed one keeps its own message; the others get "rank R
 * failed" and andrea_mpi_report_error() says 0 so the job prints one line). A rank that fails
 * where no agreement follows is ended by andrea_mpi_finish through MPI_Abort, which stops all ranks.
 */
#ifndef ANDREA_MPI_SHARD_H
#define ANDREA_MPI_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* Starts MPI when launched by an MPI launcher (build with ANDREA_MPI only).
 * Call once, first thing in main, before anything touches CUDA or OpenMP. */
int andrea_mpi_init(int *argc, char ***argv, ae_error *err);

/* The process's exit code for command result rc: rc == 0 or a failure every rank agreed on →
 * MPI_Finalize and rc; a failure of this rank alone (others may wait in a collective) →
 * MPI_Abort, which ends every rank of the job. Serial: rc. */
int andrea_mpi_finish(int rc);

/* 1: from now on this rank works alone, as a serial process (rank 0 of 1: every collective below
 * a no-op, andrea_mpi_parallel() 0; its device index stays its own); 0: back to the job. For work
 * split by whole items (a series' checkpoints over ranks, docs/cluster.md); every rank calls
 * andrea_mpi_agree after it is back. */
void andrea_mpi_set_alone(int alone);
int andrea_mpi_rank(void);       /* 0 in a serial run */
int andrea_mpi_size(void);       /* 1 in a serial run */
int andrea_mpi_local_rank(void); /* rank among the ranks of this node */
int andrea_mpi_local_size(void);
int andrea_mpi_parallel(void);   /* size > 1: the callers' parallel paths apply */
/* The CUDA device this rank uses: its node-local rank (the engine takes it modulo the devices it
 * sees, engine/forward.h: andrea_engine_options.device_index); -1 in a serial run (the current
 * device, 0 unless the caller chose). */
int andrea_mpi_device_index(void);

/* 1: rank 0 starts work the other ranks wait for (the causal check, catalog and report of
 * `analyze`): its OpenMP team becomes the node's cores (what a serial run uses); 0: back to its
 * share. No-op on other ranks, in a serial run, and when OMP_NUM_THREADS was given. */
void andrea_mpi_serial_phase(int on);

/* Contiguous shard of n items for rank of size: [*lo, *hi). */
void andrea_shard(long long n, int rank, int size, long long *lo, long long *hi);
/* The largest shard of n over size ranks (ceil(n / size)). */
long long andrea_shard_max(long long n, int size);

/* The part of a job's shard that falls in one stretch of it: the job's n items are cut into
 * contiguous shards (andrea_shard); items [off, off + len) form one stretch (e.g. one suite's
 * batches). [*lo, *hi) is this rank's part of the stretch, relative to off (empty: lo == hi). */
void andrea_shard_part(long long n, long long off, long long len, int rank, int size, long long *lo,
                       long long *hi);
/* The largest such part over all ranks: how many steps every rank takes through the stretch. */
long long andrea_shard_part_max(long long n, long long off, long long len, int size);

/* Collective: -1 on every rank when rc != 0 on any rank (see the failure contract above). */
int andrea_mpi_agree(int rc, ae_error *err);
/* 0 when this rank's error is only the echo of another rank's failure (do not print it). */
int andrea_mpi_report_error(void);

/* Collective element-wise sums over all ranks, in place. */
int andrea_mpi_sum_f64(double *v, size_t n, ae_error *err);
int andrea_mpi_sum_i64(int64_t *v, size_t n, ae_error *err);
/* Collective: element-wise sums of n floats of every rank into v on rank root (the other ranks'
 * v unchanged). */
int andrea_mpi_sum_f32_to(float *v, size_t n, int root, ae_error *err);
/* Collective maximum of one double, in place. */
int andrea_mpi_max_f64(double *v, ae_error *err);
/* Collective: root's n bytes at buf copied to every rank. */
int andrea_mpi_bcast(void *buf, size_t n, int root, ae_error *err);
/* Collective: the n bytes at `mine` of every rank into `all` (size * n bytes, rank r's at r * n),
 * on every rank. Serial: a copy. */
int andrea_mpi_allgather(const void *mine, size_t n, void *all, ae_error *err);
int andrea_mpi_barrier(ae_error *err);

#endif
