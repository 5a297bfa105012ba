/* cmd_info.c — `andrea info`. Placeholder until its issue lands: says so and fails. */
#include <stdio.h>

#include "cli.h"

int cmd_info(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "andrea info: not built yet\n");
    return 2;
}
