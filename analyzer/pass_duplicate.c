/* pass_duplicate.c — the duplicate class: targets are the earlier occurrence of the current token (second copy only).
 * Extra evidence: the fraction of eligible queries whose most-attended key is a target: mass spread thinly over
 * several targets scores like one sharp peak, top-1 tells them apart. */
#include "pass.h"

const andrea_pass andrea_pass_duplicate = {
    "duplicate",
    "the earlier occurrence of the current token (second copy only)",
    {0.30, 3.0, 0.15},
    "top1", score_acc_top1,
};
