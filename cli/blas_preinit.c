/* blas_preinit.c — one BLAS thread when an address-space limit leaves no room for more.
 *
 * OpenBLAS starts its worker threads in its library constructor, before main, and when
 * pthread_create fails there (no room under `ulimit -v` for a thread's stack) it prints two lines
 * of its own and raises SIGINT: under a low limit every andrea command, --help included, died so
 * (exit 130) before andrea's own code could say anything (issue 43, 7; seen under 97 MiB with the
 * CUDA-linked build). The only thing that runs before a library's constructor is the program's
 * .preinit_array, and the only setting OpenBLAS's constructor reads is its environment; so, under
 * a limit whose room cannot hold the worker threads' stacks, andrea starts itself again with
 * OPENBLAS_NUM_THREADS=1 (no worker is started) unless the user chose a number. setenv cannot do
 * it: libc's own initialiser, which runs after the preinit array, sets the environment back to the
 * one the kernel passed. What still does not fit is then refused in one line by andrea's own
 * checks (common/address_space.h, engine/blas_core.h).
 * Runs before any library is initialised: only system calls and the envp the kernel passed;
 * nothing is printed. Where the restart cannot be made (no /proc, a huge
 * environment) the run goes on as before. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

/* 1 when `bytes` of address space can be mapped now (PROT_NONE, nothing touched). */
static int room_for(size_t bytes) {
    void *p = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return 0;
    munmap(p, bytes);
    return 1;
}

static void blas_threads_fit_address_space(int argc, char **argv, char **envp) {
    (void)argc;
    struct rlimit as, stack;
    if (getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY) return;
    /* the user's choice, or this restart: read from envp itself, not getenv (in a preinit
     * function libc's environ may not be set yet: seen in the CUDA-linked build, where every
     * restart restarted again, each with one more OPENBLAS_NUM_THREADS=1, for ever) */
    for (size_t i = 0; envp && envp[i]; i++)
        if (!strncmp(envp[i], "OPENBLAS_NUM_THREADS=", 21) || !strncmp(envp[i], "GOTO_NUM_THREADS=", 17)) return;
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus <= 1) return;
    /* glibc gives a new thread RLIMIT_STACK (8 MiB when unlimited) plus a guard page; OpenBLAS
     * starts one worker for each CPU but the calling thread. */
    size_t one = 8u << 20;
    if (getrlimit(RLIMIT_STACK, &stack) == 0 && stack.rlim_cur != RLIM_INFINITY && stack.rlim_cur > 0 &&
        stack.rlim_cur < ((size_t)1 << 30))
        one = (size_t)stack.rlim_cur;
    one += (size_t)sysconf(_SC_PAGESIZE);
    const size_t workers = (size_t)(cpus - 1);
    if (workers > ((size_t)1 << 40) / one || room_for(workers * one)) return;
    size_t n = 0;
    while (envp[n] && n < 4096) n++;
    if (envp[n]) return;
    char *env[4098];
    for (size_t i = 0; i < n; i++) env[i] = envp[i];
    env[n] = "OPENBLAS_NUM_THREADS=1"; /* read by the constructor; the restart sees it set and goes on */
    env[n + 1] = NULL;
    execve("/proc/self/exe", argv, env);
}

__attribute__((section(".preinit_array"), used)) static void (*const andrea_blas_preinit)(int, char **, char **) =
    blas_threads_fit_address_space;
