/* SPDX-License-Identifier: MIT */
/*
 * test_respond.c - respond_status_closes(), the one list of statuses after
 * which the connection closes (400, 408, 414, 431, 505: the request's end is
 * unknown or untrusted), for every status from 100 to 999; and the status
 * lines and error bodies of the statuses pith sends, whose length
 * respond_error_body_len() must give before a byte is written.
 */
#include "core/respond.h"
#include "unit.h"

static const int sent[] = {200, 204, 206, 301, 304, 308, 400, 401, 403, 404, 405, 406,
                           408, 412, 414, 416, 421, 429, 431, 500, 501, 503, 505};

int main(void)
{
    static const int closing[] = {400, 408, 414, 431, 505};
    unit_gen_begin();
    for (int s = 100; s <= 999; s++) {
        bool want = false;
        for (size_t i = 0; i < ARRAY_LEN(closing); i++)
            want = want || closing[i] == s;
        CHECK_LONG(respond_status_closes(s), want, "closes exactly after 400 408 414 431 505");
    }
    unit_gen_end();
    CHECK(respond_status_closes(400), "400: the request's end is unknown");
    CHECK(!respond_status_closes(404), "404: the request was read whole");

    char out[512], want[128];
    for (size_t i = 0; i < ARRAY_LEN(sent); i++) {
        struct buf b = buf_make(out, sizeof out);
        respond_status_line(&b, sent[i]);
        struct span r = respond_reason(sent[i]);
        int n = snprintf(want, sizeof want, "HTTP/1.1 %d %.*s\r\n", sent[i], (int)r.n, r.p);
        CHECK_MEM(b.p, b.len, want, (size_t)n, "the status line");
        CHECK(r.n && !(r.n == 7 && memcmp(r.p, "Unknown", 7) == 0), "a reason of its own");
        b = buf_make(out, sizeof out);
        respond_error_body(&b, sent[i]);
        CHECK_LONG(b.len, respond_error_body_len(sent[i]), "the body's length, known first");
        CHECK(!b.full, "the body fits");
    }
    struct buf b = buf_make(out, sizeof out);
    respond_status_line(&b, 599);
    CHECK_MEM(b.p, b.len, "HTTP/1.1 599 Unknown\r\n", 22, "a status pith never sends");
    return unit_done();
}
