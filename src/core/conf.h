/* SPDX-License-Identifier: MIT */
/*
 * conf.h - the lines of a configuration file (pith --config, issue 22): one
 * item per line, as spans into the caller's text. The grammar, line by line
 * (a line ends at LF; a CR before it is dropped; blanks are SP and HTAB):
 *
 *   (blank)                       nothing
 *   # text                        a comment; so is " # text" at a line's end
 *   NAME [VALUE]                  an option: NAME is [a-z0-9-]+ (a command-line
 *                                 flag without its dashes), VALUE the rest of
 *                                 the line without surrounding blanks, and
 *                                 without one pair of surrounding quotes ("..."
 *                                 or '...', nothing escaped inside; a quoted
 *                                 value may hold " #")
 *   site NAMES {                  a site block begins (NAMES: everything between)
 *   }                             the block ends
 *
 * Anything else is an error item that says why, and the next call goes on
 * with the next line, so every bad line of a file can be reported. Bytes
 * other than tab below 0x20, and DEL, are refused anywhere. What the names
 * and values mean (and whether a block may be open) is the caller's. Pure:
 * nothing is copied or allocated.
 */
#ifndef PITH_CONF_H
#define PITH_CONF_H

#include "core.h"

#define CONF_LINE_MAX 4096 /* bytes in one line, its end excluded */

enum conf_kind {
    CONF_OPTION,     /* name, value (value.n may be 0) */
    CONF_SITE_BEGIN, /* value: the names */
    CONF_SITE_END,
    CONF_ERROR, /* error: a constant sentence */
};

struct conf_item {
    enum conf_kind kind;
    unsigned line; /* 1-based */
    struct span name;
    struct span value;
    const char *error;
};

struct conf_reader {
    struct span text;
    size_t pos;
    unsigned line;
};

static inline struct conf_reader conf_reader_make(struct span text)
{
    return (struct conf_reader){text, 0, 0};
}

/* The next item; false at the end of the text. */
bool conf_next(struct conf_reader *r, struct conf_item *out);

#endif
