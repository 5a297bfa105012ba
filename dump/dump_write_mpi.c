/* dump_write_mpi.c — parallel-HDF5 property lists for the dump writer (dump_write_mpi.h). */
#include "dump_write_mpi.h"

#include "../common/mpi_shard.h"

#if defined(ANDREA_HAVE_MPI) && !defined(H5_HAVE_PARALLEL)
#error "ANDREA_MPI needs parallel HDF5 (libhdf5-openmpi-dev): this hdf5.h is the serial one"
#endif

#if defined(ANDREA_HAVE_MPI)
#include <mpi.h>

hid_t andrea_dump_par_fapl(void) {
    if (!andrea_mpi_parallel()) return H5P_DEFAULT;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0) return -1;
    /* Every rank creates groups, datasets and attributes with identical arguments (HDF5's rule
     * for metadata in parallel); collective metadata writes let rank 0 alone write them out. */
    if (H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL) < 0 || H5Pset_coll_metadata_write(fapl, 1) < 0) {
        H5Pclose(fapl);
        return -1;
    }
    return fapl;
}

hid_t andrea_dump_par_dxpl(void) {
    if (!andrea_mpi_parallel()) return H5P_DEFAULT;
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (dxpl < 0) return -1;
    if (H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE) < 0) {
        H5Pclose(dxpl);
        return -1;
    }
    return dxpl;
}

#else /* serial HDF5: the default lists */

hid_t andrea_dump_par_fapl(void) { return H5P_DEFAULT; }
hid_t andrea_dump_par_dxpl(void) { return H5P_DEFAULT; }

#endif

void andrea_dump_par_close(hid_t plist) {
    if (plist >= 0 && plist != H5P_DEFAULT) H5Pclose(plist);
}
