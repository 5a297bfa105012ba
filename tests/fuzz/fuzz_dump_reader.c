/* fuzz_dump_reader — a damaged or hostile HDF5 file through the dump reader: open (as given,
 * and with ANDREA_FUZZ_DUMP_SEALED=1 also sealed with a matching checksum), then every read the
 * analyzer and reports make (items, first and last map, per-head values, head_out); each must
 * succeed or fail with a one-line message. Buffers are sized from the reader's own (validated)
 * shapes, capped so one input cannot ask for gigabytes. */
#include <stdlib.h>

#include "../../dump/dump.h"
#include "fuzz_util.h"

#define MAX_FLOATS (1u << 22) /* 16 MB per read buffer */

static void check(int rc, const char *what, const ae_error *err) {
    if (rc != 0) fuzz_check_error(what, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_write("dump.h5", data, size);
    ae_error err;
    /* First as given (the seal check: almost every mutation breaks the checksum). Then, with
     * ANDREA_FUZZ_DUMP_SEALED=1, sealed: a hostile file carries a valid seal, so this drives
     * HDF5 itself, where 1.10.8 (Debian 12) still has memory-safety bugs on damaged files
     * (docs/reliability.md); the CI smoke run leaves it off, the long runs turn it on. */
    static int sealed = -1;
    if (sealed < 0) sealed = getenv("ANDREA_FUZZ_DUMP_SEALED") && atoi(getenv("ANDREA_FUZZ_DUMP_SEALED")) == 1;
    andrea_dump *d = andrea_dump_open(path, &err);
    if (!d) {
        fuzz_check_error("dump_open", &err);
        if (!sealed || size < ANDREA_DUMP_USERBLOCK || andrea_dump_seal(path, NULL, &err) != 0) return 0;
        if (!(d = andrea_dump_open(path, &err))) {
            fuzz_check_error("dump_open (sealed)", &err);
            return 0;
        }
    }
    const andrea_config *c = andrea_dump_config(d);
    size_t L = (size_t)c->n_layer, H = (size_t)c->n_head, C = (size_t)c->d_model;
    for (int s = 0; s < andrea_dump_n_suites(d); s++) {
        const andrea_dump_suite_info *si = andrea_dump_suite(d, s);
        probe_suite items = {0};
        if (andrea_dump_read_items(d, s, &items, &err) == 0) andrea_probe_suite_free(&items);
        else fuzz_check_error("read_items", &err);
        if (si->n_seq <= 0 || si->T <= 0) continue;
        size_t T = (size_t)si->T, last = (size_t)si->n_seq - 1;
        if (T * T <= MAX_FLOATS) {
            float *map = malloc(sizeof(float) * T * T);
            if (!map) abort();
            check(andrea_dump_read_map(d, s, 0, 0, 0, map, &err), "read_map", &err);
            check(andrea_dump_read_map(d, s, (int)last, c->n_layer - 1, c->n_head - 1, map, &err), "read_map", &err);
            free(map);
        }
        if (L * H * T <= MAX_FLOATS && andrea_dump_has(d, s, "head_dla")) {
            float *v = malloc(sizeof(float) * L * H * T);
            if (!v) abort();
            check(andrea_dump_read_head_values(d, s, (int)last, "head_out_norm", v, &err), "read_head_values", &err);
            check(andrea_dump_read_head_values(d, s, 0, "head_dla", v, &err), "read_head_values", &err);
            free(v);
        }
        if (T * C <= MAX_FLOATS && andrea_dump_has(d, s, "head_out")) {
            float *o = malloc(sizeof(float) * T * C);
            if (!o) abort();
            check(andrea_dump_read_head_out(d, s, 0, c->n_layer - 1, 0, o, &err), "read_head_out", &err);
            free(o);
        }
    }
    andrea_dump_close(d);
    return 0;
}
