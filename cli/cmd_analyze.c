/* cmd_analyze.c — `andrea analyze`. Placeholder until its issue lands: says so and fails. */
#include <stdio.h>

#include "cli.h"

int cmd_analyze(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "andrea analyze: not built yet\n");
    return 2;
}
