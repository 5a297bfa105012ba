/* output_paths.h — an output must not replace what the run reads.
 *
 * Job: the checks every writing command (dump, analyze) makes on its output path before the
 * work, by file identity (device and inode), so any spelling or link of an input counts.
 * Failure contract: -1 with "OUT: is ..., which this command reads; give another output path".
 */
#ifndef ANDREA_OUTPUT_PATHS_H
#define ANDREA_OUTPUT_PATHS_H

#include "../common/error.h"
#include "../engine/model.h"
#include "../probes/probe.h"

/* Refuses (-1, err) an output path that names a file the command reads: the checkpoint m (its
 * file, or config.json / model.safetensors beside it), its tokenizer's vocab.json / merges.txt
 * (in tok_dir, else beside it) or a probe or --texts file of ps (may be NULL). The output is
 * renamed over its final name at the end, which would replace the input the run recorded. An
 * SQLite database (a catalog) is refused too: a dump over it lost its runs. */
int andrea_check_output_not_input(const char *out, const andrea_model *m, const probe_sources *ps, const char *tok_dir,
                               ae_error *err);
/* Refuses (-1, err: "INPUT: is the WHAT this command reads, and lies where the page in DIR is
 * written ...") a run that reads a file where the report or `show` page in page_dir writes or
 * clears it (its pages, anything under its data/, assets/, heads/, maps/, overview/): the
 * checkpoints, the probe and --texts files of ps (may be NULL), the tokenizer folder and rules
 * file (may be NULL). A report renamed its compare.html over the --texts file it had read. */
int andrea_check_inputs_outside_page(const char *page_dir, const char *const *ckpts, int n_ckpts, const probe_sources *ps,
                                     const char *tok_dir, const char *rules_file, ae_error *err);
/* Whether a and b name one existing regular file (the same device and inode: links and other
 * spellings of one path included). */
int andrea_same_file(const char *a, const char *b);

#endif
