/* progress.h — a progress bar with rate and ETA on stderr.
 * Quiet when stderr is not a terminal or when the CLI passed --quiet (andrea_progress_quiet). */
#ifndef ANDREA_PROGRESS_H
#define ANDREA_PROGRESS_H

#include <stdint.h>

typedef struct {
    const char *label;
    uint64_t total, done;
    double t_start, t_last_draw;
    int active;
} ae_progress;

extern int andrea_progress_quiet;

void andrea_progress_begin(ae_progress *p, const char *label, uint64_t total);
void andrea_progress_add(ae_progress *p, uint64_t n);
void andrea_progress_end(ae_progress *p);
double andrea_now_seconds(void);

#endif
