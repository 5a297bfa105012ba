/* main.c — `andrea CMD ...`: dispatch to one subcommand. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../common/atomic_file.h"
#include "../common/progress.h"
#include "../common/mpi_shard.h"
#include "cli.h"

typedef struct {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} command;

static const command commands[] = {
    {"info", cmd_info, "config, head_dim, parameter breakdown of a checkpoint"},
    {"tokenize", cmd_tokenize, "token ids and their text"},
    {"generate", cmd_generate, "sample text from a checkpoint"},
    {"dump", cmd_dump, "instrumented forward over probe suites -> HDF5"},
    {"classify", cmd_classify, "analysis passes over a dump -> SQLite head catalog"},
    {"render", cmd_render, "heatmap PNGs and index.html from a dump and catalog"},
    {"analyze", cmd_analyze, "dump + classify + render (default: the bundled model)"},
    {"heads", cmd_heads, "query the head catalog"},
    {"sql", cmd_sql, "read-only SQL over the head catalog"},
    {"show", cmd_show, "one prompt -> offline interactive page of every head's attention"},
};

static void usage(FILE *f) {
    fprintf(f, "usage: andrea [--version] [--help] COMMAND [ARGS]\n\n"
               "andrea finds out what each attention head of an ANDREA (GPT-2 architecture) model does.\n\n"
               "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n`andrea COMMAND --help` describes each command. Formats: docs/ in the source tree.\n");
}

const char *cli_bundled_model_path(void) { return ANDREA_SOURCE_DIR "/models/andrea-bundled.bin"; }

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return cli_stdout_done();
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("andrea %s\n", ANDREA_VERSION);
        return cli_stdout_done();
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (!strcmp(argv[1], commands[i].name)) {
            ae_tmp_install_signals();
            /* MPI (docs/cluster.md): started only under mpirun/srun; a serial run is unchanged. */
            ae_error merr = {{0}};
            if (andrea_mpi_init(&argc, &argv, &merr)) return cli_fail(&merr);
            return andrea_mpi_finish(commands[i].fn(argc - 1, argv + 1));
        }
    }
    fprintf(stderr, "andrea: unknown command '%s' (see andrea --help)\n", argv[1]);
    return 2;
}
