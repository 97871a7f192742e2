#!/usr/bin/env python3
"""Source of the seccomp profiles sbx-oci ships (config/seccomp/*.json).

JSON has no comments, so the profiles are written here, explained, and generated:
    python3 config/seccomp/profiles.py        # rewrites default.json and python.json
tests/seccomp.bats checks that the committed JSON matches this script.

Both profiles are allow-lists: anything not named fails with EPERM (defaultErrnoRet 1),
and sbx-oci returns ENOSYS for syscalls newer than any named here (so a newer glibc
falls back instead of failing). A deny-list goes stale with every kernel release; an
allow-list fails closed (THREATS.md section 5).
"""
import json
import os
import sys

EPERM, ENOSYS, EOPNOTSUPP = 1, 38, 95
TIOCSTI, TIOCLINUX = 0x5412, 0x541C
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_VSOCK = 1, 2, 10, 16, 40
# CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET (Docker's mask) | NEWTIME
CLONE_NAMESPACE_FLAGS = 0x7E020000 | 0x80
ARCHES = ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"]
# The Python sandbox runs the host's 64-bit interpreter: it lists no architecture, so
# its filter covers the native one only and a syscall through another table (int 0x80
# into the i386 one, the x32 one) kills the thread. Those compat entry points are
# attack surface no interpreter needs, and the filter is a third the size (it is
# loaded on every run: ~880 instructions to ~300).


def allow(names, **extra):
    return dict(names=sorted(names), action="SCMP_ACT_ALLOW", **extra)


def ioctl_without(excluded, bits=32):
    """Allow ioctl unless the command's low 32 bits are one of `excluded`.

    The kernel reads the command as a 32-bit int, so the test must ignore the upper
    half of the register (CVE-2019-10063: TIOCSTI | 1 << 32 slipped past a 64-bit
    compare). libseccomp cannot express "allow unless masked-equal" (an unconditional
    allow absorbs a conditional deny, and one rule cannot compare an argument twice),
    so the allowed set is written as a union of masked prefixes: every 32-bit value
    that is not excluded shares a prefix with no excluded value."""
    rules = []

    def cover(prefix, depth, values):
        # values: the excluded values that start with `prefix` (depth bits from the top)
        if not values:
            mask = ((1 << depth) - 1) << (bits - depth) if depth else 0
            rules.append({"index": 1, "value": mask, "valueTwo": prefix << (bits - depth), "op": "SCMP_CMP_MASKED_EQ"})
            return
        if depth == bits:
            return  # an excluded value itself
        bit = bits - depth - 1
        for b in (0, 1):
            cover(prefix << 1 | b, depth + 1, [v for v in values if (v >> bit) & 1 == b])

    cover(0, 0, list(excluded))
    # One rule per prefix (rules for the same syscall are alternatives).
    return [dict(names=["ioctl"], action="SCMP_ACT_ALLOW", args=[r]) for r in rules]


def clone_without_namespaces():
    return [allow(["clone"], args=[{"index": 0, "value": CLONE_NAMESPACE_FLAGS, "valueTwo": 0,
                                    "op": "SCMP_CMP_MASKED_EQ"}])]


def clone3_enosys():
    # clone3's flags are behind a pointer seccomp cannot read: refuse it with ENOSYS so
    # glibc falls back to clone (whose flags are checked). EPERM would be fatal to
    # glibc (every thread creation would fail).
    return [dict(names=["clone3"], action="SCMP_ACT_ERRNO", errnoRet=ENOSYS)]


def personality_allowed():
    # PER_LINUX, PER_LINUX32, UNAME26|PER_LINUX, ... and the query value 0xffffffff.
    return [allow(["personality"], args=[{"index": 0, "value": v, "op": "SCMP_CMP_EQ"}])
            for v in (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)]


# ---------------------------------------------------------------------- python.json
# One-shot CPython with numpy, pandas, threads, multiprocessing, subprocess, sqlite
# and sockets. Measured (THREATS.md section 5: strace -f -c of that workload) to use 64
# distinct syscalls; these are those plus their close variants, so that a library
# choosing stat over statx, or pread over read, still works.
PYTHON_FILES = """read write readv writev pread64 pwrite64 preadv preadv2 pwritev pwritev2 open openat openat2
close close_range dup dup2 dup3 fstat lstat stat newfstatat statx fstatfs statfs getdents64 lseek
ftruncate truncate fallocate fsync fdatasync rename renameat renameat2 unlink unlinkat mkdir mkdirat
rmdir symlink symlinkat readlink readlinkat link linkat chmod fchmod fchmodat fchown fchownat utimensat
umask chdir fchdir getcwd faccessat faccessat2 access copy_file_range sendfile splice memfd_create
fcntl flock fadvise64 pipe pipe2"""
PYTHON_MEMORY = "mmap munmap mprotect madvise mremap brk mincore membarrier"
PYTHON_THREADS = """futex futex_waitv set_robust_list get_robust_list rseq set_tid_address gettid tgkill
tkill kill rt_sigaction rt_sigprocmask rt_sigreturn rt_sigsuspend rt_sigpending rt_sigtimedwait
rt_sigqueueinfo sigaltstack sched_yield sched_getaffinity sched_setaffinity sched_getparam
sched_getscheduler getpriority setpriority restart_syscall"""
PYTHON_PROCESSES = """wait4 waitid vfork exit exit_group getpid getppid getpgrp getpgid
setpgid setsid getsid getuid getgid geteuid getegid getresuid getresgid getgroups prlimit64
getrlimit getrusage times uname sysinfo getrandom arch_prctl prctl capget"""
PYTHON_TIME = "clock_gettime clock_getres clock_nanosleep nanosleep gettimeofday time alarm setitimer getitimer"
PYTHON_EVENTS = "poll ppoll select pselect6 epoll_create epoll_create1 epoll_ctl epoll_wait epoll_pwait eventfd2"
# multiprocessing's locks are POSIX semaphores: files in /dev/shm (open/mmap/unlink), no
# SysV IPC or message queues.
PYTHON_SOCKETS = """socketpair bind listen accept accept4 connect getsockname getpeername getsockopt
setsockopt sendto recvfrom sendmsg recvmsg sendmmsg recvmmsg shutdown"""
# Added because tests/python.bats found ordinary stdlib calls failing under the measured
# set (the measurement above did not exercise them):
# - listxattr llistxattr: shutil.copy2, copystat, copytree and shutil.move across file
#   systems (e.g. /tmp to the workdir) call os.listxattr and re-raise any errno but
#   ENOTSUP/ENODATA/EINVAL, so EPERM broke them. flistxattr and the get variants are the
#   same read-only metadata by fd and by name. set/removexattr stay refused: shutil
#   tolerates EPERM when copying a value, and security.* or trusted.* names are not
#   something a workload should write.
# - chown lchown: what glibc calls for os.chown/os.lchown (tarfile.extractall as root);
#   fchown and fchownat are already allowed, and the kernel still needs CAP_CHOWN to
#   give a file away.
# - pause: signal.pause() ignores pause's return value, so EPERM made it return at once
#   instead of waiting for the signal (a wait loop would spin); rt_sigsuspend, which does
#   the same, is already allowed.
# - sched_get_priority_min sched_get_priority_max: read-only queries behind
#   os.sched_get_priority_min/max, next to the already allowed sched_getscheduler.
# - msync: mmap.mmap.flush() and numpy.memmap.flush() write a shared file mapping
#   back with it, and raised PermissionError; it only acts on the caller's own mappings.
# - mknod mknodat (argument-filtered, see mknod_without_devices): os.mkfifo and
#   os.mknod for FIFOs, sockets and regular files.
# - creat: what GNU tar (and old C code) calls to make a file; openat with O_CREAT, which
#   it equals, is allowed ("tar -cf x.tar" failed with "Operation not permitted").
# - sched_rr_get_interval: a read-only query (os.sched_rr_get_interval).
# - setuid setgid setreuid setregid setresuid setresgid: without capabilities they can
#   only choose among the ids the process has (one, in the sandbox); posix_spawn with
#   POSIX_SPAWN_RESETIDS and os.setreuid(-1, -1) call them and failed.
# Added because CPython's own tests (tests/compat, run bare and in the sandbox)
# passed bare and failed here:
# - sched_setparam sched_setscheduler sched_getattr sched_setattr: os.sched_setscheduler
#   and posix_spawn's setscheduler/setsigdef; without CAP_SYS_NICE a process can only
#   choose an ordinary policy or lower its own priority.
# - pidfd_open pidfd_send_signal: os.pidfd_open and asyncio's PidfdChildWatcher; a
#   pidfd reaches only a process the caller can already see and signal (its own pid
#   namespace). pidfd_getfd (another process's fds, a ptrace right) stays refused.
PYTHON_ADDED = """listxattr llistxattr flistxattr getxattr lgetxattr fgetxattr chown lchown pause
sched_get_priority_min sched_get_priority_max msync creat sched_rr_get_interval setuid setgid setreuid
setregid setresuid setresgid sched_setparam sched_setscheduler sched_getattr sched_setattr pidfd_open
pidfd_send_signal"""
S_IFMT, S_IFREG, S_IFIFO, S_IFSOCK = 0o170000, 0o100000, 0o010000, 0o140000
S_ISUID, S_ISGID = 0o4000, 0o2000
SETID_BITS = S_ISUID | S_ISGID


def mknod_without_devices():
    """mknod/mknodat only for a regular file, FIFO or socket (or file type 0, which the
    kernel treats as regular), without a setuid or setgid bit: never a device node,
    whatever capabilities the container was given. The mode is mknod's argument 1 and
    mknodat's argument 2; type and set-id bits are one masked compare."""
    return [allow([name], args=[{"index": index, "value": S_IFMT | SETID_BITS, "valueTwo": kind,
                                 "op": "SCMP_CMP_MASKED_EQ"}])
            for name, index in (("mknod", 1), ("mknodat", 2))
            for kind in (0, S_IFREG, S_IFIFO, S_IFSOCK)]


# What the sandbox writes lands on the host owned by the workdir's owner, root
# included (an idmapped mount: runtime/sandbox/sandbox_workdir.c). A setuid or setgid
# bit on such a file would be a privilege on the host, so no mode the sandbox gives a
# file may carry one: chmod, fchmod and fchmodat (and the mode of open, openat and
# creat, which applies when they create) are allowed only with both bits clear; with
# them, EPERM (an ordinary chmod failure code handles). mkdir and mkdirat need no rule:
# the kernel keeps only the permission and sticky bits of their mode. openat2's mode is
# in a struct seccomp cannot read: it gets ENOSYS, and glibc and CPython never call it.
# fchmodat2 is above the newest syscall named, so it gets ENOSYS too (glibc falls back
# to fchmodat). Xattrs (a file capability is security.capability) cannot be set at all.
MODE_ARGUMENT = (("chmod", 1), ("fchmod", 1), ("fchmodat", 2), ("open", 2), ("openat", 3), ("creat", 1))


def modes_without_setid():
    return [allow([name], args=[{"index": index, "value": SETID_BITS, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}])
            for name, index in MODE_ARGUMENT]


# Compared with the default profile podman and docker ship (containers-common's
# /usr/share/containers/seccomp.json), for the native x86-64 calls (issue 21). These,
# allowed there, are allowed here too: they act on the caller's own process, files or
# memory and need no capability (or do nothing without one), and real code uses them
# (inotify for file watchers, timerfd/signalfd/eventfd for event loops, mlock for
# crypto libraries, seccomp and Landlock to restrict oneself further).
PYTHON_LIKE_CONTAINERS = """eventfd epoll_pwait2 getcpu inotify_init inotify_init1 inotify_add_watch
inotify_rm_watch signalfd signalfd4 timerfd_create timerfd_settime timerfd_gettime timer_create timer_settime
timer_gettime timer_getoverrun timer_delete sync syncfs sync_file_range readahead tee utime utimes futimesat
fork mlock mlock2 munlock mlockall munlockall ioprio_get ioprio_set rt_tgsigqueueinfo setrlimit capset
seccomp landlock_create_ruleset landlock_add_rule landlock_restrict_self setfsuid setfsgid setgroups getdents
pkey_alloc pkey_free pkey_mprotect memfd_secret process_mrelease"""
# Allowed there and refused here, each for its reason:
# - setxattr lsetxattr fsetxattr removexattr lremovexattr fremovexattr: what the
#   sandbox writes is the workdir owner's on the host; a security.* xattr (a file
#   capability) must not be settable there (sandbox_workdir.c).
# - mount umount umount2 fsopen fsconfig fsmount fspick open_tree move_mount
#   mount_setattr pivot_root unshare setns: a way out of, or around, the namespaces
#   (no capability is held, so they could only fail; refused before the kernel parses
#   anything).
# - ptrace process_vm_readv process_vm_writev pidfd_getfd: another process's memory or
#   fds (the sibling-attack tests in tests/python.bats).
# - keyctl: the kernel keyrings are not namespaced.
# - syslog: the host kernel's log.
# - reboot: the host (no capability, but nothing to gain by letting it parse).
# - modify_ldt: x86 LDT, a history of kernel bugs (CVE-2015-5157, CVE-2017-17053) and
#   no use in 64-bit Python.
# - name_to_handle_at: a file handle is only good for open_by_handle_at (refused
#   everywhere), and it exposes file-system identifiers of the host's /usr.
# - shmget shmat shmdt shmctl semget semop semtimedop semctl msgget msgsnd msgrcv msgctl
#   mq_open mq_unlink mq_timedsend mq_timedreceive mq_notify mq_getsetattr: SysV IPC and
#   POSIX message queues, new kernel surface no standard-library module uses
#   (multiprocessing's locks and shared memory are files in /dev/shm).
# - io_setup io_submit io_getevents io_cancel io_destroy: native AIO, new kernel
#   surface; Python's I/O never uses it.
# - fanotify_mark: fanotify_init needs CAP_SYS_ADMIN and is refused; the mark alone
#   is surface without use.
# - clone3 (ENOSYS: its flags cannot be read, glibc falls back to clone) and openat2
#   (ENOSYS: its mode cannot be read, see MODE_ARGUMENT).
# - remap_file_pages epoll_ctl_old epoll_wait_old: deprecated or never wired up on
#   x86-64.
# - get_mempolicy set_mempolicy mbind: NUMA placement, which Docker's profile grants
#   only with CAP_SYS_NICE and default.json refuses; a sandbox of one process tree
#   on a shared host has no placement to choose.

# execve and execveat are the profile's last rule, alone: `sbx-oci python
# --no-subprocess` turns that rule's action into SCMP_ACT_NOTIFY, and its supervisor
# lets the sandbox's first exec (the interpreter) through and refuses every later one
# (runtime/sandbox/sandbox_exec_guard.c finds the rule by its text).
PYTHON_EXEC = ["execve", "execveat"]


def python_names():
    names = set(PYTHON_EXEC)
    for group in (PYTHON_FILES, PYTHON_MEMORY, PYTHON_THREADS, PYTHON_PROCESSES, PYTHON_TIME, PYTHON_EVENTS,
                  PYTHON_SOCKETS, PYTHON_ADDED, PYTHON_LIKE_CONTAINERS):
        names.update(group.split())
    return names


def python_profile(families=(AF_UNIX, AF_INET, AF_INET6)):
    names = python_names() - {name for name, _ in MODE_ARGUMENT} - {"openat2"} - set(PYTHON_EXEC)
    rules = [allow(names)]
    rules += modes_without_setid()
    rules += [dict(names=["openat2"], action="SCMP_ACT_ERRNO", errnoRet=ENOSYS)]
    rules += mknod_without_devices()
    rules += clone_without_namespaces()
    rules += clone3_enosys()
    rules += personality_allowed()
    rules += ioctl_without([TIOCSTI, TIOCLINUX])
    # Sockets: unix, inet, inet6 only (netlink, packet, vsock and rare families stay
    # refused, which also stops module autoloading). python-network-none.json, which
    # `sbx-oci python --network none` uses, narrows this to AF_UNIX.
    rules += [allow(["socket"], args=[{"index": 0, "value": af, "op": "SCMP_CMP_EQ"}])
              for af in families]
    # Netlink is refused with EOPNOTSUPP, not EPERM: getifaddrs() fails with the socket's
    # errno, and libzmq, which lists the interfaces before every tcp bind (a NIC name is
    # tried first), takes EOPNOTSUPP or EINVAL for "no interfaces to list" (as on WSL)
    # but aborts the process on any other. With EPERM, a zmq tcp bind killed the
    # interpreter (ipykernel's IOPub pipe on 127.0.0.1, in every Jupyter kernel).
    rules += [dict(names=["socket"], action="SCMP_ACT_ERRNO", errnoRet=EOPNOTSUPP,
                   args=[{"index": 0, "value": AF_NETLINK, "op": "SCMP_CMP_EQ"}])]
    rules += [allow(PYTHON_EXEC)]
    return dict(defaultAction="SCMP_ACT_ERRNO", defaultErrnoRet=EPERM, syscalls=rules)


# --------------------------------------------------------------------- default.json
# A general container profile in the spirit of the container engines' default: what
# ordinary programs use, without the syscalls that need privileges a container should
# not have (mount and the new mount API, unshare/setns, bpf, perf, keyrings, ptrace,
# module loading, kexec, reboot, swap, clock setting, io_uring, userfaultfd,
# open_by_handle_at, ...). Namespace flags are filtered out of clone.
DEFAULT_EXTRA = """mlock munlock timer_create timer_settime timer_gettime timer_getoverrun timer_delete
timerfd_create timerfd_settime timerfd_gettime epoll_pwait2 eventfd signalfd signalfd4 inotify_init
inotify_init1 inotify_add_watch inotify_rm_watch shmget shmat shmdt shmctl semget semop semtimedop semctl
msgget msgsnd msgrcv msgctl mq_open mq_unlink mq_timedsend mq_timedreceive mq_notify mq_getsetattr
accept accept4 adjtimex alarm capset chown creat epoll_ctl_old epoll_wait_old
fork fremovexattr fsetxattr fgetxattr flistxattr getcpu getdents getxattr lgetxattr listxattr
llistxattr lremovexattr lsetxattr lchown removexattr setxattr get_thread_area set_thread_area io_cancel
io_destroy io_getevents io_pgetevents io_setup io_submit ioprio_get ioprio_set ipc landlock_add_rule
landlock_create_ruleset landlock_restrict_self mknod mknodat mlock2 mlockall munlockall msync name_to_handle_at
pause pidfd_open pidfd_send_signal pkey_alloc pkey_free pkey_mprotect process_mrelease readahead recv
remap_file_pages rt_tgsigqueueinfo sched_getattr sched_get_priority_max sched_get_priority_min
sched_rr_get_interval sched_setattr sched_setparam sched_setscheduler seccomp send setfsgid setfsuid setgid
setgroups setregid setresgid setresuid setreuid setrlimit setuid socketcall sync sync_file_range syncfs tee
utime utimes vmsplice waitpid futimesat"""


def default_profile():
    names = python_names() | set(DEFAULT_EXTRA.split())
    rules = [allow(names)]
    rules += clone_without_namespaces()
    rules += clone3_enosys()
    rules += personality_allowed()
    rules += ioctl_without([TIOCSTI, TIOCLINUX])
    # every socket family but vsock (a host channel the container has no business with)
    rules += [allow(["socket"], args=[{"index": 0, "value": AF_VSOCK, "op": "SCMP_CMP_NE"}])]
    return dict(defaultAction="SCMP_ACT_ERRNO", defaultErrnoRet=EPERM, architectures=ARCHES, syscalls=rules)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    check = "--check" in sys.argv
    stale = []
    for name, profile in (("default.json", default_profile()), ("python.json", python_profile()),
                          ("python-network-none.json", python_profile(families=(AF_UNIX,)))):
        text = json.dumps(profile, indent=1) + "\n"
        path = os.path.join(here, name)
        if check:
            with open(path) as f:
                if f.read() != text:
                    stale.append(name)
        else:
            with open(path, "w") as f:
                f.write(text)
    if stale:
        print("stale (rerun config/seccomp/profiles.py): " + " ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
