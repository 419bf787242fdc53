/* SPDX-License-Identifier: MIT */
/*
 * sd.h - the two systemd protocols pith speaks, written by hand (no
 * libsystemd): socket activation (sd_listen_fds(3): LISTEN_PID, LISTEN_FDS,
 * LISTEN_FDNAMES, descriptors from 3) and readiness notification
 * (sd_notify(3): one datagram to NOTIFY_SOCKET). The same descriptor
 * passing carries the listeners to a new binary on a zero-downtime upgrade
 * (sd_exec_with_listeners). Like the rest of src/sys, every function
 * returns >= 0 or -errno.
 */
#ifndef PITH_SD_H
#define PITH_SD_H

#include <stdbool.h>
#include <stddef.h>

#define SD_LISTEN_FDS_START 3
#define SD_LISTEN_MAX       16 /* inherited sockets pith takes at most */
#define SD_NAME_MAX         64 /* FileDescriptorName= is at most 255; pith's names are short */

struct sd_listener {
    int fd;
    char name[SD_NAME_MAX]; /* from LISTEN_FDNAMES; "" when not given */
};

/* Takes the sockets passed to this process: when LISTEN_PID is our pid,
 * LISTEN_FDS descriptors from 3 are checked to be listening stream
 * sockets, made close-on-exec and non-blocking, and described in out[cap]
 * with their names. LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES are removed
 * from the environment in every case, so no child takes them for its own.
 * Returns the number taken (0: none were passed, or they were meant for
 * another process), -EINVAL for malformed variables, -E2BIG for more than
 * cap, -ENOTSOCK for a descriptor that is not a listening stream socket. */
int sd_listen_fds_take(struct sd_listener *out, unsigned cap);

/* Sends msg ("READY=1\nSTATUS=...") to NOTIFY_SOCKET, a path or an
 * abstract name written with a leading '@'. Returns 0 (also when
 * NOTIFY_SOCKET is unset: nobody listens) or -errno. */
int sd_notify_send(const char *msg);

/* In a freshly forked child: moves fds[0..n) to 3.., and keep (unless -1:
 * a descriptor that is no listener, for the new binary to find by a
 * number the caller writes into extra) to 3 + n; sets LISTEN_FDS,
 * LISTEN_PID (this process), LISTEN_FDNAMES (names joined by ':') and
 * extra ("NAME=value", may be NULL), clears the signal mask, and executes
 * path with argv. Returns only on failure, with -errno. */
int sd_exec_with_listeners(const char *path, char *const argv[], const int *fds,
                           const char *const *names, unsigned n, int keep, const char *extra);

#endif
