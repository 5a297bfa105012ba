/* cmd_classify.c — `andrea classify`. Placeholder until its issue lands: says so and fails. */
#include <stdio.h>

#include "cli.h"

int cmd_classify(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "andrea classify: not built yet\n");
    return 2;
}
