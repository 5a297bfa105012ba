/* dump_write_mpi.h — the parallel-HDF5 pieces of the dump writer (dump/dump_write.c).
 *
 * Job: under `mpirun -np N ... --single-file` (mpi_shard.h: andrea_mpi_parallel(); without it each
 * rank writes a plain part file, dump_write_parts.c), every rank opens the one output file
 * through the MPI-IO driver and writes its shard of sequences with collective transfers;
 * these two property lists are all the writer needs from parallel HDF5.
 * Invariants: in a serial run, or in a build without parallel HDF5 (H5_HAVE_PARALLEL), both return
 * H5P_DEFAULT, so the serial writer's calls are exactly the serial library's.
 * Failure contract: -1 (an HDF5 id < 0) when the property list cannot be made; HDF5's error stack
 * then says why (the writer's H5_ID check reports it).
 */
#ifndef ANDREA_DUMP_WRITE_MPI_H
#define ANDREA_DUMP_WRITE_MPI_H

#include <hdf5.h>

/* File-access list for H5Fcreate: MPI-IO on MPI_COMM_WORLD when parallel. Close it with
 * andrea_dump_par_close (a no-op on H5P_DEFAULT). */
hid_t andrea_dump_par_fapl(void);
/* Transfer list for H5Dwrite: collective MPI-IO when parallel (needed for chunked, filtered
 * datasets, and so every rank must call every write, selecting nothing when it has nothing). */
hid_t andrea_dump_par_dxpl(void);
void andrea_dump_par_close(hid_t plist);

#endif
