/* cmd_dump.c — `andrea dump`. Placeholder until its issue lands: says so and fails. */
#include <stdio.h>

#include "cli.h"

int cmd_dump(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "andrea dump: not built yet\n");
    return 2;
}
