/* atomic_file.h — outputs appear complete or not at all.
 *
 * Every file andrea writes (dump, PNG, HTML, catalog copies) is written under a temporary name
 * "<final>.tmp-<pid>-<16 random hex digits>" beside the final one and renamed when complete. The
 * temporary is created by andrea_tmp_begin with O_CREAT|O_EXCL|O_NOFOLLOW: a file or link someone
 * put there first is never opened, truncated or written through. Temporary names are
 * registered so that SIGINT, SIGTERM, SIGHUP and SIGPIPE remove them before the process dies
 * (andrea_tmp_install_signals, called once by the CLI); SIGKILL leaves a *.tmp-* file but never a partial file under a final name.
 * Invariant: at most AE_TMP_MAX temporaries are open at once per process.
 */
#ifndef ANDREA_ATOMIC_FILE_H
#define ANDREA_ATOMIC_FILE_H

#include <stddef.h>

#include "error.h"

#define AE_TMP_MAX 64
#define AE_PATH_MAX 4096

/* Creates an empty temporary for final_path (exclusively, never through a link), fills tmp
 * (capacity cap) with its name and registers it. -1 with "FINAL: cannot create: REASON" (the
 * reason read before any clean-up). Writers reopen it with O_NOFOLLOW, or replace it with a file
 * of their own made with O_EXCL (HDF5's H5F_ACC_EXCL). */
int andrea_tmp_begin(const char *final_path, char *tmp, size_t cap, ae_error *err);
/* Renames tmp over final_path and unregisters it. On failure tmp is removed. */
int andrea_tmp_commit(const char *tmp, const char *final_path, ae_error *err);
/* Removes tmp (if present) and unregisters it. */
void andrea_tmp_abort(const char *tmp);
/* Installs SIGINT/SIGTERM/SIGHUP/SIGPIPE handlers that unlink registered temporaries, then re-raise. */
void andrea_tmp_install_signals(void);
/* Set by the signal handler; long loops poll it to stop cleanly. */
extern volatile int andrea_interrupted;

/* Writes len bytes to path under a temporary name, then renames. Not thread-safe (the registry of
 * temporaries): call from one thread. */
int andrea_write_file_atomic(const char *path, const void *data, size_t len, ae_error *err);

#endif
