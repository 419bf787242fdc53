/* SPDX-License-Identifier: MIT */
/*
 * sys_raw_users.c - sys.h's identities over raw system calls (pith-tiny;
 * the common rules are in sys_raw.h): users and groups read from
 * /etc/passwd and /etc/group as files (there is no NSS in pith-tiny), and
 * dropping privileges (setgroups, chroot, setgid, setuid).
 */
#include "sys/sys.h"

#include "core/bytes.h"
#include "sys/sys_raw.h"

/* A decimal number of at most max, at *s; advances *s. */
static bool dec(const char **s, unsigned max, unsigned *out)
{
    const char *p = *s;
    unsigned v = 0;
    if (!ascii_is_digit(*p))
        return false;
    while (ascii_is_digit(*p)) {
        v = v * 10 + (unsigned)(*p++ - '0');
        if (v > max)
            return false;
    }
    *out = v;
    *s = p;
    return true;
}

/* Calls fn on each line of path (lines longer than the buffer are skipped);
 * stops when fn returns true. Returns true if it did, false at the end. */
static bool each_line(const char *path, bool (*fn)(char *line, void *ctx), void *ctx)
{
    char buf[4096];
    size_t have = 0;
    bool found = false, eof = false, skipping = false;
    int fd = sys_openat(AT_FDCWD, path, O_RDONLY);
    if (fd < 0)
        return false;
    while (!found && !eof) {
        long n = sys_read(fd, buf + have, sizeof buf - 1 - have);
        if (n <= 0)
            eof = true, buf[have++] = '\n'; /* the last line may lack its newline */
        else
            have += (size_t)n;
        size_t start = 0;
        for (size_t i = 0; i < have && !found; i++) {
            if (buf[i] != '\n')
                continue;
            buf[i] = '\0';
            found = !skipping && fn(buf + start, ctx);
            skipping = false;
            start = i + 1;
        }
        if (start == 0 && have >= sizeof buf - 1)
            skipping = true, start = have; /* drop an overlong line's start */
        memmove(buf, buf + start, have - start);
        have -= start;
    }
    sys_close(fd);
    return found;
}

/* Where field i (0-based) of a ':'-separated line starts, or NULL. */
static char *field(char *line, int i)
{
    for (; i > 0; i--) {
        while (*line && *line != ':')
            line++;
        if (!*line)
            return NULL;
        line++;
    }
    return line;
}

/* The length of a field that ends at ':' or the end of the line. */
static size_t field_len(const char *f)
{
    size_t n = 0;
    while (f[n] && f[n] != ':')
        n++;
    return n;
}

struct user_query {
    const char *name;
    unsigned uid, gid;
    unsigned groups[64];
    unsigned ngroups;
};

static bool match_name(const char *line, const char *name)
{
    size_t n = field_len(line);
    return n == strlen(name) && mem_eq(line, name, n);
}

static bool passwd_line(char *line, void *ctx)
{
    struct user_query *q = ctx;
    const char *u, *g;
    if (!match_name(line, q->name) || !(u = field(line, 2)) || !(g = field(line, 3)))
        return false;
    return dec(&u, 0xfffffffeu, &q->uid) && *u == ':' && dec(&g, 0xfffffffeu, &q->gid);
}

/* A group whose member list (field 3) names the user. */
static bool group_line(char *line, void *ctx)
{
    struct user_query *q = ctx;
    const char *g = field(line, 2), *m = field(line, 3);
    unsigned gid;
    if (!g || !m || !dec(&g, 0xfffffffeu, &gid))
        return false;
    size_t want = strlen(q->name);
    while (*m) {
        size_t n = 0;
        while (m[n] && m[n] != ',')
            n++;
        if (n == want && mem_eq(m, q->name, n) && q->ngroups < ARRAY_LEN(q->groups)) {
            q->groups[q->ngroups++] = gid;
            break;
        }
        m += n + (m[n] == ',');
    }
    return false; /* read every group */
}

int sys_user_ids(const char *user, unsigned *uid, unsigned *gid)
{
    struct user_query q = {.name = user};
    if (!each_line("/etc/passwd", passwd_line, &q))
        return -ENOENT;
    *uid = q.uid;
    *gid = q.gid;
    return 0;
}

bool sys_is_root(void)
{
    return SC0(geteuid) == 0;
}

int sys_check_user(const char *user)
{
    unsigned uid, gid;
    if (!sys_is_root())
        return -EPERM;
    return sys_user_ids(user, &uid, &gid);
}

/* A group line named q->name: its id in q->gid. */
static bool group_name_line(char *line, void *ctx)
{
    struct user_query *q = ctx;
    const char *g;
    return match_name(line, q->name) && (g = field(line, 2)) && dec(&g, 0xfffffffeu, &q->gid);
}

int sys_group_id(const char *group, unsigned *gid)
{
    struct user_query q = {.name = group};
    if (!each_line("/etc/group", group_name_line, &q))
        return -ENOENT;
    *gid = q.gid;
    return 0;
}

int sys_drop_privileges(const char *user, const char *group, const char *chroot_dir)
{
    struct user_query q = {.name = user};
    if (!sys_is_root())
        return -EPERM;
    if (!each_line("/etc/passwd", passwd_line, &q))
        return -ENOENT;
    if (group) {
        int r = sys_group_id(group, &q.gid); /* --group: instead of the user's own */
        if (r < 0)
            return r;
    }
    q.groups[q.ngroups++] = q.gid; /* initgroups: the primary group too */
    each_line("/etc/group", group_line, &q);
    /* The names are looked up (passwd, group) before the chroot, which
     * has no /etc; the ids are set after it, which needs root. */
    long r = SC2(setgroups, q.ngroups, q.groups);
    if (r >= 0 && chroot_dir && (r = SC1(chroot, chroot_dir)) >= 0)
        r = SC1(chdir, "/");
    if (r >= 0)
        r = SC1(setgid, q.gid);
    if (r >= 0)
        r = SC1(setuid, q.uid);
    if (r < 0)
        return (int)r;
    /* setuid as root sets the saved uid too; make sure root is gone. */
    if (q.uid != 0 && SC1(setuid, 0) == 0)
        return -EPERM;
    return 0;
}

int sys_fchown(int fd, unsigned uid, unsigned gid)
{
    return (int)SC3(fchown, fd, uid, gid);
}

int sys_owner_ids(const char *spec, unsigned *uid, unsigned *gid)
{
    char user[256];
    size_t n = strcspn(spec, ":");
    if (n == 0 || n >= sizeof user)
        return -ENOENT;
    memcpy(user, spec, n);
    user[n] = '\0';
    int r = sys_user_ids(user, uid, gid);
    if (r < 0 || !spec[n])
        return r;
    return sys_group_id(spec + n + 1, gid); /* USER:GROUP */
}
