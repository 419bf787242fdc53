/* SPDX-License-Identifier: MIT */
/* pith-tiny: <stdio.h> for the code shared with the full build (start-up and
 * --check messages only): unbuffered, and the conversions pith's messages
 * use (src/sys/fmt_raw.c). */
#ifndef PITH_RAW_STDIO_H
#define PITH_RAW_STDIO_H

#include "sys/arch/arch.h"

#include <stdarg.h>

typedef struct raw_file FILE; /* never defined: a FILE * is a descriptor */
#define stdout ((FILE *)1)
#define stderr ((FILE *)2)

int snprintf(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int vsnprintf(char *out, size_t cap, const char *fmt, va_list ap);
int fprintf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int fputs(const char *s, FILE *f);
int fflush(FILE *f);

#endif
