/* head_mask.h — a set of heads of one model, as a [n_layer * n_head] byte mask, parsed from the
 * "L.H,L.H" lists that --heads takes (dump, show). The engine owns the model's shape, so the
 * parser lives beside it; the CLI and the dump only hold masks. */
#ifndef ANDREA_HEAD_MASK_H
#define ANDREA_HEAD_MASK_H

#include "../common/error.h"
#include "model.h"

/* Parses "L.H,L.H,..." into mask [n_layer * n_head] (nonzero = chosen). */
int andrea_parse_heads(const char *spec, const andrea_config *c, unsigned char *mask, ae_error *err);

#endif
