/* SPDX-License-Identifier: MIT */
/* src/sys/arch/mips.h - written by scripts/tiny-arch from the Linux UAPI headers
 * (mips-linux-gnu-gcc -E); do not edit by hand. */
#ifndef PITH_ARCH_NUMBERS_H
#define PITH_ARCH_NUMBERS_H

#define SYS_read                 4003   /* __NR_read */
#define SYS_write                4004   /* __NR_write */
#define SYS_close                4006   /* __NR_close */
#define SYS_openat               4288   /* __NR_openat */
#define SYS_readlinkat           4298   /* __NR_readlinkat */
#define SYS_getdents64           4219   /* __NR_getdents64 */
#define SYS_lseek                4019   /* __NR_lseek */
#define SYS_pread64              4200   /* __NR_pread64 */
#define SYS_writev               4146   /* __NR_writev */
#define SYS_dup3                 4327   /* __NR_dup3 */
#define SYS_unlinkat             4294   /* __NR_unlinkat */
#define SYS_sendto               4180   /* __NR_sendto */
#define SYS_sendmsg              4179   /* __NR_sendmsg */
#define SYS_recvfrom             4176   /* __NR_recvfrom */
#define SYS_sendfile             4237   /* __NR_sendfile64 */
#define SYS_accept4              4334   /* __NR_accept4 */
#define SYS_socket               4183   /* __NR_socket */
#define SYS_setsockopt           4181   /* __NR_setsockopt */
#define SYS_bind                 4169   /* __NR_bind */
#define SYS_listen               4174   /* __NR_listen */
#define SYS_getsockname          4172   /* __NR_getsockname */
#define SYS_getpeername          4171   /* __NR_getpeername */
#define SYS_shutdown             4182   /* __NR_shutdown */
#define SYS_epoll_create1        4326   /* __NR_epoll_create1 */
#define SYS_epoll_ctl            4249   /* __NR_epoll_ctl */
#define SYS_epoll_pwait          4313   /* __NR_epoll_pwait */
#define SYS_clock_gettime        4263   /* __NR_clock_gettime */
#define SYS_rt_sigaction         4194   /* __NR_rt_sigaction */
#define SYS_rt_sigprocmask       4195   /* __NR_rt_sigprocmask */
#define SYS_rt_sigreturn         4193   /* __NR_rt_sigreturn */
#define SYS_signalfd4            4324   /* __NR_signalfd4 */
#define SYS_rt_sigtimedwait      4197   /* __NR_rt_sigtimedwait */
#define SYS_clone                4120   /* __NR_clone */
#define SYS_wait4                4114   /* __NR_wait4 */
#define SYS_kill                 4037   /* __NR_kill */
#define SYS_getpid               4020   /* __NR_getpid */
#define SYS_getppid              4064   /* __NR_getppid */
#define SYS_prctl                4192   /* __NR_prctl */
#define SYS_exit_group           4246   /* __NR_exit_group */
#define SYS_prlimit64            4338   /* __NR_prlimit64 */
#define SYS_sched_getaffinity    4240   /* __NR_sched_getaffinity */
#define SYS_mmap                 4210   /* __NR_mmap2 */
#define SYS_munmap               4091   /* __NR_munmap */
#define SYS_getcwd               4203   /* __NR_getcwd */
#define SYS_fchdir               4133   /* __NR_fchdir */
#define SYS_setsid               4066   /* __NR_setsid */
#define SYS_geteuid              4049   /* __NR_geteuid */
#define SYS_setuid               4023   /* __NR_setuid */
#define SYS_setgid               4046   /* __NR_setgid */
#define SYS_setgroups            4081   /* __NR_setgroups */
#define SYS_fchown               4095   /* __NR_fchown */
#define SYS_getrandom            4353   /* __NR_getrandom */
#define SYS_openat2              4437   /* __NR_openat2 */
#define SYS_fstatat              4293   /* __NR_fstatat64 */
#define SYS_fcntl                4220   /* __NR_fcntl64 */
#define SYS_connect              4170   /* __NR_connect */
#define SYS_getsockopt           4173   /* __NR_getsockopt */
#define SYS_fchmodat             4299   /* __NR_fchmodat */
#define SYS_fchownat             4291   /* __NR_fchownat */
#define SYS_umask                4060   /* __NR_umask */
#define SYS_renameat             4295   /* __NR_renameat */
#define SYS_pipe2                4328   /* __NR_pipe2 */
#define SYS_execve               4011   /* __NR_execve */
#define SYS_chroot               4061   /* __NR_chroot */
#define SYS_chdir                4012   /* __NR_chdir */
#define SYS_landlock_create_ruleset 4444   /* __NR_landlock_create_ruleset */
#define SYS_landlock_add_rule    4445   /* __NR_landlock_add_rule */
#define SYS_landlock_restrict_self 4446   /* __NR_landlock_restrict_self */
#define SYS_seccomp              4352   /* __NR_seccomp */
#define SYS_fstat                4215   /* __NR_fstat64 */
#define SYS_statx                4366   /* __NR_statx */
#define SYS_gettimeofday         4078   /* __NR_gettimeofday */
#define SYS_time                 4013   /* __NR_time */
#define SYS_restart_syscall      4253   /* __NR_restart_syscall */
#define SYS_mremap               4167   /* __NR_mremap */
#define SYS_brk                  4045   /* __NR_brk */
#define SYS_madvise              4218   /* __NR_madvise */
#define SYS_epoll_wait           4250   /* __NR_epoll_wait */
#define SYS_io_uring_enter       4426   /* __NR_io_uring_enter */
#define SYS_flock                4143   /* __NR_flock */

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
#define ENAMETOOLONG           0x4e
#define ENOSYS                 0x59
#define ELOOP                  0x5a
#define EOVERFLOW              0x4f
#define EOPNOTSUPP             0x7a
#define EAFNOSUPPORT           0x7c
#define EADDRINUSE             0x7d
#define EADDRNOTAVAIL          0x7e
#define ECONNABORTED           0x82
#define ECONNRESET             0x83
#define ENOBUFS                0x84
#define ETIMEDOUT              0x91
#define ENOTCONN               0x86
#define ECANCELED              0x9e
#define ENOPROTOOPT            0x63
#define ECONNREFUSED           0x92
#define ENOTSOCK               0x5f
#define O_RDONLY               0
#define O_WRONLY               1
#define O_RDWR                 2
#define O_CREAT                0x100
#define O_EXCL                 0x400
#define O_NOCTTY               0x800
#define O_TRUNC                0x200
#define O_APPEND               8
#define O_NONBLOCK             0x80
#define O_DIRECTORY            0x10000
#define O_NOFOLLOW             0x20000
#define O_CLOEXEC              0x80000
#define O_PATH                 0x200000
#define O_LARGEFILE            0x2000
#define AT_FDCWD               -100
#define AT_SYMLINK_NOFOLLOW    0x100
#define AT_EMPTY_PATH          0x1000
#define F_DUPFD_CLOEXEC        0x406
#define FASYNC                 0x1000
#define F_GETFL                3
#define F_SETFL                4
#define F_SETFD                2
#define F_SETOWN               0x18
#define FD_CLOEXEC             1
#define SIGHUP                 1
#define SIGINT                 2
#define SIGABRT                6
#define SIGKILL                9
#define SIGUSR1                0x10
#define SIGUSR2                0x11
#define SIGIO                  0x16
#define SIGPIPE                13
#define SIGTERM                15
#define SIGCHLD                0x12
#define SIG_BLOCK              1
#define SIG_SETMASK            3
#define SOL_SOCKET             0xffff
#define SO_REUSEADDR           4
#define SO_RCVBUF              0x1002
#define SO_REUSEPORT           0x200
#define SO_LINGER              0x80
#define SO_TYPE                0x1008
#define SO_ACCEPTCONN          0x1009
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
#define SFD_NONBLOCK           0x80
#define SFD_CLOEXEC            0x80000
#define RLIMIT_NOFILE          5
#define PROT_READ              1
#define PROT_WRITE             2
#define MAP_PRIVATE            2
#define MAP_SHARED             1
#define MAP_ANONYMOUS          0x800
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
#define KSTAT_DEV_SIZE 4
#define KSTAT_INO_OFF 16
#define KSTAT_INO_SIZE 8
#define KSTAT_MODE_OFF 24
#define KSTAT_MODE_SIZE 4
#define KSTAT_SIZE_OFF 56
#define KSTAT_SIZE_SIZE 8
#define KSTAT_MTIME_OFF 72
#define KSTAT_MTIME_SIZE 4
#define KSTAT_MTIME_NSEC_OFF 76
#define KSTAT_MTIME_NSEC_SIZE 4

#endif
