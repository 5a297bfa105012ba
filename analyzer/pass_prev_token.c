/* pass_prev_token.c — the prev_token class: targets are position q-1 (the previous token).
 * Extra evidence: the fraction of eligible queries whose most-attended key is a target: mass spread thinly over
 * several targets scores like one sharp peak, top-1 tells them apart. */
#include "pass.h"

const andrea_pass andrea_pass_prev_token = {
    "prev_token",
    "position q-1 (the previous token)",
    {0.30, 3.0, 0.15},
    "top1", score_acc_top1,
};
