/* bench_catalog_circuits.c — the circuit scores' share of the catalog stage: storing one checkpoint's
 * composition scores (andrea_catalog_circuits_write) and reading every head's top links back for
 * the report's head pages (andrea_circuit_reader), for the ANDREA-120M, GPT-2-medium and GPT-2-XL
 * shapes (2.1M rows for XL). The scores are random numbers: the SQL work does not depend on them.
 * Prints, per shape: rows, write seconds, reader open seconds, all heads' links seconds, file MB.
 * Usage: bench_catalog_circuits [DIR]   (DIR: where the catalogs go, default /tmp) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "catalog/catalog_circuits.h"
#include "reports/report_circuits.h"
#include "common/rng.h"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * t.tv_nsec;
}

static int fake_circuits(int L, int H, andrea_circuits *c) {
    const size_t NH = (size_t)L * (size_t)H;
    memset(c, 0, sizeof *c);
    c->n_layer = L;
    c->n_head = H;
    c->d_model = 64 * H;
    c->head_dim = 64;
    c->baseline = 0.025;
    c->comp = malloc(3 * NH * NH * sizeof *c->comp);
    c->copying = calloc(NH, sizeof *c->copying);
    c->prev_pos = calloc(NH, sizeof *c->prev_pos);
    if (!c->comp || !c->copying || !c->prev_pos) return -1;
    uint64_t s = 42;
    for (size_t k = 0; k < 3; k++)
        for (size_t a = 0; a < NH; a++)
            for (size_t b = 0; b < NH; b++)
                c->comp[(k * NH + a) * NH + b] =
                    a / (size_t)H < b / (size_t)H ? (double)(ae_splitmix64(&s) >> 11) * 0x1p-53 : 0.0 / 0.0;
    return 0;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    const struct {
        const char *name;
        int L, H;
    } shapes[] = {{"ANDREA-120M", 12, 12}, {"GPT-2-medium", 24, 16}, {"GPT-2-XL", 48, 25}};
    printf("shape          rows      write_s  reader_open_s  links_s  MB\n");
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        andrea_circuits c;
        ae_error err = {{0}};
        char path[4096];
        snprintf(path, sizeof path, "%s/bench-circuits-%d.db", dir, (int)getpid());
        unlink(path);
        if (fake_circuits(shapes[i].L, shapes[i].H, &c)) {
            fprintf(stderr, "bench_catalog_circuits: out of memory\n");
            return 1;
        }
        const char *sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        double t0 = now_s();
        if (andrea_catalog_circuits_write(path, "/x/bench.safetensors", sha, &c, &err)) {
            fprintf(stderr, "bench_catalog_circuits: %s\n", err.msg);
            return 1;
        }
        double t1 = now_s();
        andrea_circuit_reader *r = andrea_circuit_reader_open(path, sha, &err);
        if (!r) {
            fprintf(stderr, "bench_catalog_circuits: %s\n", err.msg);
            return 1;
        }
        double t2 = now_s();
        for (int l = 0; l < c.n_layer; l++)
            for (int h = 0; h < c.n_head; h++) {
                char *html = andrea_circuits_head_html(r, l, h);
                if (!html) {
                    fprintf(stderr, "bench_catalog_circuits: no links for L%d H%d\n", l, h);
                    return 1;
                }
                free(html);
            }
        double t3 = now_s();
        andrea_circuit_reader_close(r);
        struct stat sb;
        stat(path, &sb);
        const size_t NH = (size_t)c.n_layer * (size_t)c.n_head;
        printf("%-12s %9zu  %8.2f  %12.2f  %8.2f  %.0f\n", shapes[i].name,
               3 * (NH * NH - (size_t)c.n_layer * (size_t)c.n_head * (size_t)c.n_head) / 2, t1 - t0, t2 - t1, t3 - t2,
               (double)sb.st_size / 1048576.0);
        andrea_circuits_free(&c);
        unlink(path);
        char wal[4200];
        snprintf(wal, sizeof wal, "%s-wal", path);
        unlink(wal);
        snprintf(wal, sizeof wal, "%s-shm", path);
        unlink(wal);
    }
    return 0;
}
