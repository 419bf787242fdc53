/* SPDX-License-Identifier: MIT */
/*
 * compress.h - `pith compress [OPTIONS] ROOT`: writes the .br/.zst/.gz
 * variants that the server sends to clients which accept them. Full build
 * only; a tool run by the site owner, never part of serving.
 */
#ifndef PITH_COMPRESS_H
#define PITH_COMPRESS_H

/* Runs the subcommand; argv[0] is "compress". Returns the exit status:
 * 0 all done, 1 some file failed (each named on stderr), 2 bad usage (one
 * line on stderr). */
int compress_main(int argc, char **argv);

#endif
