/* pass_bos.c — the bos class: targets are position 0 (attention sink).
 * Extra evidence: none: the mass on position 0 is the whole story. */
#include "pass.h"

const andrea_pass andrea_pass_bos = {
    "bos",
    "position 0 (attention sink)",
    {0.30, 3.0, 0.15},
    NULL, NULL,
};
