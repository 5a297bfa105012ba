/* bench_circuits.c — time of the weight-based circuit scores (analyzer/circuits.h) on a random
 * ANDREA-120M-shaped model built in memory (tests/support/model_random.h), the target of docs/scores.md:
 * under 10 s on a 2-core CPU. Prints each model shape, the wall time of andrea_circuits_compute
 * (best of --repeat runs, default 3), the CPU time it used (user + system, all threads; less
 * sensitive to other jobs than the wall time) and the load average (the machine may be shared).
 * Usage: bench_circuits [--repeat N] [--small]   (--small: the ANDREA-12M shape only) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <cblas.h>

#include "analyzer/circuits.h"
#include "tests/support/model_random.h"

static double cpu_s(void) { /* user + system CPU time of this process, all threads */
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + 1e-6 * u.ru_utime.tv_usec + u.ru_stime.tv_sec + 1e-6 * u.ru_stime.tv_usec;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv) {
    int repeat = 3, small = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--small")) small = 1;
        else {
            fprintf(stderr, "usage: bench_circuits [--repeat N] [--small]\n");
            return 2;
        }
    }
    const struct {
        const char *name;
        andrea_config cfg;
    } shapes[] = {
        {"ANDREA-12M", {.max_seq_len = 512, .vocab_size = 257, .padded_vocab_size = 257, .n_layer = 6, .n_head = 12,
                        .d_model = 384}},
        {"ANDREA-120M", {.max_seq_len = 1024, .vocab_size = 50257, .padded_vocab_size = 50304, .n_layer = 12,
                         .n_head = 12, .d_model = 768}},
    };
    printf("OpenBLAS core: %s, %d threads\n", openblas_get_corename(), openblas_get_num_threads());
    printf("model        pairs x kinds  wall s  cpu s  (runs)  load 1/15 min\n");
    for (int s = 0; s < (small ? 1 : 2); s++) {
        andrea_model m;
        ae_error err = {{0}};
        if (andrea_model_init_random(&m, &shapes[s].cfg, 1, &err)) {
            fprintf(stderr, "bench_circuits: %s\n", err.msg);
            return 1;
        }
        double best = 1e30, best_cpu = 1e30;
        andrea_circuits c;
        for (int r = 0; r < repeat; r++) {
            double t0 = now_s(), c0 = cpu_s();
            if (andrea_circuits_compute(&m, &c, &err)) {
                fprintf(stderr, "bench_circuits: %s\n", err.msg);
                return 1;
            }
            double dt = now_s() - t0, dc = cpu_s() - c0;
            if (dt < best) best = dt;
            if (dc < best_cpu) best_cpu = dc;
            andrea_circuits_free(&c);
        }
        double load[3];
        if (getloadavg(load, 3) != 3) load[0] = load[2] = -1;
        const int L = m.cfg.n_layer, H = m.cfg.n_head;
        printf("%-12s %6d x 3     %6.2f %6.2f  (%d)     %.1f/%.1f\n", shapes[s].name, H * H * L * (L - 1) / 2, best,
               best_cpu, repeat, load[0], load[2]);
        andrea_model_free(&m);
    }
    return 0;
}
