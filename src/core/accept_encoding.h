/* SPDX-License-Identifier: MIT */
/*
 * accept_encoding.h - content negotiation on Accept-Encoding (RFC 9110
 * §12.5.3) among the precompressed variants pith can serve: br, zstd and
 * gzip, and the identity file. Pure functions over the request's field
 * lines (combined as one list, §5.3) and the variants' sizes.
 *
 * Grammar (strict): Accept-Encoding = #( codings [ weight ] ), codings =
 * token / "identity" / "*", weight = OWS ";" OWS "q=" qvalue (the "q" in
 * either case, §12.4.2), qvalue = "0" [ "." 0*3DIGIT ] / "1" [ "." 0*3"0" ].
 * Codings compare case-insensitively; "x-gzip" is "gzip" (§8.4.1.3). Any
 * element outside this grammar makes the whole field malformed, and a
 * malformed field selects identity (never a guess, never an error).
 */
#ifndef PITH_ACCEPT_ENCODING_H
#define PITH_ACCEPT_ENCODING_H

#include "core.h"
#include "http_fields.h"

/* The codings a variant may have, in the order of their file suffixes. */
enum ae_coding { AE_BR, AE_ZSTD, AE_GZIP, AE_CODINGS };

#define AE_IDENTITY       AE_CODINGS /* the file itself */
#define AE_NOT_ACCEPTABLE (-1)       /* 406: identity excluded, nothing else fits */
#define AE_Q_MAX          1000       /* q=1, in thousandths */

/* What the field says about one coding: its q in thousandths, and whether
 * the field names it (else the "*" element's q applies, if there is one). */
struct ae_pref {
    uint16_t q;
    bool named;
};

/* The field, read: br, zstd, gzip, then identity; and "*". */
struct ae_prefs {
    struct ae_pref c[AE_CODINGS + 1];
    struct ae_pref star;
};

/* Parses every line of l as one list. Returns 0, or -1 when an element is
 * malformed (then *out is unspecified). A coding named twice keeps its first
 * q. No line at all, or only empty elements, gives 0 and nothing named. */
int accept_encoding_parse(const struct span_list *l, struct ae_prefs *out);

/* The variants on offer: have[c] and size[c] per coding, and the identity
 * file's size. */
struct ae_offer {
    bool have[AE_CODINGS];
    uint64_t size[AE_CODINGS];
    uint64_t identity_size;
};

/*
 * Chooses the response's coding. No field line at all, or a malformed
 * field: AE_IDENTITY. Otherwise each offered coding gets the q of its name,
 * else the q of "*", else 0 (not acceptable); identity takes part with the
 * q of its name or of "*" when either is given. Of the candidates with
 * q > 0 the highest q wins, ties going to the smallest file (identity
 * first among equal sizes, then br, zstd, gzip). With no candidate:
 * AE_IDENTITY, unless identity is excluded ("identity;q=0", or "*;q=0"
 * without naming identity): AE_NOT_ACCEPTABLE.
 */
int accept_encoding_choose(const struct span_list *l, const struct ae_offer *o);

/* "br", "zstd", "gzip" as a Content-Encoding value; the file suffix ".br",
 * ".zst", ".gz". c < AE_CODINGS. */
struct span ae_coding_name(int c);
struct span ae_coding_suffix(int c);

#endif
