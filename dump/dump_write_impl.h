/* dump_write_impl.h — what the dump writer's files share (internal to dump/dump_write*.c).
 *
 * dump_write.c is the writer object (open / write / commit / abort: sizes, engine, file, root
 * attributes, seal, rename; its states are written at its top); dump_write_suite.c
 * writes one suite (its group, datasets and batches: CPU/MPI path and the CUDA streaming path);
 * dump_write_parts.c the part files and the master's virtual datasets of an MPI dump;
 * dump_write_h5.c holds the HDF5 helpers both use (fp16 type, attributes, datasets, the map
 * writers). Failure contract as in dump_write.h: -1 with err filled; HDF5 helpers return a
 * negative herr_t/hid_t and leave the message to the caller's H5_TRY (dump_h5.h).
 */
#ifndef ANDREA_DUMP_WRITE_IMPL_H
#define ANDREA_DUMP_WRITE_IMPL_H

#include <hdf5.h>
#include <stdint.h>

#include "../common/mpi_shard.h"
#include "../run/run.h"
#include "dump_write.h"


/* MPI: the transfer list, and whether a failure was agreed by all ranks (then the collective
 * closes are safe; otherwise a parallel failure must not close anything). Serial: H5P_DEFAULT, 0. */
typedef struct {
    hid_t dxpl;
    int agreed;
    int collective; /* 1: every rank writes one file through MPI-IO (--single-file under MPI) */
} par_state;

/* Every rank calls this at the same points: when any rank failed (rc != 0 on any), all return -1
 * and par->agreed is set (the collective closes are then safe); 0 when every rank succeeded. */
static inline int dw_agree(int rc, par_state *par, ae_error *err) { return andrea_run_agree(rc, &par->agreed, err); }

/* dump_write_h5.c */
hid_t andrea_dw_make_f16_type(void);
/* H5Fclose of a dump file being written; a failure is remembered (andrea_h5_finish). */
herr_t andrea_dw_fclose(hid_t f);
herr_t andrea_dw_attr_str(hid_t loc, const char *name, const char *value);
herr_t andrea_dw_attr_int(hid_t loc, const char *name, int v);
herr_t andrea_dw_attr_u64(hid_t loc, const char *name, uint64_t v);
hid_t andrea_dw_dset_create(hid_t group, const char *name, hid_t type, int rank, const hsize_t *dims, const hsize_t *chunk,
                     int gzip, int fill_nan);
herr_t andrea_dw_dset_write_slab(hid_t d, hid_t dxpl, int active, hid_t mtype, int rank, const hsize_t *start,
                          const hsize_t *count, const void *buf);
int andrea_dw_maps_direct_ok(const par_state *par);
herr_t andrea_dw_write_maps(hid_t d, hid_t dxpl, hid_t mtype, int direct, int b0, size_t first, size_t n, int L, int H,
                     int T, size_t esz, const void *maps, const int *lengths, void *stage, int gzip);
/* dimension scales: an int32 0..n-1 scale dataset named name (MPI: rank root writes), and the
 * attachment of one scale per dimension of d, each dimension labelled with its scale's name */
hid_t andrea_dw_scale_create(hid_t g, const char *name, hsize_t n, hid_t dxpl, int root);
herr_t andrea_dw_scales_attach(hid_t d, int rank, const hid_t *scales, const char *const *names);
/* token text: n bytes as valid UTF-8 (bad bytes and NUL -> U+FFFD) into dst (cap, NUL-terminated) */
size_t andrea_dw_utf8_clean(const unsigned char *src, size_t n, char *dst, size_t cap);

/* dump_write_parts.c: the part files of an MPI dump and its master's virtual datasets. */
typedef struct {
    const char *out_path; /* the master's final name; part R is "<out_path>.part-R-of-N" */
    int n_parts;
} dw_vds_parts;
/* Rows [*lo, *hi) of suite `suite` that rank `rank` of `size` computes (and its part holds): the
 * sequences of its shard of the job's batches of B (run/forward_loop.c); lo == hi when none. */
void andrea_dw_part_range(const probe_suite *suites, int n_suites, int suite, int B, int rank, int size, long long *lo,
                   long long *hi);
/* "<out_path>.part-R-of-N" into buf; -1 when it does not fit. */
int andrea_dw_part_name(const char *out_path, int rank, int size, char *buf, size_t cap);
/* The master's virtual dataset g/name of shape dims: rows [lo[r], hi[r]) from /suite/name of part
 * r (named without its folder), for each part with rows. fill_nan: NaN fill value (head_dla). */
hid_t andrea_dw_vds_create(hid_t g, const char *suite, const char *name, hid_t type, int rank, const hsize_t *dims, int fill_nan,
                    const dw_vds_parts *p, const long long *lo, const long long *hi);

/* dump_write_suite.c: the HDF5 writer as a sink. One suite's group and datasets are open between
 * suite_begin and suite_end; andrea_dw_writer_abort closes what is open after a failure (MPI-IO: only
 * when all ranks agreed on it, par->agreed).
 * Modes: FILE writes the whole layout (serial, or every rank's share of one MPI-IO file); PART
 * writes this rank's rows of the maps and per-head values only (rows lo.. at 0 in its part file);
 * MASTER writes everything but those, which it maps from the parts (virtual datasets), with no
 * batch at all: suite_begin + suite_end per suite. */
typedef enum { DW_MODE_FILE, DW_MODE_PART, DW_MODE_MASTER } dw_mode;

typedef struct {
    hid_t f, f16;
    const andrea_model *m;
    const andrea_dump_options *o;
    par_state *par;
    float *stage;               /* [B, L, H, T, T] floats: staging for maps whose padded rows need
                                 * zeroing (andrea_run_scratch) */
    long long bytes;            /* dataset payload written */
    const char *h5_path;
    const probe_suite *suites;
    hid_t g, dtok, dlen, dtar, dent, datt, dnorm, ddla, dout; /* the open suite's, or -1 */
    dw_mode mode;
    int n_suites, B;            /* the run's suites and batch (PART, MASTER: andrea_dw_part_range) */
    long long row0;             /* PART: the open suite's first row held in this part */
    dw_vds_parts vds;           /* MASTER: where the parts are */
} dw_writer;

void andrea_dw_writer_init(dw_writer *w);
andrea_batch_sink andrea_dw_writer_sink(dw_writer *w);
int andrea_dw_writer_abort(dw_writer *w, int suite, ae_error *err);

#endif
