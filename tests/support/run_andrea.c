/* run_andrea.c — see run_andrea.h. */
#include "run_andrea.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int andrea_test_run_andrea(const char *const *args, const char *out_path) {
    const char *bin = getenv("ANDREA_BIN");
    char errp[4200];
    snprintf(errp, sizeof errp, "%s.err", out_path);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        if (!bin || !freopen(out_path, "w", stdout) || !freopen(errp, "w", stderr)) _exit(126);
        const char *argv[24];
        int n = 0;
        argv[n++] = bin;
        for (; args[n - 1] && n < 23; n++) argv[n] = args[n - 1];
        argv[n] = NULL;
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
