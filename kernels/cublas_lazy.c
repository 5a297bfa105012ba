/* cublas_lazy.c — the cuBLAS entry points andrea uses, each forwarding to libcublas /
 * libcublasLt opened on first use (kernels/cublas_lazy.h says why). A function added to the
 * engine's calls needs its line here: the link fails (undefined reference) until it has one. */
#include "cublas_lazy.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#ifndef ANDREA_CUBLAS_SONAME_MAJOR
#define ANDREA_CUBLAS_SONAME_MAJOR "" /* set by CMakeLists.txt from the toolkit's version */
#endif
#ifndef ANDREA_CUBLAS_DIR
#define ANDREA_CUBLAS_DIR "" /* the build's toolkit library folder: tried when the loader's path lacks it */
#endif

static void *lib_blas, *lib_lt;
static char load_error[512];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

/* The toolkit's soname (libcublas.so.13) on the loader's path, then in the build's toolkit
 * folder (a linked library found it through the binary's RPATH), then the unversioned name
 * (present only where the toolkit's -dev files are). */
static void *open_lib(const char *base) {
    char name[4200];
    void *h = NULL;
    if (ANDREA_CUBLAS_SONAME_MAJOR[0]) {
        snprintf(name, sizeof name, "%s.so.%s", base, ANDREA_CUBLAS_SONAME_MAJOR);
        h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (!h && ANDREA_CUBLAS_DIR[0]) {
            snprintf(name, sizeof name, "%s/%s.so.%s", ANDREA_CUBLAS_DIR, base, ANDREA_CUBLAS_SONAME_MAJOR);
            h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        }
    }
    if (!h) {
        snprintf(name, sizeof name, "%s.so", base);
        h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    }
    if (!h && !load_error[0]) {
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error, "cannot load %s.so%s%s: %s", base, ANDREA_CUBLAS_SONAME_MAJOR[0] ? "." : "",
                 ANDREA_CUBLAS_SONAME_MAJOR, why ? why : "not found");
    }
    return h;
}

static void load_both(void) {
    lib_lt = open_lib("libcublasLt");
    lib_blas = open_lib("libcublas");
}

int andrea_cublas_load(ae_error *err) {
    pthread_once(&load_once, load_both);
    if (lib_blas && lib_lt) return 0;
    return andrea_fail(err, "CUDA: %s (the CUDA toolkit's cuBLAS; is its lib64 folder on the loader's path?)", load_error);
}

/* The library's function name, looked up once; NULL when it is not there. */
static void *lookup(int lt, const char *name) {
    pthread_once(&load_once, load_both);
    void *h = lt ? lib_lt : lib_blas;
    return h ? dlsym(h, name) : NULL;
}

/* FORWARD(lib, name, (parameters), (arguments)): defines cuBLAS's `name` with its own prototype
 * (the header's declaration is checked against this definition), calling the library's. */
#define FORWARD(lt, name, params, args)                                                  \
    cublasStatus_t name params {                                                         \
        static __typeof__(&name) cached; /* atomics: engines on several threads */      \
        __typeof__(&name) fn = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);               \
        if (!fn && (fn = (__typeof__(&name))lookup(lt, #name)))                          \
            __atomic_store_n(&cached, fn, __ATOMIC_RELEASE);                             \
        return fn ? fn args : CUBLAS_STATUS_NOT_INITIALIZED;                             \
    }

FORWARD(0, cublasCreate_v2, (cublasHandle_t *h), (h))
FORWARD(0, cublasDestroy_v2, (cublasHandle_t h), (h))
FORWARD(0, cublasSetStream_v2, (cublasHandle_t h, cudaStream_t s), (h, s))
FORWARD(0, cublasSetMathMode, (cublasHandle_t h, cublasMath_t mode), (h, mode))
FORWARD(0, cublasSgemm_v2,
        (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const float *alpha,
         const float *A, int lda, const float *B, int ldb, const float *beta, float *C, int ldc),
        (h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc))
FORWARD(0, cublasDgemm_v2,
        (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const double *alpha,
         const double *A, int lda, const double *B, int ldb, const double *beta, double *C, int ldc),
        (h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc))
FORWARD(0, cublasSgemmStridedBatched,
        (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const float *alpha,
         const float *A, int lda, long long sa, const float *B, int ldb, long long sb, const float *beta, float *C,
         int ldc, long long sc, int count),
        (h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, count))
FORWARD(0, cublasDgemmStridedBatched,
        (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const double *alpha,
         const double *A, int lda, long long sa, const double *B, int ldb, long long sb, const double *beta,
         double *C, int ldc, long long sc, int count),
        (h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, count))
FORWARD(1, cublasLtCreate, (cublasLtHandle_t *h), (h))
FORWARD(1, cublasLtDestroy, (cublasLtHandle_t h), (h))
FORWARD(1, cublasLtMatmulDescCreate, (cublasLtMatmulDesc_t *d, cublasComputeType_t ct, cudaDataType_t st), (d, ct, st))
FORWARD(1, cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t d), (d))
FORWARD(1, cublasLtMatmulDescSetAttribute,
        (cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, const void *buf, size_t n), (d, a, buf, n))
FORWARD(1, cublasLtMatrixLayoutCreate,
        (cublasLtMatrixLayout_t *l, cudaDataType t, uint64_t rows, uint64_t cols, int64_t ld), (l, t, rows, cols, ld))
FORWARD(1, cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t l), (l))
FORWARD(1, cublasLtMatmulPreferenceCreate, (cublasLtMatmulPreference_t *p), (p))
FORWARD(1, cublasLtMatmulPreferenceDestroy, (cublasLtMatmulPreference_t p), (p))
FORWARD(1, cublasLtMatmulPreferenceSetAttribute,
        (cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t a, const void *buf, size_t n), (p, a, buf, n))
FORWARD(1, cublasLtMatmulAlgoGetHeuristic,
        (cublasLtHandle_t h, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t A, cublasLtMatrixLayout_t B,
         cublasLtMatrixLayout_t C, cublasLtMatrixLayout_t D, cublasLtMatmulPreference_t p, int want,
         cublasLtMatmulHeuristicResult_t *res, int *got),
        (h, d, A, B, C, D, p, want, res, got))
FORWARD(1, cublasLtMatmul,
        (cublasLtHandle_t h, cublasLtMatmulDesc_t d, const void *alpha, const void *A, cublasLtMatrixLayout_t la,
         const void *B, cublasLtMatrixLayout_t lb, const void *beta, const void *C, cublasLtMatrixLayout_t lc, void *D,
         cublasLtMatrixLayout_t ld, const cublasLtMatmulAlgo_t *algo, void *ws, size_t ws_size, cudaStream_t s),
        (h, d, alpha, A, la, B, lb, beta, C, lc, D, ld, algo, ws, ws_size, s))

/* Not a status: a message for any status, also when the library is missing. */
const char *cublasGetStatusString(cublasStatus_t status) {
    static __typeof__(&cublasGetStatusString) cached;
    __typeof__(&cublasGetStatusString) fn = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
    if (!fn && (fn = (__typeof__(&cublasGetStatusString))lookup(0, "cublasGetStatusString")))
        __atomic_store_n(&cached, fn, __ATOMIC_RELEASE);
    return fn ? fn(status) : status == CUBLAS_STATUS_NOT_INITIALIZED ? "cuBLAS not loaded" : "cuBLAS error";
}
