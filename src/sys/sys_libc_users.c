/* SPDX-License-Identifier: MIT */
/*
 * sys_libc_users.c - sys.h's identities over glibc (the full build; the
 * common rules are in sys_libc.h): users and groups looked up through NSS
 * (getpwnam, getgrnam; errno 0 with no entry is -ENOENT), the root check,
 * and dropping privileges (initgroups, chroot, setgid, setuid). The jobs
 * are pith-tiny's (sys_raw_users.c), so either build's file is found by
 * job.
 */
#include "sys/sys.h"

#include "sys/sys_libc.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <string.h>
#include <unistd.h>

bool sys_is_root(void)
{
    return geteuid() == 0;
}

int sys_check_user(const char *user)
{
    if (geteuid() != 0)
        return -EPERM;
    return getpwnam(user) ? 0 : -ENOENT;
}

int sys_user_ids(const char *user, unsigned *uid, unsigned *gid)
{
    errno = 0;
    struct passwd *pw = getpwnam(user);
    if (!pw)
        return errno ? -errno : -ENOENT;
    *uid = pw->pw_uid;
    *gid = pw->pw_gid;
    return 0;
}

int sys_group_id(const char *group, unsigned *gid)
{
    errno = 0;
    struct group *gr = getgrnam(group);
    if (!gr)
        return errno ? -errno : -ENOENT;
    *gid = gr->gr_gid;
    return 0;
}

int sys_owner_ids(const char *spec, unsigned *uid, unsigned *gid)
{
    char user[256];
    const char *colon = strchr(spec, ':');
    size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
    if (n == 0 || n >= sizeof user)
        return -ENOENT;
    memcpy(user, spec, n);
    user[n] = '\0';
    errno = 0;
    struct passwd *pw = getpwnam(user);
    if (!pw)
        return errno ? -errno : -ENOENT;
    *uid = pw->pw_uid;
    *gid = pw->pw_gid;
    if (colon) {
        errno = 0;
        struct group *gr = getgrnam(colon + 1);
        if (!gr)
            return errno ? -errno : -ENOENT;
        *gid = gr->gr_gid;
    }
    return 0;
}

int sys_drop_privileges(const char *user, const char *group, const char *chroot_dir)
{
    if (geteuid() != 0)
        return -EPERM;
    errno = 0;
    struct passwd *pw = getpwnam(user);
    if (!pw)
        return errno ? -errno : -ENOENT;
    uid_t uid = pw->pw_uid;
    gid_t gid = pw->pw_gid;
    if (group) {
        errno = 0;
        struct group *gr = getgrnam(group);
        if (!gr)
            return errno ? -errno : -ENOENT;
        gid = gr->gr_gid;
    }
    /* The names are looked up (passwd, group) before the chroot, which
     * has no /etc; the ids are set after it, which needs root. */
    if (initgroups(pw->pw_name, gid) < 0)
        return -errno;
    if (chroot_dir && (chroot(chroot_dir) < 0 || chdir("/") < 0))
        return -errno;
    if (setgid(gid) < 0 || setuid(uid) < 0)
        return -errno;
    /* setuid as root sets the saved uid too; make sure root is gone. */
    if (setuid(0) == 0)
        return -EPERM;
    return 0;
}

int sys_fchown(int fd, unsigned uid, unsigned gid)
{
    return (int)ret(fchown(fd, uid, gid));
}
