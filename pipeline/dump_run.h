/* dump_run.h — `andrea dump CKPT` as one call: the model, its tokenizer and the probe suites
 * loaded, the forwards run into the HDF5 dump (dump/dump_write.h).
 *
 * Job: the stage order and the output checks of dump, so cli/ only parses and prints. The output
 * path is checked before the model is loaded (a serial run; under MPI the writer checks on rank 0
 * and every rank agrees: one line for the job) and again against the inputs once they are known.
 * Failure contract: -1 with err (*usage set when an argument is at fault: the CLI prints it as a
 * usage error); no file is left under the output's name or its temporary one.
 */
#ifndef ANDREA_DUMP_RUN_H
#define ANDREA_DUMP_RUN_H

#include "../common/error.h"
#include "../dump/dump_write.h"
#include "../probes/probe.h"

typedef struct {
    const char *ckpt;
    const char *tok_dir;      /* --tokenizer, or NULL */
    const char *heads;        /* --heads L.H,.. (head_out stored for them), or NULL */
    probe_sources *ps;        /* --probes / --texts */
    probe_options po;         /* --n, --len, --seed */
    andrea_dump_options dump; /* out_path, engine, maps, contrib, batch, gzip, single_file (the
                               * tokenizer, heads and stats fields are set by andrea_dump_run) */
} andrea_dump_plan;

typedef struct {
    andrea_dump_stats stats;
    int n_suites;
    double t_load, t_probes; /* seconds: the model load, the tokenizer and probes */
    int prints;              /* 1 on the rank that prints the result (rank 0; a serial run) */
    int usage;               /* on failure: 1 when an argument (--out, --heads) is at fault */
} andrea_dump_result;

int andrea_dump_run(const andrea_dump_plan *p, andrea_dump_result *r, ae_error *err);

#endif
