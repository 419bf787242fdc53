/* SPDX-License-Identifier: MIT */
/*
 * acme_main.c - the ACME process (acme.h): forked by the master with the
 * challenge table mapped, it gives up what it does not need (listeners,
 * site roots, the TLS contexts and their keys), drops to --user, loads or
 * makes the account key, confines itself (acme_sandbox.c), and then keeps
 * each name's certificate current: a stored one that is valid and not due
 * is left alone (a restart contacts no CA for it), a missing, bad or due
 * one is ordered under the name's lock, written atomically, and announced
 * to the master on the ready pipe (ACME_READY_CERTS), which reloads the TLS
 * pairs exactly as on SIGHUP. The master's prepare step (acme_prepare)
 * lives here too: the directory, the table, the start lines.
 */
#include "acme/acme_internal.h"

#include "base/log.h"
#include "base/server.h"
#include "core/bytes.h"
#include "core/escape.h"
#include "sys/sys.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOCK_WAIT_S 2    /* another instance orders: look again this soon (PITH_ACME_LOCK_WAIT_S) */
#define RECHECK_S   3600 /* a current certificate is looked at again (other instances) */
/* ARI (RFC 9773 §4.3): renewalInfo is first asked an hour after a start or
 * a new certificate (a restart loop must not hammer the CA), then again
 * when the CA's Retry-After says, taken between a minute and a day (the
 * RFC's example bounds), or in six hours when it says nothing (what Let's
 * Encrypt says); an answer that is no window is asked again in an hour.
 * PITH_ACME_ARI_S (tests) stands for the hour, the minute and the six
 * hours. */
#define ARI_FIRST_S   3600
#define ARI_MIN_S     60
#define ARI_MAX_S     86400
#define ARI_DEFAULT_S (6 * 3600)

void acme_log(const char *fmt, ...)
{
    char text[900], line[1000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    struct buf b = buf_make(line, sizeof line - 1);
    escape_log(&b, span_make(text, strlen(text))); /* the CA's words: no control bytes */
    line[b.full ? sizeof line - 1 : b.len] = '\0';
    log_error3("acme: ", line, "");
}

/* One name's bookkeeping. */
struct name_state {
    const char *name;
    char rel[300]; /* "certs/NAME.pem" */
    struct acme_when when;
    struct stat seen;              /* the file the master loaded last (st_ino 0: none) */
    int64_t not_before, not_after; /* the stored certificate's, expired too; 0: none */
    int64_t ari_next;              /* when renewalInfo is asked next */
    int64_t ari_start, ari_end;    /* the window it suggested; 0: none (two thirds) */
    int64_t ari_renew;             /* the moment chosen in it */
    int64_t expiry_said;           /* the last error line about the expiry (lock waits) */
    bool said_waiting, said_bad, said_ari;
};

struct acme_proc {
    struct server *srv;
    int dirfd;
    struct acme_client *client;
    struct acme_peers *peers;
    struct name_state names[ACME_SLOTS];
    unsigned n;
};

/* ---- the state directory --------------------------------------------------------- */

/* "accounts/<the CA's URL, made a file name>.key": one account per CA, so
 * moving to another CA is a change of --acme-ca and nothing else. */
static void account_rel(const char *ca, char *out, size_t cap)
{
    const char *p = strncmp(ca, "https://", 8) == 0 ? ca + 8 : ca;
    size_t k = (size_t)snprintf(out, cap, "accounts/");
    for (; *p && k + 5 < cap; p++)
        out[k++] = (char)((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                                  (*p >= '0' && *p <= '9') || *p == '.'
                              ? *p
                              : '-');
    snprintf(out + k, cap - k, ".key");
}

/* The account key: read (a bad one is an error naming the file, and is
 * never replaced), or made and stored 0600 when there is none. */
static EVP_PKEY *account_key(struct acme_proc *ap)
{
    const struct settings *set = &ap->srv->set;
    char rel[600], *text = NULL;
    size_t n;
    account_rel(set->acme_ca, rel, sizeof rel);
    int r = acme_store_read(ap->dirfd, rel, 16384, &text, &n);
    EVP_PKEY *key = NULL;
    if (r == 0) {
        BIO *b = BIO_new_mem_buf(text, (int)n);
        key = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, (void *)"") : NULL;
        BIO_free(b);
        free(text);
        ERR_clear_error();
        if (!key || !EVP_PKEY_is_a(key, "EC"))
            acme_log("%s/%s: not an ECDSA private key in PEM; move it away to make a new "
                     "account, or restore it",
                     set->acme_dir, rel);
        return key && EVP_PKEY_is_a(key, "EC") ? key : (EVP_PKEY_free(key), NULL);
    }
    if (r != -ENOENT) {
        acme_log("%s/%s: cannot read the account key: %s", set->acme_dir, rel, strerror(-r));
        return NULL;
    }
    key = acme_key_new();
    BIO *b = BIO_new(BIO_s_mem());
    char *p;
    long len;
    if (key && b && PEM_write_bio_PrivateKey(b, key, NULL, NULL, 0, NULL, NULL) == 1 &&
        (len = BIO_get_mem_data(b, &p)) > 0 &&
        (r = acme_store_write(ap->dirfd, rel, p, (size_t)len)) == 0) {
        BIO_free(b);
        acme_log("made a new account key, %s/%s", set->acme_dir, rel);
        return key;
    }
    acme_log("%s/%s: cannot store a new account key: %s", set->acme_dir, rel,
             r < 0 ? strerror(-r) : "OpenSSL failed");
    BIO_free(b);
    EVP_PKEY_free(key);
    return NULL;
}

/* ---- one name ------------------------------------------------------------------------ */

static void tell_master(struct acme_proc *ap)
{
    int32_t msg = ACME_READY_CERTS;
    if (ap->srv->ready_pipe[1] < 0 || sys_write(ap->srv->ready_pipe[1], &msg, sizeof msg) != 4)
        acme_log("cannot tell the master about a new certificate (it takes it on the next HUP)");
}

static const char *when_text(int64_t t, char *out, size_t cap)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(out, cap, "%Y-%m-%d %H:%M:%S UTC", &tm);
    return out;
}

static int64_t knob(const char *env, int64_t dflt)
{
    const char *v = getenv(env);
    return v && atoi(v) > 0 ? atoi(v) : dflt;
}

/* renewalInfo is asked again in s seconds (the CA's Retry-After, or -1),
 * bounded as ARI_* say. */
static int64_t ari_interval(long s)
{
    int64_t lo = knob("PITH_ACME_ARI_S", ARI_MIN_S), dflt = knob("PITH_ACME_ARI_S", ARI_DEFAULT_S);
    if (s < 0)
        return dflt;
    return s < lo ? lo : s > ARI_MAX_S ? ARI_MAX_S : s;
}

/* Forgets what ARI said (a new certificate); asks it in ARI_FIRST_S. */
static void ari_reset(struct name_state *ns, int64_t now)
{
    ns->ari_start = ns->ari_end = ns->ari_renew = 0;
    ns->ari_next = now + knob("PITH_ACME_ARI_S", ARI_FIRST_S);
    ns->said_ari = false;
}

/* The moment a valid pair is due for renewal: a random moment within the
 * window the CA suggests (RFC 9773 §4.2, chosen once per window), else two
 * thirds into its lifetime: when the CA offers no renewalInfo, or answers
 * with no window before it ever gave one (its last window stands). */
static int64_t renewal_time(struct acme_proc *ap, struct name_state *ns, struct acme_pair *p,
                            int64_t now)
{
    int64_t third = acme_renew_at(p->not_before, p->not_after);
    char t1[64], t2[64], t3[64], why[400];
    if (ap->client && now >= ns->ari_next) {
        struct acme_window w;
        int r = acme_ari(ap->client, p->leaf, &w, why, sizeof why);
        if (r == 0 && (w.start != ns->ari_start || w.end != ns->ari_end)) {
            ns->ari_start = w.start;
            ns->ari_end = w.end;
            ns->ari_renew = acme_pick(w.start, w.end);
            acme_log("%s: the CA suggests renewing between %s and %s; renewing at %s%s%s%s",
                     ns->name, when_text(w.start, t1, sizeof t1), when_text(w.end, t2, sizeof t2),
                     when_text(ns->ari_renew, t3, sizeof t3),
                     w.explain[0] ? " (the CA's explanation: " : "", w.explain,
                     w.explain[0] ? ")" : "");
        } else if (r != 0 && !ns->said_ari && !ns->ari_start) {
            acme_log("%s: %s; renewing at two thirds of its lifetime, %s", ns->name,
                     r == ACME_ARI_NONE ? "the CA offers no renewal information (RFC 9773)" : why,
                     when_text(third, t1, sizeof t1));
        }
        ns->said_ari = r != 0;
        ns->ari_next = now + (r == 0               ? ari_interval(w.retry_after)
                              : r == ACME_ARI_NONE ? ari_interval(-1)
                                                   : knob("PITH_ACME_ARI_S", RECHECK_S));
    }
    return ns->ari_start ? ns->ari_renew : third;
}

/* Reads and checks the stored pair: 1 valid (filled), 0 absent, -1 bad
 * (logged once per change of the file). */
static int stored(struct acme_proc *ap, struct name_state *ns, struct acme_pair *p, int64_t now,
                  struct stat *st)
{
    char *text = NULL, why[200];
    size_t n;
    memset(st, 0, sizeof *st);
    int r = acme_store_read(ap->dirfd, ns->rel, ACME_BODY_MAX + 16384, &text, &n);
    if (r == -ENOENT)
        return 0;
    fstatat(ap->dirfd, ns->rel, st, AT_SYMLINK_NOFOLLOW);
    if (r == 0) {
        r = acme_pair_check(text, n, ns->name, now, p, why, sizeof why) == 0 ? 1 : -1;
        /* Its validity, kept though it has expired: the error lines say when. */
        ns->not_before = p->not_before;
        ns->not_after = p->not_after;
    } else {
        snprintf(why, sizeof why, "cannot read it: %s", strerror(-r));
    }
    free(text);
    if (r < 0 && !ns->said_bad)
        acme_log("%s/%s: %s; a new certificate is ordered", ap->srv->set.acme_dir, ns->rel, why);
    ns->said_bad = r < 0;
    return r < 0 ? -1 : r;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* A valid stored pair: announced to the master when it is not the file it
 * loaded (another instance renewed it), and scheduled. True when due now. */
static bool current(struct acme_proc *ap, struct name_state *ns, struct acme_pair *p,
                    const struct stat *st, int64_t now)
{
    if (!same_file(st, &ns->seen)) {
        tell_master(ap); /* ours, or another instance's */
        ns->seen = *st;
        ns->said_waiting = false;
        ari_reset(ns, now); /* a new certificate: ARI's window was the old one's */
    }
    int64_t at = renewal_time(ap, ns, p, now);
    if (at > now) {
        ns->when.failures = 0;
        int64_t next = at < now + RECHECK_S ? at : now + RECHECK_S;
        ns->when.next =
            ap->client && ns->ari_next > now && ns->ari_next < next ? ns->ari_next : next;
        return false;
    }
    return true;
}

/* The stated margin (README "Automatic HTTPS"): a certificate with less
 * than a sixth of its lifetime left (15 days of Let's Encrypt's 90, a day
 * of its six) that has not been renewed is an error line, at each failed
 * attempt, and hourly while another instance holds the lock. */
static void expiry_error(struct name_state *ns, int64_t now, const char *why)
{
    int64_t nb = ns->not_before, na = ns->not_after;
    char t[64];
    if (na <= 0 || na - now >= (na - nb) / 6)
        return;
    ns->expiry_said = now;
    acme_log("error: %s: the certificate %s at %s and %s", ns->name,
             na > now ? "expires" : "expired", when_text(na, t, sizeof t), why);
}

/* Whether a file can be made in certs/ (a probe made and removed): an
 * order whose certificate cannot be stored would only spend the CA's
 * limits. Permissions alone would not say (root, read-only mounts). */
static int probe_writable(int dirfd)
{
    int fd = openat(dirfd, "certs/.pith-probe",
                    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    close(fd);
    unlinkat(dirfd, "certs/.pith-probe", 0);
    return 0;
}

/* The order itself, under the lock; the new pair stored and announced. */
static void order(struct acme_proc *ap, unsigned i, struct name_state *ns,
                  const struct acme_pair *old, int64_t now)
{
    const char *dir = ap->srv->set.acme_dir;
    char *pem = NULL, t[64];
    size_t n = 0;
    long retry_after = -1;
    bool limited = false;
    int r = probe_writable(ap->dirfd);
    if (r < 0)
        acme_log("%s/certs is not writable (%s): no certificate is ordered until it is", dir,
                 strerror(-r));
    else if (!ap->client)
        r = -1;
    else if ((r = acme_obtain(ap->client, i, ns->name, old ? old->leaf : NULL, &pem, &n,
                              &retry_after, &limited)) == 0 &&
             (r = acme_store_write(ap->dirfd, ns->rel, pem, n)) < 0)
        acme_log("%s/%s: cannot store the new certificate: %s", dir, ns->rel, strerror(-r));
    free(pem);
    if (r == 0) {
        struct acme_pair p;
        struct stat st;
        if (stored(ap, ns, &p, now, &st) == 1) {
            acme_log("%s: obtained a certificate, valid until %s", ns->name,
                     when_text(p.not_after, t, sizeof t));
            current(ap, ns, &p, &st, now); /* a new file: ARI is asked in an hour */
            ns->when.failures = 0;
        }
        acme_pair_free(&p);
        return;
    }
    int64_t next = acme_backoff(&ns->when, now, retry_after, limited);
    acme_log("%s: no certificate this time; the next attempt at %s%s", ns->name,
             when_text(next, t, sizeof t), limited ? " (the CA's rate limit)" : "");
    expiry_error(ns, now, "could not be renewed");
}

static void step(struct acme_proc *ap, unsigned i, int64_t now)
{
    struct name_state *ns = &ap->names[i];
    struct acme_pair p = {0};
    struct stat st;
    int s = stored(ap, ns, &p, now, &st);
    if (s == 1 && !current(ap, ns, &p, &st, now)) {
        acme_pair_free(&p);
        return;
    }
    int fd = -1, lk = acme_store_lock(ap->dirfd, ns->name, &fd);
    if (lk <= 0) {
        if (lk == 0 && !ns->said_waiting)
            acme_log("%s: another instance holds %s/locks/%s; waiting for its certificate",
                     ns->name, ap->srv->set.acme_dir, ns->name);
        if (lk < 0)
            acme_log("%s: cannot take %s/locks/%s: %s", ns->name, ap->srv->set.acme_dir, ns->name,
                     strerror(-lk));
        ns->said_waiting = lk == 0;
        if (now - ns->expiry_said >= RECHECK_S)
            expiry_error(ns, now,
                         "has not been renewed: the instance holding the lock has not "
                         "stored a new one");
        const char *env = getenv("PITH_ACME_LOCK_WAIT_S");
        ns->when.next = now + (env ? atoi(env) : LOCK_WAIT_S);
        acme_pair_free(&p);
        return;
    }
    /* Under the lock, look again: the holder before us may have just
     * stored what we were about to order (and a challenge file a holder
     * left when it died is no one's now). */
    acme_peers_clear(ap->peers, i);
    acme_pair_free(&p);
    s = stored(ap, ns, &p, now, &st);
    if (s != 1 || current(ap, ns, &p, &st, now))
        order(ap, i, ns, s == 1 ? &p : NULL, now);
    acme_pair_free(&p);
    acme_store_unlock(fd);
}

/* ---- the process ---------------------------------------------------------------------- */

/* What a process that serves nothing must not keep: the listeners and the
 * roots (the master dropped the TLS contexts with their keys before
 * acme_run: master.c start_acme). */
static void shed(struct server *srv)
{
    for (unsigned i = 0; i < srv->nlisten; i++) {
        if (srv->listen_fds[i] >= 0)
            sys_close(srv->listen_fds[i]);
        if (srv->tls_listen_fds[i] >= 0)
            sys_close(srv->tls_listen_fds[i]);
        if (srv->set.http3 && srv->udp_fds[i] >= 0)
            sys_close(srv->udp_fds[i]);
    }
    if (srv->h3_map_fd >= 0)
        sys_close(srv->h3_map_fd); /* HTTP/3's steering: the master's alone */
    if (srv->status_fd >= 0)
        sys_close(srv->status_fd);
    for (unsigned i = 0; i < srv->set.nsites; i++) {
        sys_close(srv->sites[i].root_fd);
        if (srv->sites[i].precomp_fd >= 0)
            sys_close(srv->sites[i].precomp_fd);
    }
    if (srv->ready_pipe[0] >= 0)
        sys_close(srv->ready_pipe[0]);
}

static int setup(struct acme_proc *ap)
{
    struct server *srv = ap->srv;
    const struct settings *set = &srv->set;
    int r;
    if (set->user && (r = sys_drop_privileges(set->user, set->group, NULL)) < 0) {
        log_error_errno("acme: drop privileges to", set->user, r);
        return -1;
    }
    ap->dirfd = open(set->acme_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (ap->dirfd < 0) {
        acme_log("cannot open the state directory %s: %s", set->acme_dir, strerror(errno));
        return -1;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
        acme_log("libcurl cannot start");
        return -1;
    }
    for (unsigned i = 0; i < set->ntls && ap->n < ACME_SLOTS; i++) {
        if (!set->tls_acme[i])
            continue;
        struct name_state *ns = &ap->names[i];
        ns->name = set->tls_acme[i];
        snprintf(ns->rel, sizeof ns->rel, "certs/%s.pem", ns->name);
        ap->n = i + 1;
    }
    const char *names[ACME_SLOTS] = {0};
    for (unsigned i = 0; i < ap->n; i++)
        names[i] = ap->names[i].name;
    ap->peers = acme_peers_new(ap->dirfd, srv->acme, names);
    if (!ap->peers) {
        acme_log("out of memory");
        return -1;
    }
    EVP_PKEY *account = account_key(ap);
    if (account)
        ap->client = acme_client_new(set, ap->peers, account);
    if (account && !ap->client)
        acme_log("cannot set up the client (out of memory?)");
    /* Without an account the stored certificates are still watched and
     * announced; nothing is ordered until the key is put right. */
    if (set->sandbox && acme_sandbox(srv) < 0)
        return -1;
    return 0;
}

int acme_run(struct server *srv)
{
    static const int sigs[] = {SIGTERM, SIGINT};
    static struct acme_proc ap;
    ap.srv = srv;
    ap.dirfd = -1;
    shed(srv);
    sys_die_with_parent(SIGTERM);
    if (sys_getppid() != srv->master_pid || setup(&ap) < 0)
        return 1;
    /* What was stored at start is what the master loaded; a restart asks
     * the CA nothing about it (not even ARI) for an hour. */
    for (unsigned i = 0; i < ap.n; i++) {
        struct name_state *ns = &ap.names[i];
        ari_reset(ns, (int64_t)time(NULL));
        if (ns->name && fstatat(ap.dirfd, ns->rel, &ns->seen, AT_SYMLINK_NOFOLLOW) < 0)
            memset(&ns->seen, 0, sizeof ns->seen);
    }
    for (;;) {
        int64_t now = (int64_t)time(NULL), next = now + RECHECK_S;
        for (unsigned i = 0; i < ap.n; i++) {
            struct name_state *ns = &ap.names[i];
            if (!ns->name)
                continue;
            if (ns->when.next <= now) {
                step(&ap, i, now);
                now = (int64_t)time(NULL);
            }
            next = ns->when.next < next ? ns->when.next : next;
        }
        /* A second at most: another instance's challenges are looked at
         * (acme_peers.c), and a dead master is noticed. */
        int64_t ms = (next - now) * 1000;
        int sig = sys_sigwait(sigs, ARRAY_LEN(sigs), ms < 100 ? 100 : ms > 1000 ? 1000 : (int)ms);
        if (sig == SIGTERM || sig == SIGINT || sys_getppid() != srv->master_pid)
            return 0;
        acme_peers_mirror(ap.peers);
    }
}

/* ---- the master's part -------------------------------------------------------------------- */

/* mkdir -p of dir/sub, 0700, given to --user's ids when uid >= 0. */
static int make_dir(const char *dir, const char *sub, int uid, int gid)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s%s%s", dir, sub[0] ? "/" : "", sub);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    struct stat st;
    if (mkdir(path, 0700) < 0 && errno != EEXIST)
        return -errno;
    if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
        return -ENOTDIR;
    if (uid >= 0 && chown(path, (uid_t)uid, (gid_t)gid) < 0)
        return -errno;
    return 0;
}

/* The start line of each name: a stored certificate loaded (the master's
 * TLS pairs took it), or one being obtained. */
void acme_start_lines(const struct server *srv)
{
    const struct settings *set = &srv->set;
    for (unsigned i = 0; i < set->ntls; i++) {
        if (!set->tls_acme[i])
            continue;
        char *text = NULL, why[200], t[64];
        size_t n;
        struct acme_pair p;
        int fd = open(set->tls_cert[i], O_RDONLY | O_CLOEXEC);
        int r = fd < 0 ? -errno : 0;
        if (fd >= 0)
            close(fd);
        if (r == 0)
            r = acme_store_read(AT_FDCWD, set->tls_cert[i], ACME_BODY_MAX + 16384, &text, &n);
        if (r == 0 && acme_pair_check(text, n, set->tls_acme[i], (int64_t)time(NULL), &p, why,
                                      sizeof why) == 0) {
            fprintf(stderr, "pith: acme: %s: loaded the stored certificate (valid until %s)\n",
                    set->tls_acme[i], when_text(p.not_after, t, sizeof t));
            acme_pair_free(&p);
        } else if (r == -ENOENT) {
            fprintf(stderr, "pith: acme: %s: no stored certificate; obtaining one from %s\n",
                    set->tls_acme[i], set->acme_ca);
        } else {
            fprintf(stderr,
                    "pith: acme: %s: the stored certificate %s is not usable (%s); "
                    "obtaining a new one from %s\n",
                    set->tls_acme[i], set->tls_cert[i], r < 0 ? strerror(-r) : why, set->acme_ca);
        }
        free(text);
    }
}

int acme_prepare(struct server *srv)
{
    const struct settings *set = &srv->set;
    if (!set->acme_email)
        return 0;
    unsigned uid = 0, gid = 0;
    bool as_user = set->user && sys_user_ids(set->user, &uid, &gid) == 0;
    if (set->group && as_user)
        gid = srv->log_gid; /* --group's, looked up by the start-up */
    static const char *const subs[] = {"", "certs", "accounts", "locks", "challenges"};
    for (size_t k = 0; k < ARRAY_LEN(subs); k++) {
        int r = make_dir(set->acme_dir, subs[k], as_user ? (int)uid : -1, (int)gid);
        if (r < 0) {
            /* Said, not fatal: HTTP is served and the ACME process says
             * again, each time it would order, why it cannot. */
            fprintf(stderr, "pith: acme: cannot make %s/%s: %s\n", set->acme_dir, subs[k],
                    strerror(-r)); /* and the others are still made */
        }
    }
    srv->acme = acme_shared_new();
    if (!srv->acme) {
        fprintf(stderr, "pith: acme: cannot map the challenge table\n");
        return 1;
    }
    return 0;
}

int acme_check(const struct settings *set, char *plan, size_t cap)
{
    if (!set->acme_email)
        return 0;
    struct stat st;
    if (stat(set->acme_dir, &st) == 0 ? !S_ISDIR(st.st_mode) || access(set->acme_dir, W_OK) < 0
                                      : errno != ENOENT) {
        fprintf(stderr, "pith: --acme-dir %s: not a writable directory\n", set->acme_dir);
        return 2;
    }
    if (set->acme_ca_root) {
        FILE *f = fopen(set->acme_ca_root, "r");
        X509 *x = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;
        if (f)
            fclose(f);
        ERR_clear_error();
        if (!x) {
            fprintf(stderr, "pith: --acme-ca-root %s: not a readable PEM certificate\n",
                    set->acme_ca_root);
            return 2;
        }
        X509_free(x);
    }
    size_t k = strlen(plan);
    snprintf(plan + k, cap > k ? cap - k : 0,
             "; acme: %u name%s from %s, stored in %s (--check does not contact the CA)",
             set->nacme, set->nacme == 1 ? "" : "s", set->acme_ca, set->acme_dir);
    return 0;
}
