/* SPDX-License-Identifier: MIT */
/*
 * main.c - the full build's entry point: `pith compress` (its own tool),
 * and the choice of event loop (io_uring, which needs liburing); everything
 * else of the start-up is shared with pith-tiny (start.c).
 */
#include "base/server.h"
#include "cli/compress.h"
#include "cli/config.h"
#include "cli/start.h"
#include "event/loop.h"
#include "sys/sys.h"

#include <stdio.h>
#include <string.h>

/* --io: io_uring when asked or when auto finds it usable, else epoll; an
 * auto fallback says why in one line, a forced io_uring that cannot run is
 * a start-up failure. */
static int choose_loop(const struct config *cfg, struct server *s)
{
    char why[160];
    s->loop = &loop_epoll;
    if (cfg->io == CONFIG_IO_EPOLL)
        return 0;
    /* PITH_NO_URING=1 makes io_uring unavailable, so tests can exercise
     * the fallback on machines where it works. */
    const char *off = sys_getenv("PITH_NO_URING");
    if (off && off[0] == '1')
        snprintf(why, sizeof why, "disabled by PITH_NO_URING=1");
    else if (loop_uring_available(why, sizeof why)) {
        s->loop = &loop_uring;
        return 0;
    }
    if (cfg->io == CONFIG_IO_URING) {
        fprintf(stderr, "pith: --io uring: io_uring cannot run here: %s\n", why);
        return 1;
    }
    if (!cfg->quiet)
        fprintf(stderr, "pith: io_uring cannot run here (%s); using epoll\n", why);
    return 0;
}

int main(int argc, char **argv)
{
    /* `pith compress ...` is its own tool (a ROOT named "compress" is
     * served with `pith ./compress` or `pith -- compress`). */
    if (argc > 1 && strcmp(argv[1], "compress") == 0)
        return compress_main(argc - 1, argv + 1);
    return start_main(argc, argv, choose_loop);
}
