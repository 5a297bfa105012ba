/* test_rules_strict.c — label rules files (--rules) are read like every other outside file
 * (common/strict_input.h): a second JSON value after the object, a key given twice and a FIFO are
 * refused with one line naming the file; a hostile key cannot split that line. */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../analyzer/rules.h"
#include "check.h"

static const char *write_file(const char *name, const char *content) {
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", check_tmpdir(), name);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(content, 1, strlen(content), f);
        fclose(f);
    }
    return path;
}

/* content must be refused with a one-line message naming the file and containing want. */
static void refused(const char *name, const char *content, const char *want) {
    andrea_rules r;
    andrea_rules_init(&r);
    ae_error err = {{0}};
    const char *p = write_file(name, content);
    CHECK_MSG(andrea_rules_load(&r, p, &err) == -1, "accepted: %s", content);
    CHECK_MSG(strstr(err.msg, p) && strstr(err.msg, want), "message '%s' lacks '%s'", err.msg, want);
    CHECK_MSG(!strchr(err.msg, '\n'), "two lines: %s", err.msg);
}

static void test_a_second_object_after_the_rules_is_refused(void) {
    refused("two.json", "{\"bos\": {\"min_score\": 0.5}} {\"bos\": {\"min_score\": 0.9}}", "after");
}

static void test_a_class_given_twice_is_refused(void) {
    refused("dup_class.json", "{\"bos\": {\"min_score\": 0.5}, \"bos\": {\"min_score\": 0.9}}", "twice");
}

static void test_a_field_given_twice_is_refused(void) {
    refused("dup_field.json", "{\"bos\": {\"min_score\": 0.5, \"min_score\": 0.9}}", "twice");
}

static void test_a_key_with_a_newline_keeps_the_message_on_one_line(void) {
    refused("nl.json", "{\"bos\\nx\": 3}", "must be an object");
    refused("nl2.json", "{\"bos\": {\"min\\nscore\": 3}}", "unknown field");
}

static void test_a_fifo_is_refused_without_waiting(void) {
    char path[4096];
    snprintf(path, sizeof path, "%s/rules.fifo", check_tmpdir());
    CHECK(mkfifo(path, 0600) == 0);
    andrea_rules r;
    andrea_rules_init(&r);
    ae_error err = {{0}};
    alarm(10); /* a hang fails the test instead of blocking ctest */
    CHECK(andrea_rules_load(&r, path, &err) == -1);
    alarm(0);
    CHECK_MSG(strstr(err.msg, "not a regular file") != NULL, "%s", err.msg);
}

static void test_trailing_whitespace_is_fine(void) {
    andrea_rules r;
    andrea_rules_init(&r);
    ae_error err = {{0}};
    const char *p = write_file("ok.json", "{\"induction\": {\"min_score\": 0.7}}\n\n  ");
    CHECK_MSG(andrea_rules_load(&r, p, &err) == 0, "%s", err.msg);
    CHECK(r.n == 1 && r.file[0].has_min_score && r.file[0].r.min_score == 0.7);
}

int main(void) {
    RUN(test_a_second_object_after_the_rules_is_refused);
    RUN(test_a_class_given_twice_is_refused);
    RUN(test_a_field_given_twice_is_refused);
    RUN(test_a_key_with_a_newline_keeps_the_message_on_one_line);
    RUN(test_a_fifo_is_refused_without_waiting);
    RUN(test_trailing_whitespace_is_fine);
    return check_summary("test_rules_strict");
}
