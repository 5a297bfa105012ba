/* cli.h — subcommand entry points and the one place errors become output and exit codes.
 * Each subcommand lives in its own cli/cmd_NAME.c, parses its options with getopt_long, calls
 * the library and maps failure to `andrea: FILE: problem` on stderr and exit code 1
 * (2 for a usage error). No analysis logic lives in cli/. */
#ifndef ANDREA_CLI_H
#define ANDREA_CLI_H

#include "../common/error.h"

int cmd_info(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_classify(int argc, char **argv);
int cmd_render(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_heads(int argc, char **argv);
int cmd_sql(int argc, char **argv);

/* Prints "andrea: <msg>" and returns 1. */
int cli_fail(const ae_error *err);
/* Prints "andrea CMD: <message>" plus a hint to --help and returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Default paths relative to the source tree / install (bundled model, probes data). */
const char *cli_bundled_model_path(void);

#endif
