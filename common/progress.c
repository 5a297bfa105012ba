#include "progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

int andrea_progress_quiet = 0;

double andrea_now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void draw(ae_progress *p, int final) {
    double now = andrea_now_seconds();
    double el = now - p->t_start;
    double rate = el > 0 ? (double)p->done / el : 0.0;
    double eta = rate > 0 && p->total > p->done ? (double)(p->total - p->done) / rate : 0.0;
    int width = 30;
    int fill = p->total ? (int)((double)width * (double)p->done / (double)p->total) : width;
    if (fill > width) fill = width;
    fprintf(stderr, "\r%-10s [", p->label);
    for (int i = 0; i < width; i++) fputc(i < fill ? '#' : '.', stderr);
    fprintf(stderr, "] %llu/%llu  %.1f/s  ETA %.0fs ", (unsigned long long)p->done,
            (unsigned long long)p->total, rate, eta);
    if (final) fputc('\n', stderr);
    fflush(stderr);
    p->t_last_draw = now;
}

void andrea_progress_begin(ae_progress *p, const char *label, uint64_t total) {
    p->label = label;
    p->total = total;
    p->done = 0;
    p->t_start = p->t_last_draw = andrea_now_seconds();
    p->active = !andrea_progress_quiet && isatty(STDERR_FILENO);
    if (p->active) draw(p, 0);
}

void andrea_progress_add(ae_progress *p, uint64_t n) {
    p->done += n;
    if (p->active && andrea_now_seconds() - p->t_last_draw > 0.1) draw(p, 0);
}

void andrea_progress_end(ae_progress *p) {
    if (p->active) draw(p, 1);
    p->active = 0;
}
