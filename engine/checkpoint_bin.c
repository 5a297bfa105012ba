/* checkpoint_bin.c — the ANDREA .bin reader (llm.c's GPT-2 layout, docs/checkpoints.md).
 *
 * Layout: 256 int32 header ([0] magic 20240326, [1] version 3 = fp32 / 5 = bf16, [2] maxT, [3] V,
 * [4] L, [5] H, [6] C, [7] Vp), then the 16 tensors in llm.c order, Linear layout [out, in],
 * nothing after them.
 * Invariants: the config is validated (andrea_param_sizes) and the file length must equal
 * header + parameter bytes exactly before the parameter buffer is allocated, so a hostile header
 * can neither make us allocate terabytes nor read past the file. fp32 is read straight into the
 * model; bf16 goes through a fixed-size scratch buffer.
 * Vp = 0 in slot 7 (files written before llm.c padded the vocabulary) means Vp = V, accepted only
 * when the file length agrees with that.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/checked_size.h"
#include "checkpoint.h"
#include "../common/strict_input.h"
#include "../common/half.h"

#define BF16_CHUNK (1u << 20) /* bf16 values converted per read: 2 MB of scratch */

static int read_exact(FILE *f, void *buf, size_t n, const char *path, ae_error *err) {
    if (fread(buf, 1, n, f) != n) {
        if (ferror(f)) return andrea_fail(err, "%s: read error: %s", path, strerror(errno));
        return andrea_fail(err, "%s: file ended early (it shrank while being read?)", path);
    }
    return 0;
}

/* Expected file length for cfg at elem_bytes per parameter, or -1 with a message. */
static int expected_bytes(const andrea_config *cfg, size_t elem_bytes, size_t *params, size_t *bytes,
                          const char *path, ae_error *err) {
    size_t sizes[ANDREA_N_PARAM_TENSORS], total, b;
    if (andrea_param_sizes(cfg, sizes, &total, err)) return andrea_prefix(err, "%s: header", path);
    if (ae_mul(total, elem_bytes, &b) || ae_add(b, ANDREA_BIN_HEADER_INTS * sizeof(int32_t), &b))
        return andrea_fail(err, "%s: header sizes overflow", path);
    *params = total;
    *bytes = b;
    return 0;
}

/* Validates the header and the file length of an open .bin; fills cfg, bytes per parameter and
 * parameter count. Leaves f positioned after the header. */
static int read_header(FILE *f, const char *path, andrea_config *cfg_out, size_t *elem_out, size_t *n_params_out,
                       ae_error *err) {
    struct stat st;
    if (fstat(fileno(f), &st) != 0) return andrea_fail(err, "%s: cannot stat: %s", path, strerror(errno));
    size_t file_bytes = (size_t)st.st_size;
    int32_t hdr[ANDREA_BIN_HEADER_INTS];
    if (file_bytes < sizeof hdr)
        return andrea_fail(err, "%s: truncated: %zu bytes, shorter than the %zu-byte header", path, file_bytes,
                       sizeof hdr);
    if (read_exact(f, hdr, sizeof hdr, path, err)) return -1;
    if (hdr[0] != ANDREA_BIN_MAGIC) {
        if (hdr[0] == ANDREA_LLMC_STATE_MAGIC)
            return andrea_fail(err, "%s: an llm.c training-state file, not a model checkpoint (use the "
                                "model_*.bin file written beside it)", path);
        return andrea_fail(err, "%s: bad magic %d (expected %d: not an ANDREA/llm.c .bin checkpoint)", path,
                       hdr[0], ANDREA_BIN_MAGIC);
    }
    if (hdr[1] != 3 && hdr[1] != 5)
        return andrea_fail(err, "%s: unsupported version %d (3 = fp32 and 5 = bf16 are supported)", path, hdr[1]);
    size_t elem = hdr[1] == 3 ? 4 : 2;
    andrea_config cfg = {.max_seq_len = hdr[2], .vocab_size = hdr[3], .n_layer = hdr[4],
                         .n_head = hdr[5], .d_model = hdr[6], .padded_vocab_size = hdr[7]};
    if (cfg.padded_vocab_size == 0) cfg.padded_vocab_size = cfg.vocab_size; /* pre-padding files */
    cfg.head_dim = cfg.n_head > 0 ? cfg.d_model / cfg.n_head : 0;
    size_t n_params = 0, want = 0;
    if (expected_bytes(&cfg, elem, &n_params, &want, path, err)) return -1;
    if (file_bytes != want)
        return andrea_fail(err, "%s: %s: header (L=%d H=%d C=%d V=%d Vp=%d maxT=%d, %s) needs %zu bytes, file has %zu",
                       path, file_bytes < want ? "truncated" : "trailing bytes after the parameters",
                       cfg.n_layer, cfg.n_head, cfg.d_model, cfg.vocab_size, cfg.padded_vocab_size,
                       cfg.max_seq_len, elem == 4 ? "fp32" : "bf16", want, file_bytes);
    *cfg_out = cfg;
    *elem_out = elem;
    *n_params_out = n_params;
    return 0;
}

int andrea_bin_read_config(const char *path, andrea_config *cfg, int *version, ae_error *err) {
    FILE *f = andrea_fopen_regular(path, err);
    if (!f) return -1;
    size_t elem, n_params;
    andrea_config c;
    int rc = read_header(f, path, &c, &elem, &n_params, err);
    fclose(f);
    if (rc) return -1;
    *cfg = c;
    if (version) *version = elem == 4 ? 3 : 5;
    return 0;
}

int andrea_load_bin(andrea_model *m, const char *path, ae_error *err) {
    FILE *f = andrea_fopen_regular(path, err);
    if (!f) return -1;
    int rc = -1;
    uint16_t *scratch = NULL;
    andrea_config cfg;
    size_t elem = 0, n_params = 0;
    if (read_header(f, path, &cfg, &elem, &n_params, err)) goto done;
    if (andrea_model_alloc(m, &cfg, err)) {
        andrea_prefix(err, "%s", path);
        goto done;
    }
    if (elem == 4) {
        if (read_exact(f, m->memory, n_params * sizeof(float), path, err)) goto done;
    } else {
        scratch = malloc(BF16_CHUNK * sizeof *scratch);
        if (!scratch) {
            andrea_fail(err, "%s: out of memory", path);
            goto done;
        }
        for (size_t done_n = 0; done_n < n_params;) {
            size_t n = n_params - done_n < BF16_CHUNK ? n_params - done_n : BF16_CHUNK;
            if (read_exact(f, scratch, n * sizeof *scratch, path, err)) goto done;
            for (size_t i = 0; i < n; i++) m->memory[done_n + i] = andrea_bf16_to_f32(scratch[i]);
            done_n += n;
        }
    }
    m->format = ANDREA_FMT_BIN;
    snprintf(m->stored_dtype, sizeof m->stored_dtype, "%s", elem == 4 ? "fp32" : "bf16");
    rc = 0;
done:
    free(scratch);
    fclose(f);
    return rc;
}
