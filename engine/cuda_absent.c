/* cuda_absent.c — the CUDA backend's entry points in a build without CUDA. */
#include "forward.h"

int andrea_cuda_available(void) { return 0; }

int andrea_cuda_use_device(int device_index) {
    (void)device_index;
    return -1;
}

int andrea_cuda_total_memory(size_t *total_bytes) {
    *total_bytes = 0;
    return -1;
}

int andrea_engine_bytes_per_seq(const andrea_config *c, const andrea_engine_options *o, int T, int maps_fp32,
                                size_t *per_seq, size_t *fixed) {
    (void)c;
    (void)o;
    (void)T;
    (void)maps_fp32;
    *per_seq = *fixed = 0;
    return -1;
}

andrea_engine *andrea_cuda_engine_open(const andrea_model *m, const andrea_engine_options *o, int max_B, int max_T,
                                       ae_error *err) {
    (void)o;
    (void)max_B;
    (void)max_T;
    andrea_fail(err, "%s: this andrea was built without CUDA", m->path);
    return NULL;
}
