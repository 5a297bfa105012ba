/* cuda_check.h — the one CUDA check macro and the one cuBLAS check macro of andrea.
 *
 * Job: turn a failed CUDA runtime or cuBLAS call into an ae_error "CALL failed at FILE:LINE:
 * reason" and jump to the caller's cleanup label; nothing here prints or exits.
 * Use inside a function that has `ae_error *err` in scope and a `fail:` label:
 *     CU_CHECK(cudaMalloc(&p, n));
 *     CUBLAS_CHECK(cublasSgemm(...));
 * Kernel launches are checked with CU_CHECK(cudaGetLastError()) right after the launch.
 */
#ifndef ANDREA_CUDA_CHECK_H
#define ANDREA_CUDA_CHECK_H

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "../common/error.h"
#include "cublas_lazy.h"

#define CU_CHECK(call)                                                                   \
    do {                                                                                 \
        cudaError_t cu_rc_ = (call);                                                     \
        if (cu_rc_ != cudaSuccess) {                                                     \
            andrea_fail(err, "CUDA: %s failed at %s:%d: %s", #call, AE_SOURCE_FILE, __LINE__,      \
                    cudaGetErrorString(cu_rc_));                                         \
            goto fail;                                                                   \
        }                                                                                \
    } while (0)

#define CUBLAS_CHECK(call)                                                               \
    do {                                                                                 \
        cublasStatus_t cb_rc_ = (call);                                                  \
        if (cb_rc_ != CUBLAS_STATUS_SUCCESS) {                                           \
            andrea_fail(err, "cuBLAS: %s failed at %s:%d: %s", #call, AE_SOURCE_FILE, __LINE__,    \
                    cublasGetStatusString(cb_rc_));                                      \
            goto fail;                                                                   \
        }                                                                                \
    } while (0)

#endif
