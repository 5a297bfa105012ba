/* dump_write_parts.c — the part files of an MPI dump and the virtual datasets of its master file
 * (dump_write_impl.h, docs/dump-format.md "Dumps written by MPI ranks").
 *
 * Under `mpirun -np N andrea dump` (without --single-file) rank R writes the sequences of its
 * shard into its own plain HDF5 file "<out>.part-R-of-N", and rank 0 writes "<out>", the master:
 * the serial dump's layout, whose per-sequence datasets of maps and per-head values (attention,
 * head_out_norm, head_dla, head_out) are HDF5 virtual datasets (VDS) mapping sequence rows
 * [lo, hi) of a suite to the same dataset of the part holding them.
 * Invariants: rank R's rows of suite s are exactly the sequences of the batches the forward loop
 * gives it (andrea_dw_part_range computes them from the batch shard, run/forward_loop.c), so the parts
 * together cover every row of every suite once, in order; a rank with no row of a suite has no
 * group for it in its part and no mapping in the master. Source file names are part names
 * without a folder: HDF5 looks for them beside the master (whatever the working folder).
 * Failure contract: a negative hid_t (HDF5's error stack says why); names that do not fit give -1.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../common/atomic_file.h"
#include "dump_write_impl.h"

void andrea_dw_part_range(const probe_suite *suites, int n_suites, int suite, int B, int rank, int size, long long *lo,
                   long long *hi) {
    long long all = 0, off = 0;
    for (int i = 0; i < n_suites; i++) {
        const long long nb = (suites[i].n_items + B - 1) / B;
        if (i < suite) off += nb;
        all += nb;
    }
    const long long n = suites[suite].n_items, nb = (n + B - 1) / B;
    long long blo, bhi;
    andrea_shard_part(all, off, nb, rank, size, &blo, &bhi);
    *lo = blo * B < n ? blo * B : n;
    *hi = bhi * B < n ? bhi * B : n;
    if (*hi < *lo) *hi = *lo;
}

int andrea_dw_part_name(const char *out_path, int rank, int size, char *buf, size_t cap) {
    int n = snprintf(buf, cap, "%s.part-%d-of-%d", out_path, rank, size);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* The file name of out_path without its folder. */
static const char *base_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

hid_t andrea_dw_vds_create(hid_t g, const char *suite, const char *name, hid_t type, int rank, const hsize_t *dims, int fill_nan,
                    const dw_vds_parts *p, const long long *lo, const long long *hi) {
    hid_t vs = H5Screate_simple(rank, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE), d = -1;
    int ok = vs >= 0 && dcpl >= 0;
    char src[AE_PATH_MAX], dset[512];
    if (ok && fill_nan) {
        float nan = NAN;
        ok = H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, &nan) >= 0;
    }
    ok = ok && snprintf(dset, sizeof dset, "/%s/%s", suite, name) < (int)sizeof dset;
    for (int r = 0; ok && r < p->n_parts; r++) {
        if (hi[r] <= lo[r]) continue;
        hsize_t sdims[8], start[8] = {0};
        for (int k = 0; k < rank; k++) sdims[k] = dims[k];
        sdims[0] = (hsize_t)(hi[r] - lo[r]);
        start[0] = (hsize_t)lo[r];
        hid_t ss = H5Screate_simple(rank, sdims, NULL);
        ok = ss >= 0 && andrea_dw_part_name(base_name(p->out_path), r, p->n_parts, src, sizeof src) == 0 &&
             H5Sselect_hyperslab(vs, H5S_SELECT_SET, start, NULL, sdims, NULL) >= 0 &&
             H5Pset_virtual(dcpl, vs, src, dset, ss) >= 0;
        if (ss >= 0) H5Sclose(ss);
    }
    if (ok && H5Sselect_all(vs) >= 0) d = H5Dcreate2(g, name, type, vs, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (dcpl >= 0) H5Pclose(dcpl);
    if (vs >= 0) H5Sclose(vs);
    return d;
}
