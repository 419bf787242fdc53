/* SPDX-License-Identifier: MIT */
/*
 * codec.c - gzip (zlib), brotli and zstd over a whole buffer, for `pith
 * compress`. Levels: --level max is gzip 9, brotli 11, zstd 19; --level fast
 * is gzip 6, brotli 5, zstd 3 (each library's everyday default or close).
 * Every window stays within what default decoders accept: brotli's 2^22 or
 * 2^24 (RFC 7932 allows up to 24 without "large window"), zstd's 2^23
 * (CODEC_ZSTD_WINDOW_LOG). It never writes files; compress.c does that.
 */
#include "cli/codec.h"

#include <brotli/encode.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>
#include <zstd.h>

const char *codec_name(enum codec c)
{
    static const char *const names[CODEC_COUNT] = {"br", "zstd", "gzip"};
    return names[c];
}

const char *codec_suffix(enum codec c)
{
    static const char *const suffixes[CODEC_COUNT] = {".br", ".zst", ".gz"};
    return suffixes[c];
}

bool codec_state_init(struct codec_state *st)
{
    st->zstd = ZSTD_createCCtx();
    return st->zstd != NULL;
}

void codec_state_free(struct codec_state *st)
{
    ZSTD_freeCCtx(st->zstd);
    st->zstd = NULL;
}

static int fail(char *why, size_t whylen, const char *what)
{
    snprintf(why, whylen, "%s", what);
    return -1;
}

/* zlib counts in uInt, so input and output are fed in slices of at most
 * UINT_MAX bytes; files over 4 GiB work too. */
static int gzip_encode(int level, const unsigned char *in, size_t n, unsigned char *out, size_t cap,
                       size_t *outlen, char *why, size_t whylen)
{
    z_stream z = {0};
    /* 15 + 16: the largest window, gzip wrapper (RFC 1952) with zlib's
     * default header (no name, mtime 0), so the output is reproducible. */
    if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
        return fail(why, whylen, "zlib: cannot initialise the encoder");
    size_t in_left = n, out_left = cap;
    int r;
    do {
        if (z.avail_in == 0) {
            z.avail_in = in_left > UINT_MAX ? UINT_MAX : (uInt)in_left;
            z.next_in = (unsigned char *)in + (n - in_left);
            in_left -= z.avail_in;
        }
        if (z.avail_out == 0) {
            z.avail_out = out_left > UINT_MAX ? UINT_MAX : (uInt)out_left;
            z.next_out = out + (cap - out_left);
            out_left -= z.avail_out;
        }
        r = deflate(&z, in_left == 0 ? Z_FINISH : Z_NO_FLUSH);
    } while (r == Z_OK);
    *outlen = (size_t)z.total_out;
    deflateEnd(&z);
    return r == Z_STREAM_END ? 0 : fail(why, whylen, "zlib: deflate failed");
}

static int brotli_encode(int quality, enum codec_kind kind, const unsigned char *in, size_t n,
                         unsigned char *out, size_t cap, size_t *outlen, char *why, size_t whylen)
{
    static const BrotliEncoderMode modes[] = {
        [CODEC_KIND_TEXT] = BROTLI_MODE_TEXT,
        [CODEC_KIND_FONT] = BROTLI_MODE_FONT,
        [CODEC_KIND_BINARY] = BROTLI_MODE_GENERIC,
    };
    /* The default 4 MiB window, or 16 MiB (RFC 7932's largest standard
     * window) for inputs that outgrow it. */
    int lgwin =
        n > ((size_t)1 << BROTLI_DEFAULT_WINDOW) ? BROTLI_MAX_WINDOW_BITS : BROTLI_DEFAULT_WINDOW;
    *outlen = cap;
    if (!BrotliEncoderCompress(quality, lgwin, modes[kind], n, in, outlen, out))
        return fail(why, whylen, "brotli: encoding failed");
    return 0;
}

static int zstd_encode(ZSTD_CCtx *cctx, int level, const unsigned char *in, size_t n,
                       unsigned char *out, size_t cap, size_t *outlen, char *why, size_t whylen)
{
    ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
    /* Capped for browsers (RFC 9659 §3); ZSTD_compress2 still shrinks the
     * window to the input's size, which it writes into the frame header. */
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, CODEC_ZSTD_WINDOW_LOG);
    /* Long-distance matching only pays for inputs larger than the window:
     * measured on the bench corpus (files of up to 1 MiB) it gained under
     * 0.01% at level 19, so smaller files skip its extra pass. */
    if (n > ((size_t)1 << CODEC_ZSTD_WINDOW_LOG))
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_enableLongDistanceMatching, 1);
    size_t r = ZSTD_compress2(cctx, out, cap, in, n);
    if (ZSTD_isError(r)) {
        snprintf(why, whylen, "zstd: %s", ZSTD_getErrorName(r));
        return -1;
    }
    *outlen = r;
    return 0;
}

static size_t bound(enum codec c, size_t n)
{
    switch (c) {
    case CODEC_BR: return BrotliEncoderMaxCompressedSize(n);
    case CODEC_ZSTD: return ZSTD_compressBound(n);
    case CODEC_GZIP:
    case CODEC_COUNT: break;
    }
    /* deflateBound needs a stream; this is its most conservative formula
     * (zlib 1.2.13, for non-default memLevel) plus the gzip wrapper. */
    return n + (n >> 5) + (n >> 7) + (n >> 11) + 7 + 18 + 64;
}

int codec_compress(struct codec_state *st, enum codec c, enum codec_level level,
                   enum codec_kind kind, const void *in, size_t n, unsigned char **out,
                   size_t *outlen, char *why, size_t whylen)
{
    size_t cap = bound(c, n);
    unsigned char *buf = cap ? malloc(cap) : NULL;
    if (!buf)
        return fail(why, whylen, "out of memory for the compressed copy");
    bool max = level == CODEC_MAX;
    int r = -1;
    switch (c) {
    case CODEC_BR:
        r = brotli_encode(max ? 11 : 5, kind, in, n, buf, cap, outlen, why, whylen);
        break;
    case CODEC_ZSTD:
        r = zstd_encode(st->zstd, max ? 19 : 3, in, n, buf, cap, outlen, why, whylen);
        break;
    case CODEC_GZIP: r = gzip_encode(max ? 9 : 6, in, n, buf, cap, outlen, why, whylen); break;
    case CODEC_COUNT: break;
    }
    if (r < 0) {
        free(buf);
        return -1;
    }
    *out = buf;
    return 0;
}
