/* colormap.h — perceptually uniform colours for attention values.
 *
 * Job: map a value in [0, 1] to magma (matplotlib's exact 256-entry table, colormap.c).
 * Invariants: 0 maps to entry 0 (near black), 1 to entry 255 (pale yellow); values outside
 * [0, 1] are clipped; NaN maps to mid grey (128, 128, 128), which is not on the scale.
 * 8-bit channels are the table's floats × 255 rounded to nearest.
 */
#ifndef ANDREA_REPORT_COLORMAP_H
#define ANDREA_REPORT_COLORMAP_H

#include "canvas.h"

rgb andrea_colormap_magma(double v);
/* The table entry andrea_colormap_magma(v) uses: floor(256 v) clipped to 0..255 (matplotlib's
 * rule, so 1.0 is the last entry); -1 for NaN (mid grey). */
static inline int andrea_colormap_magma_slot(double v) {
    if (!(v == v)) return -1;
    return v <= 0 ? 0 : v >= 1 ? 255 : (int)(v * 256.0);
}
/* All 256 entries as 8-bit colours (entry i is andrea_colormap_magma_index(i)): drawing a
 * million cells looks them up here instead of rounding three floats per cell. */
void andrea_colormap_magma_table(rgb out[256]);
rgb andrea_colormap_magma_index(int i);
/* The table's float value (channel 0..2) of entry i (0..255). */
float andrea_colormap_magma_entry(int i, int channel);

#endif
