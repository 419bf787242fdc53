/* SPDX-License-Identifier: MIT */
/*
 * main_tiny.c - pith-tiny's entry point (rt_raw.c's _start calls main with
 * argc and argv): the start-up shared with the full build (start.c) on the
 * epoll loop, the only one pith-tiny has, and the refusal of `pith
 * compress`. Flags that need a library are refused in config.c
 * (PITH_TINY) with exit 2.
 */
#include "base/server.h"
#include "cli/config.h"
#include "cli/start.h"
#include "event/loop.h"

#include <stdio.h>
#include <string.h>

/* --io auto and epoll both mean epoll here; config.c refuses --io uring. */
static int choose_loop(const struct config *cfg, struct server *s)
{
    (void)cfg;
    s->loop = &loop_epoll;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "compress") == 0) {
        fprintf(stderr, "pith: compress: not in pith-tiny (it needs zlib, brotli and zstd); "
                        "use the full build\n");
        return 2;
    }
    return start_main(argc, argv, choose_loop);
}
