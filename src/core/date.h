/* SPDX-License-Identifier: MIT */
/*
 * date.h - HTTP dates (RFC 9110 §5.6.7) and the log timestamps, computed
 * with civil-from-days arithmetic: no gmtime(), no locale, no time zone, no
 * clock. Times are seconds since the Unix epoch, UTC.
 */
#ifndef PITH_DATE_H
#define PITH_DATE_H

#include "core.h"

#define DATE_IMF_LEN 29 /* "Sun, 06 Nov 1994 08:49:37 GMT" */
#define DATE_CLF_LEN 26 /* "06/Nov/1994:08:49:37 +0000" */
#define DATE_ISO_LEN 20 /* "1994-11-06T08:49:37Z" */

/* The range every formatter accepts: 1970-01-01T00:00:00Z to
 * 9999-12-31T23:59:59Z. Outside it a four-digit year cannot be written, so
 * the formatters write nothing and return 0 (darkhttpd CVE-2020-25691 was a
 * crash on such an mtime). */
#define DATE_MIN 0
#define DATE_MAX INT64_C(253402300799)

/* Formats t as an IMF-fixdate into out[DATE_IMF_LEN]; returns DATE_IMF_LEN,
 * or 0 when t is outside [DATE_MIN, DATE_MAX]. */
size_t date_format_imf(int64_t t, char *out);

/* Formats t as the combined log format's time, without brackets. */
size_t date_format_clf(int64_t t, char *out);

/* Formats t as ISO 8601 UTC for the error log. */
size_t date_format_iso(int64_t t, char *out);

/*
 * Parses the three formats RFC 9110 §5.6.7 requires recipients to accept:
 * IMF-fixdate, RFC 850 (two-digit year: 70-99 are 19xx, 00-69 are 20xx) and
 * asctime. Leading/trailing OWS is not accepted (the caller trims). Returns
 * false for anything else, including impossible dates (Feb 30, hour 24) and
 * years outside 1970..9999; on success *t holds the time.
 */
bool date_parse_http(struct span s, int64_t *t);

#endif
