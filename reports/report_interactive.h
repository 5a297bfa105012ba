/* report_interactive.h — the interactive views of a report folder and of `andrea show`.
 *
 * Job: beside the static PNGs, write what the browser draws from (docs/report.md, "Interactive
 * views"): assets/andrea.js + andrea.css (compiled into the binary, report_assets.h),
 * data/meta.js (shape, examples as token labels, probe targets, colour table) and one
 * data/L{l}_H{h}.js per head (its attention on every shown example, the causal lower triangle
 * as fp16, base64), plus the generic pages explore.html (token view) and compare.html.
 * Data travels as <script src> files, never fetch(), so every page works from file://.
 * Invariants: token text reaches the data files JSON-escaped (< > & and U+2028/9 as \uXXXX) and
 * reaches the page only through textContent; stored probabilities are fp16 (relative error
 * <= 2^-11, REPORT_PRECISION_NOTE says so on every page) or, for the examples the options name,
 * the 8-bit code of attn_code8.h (REPORT_SUMMARY_NOTE); same inputs give the same bytes.
 * Failure contract: -1 with "FILE: problem"; every file goes through andrea_write_file_atomic.
 */
#ifndef ANDREA_REPORT_INTERACTIVE_H
#define ANDREA_REPORT_INTERACTIVE_H

#include "../common/error.h"
#include "report_data.h"
#include "text.h"

#define REPORT_PRECISION_NOTE                                                                        \
    "Interactive maps show probabilities stored as fp16 (half precision): within 2^-11 (0.05%) "  \
    "relative of the engine's value (below 6.1e-5: within 3e-8 absolute); read-outs print 5 "      \
    "significant digits."
/* The report's default summarise_above (--report small): longer examples are summarised. */
#define REPORT_EXACT_TOKENS 64
#define REPORT_STR_(x) #x
#define REPORT_STR(x) REPORT_STR_(x)
/* Added where examples are summarised (report_interactive_options.summarise_above). */
#define REPORT_SUMMARY_NOTE                                                                          \
    "Maps of examples longer than " REPORT_STR(REPORT_EXACT_TOKENS) " tokens are summarised to 8 bits a value (marked \xE2\x89\x88): "    \
    "within 3.1% of each probability from 1e-4 up and 0.0034 absolute, one colour step at most; "   \
    "read-outs print 3 digits. <code>--report full</code> stores them in fp16, "                   \
    "<code>andrea dump</code> keeps every map in fp32."

typedef struct {
    const unsigned char *heads; /* [n_layer * n_head]: nonzero = write this head's data; NULL = all */
    int head_pages;             /* 1 when heads/L{l}_H{h}.html exist (the report), 0 (andrea show) */
    int n_models;               /* checkpoints the pages hold data of (0 or 1: this one only) */
    const char *const *model_names; /* [n_models] display names (n_models > 1) */
    int summarise_above;        /* > 0: examples of more tokens are stored in the 8-bit code
                                   (attn_code8.h) instead of fp16; 0: every example in fp16 */
} report_interactive_options;


/* 1 when o has some example of d stored in the 8-bit code (the pages then add REPORT_SUMMARY_NOTE). */
int andrea_report_any_summarised(const report_data *d, const report_interactive_options *o);
/* data/meta.js, andrea's mark on the folder: written first, right after an earlier report's files
 * are cleared, so a writer stopped midway leaves a folder the next one knows as andrea's and clears
 * (one stopped before it left its maps, which a later report of fewer heads never removed). */
int andrea_report_write_mark(const report_data *d, const char *out_dir, const report_interactive_options *o,
                             ae_error *err);
/* assets/, data/L{l}_H{h}.js and the pages (explore.html, compare.html); the mark is written before. */
int andrea_report_write_interactive(const report_data *d, const char *out_dir, const report_interactive_options *o,
                             ae_error *err);
/* The data of checkpoint m >= 1 of the same shape, on the same examples: data/m{m}/L{l}_H{h}.js
 * (d gives the maps; its suites must be those written by andrea_report_write_interactive). */
int andrea_report_write_model_data(const report_data *d, const char *out_dir, const report_interactive_options *o, int m,
                            ae_error *err);

/* The page head every andrea page shares (offline Content-Security-Policy, the folder's
 * assets/andrea.css); up is the way back to the folder's root ("" or "../"). */
void andrea_report_html_head(andrea_buf *b, const char *title, const char *up);
/* The interactive scripts for a page: andrea.js, meta.js and, for l >= 0,
 * the data of head (l, h). */
void andrea_report_html_scripts(andrea_buf *b, const char *up, int l, int h);
/* Writes b to out_dir/rel atomically (fails when b ran out of memory). */
int andrea_report_write_html(const char *out_dir, const char *rel, andrea_buf *b, ae_error *err);

#endif
