/* SPDX-License-Identifier: MIT */
/*
 * compress_report.c - what `pith compress` tells its user while it runs:
 * one line per file that failed, and the progress bar redrawn in place on
 * a terminal (files, bytes, rate, ETA); and the flag a first SIGINT or
 * SIGTERM sets. Every part of the tool reports through here; this file
 * calls none of them.
 */
#include "cli/compress_run.h"

#include <stdarg.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

volatile sig_atomic_t compress_interrupted;

void compress_clear_bar(struct run *r)
{
    if (r->bar_shown) {
        fputs("\r\033[K", stderr);
        r->bar_shown = false;
    }
}

/* One line naming the file and the reason; counts a failure. Caller holds mu
 * (or is alone). */
void compress_error(struct run *r, const char *rel, const char *name, const char *fmt, ...)
{
    va_list ap;
    r->failed++;
    compress_clear_bar(r);
    fprintf(stderr, "pith compress: %s%s: ", rel, rel[0] || name[0] ? name : "."); /* ROOT */
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

double compress_seconds_since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

static void human(uint64_t n, char *out, size_t len)
{
    if (n < 1024)
        snprintf(out, len, "%llu B", (unsigned long long)n);
    else if (n < 1024 * 1024)
        snprintf(out, len, "%.1f KiB", (double)n / 1024);
    else
        snprintf(out, len, "%.1f MiB", (double)n / (1024 * 1024));
}

static unsigned term_width(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
        return ws.ws_col;
    return 80;
}

/* The progress bar, redrawn in place on stderr: files, bytes, rate, ETA.
 * Caller holds mu. */
void compress_draw_bar(struct run *r)
{
    double t = compress_seconds_since(&r->start);
    double rate = t > 0 ? (double)r->done_bytes / t : 0;
    uint64_t total = r->total_bytes > r->done_bytes ? r->total_bytes : r->done_bytes;
    char done_s[32], total_s[32], rate_s[32], eta[32] = "--:--", line[256], bar[21];
    human(r->done_bytes, done_s, sizeof done_s);
    human(total, total_s, sizeof total_s);
    human((uint64_t)rate, rate_s, sizeof rate_s);
    if (rate > 0 && r->done_bytes > 0) {
        unsigned left = (unsigned)((double)(total - r->done_bytes) / rate + 0.5);
        snprintf(eta, sizeof eta, "%u:%02u", left / 60, left % 60);
    }
    unsigned fill = total ? (unsigned)(20 * r->done_bytes / total) : 0;
    for (unsigned i = 0; i < 20; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[20] = 0;
    int n = snprintf(line, sizeof line, "[%s] %llu/%llu files  %s/%s  %s/s  ETA %s", bar,
                     (unsigned long long)r->done_files, (unsigned long long)r->total_files, done_s,
                     total_s, rate_s, eta);
    unsigned width = term_width() - 1; /* the last column would wrap on some terminals */
    if (width >= sizeof line)
        width = sizeof line - 1;
    if (n > 0 && (unsigned)n > width)
        line[width] = 0;
    fprintf(stderr, "\r\033[K%s", line);
    fflush(stderr);
    r->bar_shown = true;
    clock_gettime(CLOCK_MONOTONIC, &r->last_draw);
}

void compress_progress(struct run *r)
{
    if (r->tty && compress_seconds_since(&r->last_draw) * 1e9 >= (double)REDRAW_NSEC)
        compress_draw_bar(r);
}
