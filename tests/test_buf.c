/* test_buf.c — the one growable buffer (common/buf.h): pieces added in order come back as one
 * NUL-terminated text across many growths; printf appends; a size that overflows size_t is refused
 * and the buffer stays failed (later adds do nothing); andrea_grow doubles an array of any type,
 * keeps its elements, and leaves array and capacity untouched when the byte size overflows. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/buf.h"
#include "check.h"

static void test_pieces_added_in_order_come_back_as_one_text(void) {
    andrea_buf b;
    andrea_buf_init(&b);
    CHECK(b.s == NULL && b.len == 0);
    CHECK(andrea_buf_add(&b, "", 0) == 0);
    CHECK(b.s && b.s[0] == 0); /* zero bytes added: still a C string */
    for (int i = 0; i < 5000; i++) CHECK(andrea_buf_printf(&b, "%d,", i % 10) == 0);
    CHECK(b.len == 10000 && b.cap > b.len && b.s[b.len] == 0);
    int ok = 1;
    for (int i = 0; i < 5000; i++) ok &= b.s[2 * i] == '0' + i % 10 && b.s[2 * i + 1] == ',';
    CHECK(ok);
    CHECK(andrea_buf_puts(&b, "end") == 0 && !strcmp(b.s + 10000, "end"));
    CHECK(andrea_buf_add(&b, "a\0b", 3) == 0 && b.len == 10006 && b.s[10004] == 0 && b.s[10005] == 'b');
    CHECK(!andrea_buf_failed(&b));
    andrea_buf_free(&b);
    CHECK(b.s == NULL && b.len == 0 && b.cap == 0 && !b.failed);
}

static void test_a_size_past_size_max_is_refused_and_the_buffer_stays_failed(void) {
    andrea_buf b = {0};
    CHECK(andrea_buf_puts(&b, "abc") == 0);
    CHECK(andrea_buf_reserve(&b, SIZE_MAX - 2) == -1); /* len + extra + NUL overflows */
    CHECK(andrea_buf_failed(&b));
    CHECK(andrea_buf_puts(&b, "more") == -1);
    CHECK(andrea_buf_printf(&b, "%d", 1) == -1);
    CHECK(b.len == 3 && !strcmp(b.s, "abc")); /* nothing added after the failure */
    andrea_buf_free(&b);
    CHECK(!andrea_buf_failed(&b));
    andrea_buf c = {0};
    CHECK(andrea_buf_reserve(&c, SIZE_MAX / 2 + 1) == -1 && andrea_buf_failed(&c)); /* no doubling fits */
    andrea_buf_free(&c);
}

static void test_grow_doubles_an_array_and_keeps_its_elements(void) {
    double *v = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < 1000; i++) {
        CHECK(andrea_grow(&v, &cap, i + 1, sizeof *v, 8) == 0);
        v[i] = (double)i * 0.5;
    }
    CHECK(cap == 1024); /* 8, 16, ... 1024 */
    int ok = 1;
    for (size_t i = 0; i < 1000; i++) ok &= v[i] == (double)i * 0.5;
    CHECK(ok);
    double *before = v;
    CHECK(andrea_grow(&v, &cap, 1000, sizeof *v, 8) == 0 && v == before && cap == 1024); /* fits: no change */
    CHECK(andrea_grow(&v, &cap, SIZE_MAX / 4, sizeof *v, 8) == -1); /* bytes overflow size_t */
    CHECK(v == before && cap == 1024);
    free(v);
}

int main(void) {
    RUN(test_pieces_added_in_order_come_back_as_one_text);
    RUN(test_a_size_past_size_max_is_refused_and_the_buffer_stays_failed);
    RUN(test_grow_doubles_an_array_and_keeps_its_elements);
    return check_summary("test_buf");
}
