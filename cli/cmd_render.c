/* cmd_render.c — `andrea render`. Placeholder until its issue lands: says so and fails. */
#include <stdio.h>

#include "cli.h"

int cmd_render(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "andrea render: not built yet\n");
    return 2;
}
