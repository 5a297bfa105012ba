/* cmd_sql.c — `andrea sql`. Placeholder until its issue lands: says so and fails. */
#include <stdio.h>

#include "cli.h"

int cmd_sql(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "andrea sql: not built yet\n");
    return 2;
}
