/* dump_run.c — see dump_run.h. */
#include "dump_run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/mpi_shard.h"
#include "../common/progress.h"
#include "../engine/head_mask.h"
#include "../engine/model.h"
#include "../tokenizer/tokenizer.h"
#include "output_paths.h"

/* --out is checked before the model is even loaded: the dump is renamed over it at the end, so a
 * device or FIFO there (as root: /dev/null) would be replaced by a regular file, and a missing
 * folder would only be found once the temporary is created. (A folder is refused by
 * andrea_tmp_begin, common/atomic_file.c, for every output.) */
static int check_out_path(const char *out, int *usage, ae_error *err) {
    struct stat st;
    if (!*out) {
        *usage = 1;
        return andrea_fail(err, "--out wants a file name, not ''");
    }
    if (stat(out, &st) == 0) {
        if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) return 0;
        andrea_fail(err, "%s: exists and is not a regular file (a device, FIFO or socket): andrea would replace "
                      "it; give the name of a file to write", out);
        return -1;
    }
    if (errno != ENOENT) {
        andrea_fail(err, "%s: cannot write there: %s", out, strerror(errno));
        return -1;
    }
    size_t n = strlen(out);
    if (out[n - 1] == '/') {
        andrea_fail(err, "%s: names a folder; --out names the dump file to write", out);
        return -1;
    }
    const char *slash = strrchr(out, '/');
    if (!slash) return 0;
    char dir[4096];
    if ((size_t)(slash - out) >= sizeof dir) {
        andrea_fail(err, "%.200s...: path too long", out);
        return -1;
    }
    snprintf(dir, sizeof dir, "%.*s", slash == out ? 1 : (int)(slash - out), out);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        andrea_fail(err, "%s: folder %s %s", out, dir, stat(dir, &st) != 0 ? "does not exist" : "is not a folder");
        return -1;
    }
    return 0;
}

/* --heads L.H,.. into a [L*H] mask: 0, or -1 with err (*usage: 1 when the list is at fault). */
static int heads_mask(const char *heads, const andrea_config *cfg, unsigned char **mask, int *usage, ae_error *err) {
    if (!(*mask = malloc((size_t)cfg->n_layer * (size_t)cfg->n_head))) return andrea_fail(err, "out of memory");
    if (andrea_parse_heads(heads, cfg, *mask, err) == 0) return 0;
    *usage = 1;
    return -1;
}

int andrea_dump_run(const andrea_dump_plan *p, andrea_dump_result *r, ae_error *err) {
    memset(r, 0, sizeof *r);
    /* Under MPI the writer's own check runs on rank 0 and is agreed by all ranks (one line for the
     * job); here every rank would print its own. */
    if (!andrea_mpi_parallel() && check_out_path(p->dump.out_path, &r->usage, err)) return -1;
    andrea_model m;
    andrea_tokenizer *tok = NULL;
    probe_suite *suites = NULL;
    unsigned char *mask = NULL;
    int rc = -1;
    const double t_start = andrea_now_seconds();
    memset(&m, 0, sizeof m);
    /* the streams (--texts -, a FIFO) are read once, before the model */
    if (andrea_probe_sources_keep(p->ps, 0, err) || andrea_model_load(&m, p->ckpt, err)) goto out;
    r->t_load = andrea_now_seconds() - t_start;
    if (andrea_check_output_not_input(p->dump.out_path, &m, p->ps, p->tok_dir, err)) goto out;
    tok = andrea_tokenizer_open(m.cfg.vocab_size, m.dir, p->tok_dir, err);
    /* token-id probe files work without a tokenizer, when the model has none at all (a broken
     * one, or a wrong --tokenizer, is an error); everything else needs one */
    if (!tok && !(andrea_probe_sources_files_only(p->ps) && andrea_tokenizer_absent(m.cfg.vocab_size, m.dir, p->tok_dir)))
        goto out;
    char tok_desc[4200];
    snprintf(tok_desc, sizeof tok_desc, "%s", tok ? andrea_tokenizer_kind(tok) : "none");
    if (p->po.seq_len > m.cfg.max_seq_len && andrea_probe_sources_has_builtin(p->ps))
        fprintf(stderr, "andrea dump: note: --len %d is clipped to the model's max_seq_len %d\n", p->po.seq_len,
                m.cfg.max_seq_len);
    if (andrea_probe_sources_load(p->ps, tok, m.cfg.vocab_size, m.cfg.max_seq_len, &p->po, &suites, &r->n_suites, err))
        goto out;
    if (p->heads && heads_mask(p->heads, &m.cfg, &mask, &r->usage, err)) goto out;
    andrea_dump_options o = p->dump;
    o.run.heads = mask;
    o.tokenizer = tok_desc;
    o.tok = tok; /* token_text + tokenizer_vocab_sha256 (none without a tokenizer) */
    o.stats = &r->stats;
    r->t_probes = andrea_now_seconds() - t_start - r->t_load;
    if (andrea_dump_write(&m, suites, r->n_suites, &o, err)) goto out;
    r->prints = andrea_mpi_rank() == 0; /* MPI: one summary for the job */
    rc = 0;
out:
    free(mask);
    andrea_probe_suites_free(suites, r->n_suites);
    andrea_tokenizer_free(tok);
    andrea_model_free(&m);
    return rc;
}
