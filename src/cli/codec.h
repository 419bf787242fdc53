/* SPDX-License-Identifier: MIT */
/*
 * codec.h - one-shot compression of a buffer in memory with zlib (gzip
 * format, RFC 1952), brotli (RFC 7932) and zstd (RFC 8878), for `pith
 * compress`. Part of the full build only; it never runs a program, and the
 * server never links it into a request path.
 */
#ifndef PITH_CODEC_H
#define PITH_CODEC_H

#include <stdbool.h>
#include <stddef.h>

enum codec { CODEC_BR, CODEC_ZSTD, CODEC_GZIP, CODEC_COUNT };

enum codec_level { CODEC_FAST, CODEC_MAX };

/* What the input is, for brotli's mode hint (it only tunes the encoder). */
enum codec_kind { CODEC_KIND_TEXT, CODEC_KIND_FONT, CODEC_KIND_BINARY };

/* zstd's window is capped at 2^23 bytes (8 MiB): RFC 9659 §3 asks encoders of
 * the "zstd" content coding for at most 8 MB, which is what browsers accept;
 * `zstd -d` accepts up to 2^27 without --long, so 2^23 suits both. */
#define CODEC_ZSTD_WINDOW_LOG 23

/* The coding's name as in --encodings and Content-Encoding ("br", "zstd",
 * "gzip") and the suffix of its variant file (".br", ".zst", ".gz"). */
const char *codec_name(enum codec c);
const char *codec_suffix(enum codec c);

/* Per-thread encoder state (zstd's context is reused across files). */
struct codec_state {
    void *zstd;
};

/* Prepares / releases a state; codec_state_init returns false when out of
 * memory. */
bool codec_state_init(struct codec_state *st);
void codec_state_free(struct codec_state *st);

/* Compresses in[0..n) with codec c at the given level into a buffer it
 * allocates: on success returns 0, sets *out (the caller frees it) and
 * *outlen. On failure returns -1 and writes a one-phrase reason to why. The
 * output is deterministic: the same input, codec and level always give the
 * same bytes (the gzip header carries no time or name). */
int codec_compress(struct codec_state *st, enum codec c, enum codec_level level,
                   enum codec_kind kind, const void *in, size_t n, unsigned char **out,
                   size_t *outlen, char *why, size_t whylen);

#endif
