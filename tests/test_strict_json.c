/* test_strict_json.c — the strict JSON parse every outside file goes through
 * (common/strict_input.h) counts the values before cJSON builds its tree (~100 bytes a value,
 * ~40 times the text for "[0,0,...]"): a text of more than ANDREA_JSON_MAX_VALUES values is
 * refused with one reason, before any tree exists; commas, brackets and escaped quotes inside
 * strings are not values, so one long string is read as the one value it is. Text Python's json
 * and serde_json (safetensors) refuse is refused too, naming the byte: a raw control character,
 * bytes that are not UTF-8, a byte order mark at the start. */
#include <stdlib.h>
#include <string.h>

#include "../common/strict_input.h"
#include "check.h"

/* "[0,0,...,0]" with n zeros; NULL when out of memory. */
static char *zeros(size_t n, size_t *len) {
    char *s = malloc(2 * n + 2);
    if (!s) return NULL;
    size_t k = 0;
    s[k++] = '[';
    for (size_t i = 0; i < n; i++) {
        s[k++] = '0';
        s[k++] = i + 1 < n ? ',' : ']';
    }
    s[k] = 0;
    *len = k;
    return s;
}

static void test_too_many_values_are_refused_before_parsing(void) {
    size_t len;
    char *s = zeros((size_t)ANDREA_JSON_MAX_VALUES + 1, &len);
    CHECK(s != NULL);
    if (!s) return;
    char why[200] = "";
    size_t at = 0;
    cJSON *j = andrea_json_parse_strict(s, len, 1, &at, why, sizeof why);
    CHECK(j == NULL);
    CHECK_MSG(strstr(why, "JSON values, more than the 4000000 andrea reads") != NULL, "%s", why);
    CHECK(at == (size_t)-1); /* not a syntax error: callers keep their own wording for those */
    cJSON_Delete(j);
    free(s);
    s = zeros(1000, &len); /* an ordinary array is read */
    j = s ? andrea_json_parse_strict(s, len, 1, NULL, why, sizeof why) : NULL;
    CHECK(j && cJSON_GetArraySize(j) == 1000);
    cJSON_Delete(j);
    free(s);
}

static void test_commas_and_brackets_inside_strings_are_not_values(void) {
    const size_t n = (size_t)ANDREA_JSON_MAX_VALUES + 10;
    char *s = malloc(n + 16);
    CHECK(s != NULL);
    if (!s) return;
    size_t k = 0;
    s[k++] = '[';
    s[k++] = '"';
    memcpy(s + k, "\\\",[{", 5); /* an escaped quote does not end the string */
    k += 5;
    for (size_t i = 0; i < n; i++) s[k++] = i % 3 == 0 ? ',' : i % 3 == 1 ? '[' : '{';
    s[k++] = '"';
    s[k++] = ']';
    s[k] = 0;
    char why[200] = "";
    cJSON *j = andrea_json_parse_strict(s, k, 1, NULL, why, sizeof why);
    CHECK_MSG(j && cJSON_GetArraySize(j) == 1 && cJSON_IsString(cJSON_GetArrayItem(j, 0)), "%s", why);
    cJSON_Delete(j);
    free(s);
}

/* Numbers as JSON writes them (what Python's json reads back); cJSON alone takes the others. */
static void test_numbers_json_does_not_allow_are_refused(void) {
    static const char *const bad[] = {"{\"n\": 02}", "{\"n\": 2.}", "{\"n\": .5}", "[1.2.3]", "[-]", "[1e]", "[01.5]", "[-01]"};
    static const char *const good[] = {"{\"n\": 0}", "[-0.5, 1e3, 2E-7, 10, 0.25, -12.5e+2]", "{\"s\": \"02 .5 2.\"}"};
    char why[200];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        why[0] = 0;
        cJSON *j = andrea_json_parse_strict(bad[i], strlen(bad[i]), 1, NULL, why, sizeof why);
        CHECK_MSG(j == NULL && strstr(why, "not valid JSON"), "%s accepted (%s)", bad[i], why);
        cJSON_Delete(j);
    }
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        cJSON *j = andrea_json_parse_strict(good[i], strlen(good[i]), 1, NULL, why, sizeof why);
        CHECK_MSG(j != NULL, "%s refused: %s", good[i], why);
        cJSON_Delete(j);
    }
}

/* Deeper than cJSON parses: its own failure is only "does not parse", so the reason is named;
 * exactly the limit parses, and brackets inside strings count for nothing. */
static void test_nesting_past_the_limit_is_named(void) {
    const int limit = CJSON_NESTING_LIMIT;
    char *s = malloc(2 * (size_t)limit + 8);
    CHECK(s != NULL);
    if (!s) return;
    for (int depth = limit; depth <= limit + 1; depth++) {
        memset(s, '[', (size_t)depth);
        memset(s + depth, ']', (size_t)depth);
        char why[200] = "";
        cJSON *j = andrea_json_parse_strict(s, 2 * (size_t)depth, 1, NULL, why, sizeof why);
        if (depth == limit)
            CHECK_MSG(j != NULL, "%d levels refused: %s", depth, why);
        else
            CHECK_MSG(j == NULL && strstr(why, "nested deeper than 1000 levels (at byte 1000)"), "%d levels: %s", depth, why);
        cJSON_Delete(j);
    }
    free(s);
    char str[3000];
    str[0] = '"';
    memset(str + 1, '[', 2000);
    memcpy(str + 2001, "\"", 2);
    char why[200] = "";
    cJSON *j = andrea_json_parse_strict(str, strlen(str), 1, NULL, why, sizeof why);
    CHECK_MSG(j != NULL && cJSON_IsString(j), "a string of 2000 '[' refused: %s", why);
    cJSON_Delete(j);
}

/* One refusal: text (n bytes) is refused and why holds want. */
static void expect_refused(const char *text, size_t n, const char *want) {
    char why[200] = "";
    cJSON *j = andrea_json_parse_strict(text, n, 1, NULL, why, sizeof why);
    CHECK_MSG(j == NULL && strstr(why, want), "want \"%s\", got \"%s\"", want, j ? "(accepted)" : why);
    CHECK(strchr(why, '\n') == NULL);
    cJSON_Delete(j);
}

/* The same for a string literal, NUL bytes and all. */
#define EXPECT_REFUSED(lit, want) expect_refused(lit, sizeof lit - 1, want)

static void expect_read(const char *text) {
    char why[200] = "";
    cJSON *j = andrea_json_parse_strict(text, strlen(text), 1, NULL, why, sizeof why);
    CHECK_MSG(j != NULL, "refused: %s", why);
    cJSON_Delete(j);
}

/* cJSON copies a raw control byte into the string and skips any byte <= 0x20 between values as
 * whitespace; JSON (and Python's json) allows them only escaped, and only space, tab, LF, CR
 * between values. */
static void test_raw_control_characters_are_refused_naming_the_byte(void) {
    EXPECT_REFUSED("{\"a\": \"x\001y\"}", "raw control character (byte 0x01) at byte 8 inside a string");
    EXPECT_REFUSED("[\"a\tb\"]", "raw control character (byte 0x09) at byte 3 inside a string");
    EXPECT_REFUSED("{\"k\nk\": 1}", "raw control character (byte 0x0A) at byte 3 inside a string");
    EXPECT_REFUSED("[1,\0132]", "control character (byte 0x0B) at byte 3 outside any string");
    EXPECT_REFUSED("\014{}", "control character (byte 0x0C) at byte 0 outside any string");
    expect_read("[\"a\\tb\\n\\u0001\", \"\\\\\"]");
    expect_read(" \t\r\n{\"a\":\r\n\t[1, 2]} \n");
}

/* cJSON copies any bytes into its strings; Python decodes the text as UTF-8 first and serde_json
 * reads a &str, so both refuse bytes that are not UTF-8 (RFC 3629). */
static void test_invalid_utf8_is_refused_naming_the_byte(void) {
    static const struct { const char *text, *want; } bad[] = {
        {"[\"a\xC0\xAF\"]", "not valid UTF-8 at byte 3 (0xC0: an overlong encoding)"},
        {"[\"\xE0\x80\xAF\"]", "not valid UTF-8 at byte 2 (0xE0: an overlong encoding)"},
        {"[\"\xF0\x80\x80\xAF\"]", "not valid UTF-8 at byte 2 (0xF0: an overlong encoding)"},
        {"[\"\xED\xA0\x80\"]", "not valid UTF-8 at byte 2 (0xED: a surrogate"},
        {"[\"\xF4\x90\x80\x80\"]", "not valid UTF-8 at byte 2 (0xF4: a code point above U+10FFFF)"},
        {"[\"\xE2\x82\"]", "not valid UTF-8 at byte 2 (0xE2: a sequence cut short)"},
        {"[\"x\"]\xE2\x82", "not valid UTF-8 at byte 5 (0xE2: a sequence cut short)"},
        {"[\"\x80\"]", "not valid UTF-8 at byte 2 (0x80: a continuation byte"},
        {"{\"\xF5\x80\x80\x80\": 1}", "not valid UTF-8 at byte 2 (0xF5: a byte UTF-8 never uses)"},
        {"[\"\xFF\"]", "not valid UTF-8 at byte 2 (0xFF: a byte UTF-8 never uses)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) expect_refused(bad[i].text, strlen(bad[i].text), bad[i].want);
    /* é, €, U+1F600, U+10FFFF, U+D7FF and U+E000 (either side of the surrogates), U+FEFF inside */
    expect_read("{\"\xC3\xA9\": \"\xE2\x82\xAC \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF \xED\x9F\xBF \xEE\x80\x80 \xEF\xBB\xBF\"}");
}

/* cJSON skips a UTF-8 byte order mark at the start; Python's json.loads refuses a text that
 * starts with U+FEFF ("Unexpected UTF-8 BOM"), and so does serde_json. */
static void test_a_byte_order_mark_at_the_start_is_refused(void) {
    EXPECT_REFUSED("\xEF\xBB\xBF{\"a\": 1}", "starts with a UTF-8 byte order mark");
    EXPECT_REFUSED("\xEF\xBB\xBF", "starts with a UTF-8 byte order mark");
}

int main(void) {
    RUN(test_raw_control_characters_are_refused_naming_the_byte);
    RUN(test_invalid_utf8_is_refused_naming_the_byte);
    RUN(test_a_byte_order_mark_at_the_start_is_refused);
    RUN(test_nesting_past_the_limit_is_named);
    RUN(test_numbers_json_does_not_allow_are_refused);
    RUN(test_too_many_values_are_refused_before_parsing);
    RUN(test_commas_and_brackets_inside_strings_are_not_values);
    return check_summary("test_strict_json");
}
