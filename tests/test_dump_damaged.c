/* test_dump_damaged.c — the dump reader refuses files that are not andrea dumps or are damaged,
 * with "FILE: problem", and never crashes. Each test spoils one copy of a good dump. */
#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/sha256.h"
#include "../dump/dump.h"
#include "../dump/dump_write.h"
#include "support/model_random.h"
#include "check.h"

static char good[4096];

static int make_good_dump(void) {
    ae_error err;
    andrea_model m;
    andrea_config c = {0};
    c.max_seq_len = 32;
    c.vocab_size = 257;
    c.n_layer = 2;
    c.n_head = 2;
    c.d_model = 16;
    andrea_tokenizer *tok = andrea_tokenizer_open(257, NULL, NULL, &err);
    probe_suite *s = NULL;
    int n = 0, rc = -1;
    probe_options po = {4, 16, 0};
    snprintf(good, sizeof good, "%s/good.h5", check_tmpdir());
    if (tok && andrea_model_init_random(&m, &c, 3, &err) == 0) {
        andrea_dump_options o;
        andrea_dump_options_init(&o);
        o.out_path = good;
        o.run.engine.device = ANDREA_DEVICE_CPU;
        if (andrea_probe_suites_builtin_list("prev_token,entity", tok, 257, 32, &po, &s, &n, &err) == 0)
            rc = andrea_dump_write(&m, s, n, &o, &err);
        andrea_model_free(&m);
    }
    if (rc) fprintf(stderr, "%s\n", err.msg);
    andrea_probe_suites_free(s, n);
    andrea_tokenizer_free(tok);
    return rc;
}

/* Copies the good dump to NAME (first `bytes` bytes; 0 = all) and returns the copy's path. */
static const char *copy_good(const char *name, long bytes) {
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", check_tmpdir(), name);
    FILE *in = fopen(good, "rb"), *out = fopen(path, "wb");
    char buf[65536];
    size_t got;
    long left = bytes ? bytes : -1;
    while ((got = fread(buf, 1, sizeof buf, in)) > 0) {
        if (left >= 0 && (long)got > left) got = (size_t)left;
        fwrite(buf, 1, got, out);
        if (left >= 0 && (left -= (long)got) == 0) break;
    }
    fclose(in);
    fclose(out);
    return path;
}

/* Attribute name of f (the file, or a group) replaced by the scalar string value (cset: its
 * character set). */
static void replace_string_attr(hid_t f, const char *name, const char *value, H5T_cset_t cset) {
    CHECK(H5Adelete(f, name) >= 0);
    hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR);
    H5Tset_size(t, strlen(value) + 1);
    H5Tset_cset(t, cset);
    hid_t a = H5Acreate2(f, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(a >= 0 && H5Awrite(a, t, value) >= 0);
    H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(t);
}

static long file_size(const char *p) {
    FILE *f = fopen(p, "rb");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

/* After an edit through HDF5 the checksum no longer matches; sealing again makes the file what a
 * hostile writer would produce: consistent bytes, inconsistent content. */
static void reseal(const char *path) {
    ae_error err;
    CHECK_MSG(andrea_dump_seal(path, NULL, &err) == 0, "%s", err.msg);
}

/* Opening must fail with path + problem in the message. */
static void expect_open_refused(const char *path, const char *problem) {
    ae_error err = {{0}};
    andrea_dump *d = andrea_dump_open(path, &err);
    CHECK_MSG(d == NULL, "%s opened", path);
    andrea_dump_close(d);
    CHECK_MSG(strstr(err.msg, path) == err.msg, "message '%s' does not start with the path", err.msg);
    CHECK_MSG(strstr(err.msg, problem) != NULL, "message '%s' lacks '%s'", err.msg, problem);
}

/* Opening works but reading the items back must fail with problem. */
static void expect_items_refused(const char *path, int suite, const char *problem) {
    ae_error err = {{0}};
    andrea_dump *d = andrea_dump_open(path, &err);
    CHECK_MSG(d != NULL, "%s", err.msg);
    if (!d) return;
    probe_suite s;
    CHECK(andrea_dump_read_items(d, suite, &s, &err) == -1);
    CHECK_MSG(strstr(err.msg, problem) != NULL, "message '%s' lacks '%s'", err.msg, problem);
    CHECK(s.items == NULL);
    andrea_dump_close(d);
}

/* Writes an int32 dataset element [i] or [i, j] of an existing dataset. */
static void poke_int(const char *path, const char *ds, hsize_t i, hsize_t j, int rank, int value) {
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, ds, H5P_DEFAULT);
    hid_t fs = H5Dget_space(d);
    hsize_t start[2] = {i, j}, one[2] = {1, 1};
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, one, NULL);
    hid_t ms = H5Screate_simple(rank, one, NULL);
    CHECK(H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, &value) >= 0);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
    H5Fclose(f);
    reseal(path);
}

static void replace_dataset(const char *path, const char *ds, hid_t type, int rank, const hsize_t *dims) {
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    CHECK(H5Ldelete(f, ds, H5P_DEFAULT) >= 0);
    hid_t sp = H5Screate_simple(rank, dims, NULL);
    hid_t d = H5Dcreate2(f, ds, type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(d >= 0);
    H5Dclose(d);
    H5Sclose(sp);
    H5Fclose(f);
    reseal(path);
}

static void test_good_dump_opens(void) {
    ae_error err;
    andrea_dump *d = andrea_dump_open(good, &err);
    CHECK_MSG(d != NULL, "%s", err.msg);
    if (d) CHECK(andrea_dump_n_suites(d) == 2 && andrea_dump_suite(d, 1)->n_seq == 4);
    andrea_dump_close(d);
}

static void test_missing_file_is_refused(void) { expect_open_refused("/nonexistent/dump.h5", "no such file"); }

static void test_text_file_is_refused_as_not_hdf5(void) {
    char path[4096];
    snprintf(path, sizeof path, "%s/text.h5", check_tmpdir());
    FILE *f = fopen(path, "wb");
    fputs("this is not HDF5\n", f);
    fclose(f);
    expect_open_refused(path, "not an HDF5 file");
}

static void test_truncated_dump_is_refused(void) {
    const char *p = copy_good("truncated.h5", file_size(good) / 2);
    expect_open_refused(p, "damaged file: content checksum does not match");
}

static void test_flipped_byte_is_refused_before_hdf5_reads_it(void) {
    const char *p = copy_good("flipped.h5", 0);
    FILE *f = fopen(p, "r+b");
    fseek(f, 700, SEEK_SET); /* HDF5 metadata, just after the user block */
    int c = fgetc(f);
    fseek(f, 700, SEEK_SET);
    fputc(c ^ 0x10, f);
    fclose(f);
    expect_open_refused(p, "damaged file: content checksum does not match");
}

/* Rewrites the seal's second line (the user block's first 512 bytes, NUL padded). */
static void write_seal_line(const char *path, const char *line) {
    char block[ANDREA_DUMP_USERBLOCK] = {0};
    snprintf(block, sizeof block, "%s%s\n", ANDREA_DUMP_MAGIC, line);
    FILE *f = fopen(path, "r+b");
    CHECK(f && fwrite(block, 1, sizeof block, f) == sizeof block);
    if (f) fclose(f);
}

static void test_isolated_check_works_after_openmp_ran_in_the_parent(void) {
    /* regression: the child checksums the seal on OpenMP threads; after fork() libgomp's pool
     * of the parent is gone, and without care the child hung until the 300 s timeout */
    int n = 0;
#pragma omp parallel reduction(+ : n)
    n += 1;
    CHECK(n >= 1);
    ae_error err = {{0}};
    CHECK_MSG(andrea_dump_check_isolated(good, &err) == 0, "%s", err.msg);
}

static void test_seal_with_an_absurd_block_size_is_refused(void) {
    const char *sizes[] = {"0", "4095", "1073741825", "99999999999999999999999", "-64", "x"};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        const char *p = copy_good("badblock.h5", 0);
        char line[200];
        snprintf(line, sizeof line, "sha256-blocks %s %064d", sizes[i], 0);
        write_seal_line(p, line);
        expect_open_refused(p, "damaged andrea header (bad sha256-blocks line)");
    }
}

static void test_seal_of_the_first_form_is_still_accepted(void) {
    /* dumps sealed before the block form: "sha256 <plain sha256 of bytes 512..EOF>" */
    const char *p = copy_good("oldseal.h5", 0);
    FILE *f = fopen(p, "rb");
    CHECK(f != NULL);
    if (!f) return;
    char hex[65], line[80];
    ae_error err = {{0}};
    CHECK_MSG(andrea_sha256_stream(f, ANDREA_DUMP_USERBLOCK, hex, p, &err) == 0, "%s", err.msg);
    fclose(f);
    snprintf(line, sizeof line, "sha256 %s", hex);
    write_seal_line(p, line);
    andrea_dump *d = andrea_dump_open(p, &err);
    CHECK_MSG(d != NULL, "%s", err.msg);
    andrea_dump_close(d);
    hex[0] = hex[0] == 'a' ? 'b' : 'a'; /* and a wrong one of that form is refused */
    snprintf(line, sizeof line, "sha256 %s", hex);
    write_seal_line(p, line);
    expect_open_refused(p, "content checksum does not match");
}

static void test_edit_without_resealing_is_refused_as_damaged(void) {
    const char *p = copy_good("edited.h5", 0);
    hid_t f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
    CHECK(H5Adelete(f, "engine") >= 0);
    H5Fclose(f);
    expect_open_refused(p, "modified after andrea wrote it");
}

static void test_hdf5_file_that_is_sealed_but_empty_is_refused(void) {
    char path[4096];
    snprintf(path, sizeof path, "%s/plain-sealed.h5", check_tmpdir());
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    H5Pset_userblock(fcpl, ANDREA_DUMP_USERBLOCK);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
    H5Fclose(f);
    H5Pclose(fcpl);
    reseal(path);
    expect_open_refused(path, "not an andrea dump (attribute 'andrea_version' missing)");
}

static void test_hdf5_file_that_is_not_a_dump_is_refused(void) {
    char path[4096];
    snprintf(path, sizeof path, "%s/plain.h5", check_tmpdir());
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    H5Fclose(f);
    expect_open_refused(path, "not an andrea dump (HDF5, but without the andrea header");
}

static void test_missing_root_attribute_is_refused(void) {
    const char *p = copy_good("noattr.h5", 0);
    hid_t f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
    CHECK(H5Adelete(f, "maps_dtype") >= 0);
    H5Fclose(f);
    reseal(p);
    expect_open_refused(p, "attribute 'maps_dtype' missing");
}

static void test_impossible_config_is_refused(void) {
    const char *p = copy_good("badcfg.h5", 0);
    hid_t f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t a = H5Aopen(f, "n_head", H5P_DEFAULT);
    int three = 3;
    CHECK(H5Awrite(a, H5T_NATIVE_INT, &three) >= 0);
    H5Aclose(a);
    H5Fclose(f);
    reseal(p);
    expect_open_refused(p, "root config is not a valid model shape");
}

/* The root `config` JSON (what an h5py reader sees first) saying another shape than the int
 * attributes andrea reads: refused, naming the key. */
static void test_config_json_that_disagrees_is_refused(void) {
    const char *p = copy_good("cfgjson.h5", 0);
    hid_t f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
    replace_string_attr(f, "config", "{\"n_layer\":3}", H5T_CSET_ASCII);
    H5Fclose(f);
    reseal(p);
    expect_open_refused(p, "root attribute 'config' says n_layer is not");
}

static void test_missing_dataset_is_refused(void) {
    const char *p = copy_good("nodset.h5", 0);
    hid_t f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
    CHECK(H5Ldelete(f, "/entity/attention", H5P_DEFAULT) >= 0);
    H5Fclose(f);
    reseal(p);
    expect_open_refused(p, "/entity/attention is missing");
}

static void test_missing_suite_group_is_refused(void) {
    const char *p = copy_good("nogroup.h5", 0);
    hid_t f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
    CHECK(H5Ldelete(f, "/prev_token", H5P_DEFAULT) >= 0);
    H5Fclose(f);
    reseal(p);
    expect_open_refused(p, "suite group /prev_token is missing");
}

/* The good dump with its suite prev_token renamed to name (group and root list), resealed. */
static const char *with_suite_renamed(const char *file, const char *name) {
    const char *p = copy_good(file, 0);
    char list[256];
    snprintf(list, sizeof list, "%s,entity", name);
    hid_t f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
    CHECK(H5Lmove(f, "prev_token", f, name, H5P_DEFAULT, H5P_DEFAULT) >= 0);
    replace_string_attr(f, "suites", list, H5T_CSET_UTF8);
    H5Fclose(f);
    reseal(p);
    return p;
}

/* A suite name no probe file may give ("a b#%41", "<img ...>", "v1.2"): it would become a class, a file
 * slug and a page anchor (the series page's #class-... link found no section); a dump that
 * carries one is refused, and a name andrea writes still opens. */
static void test_suite_name_a_probe_file_could_not_give_is_refused(void) {
    static const char *const bad[] = {"a b#%41", "<img src=x onerror=alert(1)>", "v1.2", "tab\there"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_open_refused(with_suite_renamed("badname.h5", bad[i]), "is not 1-63 letters, digits, '_' or '-'");
    ae_error err = {{0}};
    andrea_dump *d = andrea_dump_open(with_suite_renamed("goodname.h5", "My-suite_2"), &err);
    CHECK_MSG(d != NULL, "%s", err.msg);
    andrea_dump_close(d);
}

static void test_dataset_of_the_wrong_shape_is_refused(void) {
    const char *p = copy_good("shape.h5", 0);
    hsize_t dims[4] = {4, 2, 2, 17};
    replace_dataset(p, "/prev_token/head_dla", H5T_IEEE_F32LE, 4, dims);
    expect_open_refused(p, "/prev_token/head_dla has shape [4, 2, 2, 17], expected [4, 2, 2, 16]");
}

static void test_dataset_of_the_wrong_type_is_refused(void) {
    const char *p = copy_good("dtype.h5", 0);
    hsize_t dims[2] = {4, 16};
    replace_dataset(p, "/prev_token/tokens", H5T_IEEE_F64LE, 2, dims);
    expect_open_refused(p, "/prev_token/tokens has type float of 8 bytes, expected int32");
}

/* A chunked dataset none of whose chunks was written reads as zeros of any size: a 166 KB file
 * whose tokens claimed 40000 x 32000 took 10 GB to classify. Its values must be in the file. */
static void test_chunked_dataset_without_its_chunks_is_refused(void) {
    const char *p = copy_good("nochunks.h5", 0);
    hid_t f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
    CHECK(H5Ldelete(f, "/prev_token/tokens", H5P_DEFAULT) >= 0);
    hsize_t dims[2] = {4, 16}, chunk[2] = {1, 16};
    hid_t sp = H5Screate_simple(2, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    CHECK(H5Pset_chunk(dcpl, 2, chunk) >= 0);
    hid_t d = H5Dcreate2(f, "/prev_token/tokens", H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    CHECK(d >= 0);
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(sp);
    H5Fclose(f);
    reseal(p);
    expect_open_refused(p, "/prev_token/tokens stores 0 bytes for 64 elements of 4 bytes");
}

/* A suite's n_seq and T attributes that disagree with its datasets (h5py readers see those first). */
static void test_suite_shape_attributes_that_lie_are_refused(void) {
    static const char *const names[2] = {"n_seq", "T"};
    static const char *const want[2] = {"/prev_token: attribute n_seq = 5, but tokens is [4, 16]",
                                        "/prev_token: attribute T = 5, but tokens is [4, 16]"};
    for (int k = 0; k < 2; k++) {
        const char *p = copy_good(k ? "attr_t.h5" : "attr_n.h5", 0);
        hid_t f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
        /* through the group: HDF5 1.10 cannot write an attribute opened by H5Aopen_by_name */
        hid_t g = H5Gopen2(f, "/prev_token", H5P_DEFAULT), a = H5Aopen(g, names[k], H5P_DEFAULT);
        int five = 5;
        CHECK(a >= 0 && H5Awrite(a, H5T_NATIVE_INT, &five) >= 0);
        H5Aclose(a);
        H5Gclose(g);
        H5Fclose(f);
        reseal(p);
        expect_open_refused(p, want[k]);
    }
}

/* A seed of another type was read by a bare H5Aread: "HDF5 r failed: no detail". */
static void test_suite_seed_that_is_not_an_integer_is_refused_by_name(void) {
    const char *p = copy_good("seed_string.h5", 0);
    hid_t f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT), g = H5Gopen2(f, "/prev_token", H5P_DEFAULT);
    replace_string_attr(g, "seed", "42", H5T_CSET_ASCII);
    H5Gclose(g);
    H5Fclose(f);
    reseal(p);
    expect_open_refused(p, "/prev_token: attribute 'seed' is not a single integer");
    p = copy_good("seed_negative.h5", 0);
    f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
    g = H5Gopen2(f, "/prev_token", H5P_DEFAULT);
    CHECK(H5Adelete(g, "seed") >= 0);
    hid_t sp = H5Screate(H5S_SCALAR), a = H5Acreate2(g, "seed", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    long long minus = -3;
    CHECK(a >= 0 && H5Awrite(a, H5T_NATIVE_LLONG, &minus) >= 0);
    H5Aclose(a);
    H5Sclose(sp);
    H5Gclose(g);
    H5Fclose(f);
    reseal(p);
    expect_open_refused(p, "/prev_token: attribute 'seed' = -3 is negative");
}

/* strtok_r passed over the empty name: "prev_token," opened as the one suite */
static void test_suites_attribute_with_an_empty_name_is_refused(void) {
    static const char *const lists[3] = {"prev_token,", ",prev_token", "prev_token,,induction"};
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "suites_comma%d.h5", i);
        const char *p = copy_good(name, 0);
        hid_t f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
        replace_string_attr(f, "suites", lists[i], H5T_CSET_ASCII);
        H5Fclose(f);
        reseal(p);
        expect_open_refused(p, "holds an empty suite name");
    }
}

static void test_length_longer_than_the_padded_length_is_refused(void) {
    const char *p = copy_good("length.h5", 0);
    poke_int(p, "/prev_token/lengths", 2, 0, 1, 99);
    expect_items_refused(p, 0, "lengths[2] = 99 is outside 1..16");
}

static void test_token_outside_the_vocabulary_is_refused(void) {
    const char *p = copy_good("token.h5", 0);
    poke_int(p, "/prev_token/tokens", 1, 3, 2, 4000);
    expect_items_refused(p, 0, "/prev_token/tokens[1, 3] = 4000 is outside the vocabulary 0..256");
}

static void test_target_after_its_query_is_refused(void) {
    const char *p = copy_good("target.h5", 0);
    poke_int(p, "/prev_token/targets", 0, 2, 2, 9); /* row 0 is (0, 1, 0): key 9 > query 1 */
    expect_items_refused(p, 0, "/prev_token/targets row 0: (query 1, key 9)");
}

static void test_out_of_range_map_request_is_refused(void) {
    ae_error err;
    andrea_dump *d = andrea_dump_open(good, &err);
    if (!d) return;
    float map[16 * 16];
    CHECK(andrea_dump_read_map(d, 0, 4, 0, 0, map, &err) == -1 && strstr(err.msg, "has no sequence 4"));
    CHECK(andrea_dump_read_map(d, 0, 0, 2, 0, map, &err) == -1 && strstr(err.msg, "no head 2.0"));
    CHECK(andrea_dump_read_map(d, 5, 0, 0, 0, map, &err) == -1 && strstr(err.msg, "no suite 5"));
    andrea_dump_close(d);
}

/* A copy of the good dump with one element of dataset ds (at start, rank <= 5) set to value
 * (converted to the file's type by HDF5), resealed. */
static const char *dump_with_value(const char *name, const char *ds, int rank, const hsize_t *start, float value) {
    const char *p = copy_good(name, 0);
    hid_t f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, ds, H5P_DEFAULT);
    hid_t fs = H5Dget_space(d);
    const hsize_t one[5] = {1, 1, 1, 1, 1};
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, one, NULL);
    hid_t ms = H5Screate_simple(rank, one, NULL);
    CHECK(H5Dwrite(d, H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, &value) >= 0);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
    H5Fclose(f);
    reseal(p);
    return p;
}

/* Sets /prev_token/attention[0, 0, 0, q, k]. */
static const char *map_with(const char *name, hsize_t q, hsize_t k, float value) {
    const hsize_t start[5] = {0, 0, 0, q, k};
    return dump_with_value(name, "/prev_token/attention", 5, start, value);
}

/* The map of (sequence 0, head 0.0) must be refused with problem. */
static void expect_map_refused(const char *path, const char *problem) {
    ae_error err = {{0}};
    andrea_dump *d = andrea_dump_open(path, &err);
    CHECK_MSG(d != NULL, "%s", err.msg);
    if (!d) return;
    float map[32 * 32];
    CHECK(andrea_dump_suite(d, 0)->T <= 32);
    CHECK(andrea_dump_read_map(d, 0, 0, 0, 0, map, &err) == -1);
    CHECK_MSG(strstr(err.msg, problem) != NULL, "message '%s' lacks '%s'", err.msg, problem);
    andrea_dump_close(d);
}

static void test_map_value_that_is_no_probability_is_refused(void) {
    expect_map_refused(map_with("map-big.h5", 3, 1, 2.5f), "row 3 holds 2.5 at key 1");
    expect_map_refused(map_with("map-nan.h5", 3, 1, NAN), "row 3 holds nan at key 1");
}

static void test_map_weight_on_a_future_key_is_refused(void) {
    expect_map_refused(map_with("map-future.h5", 2, 5, 0.25f), "row 2 holds 0.25 at key 5");
}

static void test_map_row_that_does_not_sum_to_one_is_refused(void) {
    /* query 0 can only attend to key 0: its weight there is 1 */
    expect_map_refused(map_with("map-sum.h5", 0, 0, 0.5f), "row 0 sums to 0.5");
}


static void test_map_row_of_zeros_within_the_length_is_refused(void) {
    /* every head's map is written (--heads selects head_out only): zeros are a padded query's */
    expect_map_refused(map_with("map-zero.h5", 0, 0, 0.0f), "/prev_token/attention[0, 0, 0] row 0 sums to 0, not 1 (query 0 < length");
}

static void test_map_row_of_a_padded_query_may_be_zeros(void) {
    /* sequence 0 made 8 tokens long: its rows 8.. are padded queries, and row 10 may be zeros */
    const char *p = copy_good("map-padded.h5", 0);
    hid_t f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "/prev_token/attention", H5P_DEFAULT);
    hid_t fs = H5Dget_space(d);
    hsize_t start[5] = {0, 0, 0, 10, 0}, row[5] = {1, 1, 1, 1, 16};
    const float zeros[16] = {0};
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, row, NULL);
    hid_t ms = H5Screate_simple(5, row, NULL);
    CHECK(H5Dwrite(d, H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, zeros) >= 0);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
    H5Fclose(f);
    poke_int(p, "/prev_token/lengths", 0, 0, 1, 8); /* reseals */
    ae_error err = {{0}};
    andrea_dump *dd = andrea_dump_open(p, &err);
    CHECK_MSG(dd != NULL, "%s", err.msg);
    if (!dd) return;
    float map[16 * 16];
    CHECK(andrea_dump_suite(dd, 0)->T == 16);
    CHECK_MSG(andrea_dump_read_map(dd, 0, 0, 0, 0, map, &err) == 0, "%s", err.msg);
    CHECK(map[10 * 16 + 3] == 0.0f);
    andrea_dump_close(dd);
}

/* Sets /prev_token/<ds>[0, 1, 1, t] (float32). */
static const char *value_with(const char *name, const char *ds, hsize_t t, float value) {
    const hsize_t start[4] = {0, 1, 1, t};
    return dump_with_value(name, ds, 4, start, value);
}

/* Reading `which` of (prev_token, sequence 0): refused with problem, or (problem NULL) accepted. */
static void expect_values(const char *path, const char *which, const char *problem) {
    ae_error err = {{0}};
    andrea_dump *d = andrea_dump_open(path, &err);
    CHECK_MSG(d != NULL, "%s", err.msg);
    if (!d) return;
    float v[2 * 2 * 16];
    CHECK(andrea_dump_suite(d, 0)->T == 16);
    int rc = andrea_dump_read_head_values(d, 0, 0, which, v, &err);
    if (!problem) CHECK_MSG(rc == 0, "%s", err.msg);
    else CHECK_MSG(rc == -1 && strstr(err.msg, problem), "rc %d, message '%s' lacks '%s'", rc, err.msg, problem);
    andrea_dump_close(d);
}

static void test_negative_or_nan_norm_is_refused(void) {
    expect_values(value_with("norm-neg.h5", "/prev_token/head_out_norm", 3, -5.0f), "head_out_norm",
                  "/prev_token/head_out_norm[0] holds -5 at head 1.1, position 3, not a norm");
    expect_values(value_with("norm-nan.h5", "/prev_token/head_out_norm", 3, NAN), "head_out_norm",
                  "holds nan at head 1.1, position 3, not a norm");
}

static void test_non_finite_dla_is_refused_where_it_is_defined(void) {
    expect_values(value_with("dla-nan.h5", "/prev_token/head_dla", 3, NAN), "head_dla",
                  "/prev_token/head_dla[0] holds nan at head 1.1, position 3, not a finite logit attribution");
    expect_values(value_with("dla-inf.h5", "/prev_token/head_dla", 0, INFINITY), "head_dla", "holds inf at head 1.1, position 0");
    /* the last position has no next token: NaN there is the format's */
    expect_values(good, "head_dla", NULL);
}

/* ---- files that would make HDF5 read other files (the seal covers this file only) ---- */

/* Replaces /prev_token/head_dla by an external link to target (any object there), reseals. */
static const char *with_external_link(const char *name, const char *target) {
    const char *p = copy_good(name, 0);
    hid_t f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
    CHECK(H5Ldelete(f, "/prev_token/head_dla", H5P_DEFAULT) >= 0);
    CHECK(H5Lcreate_external(target, "/prev_token/head_dla", f, "/prev_token/head_dla", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    H5Fclose(f);
    reseal(p);
    return p;
}

static void test_external_link_to_a_fifo_is_refused_without_opening_it(void) {
    /* HDF5 would open() the FIFO and block forever: the alarm turns a hang into a failure */
    char fifo[4096];
    snprintf(fifo, sizeof fifo, "%s/elink.fifo", check_tmpdir());
    unlink(fifo);
    CHECK(mkfifo(fifo, 0600) == 0);
    const char *p = with_external_link("elink-fifo.h5", fifo);
    alarm(30);
    expect_open_refused(p, "/prev_token/head_dla is an external link");
    alarm(0);
    unlink(fifo);
}

static void test_external_link_to_another_dump_is_refused(void) {
    /* the other file is a valid dump with the very dataset: HDF5 would read it, unsealed */
    expect_open_refused(with_external_link("elink-dump.h5", good), "/prev_token/head_dla is an external link");
}

static void test_soft_link_is_refused(void) {
    const char *p = copy_good("softlink.h5", 0);
    hid_t f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
    CHECK(H5Lcreate_soft("/entity/tokens", f, "/prev_token/alias", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    H5Fclose(f);
    reseal(p);
    expect_open_refused(p, "/prev_token/alias is a soft link");
}

/* Creates dataset ds (int32 [4], replacing it when it exists) with the creation properties dcpl. */
static const char *with_dataset(const char *name, const char *ds, hid_t dcpl) {
    const char *p = copy_good(name, 0);
    hid_t f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
    if (H5Lexists(f, ds, H5P_DEFAULT) > 0) CHECK(H5Ldelete(f, ds, H5P_DEFAULT) >= 0);
    hsize_t dims[1] = {4};
    hid_t sp = H5Screate_simple(1, dims, NULL);
    hid_t d = H5Dcreate2(f, ds, H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    CHECK(d >= 0);
    H5Dclose(d);
    H5Sclose(sp);
    H5Fclose(f);
    H5Pclose(dcpl);
    reseal(p);
    return p;
}

/* Creation properties storing 4 int32 in an outside file (which holds 16 plausible bytes). */
static hid_t external_storage(void) {
    static char outside[4096];
    snprintf(outside, sizeof outside, "%s/outside.bin", check_tmpdir());
    FILE *o = fopen(outside, "wb");
    const int lengths[4] = {16, 16, 16, 16};
    CHECK(o && fwrite(lengths, sizeof lengths, 1, o) == 1);
    if (o) fclose(o);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    CHECK(H5Pset_external(dcpl, outside, 0, sizeof lengths) >= 0);
    return dcpl;
}

static void test_dataset_with_external_storage_is_refused(void) {
    expect_open_refused(with_dataset("extstore.h5", "/prev_token/lengths", external_storage()),
                        "/prev_token/lengths stores its values in external files");
}

static void test_dataset_with_external_storage_is_refused_even_if_never_read(void) {
    expect_open_refused(with_dataset("extstore-extra.h5", "/entity/extra", external_storage()),
                        "/entity/extra stores its values in external files");
}

static void test_virtual_dataset_in_a_serial_dump_is_refused(void) {
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hsize_t dims[1] = {4};
    hid_t sp = H5Screate_simple(1, dims, NULL);
    CHECK(H5Pset_virtual(dcpl, sp, good, "/prev_token/lengths", sp) >= 0);
    H5Sclose(sp);
    expect_open_refused(with_dataset("virtual.h5", "/prev_token/lengths", dcpl), "/prev_token/lengths is a virtual dataset");
}

static void test_dataset_with_a_filter_other_than_deflate_is_refused(void) {
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hsize_t chunk[1] = {4};
    CHECK(H5Pset_chunk(dcpl, 1, chunk) >= 0 && H5Pset_shuffle(dcpl) >= 0);
    expect_open_refused(with_dataset("shuffle.h5", "/prev_token/lengths", dcpl),
                        "/prev_token/lengths has a filter other than deflate");
}

int main(void) {
    if (make_good_dump()) return check_summary("test_dump_damaged (no good dump)") | 1;
    RUN(test_good_dump_opens);
    RUN(test_missing_file_is_refused);
    RUN(test_text_file_is_refused_as_not_hdf5);
    RUN(test_truncated_dump_is_refused);
    RUN(test_flipped_byte_is_refused_before_hdf5_reads_it);
    RUN(test_edit_without_resealing_is_refused_as_damaged);
    RUN(test_seal_with_an_absurd_block_size_is_refused);
    RUN(test_isolated_check_works_after_openmp_ran_in_the_parent);
    RUN(test_seal_of_the_first_form_is_still_accepted);
    RUN(test_hdf5_file_that_is_not_a_dump_is_refused);
    RUN(test_hdf5_file_that_is_sealed_but_empty_is_refused);
    RUN(test_missing_root_attribute_is_refused);
    RUN(test_impossible_config_is_refused);
    RUN(test_config_json_that_disagrees_is_refused);
    RUN(test_missing_dataset_is_refused);
    RUN(test_missing_suite_group_is_refused);
    RUN(test_suite_name_a_probe_file_could_not_give_is_refused);
    RUN(test_dataset_of_the_wrong_shape_is_refused);
    RUN(test_chunked_dataset_without_its_chunks_is_refused);
    RUN(test_suite_shape_attributes_that_lie_are_refused);
    RUN(test_dataset_of_the_wrong_type_is_refused);
    RUN(test_suite_seed_that_is_not_an_integer_is_refused_by_name);
    RUN(test_suites_attribute_with_an_empty_name_is_refused);
    RUN(test_length_longer_than_the_padded_length_is_refused);
    RUN(test_token_outside_the_vocabulary_is_refused);
    RUN(test_target_after_its_query_is_refused);
    RUN(test_out_of_range_map_request_is_refused);
    RUN(test_map_value_that_is_no_probability_is_refused);
    RUN(test_map_weight_on_a_future_key_is_refused);
    RUN(test_map_row_that_does_not_sum_to_one_is_refused);
    RUN(test_map_row_of_zeros_within_the_length_is_refused);
    RUN(test_map_row_of_a_padded_query_may_be_zeros);
    RUN(test_negative_or_nan_norm_is_refused);
    RUN(test_non_finite_dla_is_refused_where_it_is_defined);
    RUN(test_external_link_to_a_fifo_is_refused_without_opening_it);
    RUN(test_external_link_to_another_dump_is_refused);
    RUN(test_soft_link_is_refused);
    RUN(test_dataset_with_external_storage_is_refused);
    RUN(test_dataset_with_external_storage_is_refused_even_if_never_read);
    RUN(test_virtual_dataset_in_a_serial_dump_is_refused);
    RUN(test_dataset_with_a_filter_other_than_deflate_is_refused);
    return check_summary("test_dump_damaged");
}
