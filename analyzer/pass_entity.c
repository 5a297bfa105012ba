/* pass_entity.c — the entity class: targets are the tokens of the most recent entity mention, from positions after a mention.
 * Extra evidence: the fraction of eligible queries whose most-attended key is a target: mass spread thinly over
 * several targets scores like one sharp peak, top-1 tells them apart. */
#include "pass.h"

const andrea_pass andrea_pass_entity = {
    "entity",
    "the tokens of the most recent entity mention, from positions after a mention",
    {0.30, 3.0, 0.15},
    "top1", score_acc_top1,
};
