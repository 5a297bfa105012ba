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
rgb andrea_colormap_magma_index(int i);
/* The table's float value (channel 0..2) of entry i (0..255). */
float andrea_colormap_magma_entry(int i, int channel);

#endif
