/* cmd_tokenize.c — `andrea tokenize`. Placeholder until its issue lands: says so and fails. */
#include <stdio.h>

#include "cli.h"

int cmd_tokenize(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "andrea tokenize: not built yet\n");
    return 2;
}
