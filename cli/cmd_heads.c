/* cmd_heads.c — `andrea heads`. Placeholder until its issue lands: says so and fails. */
#include <stdio.h>

#include "cli.h"

int cmd_heads(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "andrea heads: not built yet\n");
    return 2;
}
