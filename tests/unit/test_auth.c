/* SPDX-License-Identifier: MIT */
/*
 * test_auth.c - basic auth's two parsers: the credentials of an
 * Authorization value (core/basic_auth.c: the scheme, strict base64, the
 * user-id's ':') and the lines of a password file (core/htpasswd.c: each
 * accepted hash kind as the tools make it, every refused kind with its
 * reason). Hashes come from mkpasswd and openssl passwd (tests/test_auth.py
 * makes them afresh through the live server). Inputs lie against guard
 * pages.
 */
#include "core/basic_auth.h"
#include "core/htpasswd.h"
#include "unit.h"

static const struct cred_row {
    const char *value;
    int want;
    const char *user, *password;
} cred_rows[] = {
    {"Basic dXNlcjpwYXNz", 0, "user", "pass"},
    {"basic dXNlcjpwYXNz", 0, "user", "pass"},
    {"BASIC   dXNlcjpwYXNz", 0, "user", "pass"},
    {"Basic dXNlcjo=", 0, "user", ""},
    {"Basic OnBhc3M=", 0, "", "pass"},
    {"Basic dTpwOnE=", 0, "u", "p:q"}, /* "u:p:q": the password may hold ':' */
    {"Basic w6nDqTp4", 0, "\xc3\xa9\xc3\xa9", "x"},
    {"Basic YTpi", 0, "a", "b"},
    {"Basic dXNlcjpwYXNz=", -1, NULL, NULL}, /* not a multiple of 4 */
    {"Basic dXNlcjpwYXN", -1, NULL, NULL},   /* unpadded */
    {"Basic dXNlcjo", -1, NULL, NULL},
    {"Basic dXNlcjp=YXNz", -1, NULL, NULL}, /* '=' inside */
    {"Basic dXNlcjpwYXNz!", -1, NULL, NULL},
    {"Basic dXNl cjpwYXNz", -1, NULL, NULL}, /* a space inside */
    {"Basic dXNlcjpwYXNzZA==", 0, "user", "passd"},
    {"Basic dXNlcjpwYXNzZB==", -1, NULL, NULL}, /* bits left over */
    {"Basic dXNlcjpwYXNzZGQ=", 0, "user", "passdd"},
    {"Basic dXNlcjpwYXNzZGR=", -1, NULL, NULL},
    {"Basic dXNlcnBhc3M=", -1, NULL, NULL},     /* "userpass": no ':' */
    {"Basic dXNlcjpwYQBzcw==", -1, NULL, NULL}, /* a NUL in the password */
    {"Basic", -1, NULL, NULL},
    {"Basic ", -1, NULL, NULL},
    {"Basic\tdXNlcjpwYXNz", -1, NULL, NULL},
    {"Basicx dXNlcjpwYXNz", -1, NULL, NULL},
    {"Bearer dXNlcjpwYXNz", -1, NULL, NULL},
    {"", -1, NULL, NULL},
};

static void test_credentials(void)
{
    for (size_t i = 0; i < ARRAY_LEN(cred_rows); i++) {
        const struct cred_row *r = &cred_rows[i];
        size_t n = strlen(r->value);
        char *v = guarded_copy(r->value, n);
        char out[64];
        struct span user = {0}, pass = {0}, tok = {0};
        int got = basic_auth_parse(span_make(v, n), out, sizeof out, &user, &pass, &tok);
        CHECK_LONG(got, r->want, r->value);
        if (r->want == 0) {
            CHECK_SPAN(user, r->user, r->value);
            CHECK_SPAN(pass, r->password, r->value);
            CHECK(pass.p[pass.n] == '\0', "the password is NUL-terminated");
        }
        guarded_free(v, n);
    }
    /* Too long for the buffer. */
    struct span u, p, t;
    char small[4];
    CHECK_LONG(basic_auth_parse(SPAN_LIT("Basic dXNlcjpwYXNz"), small, sizeof small, &u, &p, &t),
               -2, "does not fit");
}

static const struct line_row {
    const char *line;
    int want;
    const char *why; /* the start of the reason */
} line_rows[] = {
    /* mkpasswd -m yescrypt, mkpasswd -m bcrypt, openssl passwd -6 */
    {"alice:$y$j9T$QvvC3oweBP2cCNnOyW95O/$Vg5IY3AGnV3RG/exVHh0c7SkUk2JP5Tb4A96yfwyey4", 1, NULL},
    {"bob:$2b$05$.OZuEizYO.SuzitYKpTcguzYtqBONpxvo0IwVPNlmrrxA4negRFRO", 1, NULL},
    {"bob:$2y$10$.OZuEizYO.SuzitYKpTcguzYtqBONpxvo0IwVPNlmrrxA4negRFRO", 1, NULL},
    {"carol:$6$yH0PRZ/qedRB28zz$2tZwwVUs3N04YEAW0RO2pXzg4sBMbNfWX2/YNEHI/"
     "n6rpLYyFKLULsaElJTMZlqUXTw0Y6qSMpk4c8QUVPGP7/",
     1, NULL},
    {"carol:$6$rounds=10000$yH0PRZ/qedRB28zz$2tZwwVUs3N04YEAW0RO2pXzg4sBMbNfWX2/YNEHI/"
     "n6rpLYyFKLULsaElJTMZlqUXTw0Y6qSMpk4c8QUVPGP7/",
     1, NULL},
    {"carol:$6$rounds=10$yH0PRZ/qedRB28zz$2tZwwVUs3N04YEAW0RO2pXzg4sBMbNfWX2/YNEHI/"
     "n6rpLYyFKLULsaElJTMZlqUXTw0Y6qSMpk4c8QUVPGP7/",
     -1, "a SHA-512"},
    {"x:$y$j9T$salt$short", -1, "a yescrypt hash ($y$) that is not"},
    {"x:$2b$03$.OZuEizYO.SuzitYKpTcguzYtqBONpxvo0IwVPNlmrrxA4negRFRO", -1, "a bcrypt hash"},
    {"x:$2b$05$.OZuEizYO.SuzitYKpTcguzYtqBONpxvo0IwVPNlmrrxA4negRFR", -1, "a bcrypt hash"},
    {"x:$apr1$abcdefgh$0123456789012345678901", -1, "Apache's MD5 hash ($apr1$) is refused"},
    {"x:$1$abc$iUbCWW89D2V9MXDEFGV8x0", -1, "an MD5 crypt hash ($1$) is refused"},
    {"x:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=", -1, "Apache's SHA-1 hash ({SHA}) is refused"},
    {"x:$5$salt$hash", -1, "a SHA-256 crypt hash ($5$) is refused"},
    {"x:$2a$05$.OZuEizYO.SuzitYKpTcguzYtqBONpxvo0IwVPNlmrrxA4negRFRO", -1, "an old bcrypt"},
    {"x:$7$abc", -1, "a hash of a kind pith does not take"},
    {"x:abccBcrPOxnLU", -1, "a DES crypt hash"},
    {"x:secret", -1, "not a hash: a password in plain text is refused"},
    {"x:", -1, "not a hash"},
    {"x", -1, "not USER:HASH"},
    {":$2b$05$.OZuEizYO.SuzitYKpTcguzYtqBONpxvo0IwVPNlmrrxA4negRFRO", -1, "an empty user name"},
    {"x:$2b$05$.OZuEizYO.SuzitYKpTcguzYtqBONpxvo0IwVPNlmrrxA4negRFRO:comment", -1,
     "the hash holds"},
    {"x:\t$2b$05$.OZuEizYO.SuzitYKpTcguzYtqBONpxvo0IwVPNlmrrxA4negRFRO", -1, "a control"},
    {"", 0, NULL},
    {"   ", 0, NULL},
    {"# a comment", 0, NULL},
    {"bob:$2b$05$.OZuEizYO.SuzitYKpTcguzYtqBONpxvo0IwVPNlmrrxA4negRFRO\r", 1, NULL},
};

static void test_lines(void)
{
    for (size_t i = 0; i < ARRAY_LEN(line_rows); i++) {
        const struct line_row *r = &line_rows[i];
        size_t n = strlen(r->line);
        char *l = guarded_copy(r->line, n);
        struct htpasswd_entry e;
        const char *why = NULL;
        int got = htpasswd_line(span_make(l, n), &e, &why);
        CHECK_LONG(got, r->want, r->line);
        if (r->why)
            CHECK(why && strncmp(why, r->why, strlen(r->why)) == 0, r->line);
        if (got == 1) {
            size_t colon = strcspn(r->line, ":");
            CHECK_MEM(e.user.p, e.user.n, r->line, colon, "the user");
            CHECK(e.hash.p[0] == '$' && e.hash.n >= 60, "the hash");
        }
        guarded_free(l, n);
    }
}

int main(void)
{
    test_credentials();
    test_lines();
    return unit_done();
}
