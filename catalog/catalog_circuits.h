/* catalog_circuits.h — the circuit scores in the head catalog (schema: docs/catalog.md, section
 * "Circuit scores").
 *
 * Job: store one andrea_circuits per checkpoint (tables circuit_runs, circuit_composition,
 * circuit_heads; views head_composition and head_weights), read a head's strongest links back,
 * and turn the in-memory result into printable rows.
 * Invariants:
 *   - one circuit run per checkpoint sha256: the scores are a function of the weights alone, so a
 *     new computation replaces the old one in ONE transaction (BEGIN IMMEDIATE ... COMMIT);
 *   - the tables are created by andrea_catalog_circuits_schema, which every catalog writer calls inside
 *     its transaction (andrea_catalog_write, andrea_catalog_circuits_write, andrea_catalog_write_all), so any
 *     catalog has them;
 *   - a catalog that is not andrea's is refused before anything changes (andrea_catalog_open_rw).
 * Failure contract: -1 with "DB: problem" or "DB: <call> failed (file:line): sqlite message".
 */
#ifndef ANDREA_CATALOG_CIRCUITS_H
#define ANDREA_CATALOG_CIRCUITS_H

#include <sqlite3.h>

#include "catalog.h"
#include "../analyzer/circuits.h"


/* Creates the circuit tables and views if missing (inside the caller's transaction). */
int andrea_catalog_circuits_schema(sqlite3 *db, const char *path, ae_error *err);

/* Stores c for the checkpoint (sha256 hex, path: its model name is the file name without .bin /
 * .safetensors, as in the models table), replacing an earlier circuit run of that checkpoint. */
int andrea_catalog_circuits_write(const char *db_path, const char *ckpt_path, const char *sha256, const andrea_circuits *c,
                           ae_error *err);

/* One checkpoint's rows for andrea_catalog_write_all: its analysis as a run (when analysis is
 * non-NULL) and its circuit scores (when circuits is non-NULL; ckpt_path and sha256 as for
 * andrea_catalog_circuits_write). */
typedef struct {
    const andrea_analysis *analysis;
    const andrea_circuits *circuits;
    const char *ckpt_path, *sha256;
    int64_t run_id;  /* out: the run's id (0 without an analysis) */
    char note[1400]; /* out: the checkpoint was known under another name or step (see
                      * docs/catalog.md, Replacement), else "" */
} andrea_catalog_entry;

/* Writes the n entries in ONE transaction: a failure anywhere (disk full, a newer schema, an
 * interrupted process) leaves the catalog as it was, none of the entries in it. What analyze
 * writes: one entry per checkpoint, a series' checkpoints together. */
int andrea_catalog_write_all(const char *db_path, andrea_catalog_entry *entries, int n, ae_error *err);

/* Printable rows of c: weights != 0 -> one row per head (layer, head, copying, prev_pos);
 * else composition rows (src_layer, src_head, dst_layer, dst_head, kind, score, baseline), by
 * score descending, the first `top` (0 = all). */
int andrea_circuits_rows(const andrea_circuits *c, int weights, int top, catalog_rows *out, ae_error *err);

/* One link of a head: the other head and the composition kind. */
typedef struct {
    int layer, head;
    char kind; /* 'Q', 'K', 'V' */
    double score, baseline;
} circuit_link;

/* A catalog read once (read-only) for the links of every head of one checkpoint: a report's head
 * pages. It keeps each head's CIRCUIT_READER_TOP strongest sources and destinations. NULL with err
 * when the catalog cannot be read or its rows are damaged; a catalog without circuit scores for
 * the checkpoint gives a reader whose heads have no links. Read-only once open: any thread. */
#define CIRCUIT_READER_TOP 5
typedef struct andrea_circuit_reader andrea_circuit_reader;
andrea_circuit_reader *andrea_circuit_reader_open(const char *db_path, const char *sha256, ae_error *err);
/* The strongest links of head (layer, head), by score descending (ties: the other head's layer,
 * head, kind): its sources (earlier heads composing into it) when as_dst != 0, else its
 * destinations. Returns their count (0..CIRCUIT_READER_TOP); *out points into the reader. */
int andrea_circuit_reader_links(const andrea_circuit_reader *r, int layer, int head, int as_dst,
                                const circuit_link **out);
void andrea_circuit_reader_close(andrea_circuit_reader *r); /* NULL is fine */

#endif
