/* SPDX-License-Identifier: MIT */
/*
 * clients.h - what every worker knows about each client (issue 22): its
 * open connections and its recent failed sign-ins, counted across all the
 * workers in memory the master shares with them before forking.
 *
 * One table per worker slot, each written by that worker alone (a lock-free
 * single writer, as the --status counters are) and read by all: a client's
 * count is the sum of its entries in every table. An entry is keyed by a
 * SipHash of the client's address under a key the master draws at start
 * (nobody can choose addresses that collide), with IPv6 grouped by /64 (a
 * host gets a /64 to itself, so each of its addresses would be a new
 * client); IPv4, and the IPv6 addresses whose top 64 bits are zero
 * (loopback, v4-mapped), count alone. Tables are open-addressing arrays
 * sized at start to twice what a worker can hold, so they never fill.
 *
 * A reader can meet a table while its writer moves an entry (a deletion
 * shifts the entries after it back); the writer clears a slot before it
 * refills one, so a sum may then miss an entry for that instant, never
 * count one twice: a limit lets one connection too many through at worst,
 * and never refuses a client it should not. The master clears the table
 * of a worker that died (its connections are gone) before it is replaced.
 */
#ifndef PITH_CLIENTS_H
#define PITH_CLIENTS_H

#include "core/netaddr.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

struct clients;

/* Maps the tables for `workers` slots of `max_conns` connections each, and
 * `track` more clients each for failed sign-ins (0: none), with a random
 * key. NULL when the memory or the randomness cannot be had. */
struct clients *clients_create(unsigned workers, unsigned max_conns, unsigned track);

/* The key of the client at a (never 0). */
uint64_t clients_key(const struct clients *cl, const struct net_addr *a);

/* Counts a connection of client key in worker's table, unless the client
 * has `limit` connections already (limit 0: no limit). True when counted. */
bool clients_open(struct clients *cl, unsigned worker, uint64_t key, unsigned limit);
/* The connection ended: uncounted (an entry with nothing left goes). */
void clients_close(struct clients *cl, unsigned worker, uint64_t key);
/* The client's connections across all workers now. */
unsigned clients_conns(const struct clients *cl, uint64_t key);

/* A failed sign-in of client key now (seconds), counted for `window`
 * seconds from the first of a run. False when it cannot be remembered
 * (the worker tracks `track` clients with failures, and none has expired):
 * the caller then treats the client as over its limit. */
bool clients_failed(struct clients *cl, unsigned worker, uint64_t key, int64_t now,
                    unsigned window);
/* The client's failed sign-ins in their windows now, across all workers,
 * and in *retry the seconds until the last of those windows ends. */
unsigned clients_failures(const struct clients *cl, uint64_t key, int64_t now, int64_t *retry);

/* Forgets worker's whole table (a worker that died, or one starting). */
void clients_reset(struct clients *cl, unsigned worker);
/* Drops worker's entries that hold nothing any more (no connection, no
 * failure in its window): a worker calls it now and then. */
void clients_sweep(struct clients *cl, unsigned worker, int64_t now);

/* An IPv4 or IPv6 socket address in the 16-byte form; false for others. */
bool client_addr_from(const struct sockaddr_storage *ss, struct net_addr *out);
/* The 16-byte form as an AF_INET6 socket address (v4-mapped for IPv4,
 * which the logs print as IPv4). */
void client_addr_to(const struct net_addr *a, uint16_t port, struct sockaddr_storage *out);

#endif
