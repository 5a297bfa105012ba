/* fuzz_dump_reader — a damaged or hostile HDF5 file through the dump reader. */
#include <stdlib.h>

#include "../../engine/dump.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_write("dump.h5", data, size);
    ae_error err;
    andrea_dump *d = andrea_dump_open(path, &err);
    if (!d) return 0;
    const andrea_config *c = andrea_dump_config(d);
    for (int s = 0; s < andrea_dump_n_suites(d); s++) {
        const andrea_dump_suite_info *si = andrea_dump_suite(d, s);
        probe_suite items = {0};
        if (andrea_dump_read_items(d, s, &items, &err) == 0) probe_suite_free(&items);
        if (si->n_seq > 0 && si->T > 0 && si->T <= 4096) {
            float *map = malloc(sizeof(float) * (size_t)si->T * (size_t)si->T);
            if (map) andrea_dump_read_map(d, s, 0, c->n_layer - 1, c->n_head - 1, map, &err);
            free(map);
        }
    }
    andrea_dump_close(d);
    return 0;
}
