/* pass_bracket.c — the bracket class: targets are the matching opening bracket of each closing bracket.
 * Extra evidence: top-1 accuracy on the closing brackets whose opener is NOT the most recent opener
 * (another pair closed in between): a head that merely attends to the last "(" fails these. */
#include "pass.h"

const andrea_pass andrea_pass_bracket = {
    "bracket",
    "the matching opening bracket of each closing bracket",
    {0.30, 3.0, 0.15},
    "hard_top1", score_acc_hard_top1,
};
