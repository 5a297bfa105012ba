/* cli.h — subcommand entry points and the one place errors become output and exit codes.
 * Each subcommand lives in its own cli/cmd_NAME.c, parses its options with getopt_long, calls
 * the library and maps failure to `andrea: FILE: problem` on stderr and exit code 1
 * (2 for a usage error). No analysis logic lives in cli/. */
#ifndef ANDREA_CLI_H
#define ANDREA_CLI_H

#include <getopt.h>

#include "../catalog/catalog.h"
#include "../catalog/catalog_circuits.h"
#include "../analyzer/classify.h"
#include "../common/error.h"
#include "../common/printable.h"
#include "../dump/dump_write.h"
#include "../engine/forward.h"
#include "../engine/model.h"
#include "../probes/probe.h"
#include "../pipeline/output_paths.h"
#include "../pipeline/run_notes.h"

int cmd_info(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_classify(int argc, char **argv);
int cmd_render(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_heads(int argc, char **argv);
int cmd_sql(int argc, char **argv);
int cmd_circuits(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_show(int argc, char **argv);

/* Prints "andrea: <msg>" and returns 1. */
int cli_fail(const ae_error *err);
/* Prints "andrea CMD: <message>" plus a hint to --help and returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Shared option parsers (cli_args.c). Each cli_opt_* stores the value and returns 0, or prints
 * the usage error for subcommand cmd and returns 2 (the exit code): `if ((rc = ...)) return rc;`. */
/* The one-line usage error for what getopt_long returned as '?' (unknown option) or ':' (an
 * option without its value; optstring must start with ':'): getopt's own message would be a second
 * stderr line, so every command sets opterr = 0 and calls this from its default case. */
int cli_option_error(const char *cmd, int c, char *const *argv, const struct option *opts);
/* getopt_long, except that a value given as the next word and that is itself one of the
 * command's options (`--out --quiet`: the folder forgotten, --quiet eaten as its name) is
 * returned as CLI_VALUE_IS_OPTION, which cli_option_error words. A file or folder so named is
 * still reachable as ./--quiet or --out=--quiet. */
#define CLI_VALUE_IS_OPTION 0x10000
/* ... and an empty value of an option that names a file or folder (--db '', --tokenizer '',
 * --rules, --checkpoint, --text-file, --also) comes back as CLI_VALUE_IS_EMPTY: "--db wants a
 * catalog file, not ''", where the open would have printed the path as nothing. */
#define CLI_VALUE_IS_EMPTY 0x10001
/* ... and an option that takes one value, given a second time (every one but --probes, --texts,
 * --also), comes back as CLI_VALUE_GIVEN_TWICE: "--db is given twice", where the last silently won. */
#define CLI_VALUE_GIVEN_TWICE 0x10002
/* Lets the command's option `name` take values more than once too (before its cli_getopt loop). */
void cli_getopt_repeatable(const char *name);
int cli_getopt(int argc, char *const *argv, const char *shortopts, const struct option *opts);
/* Whole-string integer in [lo, hi]: 0; CLI_NOT_A_NUMBER on junk, CLI_TOO_SMALL / CLI_TOO_LARGE for
 * a whole number outside [lo, hi] (past long's range too); out untouched on error. */
enum { CLI_NOT_A_NUMBER = -1, CLI_TOO_SMALL = 1, CLI_TOO_LARGE = 2 };
int cli_parse_long(const char *s, long lo, long hi, long *out);
/* cli_parse_long with its usage error: "OPT wants WANTS, not 'ARG'" for junk, "OPT ARG is too large
 * (at most HI)" or "... too small (at least LO)" for a number out of range (a count past 2^30 was
 * told it "wants a count >= 0"). 0 or the exit code 2. */
int cli_opt_long(const char *cmd, const char *opt, const char *arg, long lo, long hi, const char *wants, long *out);
/* A finite decimal number, all of s; 0 or -1 (out untouched). */
int cli_parse_double(const char *s, double *out);
int cli_opt_device(const char *cmd, const char *arg, andrea_device *out);  /* auto|cpu|cuda */
int cli_opt_probes(const char *cmd, const char *arg, probe_sources *ps);  /* suites and files, not '' */
int cli_opt_texts(const char *cmd, const char *arg, probe_sources *ps);   /* --texts FILE|- */
int cli_opt_maps(const char *cmd, const char *arg, int *maps_fp32);        /* fp16|fp32 */
int cli_opt_contrib(const char *cmd, const char *arg, andrea_contrib *out); /* none|norm|full */
/* --n (which 'n': 1..PROBE_MAX_ITEMS), --len ('l': >= 5), --seed ('s': a positive integer) */
int cli_opt_probe(const char *cmd, int which, const char *arg, probe_options *po);
/* tf32|fp32: the CUDA engine's matmul precision (sets ANDREA_CUDA_FP32 for the engines opened
 * later in this process; the CPU engine is always fp32) */
int cli_opt_precision(const char *cmd, const char *arg, andrea_engine_options *eo); /* tf32|tf32x3|fp32 */
int cli_opt_step(const char *cmd, const char *arg, andrea_classify_options *o);        /* N >= 0 */
int cli_opt_ablate_items(const char *cmd, const char *arg, andrea_classify_options *o); /* 0..4096 */
int cli_opt_ablation(const char *cmd, const char *arg, andrea_classify_options *o);     /* mean|resample|zero */
int cli_opt_report_maps(const char *cmd, const char *arg, int *maps_per_suite); /* N (0..1000) | all | labelled */
int cli_opt_report(const char *cmd, const char *arg, int *full); /* small | full */
int cli_opt_format(const char *cmd, const char *arg, int *fmt);            /* table|csv|json */
int cli_opt_timeout(const char *cmd, const char *arg, catalog_limits *lim); /* seconds, 0: none */
/* Writes rows to stdout in fmt and frees them; returns the exit code (0, or 1 after cli_fail). */
int cli_print_rows(catalog_rows *rows, int fmt, ae_error *err);
/* The end of a command that printed to stdout (its result, or --help): flushes it; when that or
 * an earlier write failed (e.g. a full disk) prints "andrea: stdout: write failed" and
 * returns 1, else 0. */
int cli_stdout_done(void);

/* The bundled model's path into out (n bytes): $ANDREA_MODEL_DIR, share/andrea/models beside the
 * installed binary, or the build tree's source folder (common/data_path.h). 0 or -1 (err filled). */
int cli_bundled_model_path(char *out, size_t n, ae_error *err);

#endif
