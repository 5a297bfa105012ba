/* dump_write.h — writes the HDF5 dump (layout: dump/dump.h, docs/dump-format.md).
 *
 * Job: the HDF5 file around one forward run (run/run.h): the file is created once the run's
 * engine is open, the writer sink (dump_write_suite.c) gets every batch beside the caller's
 * sinks, then the file is closed, sealed and renamed. With no out_path the run feeds the caller's
 * sinks alone (`andrea analyze` without --dump). Used by `andrea dump` and `andrea analyze`.
 * Invariants: memory is bounded by one batch (run/run.h); the file appears under out_path
 * complete or not at all (written under "<out>.tmp-<pid>", renamed at the end; removed on any
 * failure, on SIGINT / SIGTERM through common/atomic_file.h, and when andrea_interrupted is seen
 * between batches).
 * Failure contract: -1 with "FILE: problem" (the output path, the checkpoint or the probe suite
 * at fault); no file is left under out_path or its temporary name.
 */
#ifndef ANDREA_DUMP_WRITE_H
#define ANDREA_DUMP_WRITE_H

#include <stddef.h>

#include "../common/error.h"
#include "../engine/model.h"
#include "../probes/probe.h"
#include "../run/run.h"

typedef struct {
    double seconds;       /* wall time of the whole write */
    long long sequences;  /* sequences run and written */
    long long bytes;      /* bytes of dataset payload written (before compression) */
    char engine[16];      /* "cpu" or "cuda" */
    char seal[65];        /* the file's seal (hex, as andrea_dump_seal_hex reads it back); "" without a file */
    int batch;            /* sequences per forward actually used */
    /* where the wall time went (seconds; `andrea dump --timing` prints them): hashing the
     * checkpoint (on a thread beside the load, the engine open and the forwards when a file is
     * written in a serial run: t_hash_wait is what the close waited for it), opening the engine (CUDA: context, weights, pinned buffers), the forwards (CPU:
     * compute + fp16 conversion; CUDA: time blocked waiting for the GPU pipeline), writing the
     * attention maps, the other datasets, closing the HDF5 file, sealing it; creating the file
     * with its attributes, the suites' time outside forwards and writes (their datasets'
     * creation and closing), and what none of these covers (the final rename, among others;
     * under MPI `seconds` is the slowest rank's and the parts are this rank's) */
    double t_hash, t_hash_wait, t_open, t_forward, t_maps, t_other, t_close, t_seal, t_create, t_suites_rest, t_unaccounted;
    double t_sinks;       /* time in the caller's sinks (o->sinks: scoring, report maps) */
} andrea_dump_stats;

typedef struct {
    const char *out_path;          /* final file name (required) */
    andrea_run_options run;        /* the forward run: engine options (device, precision, threads),
                                    * maps_fp32 (0: attention stored as IEEE fp16), contrib (NORM:
                                    * head_out_norm + head_dla; FULL adds head_out), heads, batch,
                                    * mem_budget, progress label (run/run.h) */
    int gzip;                      /* 0 = no compression, 1..9 = deflate level on the big datasets */
    const char *checkpoint_sha256; /* precomputed hex digest, or NULL to hash the checkpoint file */
    const char *tokenizer;         /* description stored as root attribute "tokenizer", or NULL */
    const andrea_tokenizer *tok;   /* the model's tokenizer: each suite's token_text and the root
                                    * attribute tokenizer_vocab_sha256 (NULL: neither is stored) */
    andrea_dump_stats *stats;      /* filled on success when non-NULL */
    /* More consumers of every batch (batch_sink.h): the head scorer, the report-map collector.
     * With sinks, out_path may be NULL: the forwards run for the sinks alone and no file is
     * written (`andrea analyze` without --dump). */
    const andrea_batch_sink *sinks;
    int n_sinks;
    int single_file;               /* MPI (mpirun -np N, N > 1): 1 = every rank writes one file through
                                    * collective MPI-IO; 0 (default) = each rank its part file
                                    * "<out>.part-R-of-N", rank 0 the master out_path mapping them
                                    * (virtual datasets, docs/dump-format.md). Serial runs: ignored */
    andrea_engine **keep_engine;   /* non-NULL: the engine is handed back here on success (the
                                    * caller closes it) instead of closed */
} andrea_dump_options;

void andrea_dump_options_init(andrea_dump_options *o);

/* For programs (the CLI), before their first HDF5 call: HDF5 1.10 closes the library (and the
 * files still open) in its atexit handler, and after an H5Fclose that failed (a full disk or a
 * file size limit during a dump's write or final flush) that cleanup touches the half-closed file
 * and crashes (SIGSEGV, Debian 12's libhdf5 1.10.8). So the handler is turned off, and the
 * program calls andrea_h5_finish at its end instead. 0, or -1 when HDF5 was already in use (too
 * late: the handler stays). */
int andrea_h5_skip_exit_cleanup(void);
/* At the program's end: closes HDF5 as its handler would (every andrea file is closed by then),
 * unless a dump file's close failed in this process: then the library is left as it is. */
void andrea_h5_finish(void);

/* Runs m over every suite and writes o->out_path. Suites must satisfy probe.h's invariants for
 * m (ids < vocab_size, 1 <= n_tokens <= max_seq_len); they are checked, not trusted. */
int andrea_dump_write(const andrea_model *m, const probe_suite *suites, int n_suites,
                      const andrea_dump_options *o, ae_error *err);


#endif
