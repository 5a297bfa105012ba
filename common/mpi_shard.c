/* mpi_shard.c — MPI ranks, GPU binding and shards (mpi_shard.h, docs/cluster.md).
 *
 * Without ANDREA_HAVE_MPI (the default build) only the serial definitions at the bottom exist.
 * With it, MPI is started only under a launcher, so `andrea info` or the ctest suite run from an
 * MPI build behave exactly like the serial tool.
 */
#define _GNU_SOURCE
#include "mpi_shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void andrea_shard(long long n, int rank, int size, long long *lo, long long *hi) {
    if (size < 1) size = 1;
    long long base = n / size, extra = n % size, r = rank;
    *lo = r * base + (r < extra ? r : extra);
    *hi = *lo + base + (r < extra ? 1 : 0);
}

long long andrea_shard_max(long long n, int size) { return size < 1 ? n : (n + size - 1) / size; }

void andrea_shard_part(long long n, long long off, long long len, int rank, int size, long long *lo,
                       long long *hi) {
    long long a, b;
    andrea_shard(n, rank, size, &a, &b);
    long long s = a > off ? a : off, e = b < off + len ? b : off + len;
    if (e < s) e = s;
    *lo = s - off;
    *hi = e - off;
}

long long andrea_shard_part_max(long long n, long long off, long long len, int size) {
    long long most = 0;
    for (int r = 0; r < (size < 1 ? 1 : size); r++) {
        long long lo, hi;
        andrea_shard_part(n, off, len, r, size, &lo, &hi);
        if (hi - lo > most) most = hi - lo;
    }
    return most;
}

#ifdef ANDREA_HAVE_MPI

#include <dirent.h>
#include <mpi.h>
#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include "progress.h"

static int g_on;            /* MPI_Init was called by us */
static int g_rank, g_size = 1, g_local_rank, g_local_size = 1;
static int g_failure_agreed; /* the last andrea_mpi_agree saw a failure (all ranks know it) */
static int g_echo_only;      /* ... and this rank's error message is only its echo */
static char g_gpu[64];

/* The one check for MPI calls (STYLE.md): MPI_ERRORS_RETURN is set on MPI_COMM_WORLD, so a failed
 * call returns its code and we report call, file and line with MPI's own message. */
#define MPI_TRY(call)                                                                          \
    do {                                                                                       \
        int mpi_rc_ = (call);                                                                  \
        if (mpi_rc_ != MPI_SUCCESS) {                                                          \
            char mpi_msg_[MPI_MAX_ERROR_STRING] = "";                                          \
            int mpi_len_ = 0;                                                                  \
            MPI_Error_string(mpi_rc_, mpi_msg_, &mpi_len_);                                    \
            return andrea_fail(err, "mpi: %s failed: %s (%s:%d)", #call, mpi_msg_, __FILE__, __LINE__); \
        }                                                                                      \
    } while (0)

/* Launched by mpirun / mpiexec / srun with an MPI plugin: these variables are set by the launcher
 * (Open MPI, PMIx, PMI-1/2 as used by MPICH's hydra and Slurm, MVAPICH). */
static int under_launcher(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
                                       "MV2_COMM_WORLD_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i])) return 1;
    return 0;
}

/* Node-local rank from the launcher's environment, before MPI_Init (-1 when unknown). */
static int env_local_rank(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID",
                                       "MV2_COMM_WORLD_LOCAL_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        char *end;
        if (v && *v) {
            long r = strtol(v, &end, 10);
            if (!*end && r >= 0 && r < 1 << 20) return (int)r;
        }
    }
    return -1;
}

/* Narrows CUDA_VISIBLE_DEVICES to the one device of local rank lr. The GPUs are the entries of an
 * existing CUDA_VISIBLE_DEVICES list (the scheduler's allocation), else every GPU the driver
 * lists. Must run before the first CUDA call of the process. */
static void bind_gpu(int lr) {
    char list[1024] = "";
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    int n = 0;
    if (cvd && *cvd) {
        snprintf(list, sizeof list, "%s", cvd);
        n = 1;
        for (const char *p = list; *p; p++) n += *p == ',';
    } else {
        DIR *d = opendir("/proc/driver/nvidia/gpus");
        if (!d) return; /* no NVIDIA driver: the CPU engine runs */
        struct dirent *e;
        while ((e = readdir(d)))
            if (e->d_name[0] != '.') n++;
        closedir(d);
    }
    if (n < 1) return;
    int k = lr % n;
    if (list[0]) {
        char *save = NULL, *tok = strtok_r(list, ",", &save);
        for (int i = 0; i < k && tok; i++) tok = strtok_r(NULL, ",", &save);
        snprintf(g_gpu, sizeof g_gpu, "%s", tok ? tok : "0");
    } else {
        snprintf(g_gpu, sizeof g_gpu, "%d", k);
    }
    setenv("CUDA_VISIBLE_DEVICES", g_gpu, 1);
}

/* Ranks sharing a node share its cores: without OMP_NUM_THREADS, each rank's OpenMP team gets the
 * cores it is bound to (Open MPI binds to a core by default for np <= 2), or its share of the
 * node when unbound. */
static void share_cores(void) {
    if (getenv("OMP_NUM_THREADS")) return;
    cpu_set_t set;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int avail = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : (int)online;
    int threads = avail >= online ? (int)(online / g_local_size) : avail;
    omp_set_num_threads(threads < 1 ? 1 : threads);
}

int andrea_mpi_init(int *argc, char ***argv, ae_error *err) {
    if (g_on || !under_launcher()) return 0;
    int lr = env_local_rank();
    if (lr >= 0) bind_gpu(lr); /* before MPI_Init: a CUDA-aware MPI may touch CUDA in it */
    int provided = 0;
    int rc = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS) return andrea_fail(err, "mpi: MPI_Init_thread failed (code %d)", rc);
    g_on = 1;
    MPI_TRY(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_TRY(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
    MPI_TRY(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
    /* The authoritative node-local rank: ranks that can share memory are on one node. */
    MPI_Comm node;
    MPI_TRY(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &node));
    MPI_TRY(MPI_Comm_rank(node, &g_local_rank));
    MPI_TRY(MPI_Comm_size(node, &g_local_size));
    MPI_Comm_free(&node);
    if (lr < 0) bind_gpu(g_local_rank);
    share_cores();
    if (g_rank != 0) andrea_progress_quiet = 1; /* one progress bar per job: rank 0's */
    return 0;
}

int andrea_mpi_finish(int rc) {
    if (!g_on) return rc;
    if (rc != 0 && g_size > 1 && !g_failure_agreed) {
        /* Other ranks may be blocked in a collective this rank will never reach. */
        fflush(stdout);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, rc);
    }
    MPI_Finalize();
    return rc;
}

int andrea_mpi_rank(void) { return g_rank; }
int andrea_mpi_size(void) { return g_size; }
int andrea_mpi_local_rank(void) { return g_local_rank; }
int andrea_mpi_local_size(void) { return g_local_size; }
int andrea_mpi_parallel(void) { return g_size > 1; }
const char *andrea_mpi_gpu(void) { return g_gpu; }

int andrea_mpi_agree(int rc, ae_error *err) {
    if (g_size <= 1) return rc ? -1 : 0;
    /* The lowest failing rank (size when none) is the one whose message the job prints. */
    int mine = rc ? g_rank : g_size, first = g_size;
    MPI_TRY(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (first == g_size) return 0;
    g_failure_agreed = 1;
    g_echo_only = first != g_rank;
    if (!rc) andrea_fail(err, "rank %d of %d failed (its message says why)", first, g_size);
    return -1;
}

int andrea_mpi_report_error(void) { return !g_echo_only; }

int andrea_mpi_sum_f64(double *v, size_t n, ae_error *err) {
    if (g_size <= 1 || n == 0) return 0;
    if (n > (size_t)INT32_MAX) return andrea_fail(err, "mpi: reduction of %zu values is too large", n);
    MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    return 0;
}

int andrea_mpi_sum_i64(int64_t *v, size_t n, ae_error *err) {
    if (g_size <= 1 || n == 0) return 0;
    if (n > (size_t)INT32_MAX) return andrea_fail(err, "mpi: reduction of %zu values is too large", n);
    MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
    return 0;
}

int andrea_mpi_max_f64(double *v, ae_error *err) {
    if (g_size <= 1) return 0;
    MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    return 0;
}

int andrea_mpi_bcast(void *buf, size_t n, int root, ae_error *err) {
    if (g_size <= 1 || n == 0) return 0;
    if (n > (size_t)INT32_MAX) return andrea_fail(err, "mpi: broadcast of %zu bytes is too large", n);
    MPI_TRY(MPI_Bcast(buf, (int)n, MPI_BYTE, root, MPI_COMM_WORLD));
    return 0;
}

int andrea_mpi_barrier(ae_error *err) {
    if (g_size <= 1) return 0;
    MPI_TRY(MPI_Barrier(MPI_COMM_WORLD));
    return 0;
}

#else /* serial build: one rank of one */

int andrea_mpi_init(int *argc, char ***argv, ae_error *err) {
    (void)argc, (void)argv, (void)err;
    return 0;
}
int andrea_mpi_finish(int rc) { return rc; }
int andrea_mpi_rank(void) { return 0; }
int andrea_mpi_size(void) { return 1; }
int andrea_mpi_local_rank(void) { return 0; }
int andrea_mpi_local_size(void) { return 1; }
int andrea_mpi_parallel(void) { return 0; }
const char *andrea_mpi_gpu(void) { return ""; }
int andrea_mpi_agree(int rc, ae_error *err) {
    (void)err;
    return rc ? -1 : 0;
}
int andrea_mpi_report_error(void) { return 1; }
int andrea_mpi_sum_f64(double *v, size_t n, ae_error *err) {
    (void)v, (void)n, (void)err;
    return 0;
}
int andrea_mpi_sum_i64(int64_t *v, size_t n, ae_error *err) {
    (void)v, (void)n, (void)err;
    return 0;
}
int andrea_mpi_max_f64(double *v, ae_error *err) {
    (void)v, (void)err;
    return 0;
}
int andrea_mpi_bcast(void *buf, size_t n, int root, ae_error *err) {
    (void)buf, (void)n, (void)root, (void)err;
    return 0;
}
int andrea_mpi_barrier(ae_error *err) {
    (void)err;
    return 0;
}

#endif
