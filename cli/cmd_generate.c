/* cmd_generate.c — `andrea generate`. Placeholder until its issue lands: says so and fails. */
#include <stdio.h>

#include "cli.h"

int cmd_generate(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "andrea generate: not built yet\n");
    return 2;
}
