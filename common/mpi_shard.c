/* mpi_shard.c — MPI ranks, the device index of a rank, and shards (mpi_shard.h, docs/cluster.md).
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

#include <mpi.h>
#include <omp.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

static int g_on;            /* MPI_Init was called by us */
static int g_rank, g_size = 1, g_local_rank, g_local_size = 1;
static int g_alone;          /* andrea_mpi_set_alone: this rank works as a serial process */
static int g_failure_agreed; /* the last andrea_mpi_agree saw a failure (all ranks know it) */
static int g_echo_only;      /* ... and this rank's error message is only its echo */

/* The one check for MPI calls (STYLE.md): MPI_ERRORS_RETURN is set on MPI_COMM_WORLD, so a failed
 * call returns its code and we report call, file and line with MPI's own message. */
#define MPI_TRY(call)                                                                          \
    do {                                                                                       \
        int mpi_rc_ = (call);                                                                  \
        if (mpi_rc_ != MPI_SUCCESS) {                                                          \
            char mpi_msg_[MPI_MAX_ERROR_STRING] = "";                                          \
            int mpi_len_ = 0;                                                                  \
            MPI_Error_string(mpi_rc_, mpi_msg_, &mpi_len_);                                    \
            return andrea_fail(err, "mpi: %s failed: %s (%s:%d)", #call, mpi_msg_, AE_SOURCE_FILE, __LINE__); \
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

/* Ranks sharing a node share its cores: without OMP_NUM_THREADS, each rank's OpenMP team gets the
 * cores it is bound to (Open MPI binds to a core by default for np <= 2), or its share of the
 * node when unbound. */
static int g_threads_share, g_threads_node; /* 0: OMP_NUM_THREADS was given (left alone) */

static void share_cores(void) {
    if (getenv("OMP_NUM_THREADS")) return;
    cpu_set_t set;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int avail = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : (int)online;
    int threads = avail >= online ? (int)(online / g_local_size) : avail;
    g_threads_share = threads < 1 ? 1 : threads;
    g_threads_node = avail >= online ? (int)online : avail; /* bound: its own cores only */
    omp_set_num_threads(g_threads_share);
}

void andrea_mpi_serial_phase(int on) {
    if (!g_on || g_size <= 1 || g_rank != 0 || g_alone || !g_threads_share) return;
    omp_set_num_threads(on ? g_threads_node : g_threads_share);
}

/* Waits for a nonblocking collective, testing it in a short spin and then every 200 us: a rank
 * waiting for another's serial work (rank 0's causal check, catalog and report) leaves its core
 * to that work instead of spinning in MPI's progress loop (Open MPI's blocking calls poll). */
static int wait_sleeping(MPI_Request *req, ae_error *err) {
    int done = 0;
    const struct timespec nap = {0, 200000};
    for (long k = 0;; k++) {
        MPI_TRY(MPI_Test(req, &done, MPI_STATUS_IGNORE));
        if (done) return 0;
        if (k > 2000) nanosleep(&nap, NULL);
    }
}

int andrea_mpi_init(int *argc, char ***argv, ae_error *err) {
    if (g_on || !under_launcher()) return 0;
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
    /* The launcher's node-local rank when it gives one (it numbers ranks as the scheduler placed
     * them); the split above agrees with it on one node. */
    const int lr = env_local_rank();
    if (lr >= 0 && lr < g_local_size) g_local_rank = lr;
    share_cores();
    if (g_rank != 0) andrea_progress_quiet = 1; /* one progress bar per job: rank 0's */
    return 0;
}

int andrea_mpi_finish(int rc) {
    if (!g_on) return rc;
    g_alone = 0;
    if (rc != 0 && g_size > 1 && !g_failure_agreed) {
        /* Other ranks may be blocked in a collective this rank will never reach. */
        fflush(stdout);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, rc);
    }
    MPI_Finalize();
    return rc;
}

void andrea_mpi_set_alone(int alone) { g_alone = alone; }
int andrea_mpi_rank(void) { return g_alone ? 0 : g_rank; }
int andrea_mpi_size(void) { return g_alone ? 1 : g_size; }
int andrea_mpi_local_rank(void) { return g_local_rank; }
int andrea_mpi_local_size(void) { return g_local_size; }
int andrea_mpi_parallel(void) { return !g_alone && g_size > 1; }
int andrea_mpi_device_index(void) { return g_on && g_size > 1 ? g_local_rank : -1; }

int andrea_mpi_agree(int rc, ae_error *err) {
    if (!andrea_mpi_parallel()) return rc ? -1 : 0;
    /* The lowest failing rank (size when none) is the one whose message the job prints. */
    int mine = rc ? g_rank : g_size, first = g_size;
    MPI_Request req;
    MPI_TRY(MPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &req));
    if (wait_sleeping(&req, err)) return -1;
    if (first == g_size) return 0;
    g_failure_agreed = 1;
    g_echo_only = first != g_rank;
    if (!rc) andrea_fail(err, "rank %d of %d failed (its message says why)", first, g_size);
    return -1;
}

int andrea_mpi_report_error(void) { return !g_echo_only; }

int andrea_mpi_sum_f64(double *v, size_t n, ae_error *err) {
    if (!andrea_mpi_parallel() || n == 0) return 0;
    if (n > (size_t)INT32_MAX) return andrea_fail(err, "mpi: reduction of %zu values is too large", n);
    MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    return 0;
}

int andrea_mpi_sum_i64(int64_t *v, size_t n, ae_error *err) {
    if (!andrea_mpi_parallel() || n == 0) return 0;
    if (n > (size_t)INT32_MAX) return andrea_fail(err, "mpi: reduction of %zu values is too large", n);
    MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
    return 0;
}

int andrea_mpi_sum_f32_to(float *v, size_t n, int root, ae_error *err) {
    if (!andrea_mpi_parallel()) return 0;
    const size_t step = (size_t)1 << 28; /* MPI counts are int */
    for (size_t at = 0; at < n; at += step) {
        const int k = (int)(n - at < step ? n - at : step);
        if (g_rank == root) MPI_TRY(MPI_Reduce(MPI_IN_PLACE, v + at, k, MPI_FLOAT, MPI_SUM, root, MPI_COMM_WORLD));
        else MPI_TRY(MPI_Reduce(v + at, NULL, k, MPI_FLOAT, MPI_SUM, root, MPI_COMM_WORLD));
    }
    return 0;
}

int andrea_mpi_max_f64(double *v, ae_error *err) {
    if (!andrea_mpi_parallel()) return 0;
    MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    return 0;
}

int andrea_mpi_bcast(void *buf, size_t n, int root, ae_error *err) {
    if (!andrea_mpi_parallel() || n == 0) return 0;
    if (n > (size_t)INT32_MAX) return andrea_fail(err, "mpi: broadcast of %zu bytes is too large", n);
    MPI_TRY(MPI_Bcast(buf, (int)n, MPI_BYTE, root, MPI_COMM_WORLD));
    return 0;
}

int andrea_mpi_allgather(const void *mine, size_t n, void *all, ae_error *err) {
    if (!andrea_mpi_parallel()) {
        memcpy(all, mine, n);
        return 0;
    }
    if (n > (size_t)INT32_MAX) return andrea_fail(err, "mpi: gathering %zu bytes a rank is too large", n);
    MPI_TRY(MPI_Allgather(mine, (int)n, MPI_BYTE, all, (int)n, MPI_BYTE, MPI_COMM_WORLD));
    return 0;
}

int andrea_mpi_barrier(ae_error *err) {
    if (!andrea_mpi_parallel()) return 0;
    MPI_Request req;
    MPI_TRY(MPI_Ibarrier(MPI_COMM_WORLD, &req));
    return wait_sleeping(&req, err);
}

#else /* serial build: one rank of one */

int andrea_mpi_init(int *argc, char ***argv, ae_error *err) {
    (void)argc, (void)argv, (void)err;
    return 0;
}
int andrea_mpi_finish(int rc) { return rc; }
int andrea_mpi_rank(void) { return 0; }
int andrea_mpi_size(void) { return 1; }
void andrea_mpi_set_alone(int alone) { (void)alone; }
void andrea_mpi_serial_phase(int on) { (void)on; }
int andrea_mpi_local_rank(void) { return 0; }
int andrea_mpi_local_size(void) { return 1; }
int andrea_mpi_parallel(void) { return 0; }
int andrea_mpi_device_index(void) { return -1; }
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
int andrea_mpi_sum_f32_to(float *v, size_t n, int root, ae_error *err) {
    (void)v, (void)n, (void)root, (void)err;
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
int andrea_mpi_allgather(const void *mine, size_t n, void *all, ae_error *err) {
    (void)err;
    memcpy(all, mine, n);
    return 0;
}
int andrea_mpi_barrier(ae_error *err) {
    (void)err;
    return 0;
}

#endif
