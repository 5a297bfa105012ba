/* cpu_team.h — how many threads a CPU forward's OpenMP team takes.
 *
 * Job: on a machine where other processes are running right now, a forward takes the cores they
 * leave (two threads on a 2-core machine whose other core is busy were 4x slower than one), and
 * on an idle machine every core. "Right now" is the kernel's count of runnable tasks
 * (/proc/stat procs_running) minus this process's own runnable threads, read at the start of each
 * forward. Not the load average, which libgomp's OMP_DYNAMIC uses: it counts this process's own
 * past work and that of runs that have ended (measured: after a test run had left the 15-minute
 * average at 2.1 on an idle 2-core machine, every forward ran on one thread, 17 s instead of 10 s:
 * bench/RESULTS.md).
 * Results never depend on the team (forward_cpu.c cuts work into fixed-size blocks).
 * Failure contract: none; where /proc cannot be read, every thread is used.
 */
#ifndef ANDREA_CPU_TEAM_H
#define ANDREA_CPU_TEAM_H

/* The rule: max_threads less the tasks of other processes that are runnable (procs_running less
 * own_running, at least 0), at least 1. */
int andrea_cpu_team_from(int max_threads, long procs_running, long own_running);

/* The rule on this machine now (/proc/stat, /proc/self/task). */
int andrea_cpu_team_size(int max_threads);

#endif
