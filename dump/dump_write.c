/* dump_write.c — the HDF5 dump around one forward run (dump_write.h, dump.h, run/run.h): the
 * writer object (dump_run) and its four steps, open / write / commit / abort.
 *
 * open checks the options and the suites (andrea_run_new, which also picks the batch), hashes
 * the checkpoint (on a thread while the engine opens), reserves the temporary name, opens the
 * run's buffers and engine (andrea_run_open) and creates the file with its root attributes.
 * write hands every batch of every suite (andrea_run_suites) to the HDF5 writer sink
 * (dump_write_suite.c) and the caller's sinks. commit closes, seals and renames; abort undoes
 * whatever the state says exists.
 *
 * States of a run that writes a file (r->state; each step moves it forward, never back):
 *
 *     NONE       inputs checked, sha256 known, batch chosen; nothing on disk
 *       |  andrea_tmp_begin (rank 0; the name is broadcast)
 *     RESERVED   "<out>.tmp-<pid>-<random>" exists (empty, made with O_EXCL) and is registered for removal on SIGINT/SIGTERM;
 *       |        engine, pipeline and buffers may be open
 *       |  H5Fcreate (collective under MPI), root attributes
 *     CREATED    f, f16, fcpl (and the MPI fapl/dxpl) are open; the suites are written here
 *       |  H5Fclose, property lists closed (every rank), then the byte totals summed
 *     CLOSED     the temporary file is complete HDF5 but unsealed
 *       |  andrea_dump_seal (rank 0)
 *     SEALED     the user block holds the seal
 *       |  andrea_tmp_commit (rank 0)            | part files (MPI without --single-file):
 *       |                                    |  every rank its part; then rank 0 writes and
 *       |                                    |  seals the master "<out>.tmp-<pid>-<random>" (agreed)
 *       |                                    v  andrea_tmp_commit of each part (every rank)
 *       |                          PARTS_RENAMED "<out>.part-R-of-N" complete; abort unlinks it
 *       |                                       |  andrea_tmp_commit of the master (rank 0), last
 *     RENAMED    out_path is the complete dump; nothing is left to undo but the engine
 *
 * Part files (dump_write_parts.c, docs/dump-format.md): every rank runs NONE .. SEALED on its own
 * part (plain HDF5, its own temporary name; rank 0 also reserves the master's name in RESERVED,
 * mtmp), writing only its rows of the maps and values; the seals are gathered, rank 0 writes the
 * master (virtual datasets over the parts) and seals it; each step is agreed by all ranks, so a
 * failure anywhere removes every temporary and every part already renamed, and leaves no master.
 *
 * A run without out_path (sinks only: `andrea analyze` without --dump) stays in NONE: no name,
 * no file, the same engine and loop.
 * abort, from any state before RENAMED: closes what is open (fcpl always; the file, f16 and the
 * MPI lists only in a serial run or when the failure was agreed, below), removes the temporary
 * file (rank 0) and closes the engine and buffers. After RENAMED nothing fails.
 *
 * MPI agreement (mpi_shard.h; serial runs take none of these branches), orthogonal to the state.
 * --single-file (r->par.collective): every rank opens the one file through MPI-IO, creates every group, dataset and attribute with
 * identical arguments, and writes its contiguous shard of each suite's sequences with collective
 * transfers; ranks with fewer batches take part in the extra writes selecting nothing. Rank 0
 * names, creates-checks, seals and renames the file. Failures before a write (bad input, engine,
 * forward, interrupt) pass through dw_agree, which every rank calls at the same points: all ranks
 * then fail together and r->par.agreed = 1, so abort may make the collective closes. A failure
 * inside a collective HDF5 call is not agreed (agreed stays 0): abort then closes nothing
 * collective, and the CLI ends the job through andrea_mpi_finish.
 */
#include "dump_write.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/atomic_file.h"
#include "../common/checked_size.h"
#include "../common/progress.h"
#include "../common/sha256.h"
#include "../engine/checkpoint.h"
#include "dump.h"
#include "dump_h5.h"
#include "dump_write_impl.h"
#include "dump_write_mpi.h"
#include "../common/mpi_shard.h"
#include "../common/printable.h"
#ifdef ANDREA_HAVE_CUDA
#include "../kernels/cuda_engine.h"
#endif

void andrea_dump_options_init(andrea_dump_options *o) {
    memset(o, 0, sizeof *o);
    andrea_run_options_init(&o->run);
}

/* ---- validation ---- */

/* The root attribute "suites" (the names, comma-separated) is an HDF5 compact attribute: with its
 * header it must stay under 64 KiB. */
#define SUITE_LIST_MAX_BYTES 60000

static int check_suite_names(const probe_suite *s, int n, ae_error *err) {
    size_t list = 0;
    for (int i = 0; i < n; i++) list += strlen(s[i].name) + 1;
    if (n > 0 && list > SUITE_LIST_MAX_BYTES)
        return andrea_fail(err, "%s: the %d suite names take %zu bytes together, a dump holds at most %d (shorter names "
                           "or fewer suites)", s[0].source, n, list - 1, SUITE_LIST_MAX_BYTES);
    return 0;
}

/* ---- the writer object ---- */

typedef enum { DW_NONE, DW_RESERVED, DW_CREATED, DW_CLOSED, DW_SEALED, DW_PARTS_RENAMED, DW_RENAMED } dw_state;

/* The checkpoint's sha256 (0.5 s for a 500 MB checkpoint) computed on a thread while the engine
 * opens (CUDA: context, weights, pinned buffers: 0.4-3 s), in a serial run; MPI ranks keep the
 * sequential order (rank 0 hashes, then broadcasts). */
typedef struct {
    const andrea_model *m;
    char hex[65];
    ae_error err;
    int rc;
    double seconds;
} hash_job;

static void *hash_job_run(void *arg) {
    hash_job *j = arg;
    double t0 = andrea_now_seconds();
    j->rc = andrea_checkpoint_sha256(j->m, j->hex, &j->err);
    j->seconds = andrea_now_seconds() - t0;
    return NULL;
}

/* One dump run: the states at the top of this file. */
typedef struct {
    /* the caller's inputs, alive for the whole run */
    const andrea_model *m;
    const probe_suite *suites;
    int n_suites;
    const andrea_dump_options *o;
    int writing;          /* 1: a file is written (o->out_path); 0: the sinks only */
    const char *h5_path;  /* the file named in messages: out_path, or the checkpoint */
    int root;             /* MPI rank 0 (1 in a serial run) */
    int parts;            /* MPI without --single-file: a part file a rank + rank 0's master */
    dw_state state;
    /* the forward run (run/run.h): batch, buffers, engine; ro: its options */
    andrea_run *run;
    andrea_run_options ro;
    /* the checkpoint's identity; hash_later: hashed on a thread (hashing) during the engine open
     * and, when a file is written, the forwards (hash_pending until joined: the attribute is
     * written just before the close) */
    char sha[65];
    int hash_later, hashing, hash_pending;
    hash_job hj;
    pthread_t hash_thread;
    /* the names the file records (rank 0's) */
    char engine_name[16], precision[8];
    /* the file: its temporary name, HDF5 ids (-1 or H5P_DEFAULT when not open), the writer sink */
    char tmp[AE_PATH_MAX];
    char part_path[AE_PATH_MAX]; /* parts: this rank's part file "<out>.part-R-of-N" (tmp is its
                                  * temporary name) */
    char mtmp[AE_PATH_MAX];      /* parts, rank 0: the master's temporary name ("" until reserved) */
    char seal[65];           /* the seal written (hex), "" until SEALED */
    hid_t f, f16, fcpl, fapl;
    par_state par;
    dw_writer wr;
    int64_t all_bytes;    /* payload bytes of all ranks */
    /* seconds (andrea_dump_stats); t0: after the inputs were checked */
    double t0, t_hash, t_hash_wait, t_open, t_create, t_close, t_seal;
} dump_run;

static void run_init(dump_run *r, const andrea_model *m, const probe_suite *suites, int n_suites,
                     const andrea_dump_options *o) {
    memset(r, 0, sizeof *r);
    r->m = m;
    r->suites = suites;
    r->n_suites = n_suites;
    r->o = o;
    r->ro = o->run;
    if (!r->ro.progress_label) r->ro.progress_label = "dump";
    /* no output path: a run for the other sinks only (andrea analyze), no file */
    r->writing = o->out_path && o->out_path[0];
    r->h5_path = r->writing ? o->out_path : m->path;
    r->root = andrea_mpi_rank() == 0;
    r->parts = r->writing && andrea_mpi_parallel() && !o->single_file;
    r->par.collective = r->writing && andrea_mpi_parallel() && !r->parts;
    r->state = DW_NONE;
    r->f = r->f16 = r->fcpl = -1;
    r->fapl = H5P_DEFAULT;
    r->par.dxpl = H5P_DEFAULT;
    r->par.agreed = 0;
    andrea_dw_writer_init(&r->wr);
    r->hj.m = m;
    snprintf(r->precision, sizeof r->precision, "fp32"); /* the matmuls' precision: CPU always fp32 */
}

/* ---- root attributes ---- */

static int write_root_attrs(const dump_run *r, hid_t f, ae_error *err) {
    const andrea_model *m = r->m;
    const andrea_dump_options *o = r->o;
    const probe_suite *s = r->suites;
    const int n = r->n_suites;
    const char *h5_path = r->h5_path;
    const andrea_config *c = &m->cfg;
    char cfg_json[512];
    snprintf(cfg_json, sizeof cfg_json,
             "{\"n_layer\": %d, \"n_head\": %d, \"d_model\": %d, \"head_dim\": %d, \"vocab_size\": %d, "
             "\"padded_vocab_size\": %d, \"max_seq_len\": %d}",
             c->n_layer, c->n_head, c->d_model, c->head_dim, c->vocab_size, c->padded_vocab_size, c->max_seq_len);
    size_t cap = 1;
    for (int i = 0; i < n; i++) cap += strlen(s[i].name) + 1;
    char *list = malloc(cap);
    if (!list) return andrea_fail(err, "%s: out of memory", h5_path);
    list[0] = 0;
    for (int i = 0; i < n; i++) {
        if (i) strcat(list, ",");
        strcat(list, s[i].name);
    }
    static const char *const contrib_names[] = {"none", "norm", "full"};
    H5_TRY(andrea_dw_attr_str(f, "andrea_version", ANDREA_VERSION));
    /* absolute, so that classify finds the checkpoint from any folder (docs/dump-format.md) */
    char abs_ck[PATH_MAX];
    H5_TRY(andrea_dw_attr_str(f, "checkpoint_path", m->path[0] && realpath(m->path, abs_ck) ? abs_ck : m->path));
    if (!r->hash_pending) H5_TRY(andrea_dw_attr_str(f, "checkpoint_sha256", r->sha)); /* else at the close */
    H5_TRY(andrea_dw_attr_str(f, "config", cfg_json));
    H5_TRY(andrea_dw_attr_int(f, "n_layer", c->n_layer));
    H5_TRY(andrea_dw_attr_int(f, "n_head", c->n_head));
    H5_TRY(andrea_dw_attr_int(f, "d_model", c->d_model));
    H5_TRY(andrea_dw_attr_int(f, "head_dim", c->head_dim));
    H5_TRY(andrea_dw_attr_int(f, "vocab_size", c->vocab_size));
    H5_TRY(andrea_dw_attr_int(f, "padded_vocab_size", c->padded_vocab_size));
    H5_TRY(andrea_dw_attr_int(f, "max_seq_len", c->max_seq_len));
    H5_TRY(andrea_dw_attr_str(f, "maps_dtype", o->run.maps_fp32 ? "fp32" : "fp16"));
    H5_TRY(andrea_dw_attr_str(f, "contrib", contrib_names[o->run.contrib]));
    H5_TRY(andrea_dw_attr_str(f, "suites", list));
    H5_TRY(andrea_dw_attr_str(f, "engine", r->engine_name));
    H5_TRY(andrea_dw_attr_str(f, "precision", r->precision));
    H5_TRY(andrea_dw_attr_str(f, "tokenizer", o->tokenizer ? o->tokenizer : ""));
    char vocab_sha[65] = ""; /* the tokenizer's identity (dump_write_h5.c); "" without one */
    if (o->tok && andrea_dump_tokenizer_sha256(o->tok, c->vocab_size, vocab_sha)) H5_FAIL_("tokenizer sha256");
    H5_TRY(andrea_dw_attr_str(f, "tokenizer_vocab_sha256", vocab_sha));
    free(list);
    return 0;
fail:
    free(list);
    return -1;
}

/* ---- open: sizes ---- */

/* The options and the suites, checked on every rank and agreed (a bad input on any rank stops
 * all); the run's batch chosen (run/run.h). */
static int open_check(dump_run *r, ae_error *err) {
    const andrea_dump_options *o = r->o;
    int vrc = 0;
    if (!r->writing && o->n_sinks <= 0) vrc = andrea_fail(err, "dump: no output path");
    else if (o->gzip < 0 || o->gzip > 9) vrc = andrea_fail(err, "%s: gzip level %d outside 0..9", r->h5_path, o->gzip);
    else if (!(vrc = check_suite_names(r->suites, r->n_suites, err)) &&
             !(r->run = andrea_run_new(r->m, r->suites, r->n_suites, &r->ro, r->h5_path, err)))
        vrc = -1;
    return andrea_mpi_agree(vrc, err) ? -1 : 0;
}

/* The checkpoint's sha256 when given, or when it cannot wait for the engine open (MPI: rank 0
 * hashes, the others are told); otherwise hash_later says it is hashed during the open. */
static int open_hash(dump_run *r, ae_error *err) {
    const andrea_dump_options *o = r->o;
    const int hash_file = r->writing && !o->checkpoint_sha256 && strncmp(r->m->path, "random:", 7) != 0;
    r->hash_later = hash_file && !andrea_mpi_parallel();
    int src = 0;
    if (o->checkpoint_sha256) {
        snprintf(r->sha, sizeof r->sha, "%s", o->checkpoint_sha256);
    } else if (hash_file && !r->hash_later && r->root) {
        src = andrea_checkpoint_sha256(r->m, r->sha, err);
        r->t_hash = andrea_now_seconds() - r->t0;
    }
    return andrea_mpi_agree(src, err) || andrea_mpi_bcast(r->sha, sizeof r->sha, 0, err) ? -1 : 0;
}

/* ---- open: name, engine, file ---- */

/* A part file's root attributes: which part of which master it is (the reader refuses to open a
 * part as a dump and names its master). */
static int write_part_attrs(const dump_run *r, ae_error *err) {
    const char *h5_path = r->part_path, *slash = strrchr(r->o->out_path, '/');
    char what[64];
    snprintf(what, sizeof what, "%d of %d", andrea_mpi_rank(), andrea_mpi_size());
    H5_TRY(andrea_dw_attr_str(r->f, "andrea_version", ANDREA_VERSION));
    H5_TRY(andrea_dw_attr_str(r->f, "andrea_part", what));
    H5_TRY(andrea_dw_attr_str(r->f, "master", slash ? slash + 1 : r->o->out_path));
    return 0;
fail:
    return -1;
}

/* NONE -> RESERVED with part files: every rank names its part "<out>.part-R-of-N" and reserves
 * its temporary name; rank 0 also reserves the master's (written at commit). Agreed. */
static int open_reserve_parts(dump_run *r, ae_error *err) {
    int rc = 0;
    if (andrea_dw_part_name(r->o->out_path, andrea_mpi_rank(), andrea_mpi_size(), r->part_path, sizeof r->part_path))
        rc = andrea_fail(err, "%s: path too long", r->o->out_path);
    if (!rc && r->root) rc = andrea_tmp_begin(r->o->out_path, r->mtmp, sizeof r->mtmp, err);
    if (!rc) rc = andrea_tmp_begin(r->part_path, r->tmp, sizeof r->tmp, err);
    if (andrea_mpi_agree(rc, err)) {
        if (r->tmp[0]) andrea_tmp_abort(r->tmp);
        if (r->mtmp[0]) andrea_tmp_abort(r->mtmp);
        r->tmp[0] = r->mtmp[0] = 0;
        return -1;
    }
    r->state = DW_RESERVED;
    return 0;
}

/* NONE -> RESERVED. MPI: one file, named by rank 0 (the temporary name carries its pid) and told
 * to the others. */
static int open_reserve(dump_run *r, ae_error *err) {
    h5_silence();
    if (r->parts) return open_reserve_parts(r, err);
    if (andrea_mpi_agree(r->root && r->writing ? andrea_tmp_begin(r->o->out_path, r->tmp, sizeof r->tmp, err) : 0, err)) {
        if (r->root && r->tmp[0]) andrea_tmp_abort(r->tmp);
        return -1;
    }
    if (r->writing) r->state = DW_RESERVED;
    return andrea_mpi_bcast(r->tmp, sizeof r->tmp, 0, err) ? -1 : 0;
}

/* The hashing thread joined and its result taken (once; a no-op when nothing is pending). */
static int hash_join(dump_run *r, ae_error *err) {
    if (!r->hash_pending) return 0;
    r->hash_pending = 0;
    if (r->hashing && pthread_join(r->hash_thread, NULL) != 0) /* cannot happen for a joinable thread */
        r->hj.rc = andrea_fail(&r->hj.err, "%s: cannot join the hashing thread", r->m->path);
    r->t_hash = r->hj.seconds;
    snprintf(r->sha, sizeof r->sha, "%s", r->hj.hex);
    return r->hj.rc ? andrea_fail(err, "%s", r->hj.err.msg) : 0;
}

/* Buffers and engine, the checkpoint hashed on a thread meanwhile (joined before returning unless
 * a file is written: then it runs on beside the forwards, joined in dump_commit), then a plain
 * create of the reserved name for a clear "cannot create: <reason>" (HDF5's message is long). Not
 * agreed: the caller agrees on the result. */
static int open_engine(dump_run *r, ae_error *err) {
    const double t_open0 = andrea_now_seconds();
    r->hashing = r->hash_later && pthread_create(&r->hash_thread, NULL, hash_job_run, &r->hj) == 0;
    if (r->hash_later && !r->hashing) hash_job_run(&r->hj); /* no thread to be had: hash here */
    r->hash_pending = r->hash_later;
    int orc = andrea_run_open(r->run, err);
    ae_error herr;
    if ((orc || !r->writing) && hash_join(r, &herr) && !orc) orc = andrea_fail(err, "%s", herr.msg);
    r->t_open = andrea_now_seconds() - t_open0 - (r->hashing ? 0 : r->hj.seconds);
    return orc;
}

/* MPI: the file's "engine" and "precision" attributes must be the same on every rank: rank 0's. */
static int open_engine_names(dump_run *r, ae_error *err) {
    andrea_engine *eng = andrea_run_engine(r->run);
    snprintf(r->engine_name, sizeof r->engine_name, "%s", andrea_engine_name(eng));
#ifdef ANDREA_HAVE_CUDA
    if (andrea_engine_has_gpu(eng)) snprintf(r->precision, sizeof r->precision, "%s", andrea_cuda_precision(eng));
#endif
    return andrea_mpi_bcast(r->engine_name, sizeof r->engine_name, 0, err) ||
                   andrea_mpi_bcast(r->precision, sizeof r->precision, 0, err)
               ? -1
               : 0;
}

/* RESERVED -> CREATED: the HDF5 file under the temporary name, with room for the seal in front of
 * its data (dump.h), and its root attributes. */
static int open_create(dump_run *r, ae_error *err) {
    const char *h5_path = r->h5_path;
    if (r->par.collective) {
        H5_ID(r->fapl, andrea_dump_par_fapl());
        H5_ID(r->par.dxpl, andrea_dump_par_dxpl());
    }
    H5_ID(r->fcpl, H5Pcreate(H5P_FILE_CREATE));
    H5_TRY(H5Pset_userblock(r->fcpl, ANDREA_DUMP_USERBLOCK));
    /* Serial: a new file (O_EXCL), never a truncated one. Why: ext4 treats "truncate to 0, then
     * write" as a file being replaced and starts writeback of ALL its dirty pages on close
     * (auto_da_alloc): H5Fclose of a 19 GB dump took 6.4 s of a 16 s dump on the H200 machine.
     * The probe file of open_engine only reserved the name. MPI: the ranks open collectively; TRUNC. */
    if (!r->par.collective && unlink(r->tmp) != 0 && errno != ENOENT)
        return andrea_fail(err, "%s: cannot replace the temporary file: %s", r->o->out_path, strerror(errno));
    const double t_create0 = andrea_now_seconds();
    H5_ID(r->f, H5Fcreate(r->tmp, r->par.collective ? H5F_ACC_TRUNC : H5F_ACC_EXCL, r->fcpl, r->fapl));
    r->state = DW_CREATED;
    H5_ID(r->f16, andrea_dw_make_f16_type());
    if (r->parts ? write_part_attrs(r, err) : write_root_attrs(r, r->f, err)) return -1;
    r->t_create = andrea_now_seconds() - t_create0;
    return 0;
fail:
    return -1;
}

/* open: everything before the first forward. -1: dump_abort undoes what the state says exists. */
static int dump_open(dump_run *r, ae_error *err) {
    if (open_check(r, err)) return -1;
    r->t0 = andrea_now_seconds();
    if (open_hash(r, err) || open_reserve(r, err)) return -1;
    if (dw_agree(open_engine(r, err), &r->par, err)) return -1;
    if (open_engine_names(r, err)) return -1;
    return r->writing ? open_create(r, err) : 0;
}

/* ---- write ---- */

/* write: every batch of every suite through the forward run (run/run.h), handed to the writer
 * (when a file is written) and the caller's sinks (o->sinks). CREATED, or NONE without a file. */
static int dump_write(dump_run *r, ae_error *err) {
    const andrea_dump_options *o = r->o;
    andrea_batch_sink *v = calloc((size_t)o->n_sinks + 1, sizeof *v);
    if (!v) return andrea_fail(err, "%s: out of memory", r->h5_path);
    int n = 0;
    if (r->writing) {
        dw_writer *wr = &r->wr;
        wr->f = r->f, wr->f16 = r->f16, wr->m = r->m, wr->o = o, wr->par = &r->par;
        wr->stage = andrea_run_scratch(r->run), wr->h5_path = r->h5_path, wr->suites = r->suites;
        wr->mode = r->parts ? DW_MODE_PART : DW_MODE_FILE, wr->n_suites = r->n_suites, wr->B = andrea_run_batch(r->run);
        v[n++] = andrea_dw_writer_sink(wr);
    }
    for (int i = 0; i < o->n_sinks; i++) v[n++] = o->sinks[i];
    const int rc = andrea_run_suites(r->run, v, n, &r->par.agreed, err);
    free(v);
    return rc;
}

/* ---- commit, abort ---- */

/* "a,b,c" of the parts' file names (without their folder) or of their seals (65 bytes each). */
static char *parts_list(const char *out_path, const char *seals, int np) {
    const char *slash = strrchr(out_path, '/'), *base = slash ? slash + 1 : out_path;
    size_t cap = (size_t)np * (strlen(base) + 80) + 1;
    char *list = malloc(cap), name[AE_PATH_MAX];
    size_t len = 0;
    if (!list) return NULL;
    list[0] = 0;
    for (int i = 0; i < np; i++) {
        if (!seals && andrea_dw_part_name(base, i, np, name, sizeof name)) break;
        len += (size_t)snprintf(list + len, cap - len, "%s%s", i ? "," : "", seals ? seals + (size_t)i * 65 : name);
    }
    return list;
}

/* Rank 0: the master under mtmp (docs/dump-format.md): the serial root attributes plus "parts"
 * and "part_seals", every suite's group as a serial dump holds it with its maps and values as
 * virtual datasets over the parts (the writer sink in MASTER mode); closed and sealed (r->seal). */
static int write_master(dump_run *r, const char *seals, ae_error *err) {
    const char *h5_path = r->o->out_path;
    const int np = andrea_mpi_size();
    hid_t f = -1, fcpl = -1, f16 = -1;
    char *names = parts_list(h5_path, NULL, np), *sl = parts_list(h5_path, seals, np);
    int rc = -1;
    if (!names || !sl) {
        andrea_fail(err, "%s: out of memory", h5_path);
        goto fail;
    }
    H5_ID(fcpl, H5Pcreate(H5P_FILE_CREATE));
    H5_TRY(H5Pset_userblock(fcpl, ANDREA_DUMP_USERBLOCK));
    /* the empty file andrea_tmp_begin made is replaced by a new one (O_EXCL: a link planted in
     * its place is refused, never written through) */
    if (unlink(r->mtmp) != 0 && errno != ENOENT) {
        andrea_fail(err, "%s: cannot replace the temporary file: %s", h5_path, strerror(errno));
        goto fail;
    }
    H5_ID(f, H5Fcreate(r->mtmp, H5F_ACC_EXCL, fcpl, H5P_DEFAULT));
    H5_ID(f16, andrea_dw_make_f16_type());
    if (write_root_attrs(r, f, err)) goto fail;
    H5_TRY(andrea_dw_attr_str(f, "parts", names));
    H5_TRY(andrea_dw_attr_str(f, "part_seals", sl));
    dw_writer w;
    andrea_dw_writer_init(&w);
    par_state par = {H5P_DEFAULT, 0, 0};
    w.f = f, w.f16 = f16, w.m = r->m, w.o = r->o, w.par = &par, w.stage = andrea_run_scratch(r->run), w.h5_path = h5_path;
    w.suites = r->suites, w.mode = DW_MODE_MASTER, w.n_suites = r->n_suites, w.B = andrea_run_batch(r->run);
    w.vds.out_path = h5_path, w.vds.n_parts = np;
    const andrea_batch_sink k = andrea_dw_writer_sink(&w);
    for (int i = 0; i < r->n_suites; i++)
        if (k.suite_begin(k.self, i, &r->suites[i], err) || k.suite_end(k.self, i, err)) goto fail;
    r->all_bytes += w.bytes;
    H5Tclose(f16);
    f16 = -1;
    herr_t closed = andrea_dw_fclose(f);
    f = -1;
    H5_TRY(closed);
    rc = andrea_dump_seal(r->mtmp, r->seal, err);
fail:
    if (f16 >= 0) H5Tclose(f16);
    if (f >= 0) andrea_dw_fclose(f);
    if (fcpl >= 0) H5Pclose(fcpl);
    free(names);
    free(sl);
    return rc;
}

/* commit with part files: every rank CREATED -> CLOSED -> SEALED (its part); the seals gathered,
 * rank 0 writes and seals the master; PARTS_RENAMED (every rank its part), RENAMED (rank 0 the
 * master, last: a master names only complete parts). Each step agreed by all ranks, so a failure
 * anywhere leaves no master, and abort removes the parts already renamed. */
static int commit_parts(dump_run *r, ae_error *err) {
    const char *h5_path = r->part_path;
    const int np = andrea_mpi_size();
    char seal[65] = "", *seals = NULL;
    int crc = 0, rc = -1;
    const double t_close0 = andrea_now_seconds();
    H5Tclose(r->f16);
    r->f16 = -1;
    herr_t closed = andrea_dw_fclose(r->f);
    r->f = -1;
    H5Pclose(r->fcpl);
    r->fcpl = -1;
    char why[200];
    if (closed < 0) crc = andrea_fail(err, "%s: HDF5 cannot close the part file: %s", h5_path, h5_last_error(why));
    else r->state = DW_CLOSED;
    r->t_close = andrea_now_seconds() - t_close0;
    const double t_seal0 = andrea_now_seconds();
    if (!crc && !(crc = andrea_dump_seal(r->tmp, seal, err))) r->state = DW_SEALED;
    if (!crc && !(seals = calloc((size_t)np, 65))) crc = andrea_fail(err, "%s: out of memory", h5_path);
    if (andrea_mpi_agree(crc, err)) goto out;
    r->all_bytes = r->wr.bytes;
    if (andrea_mpi_allgather(seal, 65, seals, err) || andrea_mpi_sum_i64(&r->all_bytes, 1, err)) goto out;
    if (andrea_mpi_agree(r->root ? write_master(r, seals, err) : 0, err)) goto out;
    r->t_seal = andrea_now_seconds() - t_seal0;
    crc = andrea_tmp_commit(r->tmp, r->part_path, err);
    if (!crc) r->state = DW_PARTS_RENAMED;
    if (andrea_mpi_agree(crc, err)) goto out;
    crc = r->root ? andrea_tmp_commit(r->mtmp, r->o->out_path, err) : 0;
    if (r->root) r->mtmp[0] = 0; /* renamed, or removed by the failed commit */
    if (andrea_mpi_agree(crc, err)) goto out;
    r->state = DW_RENAMED;
    rc = 0;
out:
    free(seals);
    return rc;
}

/* commit: CREATED -> CLOSED -> SEALED -> RENAMED. The byte totals of all ranks are summed after
 * the collective H5Fclose, so every rank has closed the file before rank 0 seals and renames it. */
static int dump_commit(dump_run *r, ae_error *err) {
    if (r->parts) return commit_parts(r, err);
    const char *h5_path = r->h5_path;
    const double t_wait0 = andrea_now_seconds();
    if (r->hash_pending) { /* the checkpoint's identity, hashed beside the forwards */
        if (hash_join(r, err)) return -1;
        H5_TRY(andrea_dw_attr_str(r->f, "checkpoint_sha256", r->sha));
    }
    r->t_hash_wait = andrea_now_seconds() - t_wait0;
    const double t_close0 = andrea_now_seconds();
    if (r->writing) {
        H5Tclose(r->f16);
        r->f16 = -1;
        herr_t closed = andrea_dw_fclose(r->f);
        r->f = -1;
        if (closed < 0) H5_FAIL_("H5Fclose"); /* H5_TRY(closed) would name the variable */
        andrea_dump_par_close(r->par.dxpl);
        andrea_dump_par_close(r->fapl);
        r->par.dxpl = r->fapl = H5P_DEFAULT;
        H5Pclose(r->fcpl);
        r->fcpl = -1;
        r->state = DW_CLOSED;
    }
    r->t_close = andrea_now_seconds() - t_close0;
    r->all_bytes = r->wr.bytes;
    int crc = andrea_mpi_sum_i64(&r->all_bytes, 1, err);
    const double t_seal0 = andrea_now_seconds();
    if (!crc && r->root && r->writing && !(crc = andrea_dump_seal(r->tmp, r->seal, err))) r->state = DW_SEALED;
    r->t_seal = andrea_now_seconds() - t_seal0;
    if (!crc && r->root && r->writing && !(crc = andrea_tmp_commit(r->tmp, r->o->out_path, err))) r->state = DW_RENAMED;
    return andrea_mpi_agree(crc, err) ? -1 : 0;
fail:
    return -1;
}

/* abort, from any state before RENAMED: the header's rules. */
static void dump_abort(dump_run *r) {
    ae_error ignored;
    (void)hash_join(r, &ignored); /* no thread outlives the run */
    if (r->fcpl >= 0) H5Pclose(r->fcpl);
    /* MPI: closing is collective; after a failure the other ranks did not agree to, skip it. */
    if (!r->par.collective || r->par.agreed) {
        if (r->f16 >= 0) H5Tclose(r->f16);
        if (r->f >= 0) andrea_dw_fclose(r->f);
        andrea_dump_par_close(r->par.dxpl);
        andrea_dump_par_close(r->fapl);
    }
    if ((r->root || r->parts) && r->state >= DW_RESERVED && r->state < DW_PARTS_RENAMED) andrea_tmp_abort(r->tmp);
    if (r->parts && r->state == DW_PARTS_RENAMED) unlink(r->part_path); /* no part without its master */
    if (r->mtmp[0]) andrea_tmp_abort(r->mtmp);
    andrea_run_free(r->run);
}

/* After a commit: the statistics, and the engine handed to the caller or closed. */
static void dump_finish(dump_run *r) {
    const andrea_dump_options *o = r->o;
    double secs = andrea_now_seconds() - r->t0;
    (void)andrea_mpi_max_f64(&secs, NULL); /* statistics only: the file is complete */
    if (o->stats) {
        andrea_dump_stats *st = o->stats;
        andrea_run_stats rs;
        andrea_run_get_stats(r->run, &rs);
        st->seconds = secs;
        st->sequences = rs.sequences;
        st->bytes = r->all_bytes;
        st->batch = rs.batch;
        snprintf(st->engine, sizeof st->engine, "%s", r->engine_name);
        snprintf(st->seal, sizeof st->seal, "%s", r->seal);
        st->t_hash = r->t_hash;
        st->t_hash_wait = r->t_hash_wait;
        st->t_open = r->t_open;
        st->t_forward = rs.t_forward;
        st->t_maps = rs.t_maps;
        st->t_other = rs.t_other;
        st->t_sinks = rs.t_sinks;
        st->t_close = r->t_close;
        st->t_seal = r->t_seal;
        st->t_create = r->t_create;
        st->t_suites_rest = rs.t_suites - rs.t_forward - rs.t_maps - rs.t_other - rs.t_sinks;
        /* the hash overlaps the engine open and the forwards when it ran on a thread (the rest of
         * it is t_hash_wait); else it came first */
        st->t_unaccounted = secs - (r->hashing ? r->t_hash_wait : r->t_hash) - r->t_open - r->t_create - rs.t_suites -
                            r->t_close - r->t_seal;
    }
    if (o->keep_engine) *o->keep_engine = andrea_run_take_engine(r->run); /* the caller's now (the causal check runs on it) */
    andrea_run_free(r->run);
}

int andrea_dump_write(const andrea_model *m, const probe_suite *suites, int n_suites, const andrea_dump_options *o,
                      ae_error *err) {
    dump_run r;
    run_init(&r, m, suites, n_suites, o);
    if (dump_open(&r, err) || dump_write(&r, err) || dump_commit(&r, err)) {
        dump_abort(&r);
        return -1;
    }
    dump_finish(&r);
    return 0;
}

/* ---- the seal ---- */

int andrea_dump_seal(const char *path, char hex_out[65], ae_error *err) {
    char hex[65], block[ANDREA_DUMP_USERBLOCK];
    if (andrea_sha256_blocks(path, ANDREA_DUMP_USERBLOCK, ANDREA_DUMP_SEAL_BLOCK, hex, err)) return -1;
    if (hex_out) snprintf(hex_out, 65, "%s", hex);
    /* O_NOFOLLOW: path is this process's temporary; a link put in its place is not written through */
    const int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "r+b") : NULL;
    if (!f) {
        const int e = errno;
        if (fd >= 0) close(fd);
        return andrea_fail(err, "%s: cannot open to seal: %s", path, strerror(e));
    }
    memset(block, 0, sizeof block);
    snprintf(block, sizeof block, "%ssha256-blocks %zu %s\n", ANDREA_DUMP_MAGIC, ANDREA_DUMP_SEAL_BLOCK, hex);
    int rc = 0;
    if (fwrite(block, 1, sizeof block, f) != sizeof block)
        rc = andrea_fail(err, "%s: cannot write the seal: %s", path, strerror(errno));
    if (fclose(f) != 0 && rc == 0) rc = andrea_fail(err, "%s: cannot write the seal: %s", path, strerror(errno));
    return rc;
}
