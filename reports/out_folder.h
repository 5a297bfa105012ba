/* out_folder.h — a report and a `show` page write the same names (index.html, explore.html,
 * compare.html, data/, assets/) into their folder, and a series page its index.html: none may be
 * written over another, which left a report's head pages reading the show's data (wrong maps
 * under the report's headings) or replaced a series' page by one checkpoint's.
 * Job: tell which kind a folder holds, and refuse writing the other kind there.
 * Failure contract: andrea_out_folder_check returns -1 with "DIR: holds an andrea ..." or, for a
 * folder with someone else's index.html, "DIR: holds an index.html that andrea did not write ..." */
#ifndef ANDREA_OUT_FOLDER_H
#define ANDREA_OUT_FOLDER_H

#include "../common/error.h"

enum { OUT_FOLDER_NONE = 0, OUT_FOLDER_REPORT = 1, OUT_FOLDER_SHOW = 2, OUT_FOLDER_SERIES = 3 };

/* What dir holds: OUT_FOLDER_REPORT, OUT_FOLDER_SHOW, OUT_FOLDER_SERIES (analyze's page of many
 * checkpoints), or OUT_FOLDER_NONE (missing, empty, other). */
int andrea_out_folder_kind(const char *dir);
/* 0 when a page of kind `writing` may be written into dir, else -1 (err). */
int andrea_out_folder_check(const char *dir, int writing, ae_error *err);

/* Before a series (analyze CKPT CKPT..) writes its checkpoints' reports into dir/NAME for each of
 * the n names: each that exists must be a folder of its own inside dir, reached without a link.
 * -1 (err, one line naming it) for a link to dir itself ("leads to the series folder DIR itself":
 * the series page would replace that report), two names of one folder ("lead to one folder": one
 * report would replace the other), a link anywhere else ("is a link to REAL": outside dir, two
 * series linked into each other held one folder's lock each and waited for the other's forever),
 * a link that leads nowhere, or a file; else 0. Names not there yet are fine: the report makes
 * them. So the folder locks a series takes (dir, then its own subfolders) always go down the
 * tree, and two writers never wait on each other. */
int andrea_out_folder_check_series(const char *dir, const char *const *names, int n, ae_error *err);

/* A complete andrea report in a subfolder of a series folder: its name and its checkpoint's
 * sha256 (the row its index.html shows). */
typedef struct {
    char name[256];
    char sha256[65];
} out_folder_report;

/* The complete andrea reports in dir's own subfolders (dir/NAME: a folder, no link followed,
 * data/meta.js with andrea's mark and an index.html naming its checkpoint's sha256; a report
 * stopped midway has no index.html and is left out), by name; *list (malloc'd, *n entries, NULL
 * when none) is the caller's to free. 0, or -1 (err) when out of memory; an unreadable dir has none. */
int andrea_out_folder_reports(const char *dir, out_folder_report **list, int *n, ae_error *err);

/* Where real_path lies in the report folder real_dir (both resolved by the caller, so any
 * spelling of the folder counts): OUT_PLACE_CATALOG (catalog.db and its -wal, -shm, -journal),
 * OUT_PLACE_PAGE (index.html, explore.html, compare.html), OUT_PLACE_FOLDER (one of the report's
 * folders assets/, data/, heads/, maps/, overview/ itself), OUT_PLACE_IN_FOLDER (anything below
 * one: every report clears and rewrites them), else OUT_PLACE_OUTSIDE; *name: the matched name. */
enum { OUT_PLACE_OUTSIDE = 0, OUT_PLACE_CATALOG, OUT_PLACE_PAGE, OUT_PLACE_FOLDER, OUT_PLACE_IN_FOLDER };
int andrea_out_folder_place(const char *real_dir, const char *real_path, const char **name);

/* -1 (err: "INPUT: is the WHAT this command reads, and lies where the page in DIR is written ...")
 * when input is one of the files a report or page in dir writes or clears first (index.html,
 * explore.html, compare.html, anything under assets/, data/, heads/, maps/, overview/), compared
 * by real paths; else 0. A render reading its catalog from DIR/heads/L0_H0.html deleted it. */
int andrea_out_folder_check_input(const char *dir, const char *input, const char *what, ae_error *err);

/* Whether the earlier report's image sub/[folder/]name stays (a report written again keeps the
 * images of the suites still current in the catalog: reports/report_kept.h): sub is "maps" (folder
 * the head's LN_HN) or "overview" (folder NULL). */
typedef int (*out_folder_keep_fn)(const char *sub, const char *folder, const char *name, const void *ctx);

/* Before a report or `show` page is written into dir: when dir holds an earlier andrea report or
 * page (data/meta.js with andrea's mark), its index.html and the files of andrea's own names are
 * removed (head pages heads/LN_HN.html, heatmaps s... .png in maps/LN_HN, with the head folders
 * this empties, the overview's scores_c and thumbs_s images, data/LN_HN.js, data/mK/LN_HN.js of
 * a page's further checkpoints and data/meta.js) but the images keep (NULL: none) says stay;
 * regular files only, no link followed; any other file stays. So a report or page of fewer
 * suites, heads, examples or checkpoints leaves none of the earlier one's files it does not keep,
 * and a writer stopped midway leaves no index. Call it holding the folder (andrea_out_folder_lock),
 * after andrea_out_folder_check. -1 with "PATH: cannot remove ...". */
int andrea_out_folder_clear(const char *dir, out_folder_keep_fn keep, const void *keep_ctx, ae_error *err);

/* Makes this process the folder's one writer until it exits: a second andrea writing a report
 * into dir (analyze from its start, every report writer before its first file) waits here,
 * saying so once on stderr as "andrea CMD: ..." ("andrea: ..." when cmd is NULL) unless quiet,
 * so two reports are never interleaved file by file (one's example maps beside the other's
 * scores). An flock on the folder itself: no file is left in it, and the lock goes with the
 * process however it ends. A folder this process holds already is not locked again; where the
 * file system has no flock, nothing is held. Returns a token for andrea_out_folder_unlock, -1 when
 * it took no lock. Not thread-safe: call it from one thread. */
int andrea_out_folder_lock(const char *dir, const char *cmd, int quiet);
/* Releases the lock andrea_out_folder_lock returned (its token; -1, nothing taken there, is a
 * no-op). A report writer releases its folder when the report is written: an MPI rank waiting for
 * it must not wait on a rank that holds it across a collective. */
void andrea_out_folder_unlock(int token);

#endif
