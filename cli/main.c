/* main.c — `andrea CMD ...`: dispatch to one subcommand. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "andrea_git.h"
#include "../common/address_space.h"
#include "../common/atomic_file.h"
#include "../common/data_path.h"
#include "../common/progress.h"
#include "../common/mpi_shard.h"
#include "../common/printable.h"
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
    {"analyze", cmd_analyze, "score heads in the forward + causal check + catalog + report (default: the bundled model)"},
    {"heads", cmd_heads, "query the head catalog"},
    {"sql", cmd_sql, "read-only SQL over the head catalog"},
    {"circuits", cmd_circuits, "composition, copying and positional scores from the weights"},
    {"diff", cmd_diff, "what changed between two checkpoints (of one catalog or two)"},
    {"show", cmd_show, "one prompt -> offline interactive page of every head's attention"},
};

static void usage(FILE *f) {
    fprintf(f, "usage: andrea [--version] [--help] COMMAND [ARGS]\n\n"
               "andrea finds out what each attention head of an ANDREA (GPT-2 architecture) model does.\n\n"
               "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n`andrea help COMMAND` (or `andrea COMMAND --help`, `-h`) describes each command. Formats and\n"
               "definitions: docs/ in the source tree, PREFIX/share/doc/andrea/docs where andrea is installed.\n");
}

int cli_bundled_model_path(char *out, size_t n, ae_error *err) {
    char dir[4096];
    if (andrea_data_dir("models", "ANDREA_MODEL_DIR", dir, sizeof dir, err)) return -1;
    if ((size_t)snprintf(out, n, "%s/andrea-bundled.bin", dir) >= n) return andrea_fail(err, "%s: path too long", dir);
    return 0;
}

static int dispatch(int argc, char **argv) {
    if (argc < 2) { /* a usage error is one line (the list is `andrea --help`) */
        char names[256] = "";
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
            const size_t u = strlen(names);
            snprintf(names + u, sizeof names - u, "%s%s", u ? ", " : "", commands[i].name);
        }
        fprintf(stderr, "andrea: no command given: one of %s (see andrea --help)\n", names);
        return 2;
    }
    /* `andrea help CMD` is `andrea CMD --help`; `andrea help` alone the command list */
    char help_flag[] = "--help";
    if (!strcmp(argv[1], "help") && argc >= 3) {
        if (argc > 3) {
            fprintf(stderr, "andrea: help takes one command name (see andrea --help)\n");
            return 2;
        }
        argv[1] = argv[2];
        argv[2] = help_flag;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return cli_stdout_done();
    }
    /* `andrea CMD -h`: -h right after the command asks for its help */
    if (argc >= 3 && !strcmp(argv[2], "-h")) argv[2] = help_flag;
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        if (argc > 2) {
            fprintf(stderr, "andrea: %s takes no arguments (see andrea --help)\n", argv[1]);
            return 2;
        }
        /* andrea_git.h: written at build time by cmake/git_version.cmake ("" outside git) */
        if (ANDREA_GIT_COMMIT[0])
            printf("andrea %s (git %s)\n", ANDREA_VERSION, ANDREA_GIT_COMMIT);
        else
            printf("andrea %s\n", ANDREA_VERSION);
        return cli_stdout_done();
    }
    /* before any HDF5 call; failing changes nothing but the crash it avoids (dump_write.h) */
    (void)andrea_h5_skip_exit_cleanup();
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (!strcmp(argv[1], commands[i].name)) {
            andrea_tmp_install_signals();
            /* a file size limit (ulimit -f) makes write() fail with EFBIG, reported in one line with
             * the temporary removed, instead of killing the process and leaving it (SIGXFSZ) */
            signal(SIGXFSZ, SIG_IGN);
            /* MPI (docs/cluster.md): started only under mpirun/srun; a serial run is unchanged. */
            ae_error merr = {{0}};
            if (andrea_mpi_init(&argc, &argv, &merr)) return cli_fail(&merr);
            const int rc = commands[i].fn(argc - 1, argv + 1);
            andrea_h5_finish(); /* HDF5's cleanup, which its exit handler no longer does */
            return andrea_mpi_finish(rc);
        }
    }
    char name[96];
    fprintf(stderr, "andrea: unknown command '%s' (see andrea --help)\n", andrea_printable(argv[1], name, sizeof name));
    return 2;
}

/* Under an address-space limit (ulimit -v) an OpenBLAS worker thread that could not map its
 * buffer retries for ever, and OpenBLAS's exit handler waits for it: the error line was printed
 * and the process never ended (issue 43, 7). So under a limit andrea leaves with _exit once its
 * output is flushed (its own cleanup, HDF5's and MPI's, is done by then; no temporaries are
 * left: each is removed or renamed by its writer). Without a limit it returns as usual, so the
 * sanitizers' leak check, which runs at exit, still runs. */
int main(int argc, char **argv) {
    const int rc = dispatch(argc, argv);
    if (andrea_address_space_limited()) {
        fflush(NULL);
        _exit(rc);
    }
    return rc;
}
