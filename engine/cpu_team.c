/* cpu_team.c — see cpu_team.h. */
#include "cpu_team.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int andrea_cpu_team_from(int max_threads, long procs_running, long own_running) {
    if (max_threads < 1) return 1;
    long others = procs_running - own_running;
    if (others < 0) others = 0;
    const long team = (long)max_threads - others;
    return team < 1 ? 1 : (int)team;
}

/* /proc/stat's procs_running (tasks runnable now, machine-wide), or -1. */
static long procs_running(void) {
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return -1;
    char line[256];
    long n = -1;
    while (n < 0 && fgets(line, sizeof line, f))
        if (!strncmp(line, "procs_running ", 14)) n = strtol(line + 14, NULL, 10);
    fclose(f);
    return n;
}

/* This process's threads in state R (running or runnable), or -1. The state follows the command
 * name's closing parenthesis in /proc/self/task/TID/stat (a name may hold spaces and ')'). */
static long own_running(void) {
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    long n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", de->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue; /* the thread ended meanwhile */
        const size_t got = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[got] = 0;
        const char *close = strrchr(buf, ')');
        if (close && close[1] == ' ' && close[2] == 'R') n++;
    }
    closedir(d);
    return n;
}

int andrea_cpu_team_size(int max_threads) {
    const long all = procs_running(), own = all < 0 ? -1 : own_running();
    if (all < 0 || own < 0) return max_threads < 1 ? 1 : max_threads;
    return andrea_cpu_team_from(max_threads, all, own);
}
