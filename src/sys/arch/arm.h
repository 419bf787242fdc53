/* SPDX-License-Identifier: MIT */
/* src/sys/arch/arm.h - written by scripts/tiny-arch from the Linux UAPI headers
 * (arm-linux-gnueabihf-gcc -E); do not edit by hand. */
#ifndef PITH_ARCH_NUMBERS_H
#define PITH_ARCH_NUMBERS_H

#define SYS_read                 3      /* __NR_read */
#define SYS_write                4      /* __NR_write */
#define SYS_close                6      /* __NR_close */
#define SYS_openat               322    /* __NR_openat */
#define SYS_readlinkat           332    /* __NR_readlinkat */
#define SYS_getdents64           217    /* __NR_getdents64 */
#define SYS_lseek                19     /* __NR_lseek */
#define SYS_pread64              180    /* __NR_pread64 */
#define SYS_writev               146    /* __NR_writev */
#define SYS_dup3                 358    /* __NR_dup3 */
#define SYS_unlinkat             328    /* __NR_unlinkat */
#define SYS_sendto               290    /* __NR_sendto */
#define SYS_sendmsg              296    /* __NR_sendmsg */
#define SYS_recvfrom             292    /* __NR_recvfrom */
#define SYS_sendfile             239    /* __NR_sendfile64 */
#define SYS_accept4              366    /* __NR_accept4 */
#define SYS_socket               281    /* __NR_socket */
#define SYS_setsockopt           294    /* __NR_setsockopt */
#define SYS_bind                 282    /* __NR_bind */
#define SYS_listen               284    /* __NR_listen */
#define SYS_getsockname          286    /* __NR_getsockname */
#define SYS_getpeername          287    /* __NR_getpeername */
#define SYS_shutdown             293    /* __NR_shutdown */
#define SYS_epoll_create1        357    /* __NR_epoll_create1 */
#define SYS_epoll_ctl            251    /* __NR_epoll_ctl */
#define SYS_epoll_pwait          346    /* __NR_epoll_pwait */
#define SYS_clock_gettime        263    /* __NR_clock_gettime */
#define SYS_rt_sigaction         174    /* __NR_rt_sigaction */
#define SYS_rt_sigprocmask       175    /* __NR_rt_sigprocmask */
#define SYS_rt_sigreturn         173    /* __NR_rt_sigreturn */
#define SYS_signalfd4            355    /* __NR_signalfd4 */
#define SYS_rt_sigtimedwait      177    /* __NR_rt_sigtimedwait */
#define SYS_clone                120    /* __NR_clone */
#define SYS_wait4                114    /* __NR_wait4 */
#define SYS_kill                 37     /* __NR_kill */
#define SYS_getpid               20     /* __NR_getpid */
#define SYS_getppid              64     /* __NR_getppid */
#define SYS_prctl                172    /* __NR_prctl */
#define SYS_exit_group           248    /* __NR_exit_group */
#define SYS_prlimit64            369    /* __NR_prlimit64 */
#define SYS_sched_getaffinity    242    /* __NR_sched_getaffinity */
#define SYS_mmap                 192    /* __NR_mmap2 */
#define SYS_munmap               91     /* __NR_munmap */
#define SYS_getcwd               183    /* __NR_getcwd */
#define SYS_fchdir               133    /* __NR_fchdir */
#define SYS_setsid               66     /* __NR_setsid */
#define SYS_geteuid              201    /* __NR_geteuid32 */
#define SYS_setuid               213    /* __NR_setuid32 */
#define SYS_setgid               214    /* __NR_setgid32 */
#define SYS_setgroups            206    /* __NR_setgroups32 */
#define SYS_fchown               207    /* __NR_fchown32 */
#define SYS_getrandom            384    /* __NR_getrandom */
#define SYS_openat2              437    /* __NR_openat2 */
#define SYS_fstatat              327    /* __NR_fstatat64 */
#define SYS_fcntl                221    /* __NR_fcntl64 */
#define SYS_connect              283    /* __NR_connect */
#define SYS_getsockopt           295    /* __NR_getsockopt */
#define SYS_fchmodat             333    /* __NR_fchmodat */
#define SYS_fchownat             325    /* __NR_fchownat */
#define SYS_umask                60     /* __NR_umask */
#define SYS_renameat             329    /* __NR_renameat */
#define SYS_pipe2                359    /* __NR_pipe2 */
#define SYS_execve               11     /* __NR_execve */
#define SYS_chroot               61     /* __NR_chroot */
#define SYS_chdir                12     /* __NR_chdir */
#define SYS_landlock_create_ruleset 444    /* __NR_landlock_create_ruleset */
#define SYS_landlock_add_rule    445    /* __NR_landlock_add_rule */
#define SYS_landlock_restrict_self 446    /* __NR_landlock_restrict_self */
#define SYS_seccomp              383    /* __NR_seccomp */
#define SYS_fstat                197    /* __NR_fstat64 */
#define SYS_statx                397    /* __NR_statx */
#define SYS_gettimeofday         78     /* __NR_gettimeofday */
#define SYS_restart_syscall      0      /* __NR_restart_syscall */
#define SYS_mremap               163    /* __NR_mremap */
#define SYS_brk                  45     /* __NR_brk */
#define SYS_madvise              220    /* __NR_madvise */
#define SYS_epoll_wait           252    /* __NR_epoll_wait */
#define SYS_io_uring_enter       426    /* __NR_io_uring_enter */
#define SYS_flock                143    /* __NR_flock */

#define EPERM                  1
#define ENOENT                 2
#define ESRCH                  3
#define EINTR                  4
#define EIO                    5
#define ENXIO                  6
#define E2BIG                  7
#define EBADF                  9
#define ECHILD                 10
#define EAGAIN                 11
#define ENOMEM                 12
#define EACCES                 13
#define EFAULT                 14
#define EEXIST                 0x11
#define EXDEV                  0x12
#define ENODEV                 0x13
#define ENOTDIR                0x14
#define EISDIR                 0x15
#define EINVAL                 0x16
#define ENFILE                 0x17
#define EMFILE                 0x18
#define ENOSPC                 0x1c
#define ESPIPE                 0x1d
#define EROFS                  0x1e
#define EPIPE                  0x20
#define ERANGE                 0x22
#define ENAMETOOLONG           0x24
#define ENOSYS                 0x26
#define ELOOP                  0x28
#define EOVERFLOW              0x4b
#define EOPNOTSUPP             0x5f
#define EAFNOSUPPORT           0x61
#define EADDRINUSE             0x62
#define EADDRNOTAVAIL          0x63
#define ECONNABORTED           0x67
#define ECONNRESET             0x68
#define ENOBUFS                0x69
#define ETIMEDOUT              0x6e
#define ENOTCONN               0x6b
#define ECANCELED              0x7d
#define ENOPROTOOPT            0x5c
#define ECONNREFUSED           0x6f
#define ENOTSOCK               0x58
#define O_RDONLY               0
#define O_WRONLY               1
#define O_RDWR                 2
#define O_CREAT                0x40
#define O_EXCL                 0x80
#define O_NOCTTY               0x100
#define O_TRUNC                0x200
#define O_APPEND               0x400
#define O_NONBLOCK             0x800
#define O_DIRECTORY            0x4000
#define O_NOFOLLOW             0x8000
#define O_CLOEXEC              0x80000
#define O_PATH                 0x200000
#define O_LARGEFILE            0x20000
#define AT_FDCWD               -100
#define AT_SYMLINK_NOFOLLOW    0x100
#define AT_EMPTY_PATH          0x1000
#define F_DUPFD_CLOEXEC        0x406
#define FASYNC                 0x2000
#define F_GETFL                3
#define F_SETFL                4
#define F_SETFD                2
#define F_SETOWN               8
#define FD_CLOEXEC             1
#define SIGHUP                 1
#define SIGINT                 2
#define SIGABRT                6
#define SIGKILL                9
#define SIGUSR1                10
#define SIGUSR2                12
#define SIGIO                  0x1d
#define SIGPIPE                13
#define SIGTERM                15
#define SIGCHLD                0x11
#define SIG_BLOCK              0
#define SIG_SETMASK            2
#define SA_RESTORER            0x4000000
#define SOL_SOCKET             1
#define SO_REUSEADDR           2
#define SO_RCVBUF              8
#define SO_REUSEPORT           15
#define SO_LINGER              13
#define SO_TYPE                3
#define SO_ACCEPTCONN          0x1e
#define IPPROTO_TCP            6
#define IPPROTO_IPV6           0x29
#define IPV6_V6ONLY            0x1a
#define TCP_NODELAY            1
#define EPOLLIN                1
#define EPOLLOUT               4
#define EPOLLERR               8
#define EPOLLHUP               0x10
#define EPOLLRDHUP             0x2000
#define EPOLLET                0x80000000
#define EPOLL_CLOEXEC          0x80000
#define EPOLL_CTL_ADD          1
#define EPOLL_CTL_DEL          2
#define EPOLL_CTL_MOD          3
#define EPOLLEXCLUSIVE         0x10000000
#define SFD_NONBLOCK           0x800
#define SFD_CLOEXEC            0x80000
#define RLIMIT_NOFILE          7
#define PROT_READ              1
#define PROT_WRITE             2
#define MAP_PRIVATE            2
#define MAP_SHARED             1
#define MAP_ANONYMOUS          0x20
#define PR_SET_PDEATHSIG       1
#define WNOHANG                1
#define CLOCK_REALTIME         0
#define CLOCK_MONOTONIC        1
#define RESOLVE_BENEATH        8
#define RESOLVE_NO_SYMLINKS    4
#define RESOLVE_NO_MAGICLINKS  2
#define MADV_DONTNEED          4
#define LOCK_EX                2
#define LOCK_UN                8
#define PR_SET_NO_NEW_PRIVS    0x26
#define LANDLOCK_CREATE_RULESET_VERSION 1
#define SECCOMP_SET_MODE_FILTER 1
#define SECCOMP_GET_ACTION_AVAIL 2
#define SECCOMP_RET_KILL_PROCESS 0x80000000
#define SECCOMP_RET_ALLOW      0x7fff0000
#define AUDIT_ARCH_X86_64      0xc000003e
#define AUDIT_ARCH_AARCH64     0xc00000b7
#define BPF_LD                 0
#define BPF_W                  0
#define BPF_ABS                0x20
#define BPF_JMP                5
#define BPF_JEQ                0x10
#define BPF_JGE                0x30
#define BPF_K                  0
#define BPF_RET                6

/* struct stat64 as fstatat fills it in */
#define KSTAT_BYTES 104
#define KSTAT_DEV_OFF 0
#define KSTAT_DEV_SIZE 8
#define KSTAT_INO_OFF 96
#define KSTAT_INO_SIZE 8
#define KSTAT_MODE_OFF 16
#define KSTAT_MODE_SIZE 4
#define KSTAT_SIZE_OFF 48
#define KSTAT_SIZE_SIZE 8
#define KSTAT_MTIME_OFF 80
#define KSTAT_MTIME_SIZE 4
#define KSTAT_MTIME_NSEC_OFF 84
#define KSTAT_MTIME_NSEC_SIZE 4

#endif
