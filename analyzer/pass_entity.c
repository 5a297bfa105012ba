/* pass_entity.c — the entity class: targets are the tokens of the most recent entity mention, from positions after a mention.
 * Extra evidence: the fraction of eligible queries whose most-attended key is a target: mass spread thinly over
 * several targets scores like one sharp peak, top-1 tells them apart. */
#include "pass.h"

const andrea_pass andrea_pass_entity = {
    "entity",
    "the tokens of the most recent entity mention, from positions after a mention",
    /* min_ratio 2, not 3: targets are whole multi-token mentions, so the uniform baseline is
     * several times that of single-key classes (about 0.1 on the built-in suite against 0.01-0.04);
     * a 3x ratio would ask for more than half of all attention mass. Random-weight heads stay at
     * ratio ~1 (test_analyzer_random), so 2x keeps them out. */
    {0.30, 2.0, 0.15},
    "top1", score_acc_top1,
};
