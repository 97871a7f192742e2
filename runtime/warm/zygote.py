# The warm interpreter of `sbx-oci serve` (runtime/sandbox/serve.c starts it as
#   python3 -s -E -c 'import os; exec(compile(os.pread(4, ...), ...))' 3 LIB PRELOAD
# with this file on fd 4, its socket on fd 3 and the environment a sandbox gets). It
# imports the preload modules once, then forks once per run. The fork joins that
# run's sandbox through libsbx-warm.so (runtime/warm/warm_enter.c: the engine's
# `exec`, without the exec) and, once it is the sandbox's process, waits on its run
# channel for the program, which it runs as `python3` would have. The server may have
# the fork join before any client asked (a standby, runtime/sandbox/python_warm.c).
#
# What passes through this process is only what names a run (its state root and
# container id) and fds: the program, its arguments and its environment come on the
# run channel, which only the fork reads, once inside. Nothing of one run is in the
# memory that the next run's fork starts from.
import atexit
import ctypes
import io
import os
import resource
import runpy
import signal
import socket
import sys
import threading
import traceback
import types

ZYGOTE_FILE = "<sbx-oci-zygote>"
CHANNEL = None  # a joined fork's run channel (fd 3), made before the join


def read_all(fd):
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def warm_up():
    """What the run will do first, done once while waiting for it: in this fork, the
    first write to a page of the interpreter's is a copy of it (the environment, the
    streams, the compiler), which would otherwise be paid with the client waiting."""
    reopen_stdio()
    env = dict(os.environb)
    os.environb.clear()
    os.environb.update(env)
    compile("pass", "<string>", "exec")


def receive_program():
    """The program, from the run channel (fd 3): its arguments and environment on a
    sealed memfd (the number of arguments, the arguments, the environment, each
    NUL-terminated), and its stdin, which becomes fd 0. Sent once a client asked."""
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(CHANNEL, 16, 2)
            break
        except InterruptedError:
            continue
    if msg != b"PROG" or len(fds) != 2:
        os._exit(0)  # the worker gave the run up before it had a program
    program, stdin = fds
    os.dup2(stdin, 0)
    os.close(stdin)
    return read_program(program)


def read_program(program):
    """The memfd: the number of arguments, the arguments, the environment (closed)."""
    words = read_all(program).split(b"\0")[:-1]
    os.close(program)
    n = int(words[0])
    args = [a.decode("utf-8", "surrogateescape") for a in words[1:1 + n]]
    env = dict(kv.partition(b"=")[::2] for kv in words[1 + n:])
    return args, env


def reopen_stdio():
    """Streams on the run's fds 0-2, unbuffered as PYTHONUNBUFFERED makes them."""
    enc = sys.stdout.encoding if sys.stdout else "utf-8"
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(
        io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding=enc, errors="strict")
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(
        io.FileIO(1, "w", closefd=False), encoding=enc, errors="strict", write_through=True)
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(
        io.FileIO(2, "w", closefd=False), encoding=enc, errors="backslashreplace", write_through=True)


def print_exception(exc):
    """As the interpreter prints an uncaught one: without the frames above the program."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename in (ZYGOTE_FILE, runpy.__file__):
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb)


def exit_code(exc):
    """sys.exit's argument as the interpreter's exit status."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def run_program():
    """In the sandbox now: run what the run channel sends, as `python3 ARGS` would, and exit.

    Every module this needs was imported before the fork: an import now could meet
    the program's limits (its --nofile, say) instead of the program."""
    # the interpreter's own dispositions at start (the join reset them to the defaults)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    warm_up()
    args, env = receive_program()
    start = cpu_used()
    os.environb.clear()
    os.environb.update(env)
    reopen_stdio()
    # what the interpreter's fork hooks do not reseed: numpy's legacy global generator
    # was seeded once, at the preload; a process of its own would have seeded it now
    if "numpy.random" in sys.modules:
        sys.modules["numpy.random"].seed()
    main = types.ModuleType("__main__")
    sys.modules["__main__"] = main
    code = execute(args, main)
    # What the interpreter does at exit that a program can see: wait for its threads,
    # run its atexit handlers, flush. Not the teardown of every module, which with
    # numpy and pandas loaded takes longer than the run.
    try:
        threading._shutdown()
        atexit._run_exitfuncs()
    finally:
        flush_streams()
    # the output is written: the worker ends the run on this, without waiting for
    # this process's exit and its waiter's report
    try:
        user, system = (now - then for now, then in zip(cpu_used(), start))
        rss = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
        CHANNEL.send(b"EXIT %d %d %d %d" % (code, user, system, rss))
    except OSError:
        pass
    os._exit(code)


def cpu_used():
    """User and system CPU time in microseconds, this process's and its reaped
    children's (the cgroup may not have counted the last of it yet)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (round((me.ru_utime + kids.ru_utime) * 1e6), round((me.ru_stime + kids.ru_stime) * 1e6))


def flush_streams():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


def execute(args, main):
    """ARGS (the interpreter's, from its options on) as `python3 ARGS` runs them, in the
    namespace of MAIN: the exit status it comes to (an exception printed as the
    interpreter prints it)."""
    rest = args[1:]
    try:
        if rest[0] == "-c":
            sys.argv = ["-c"] + rest[2:]
            exec(compile(rest[1], "<string>", "exec"), main.__dict__)
        elif rest[0] == "-m":
            sys.argv = ["-m"] + rest[2:]
            sys.path[0] = os.getcwd()
            runpy._run_module_as_main(rest[1], alter_argv=True)
        elif rest[0] == "-":
            sys.argv = ["-"] + rest[1:]
            exec(compile(sys.stdin.read(), "<stdin>", "exec"), main.__dict__)
        else:
            sys.argv = rest
            sys.path[0] = os.path.dirname(rest[0])
            runpy.run_path(rest[0], run_name="__main__")
        code = 0
    except SystemExit as e:
        code = exit_code(e)
    except BaseException as e:  # what the interpreter does with an uncaught one
        print_exception(e)
        code = 1
    return code


def run_session():
    """In the sandbox now, as a session's last good state: each cell the run channel
    sends runs in a fork of this process. A cell that ends (normally, by an exception
    or by SystemExit) becomes the session's last good state, and this process exits;
    one that dies (a crash, os._exit, the OOM killer, the worker's kill at its
    timeout) leaves this process as it was, which says so and waits for the next.

    The channel: "CELL" with the cell's program (the memfd of receive_program), its
    stdin, stdout and stderr; to the worker "FORKED" with a pidfd of the cell, then
    "DONE CODE" (the cell's state kept) or "LOST STATUS SIGNAL" (rolled back)."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    warm_up()
    main = types.ModuleType("__main__")
    sys.modules["__main__"] = main
    null = os.open("/dev/null", os.O_RDWR)
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(CHANNEL, 16, 4)
        except InterruptedError:
            continue
        except OSError:
            os._exit(0)
        if msg != b"CELL" or len(fds) != 4:
            os._exit(0)  # the session is ended
        program, stdin, stdout, stderr = fds
        commit_r, commit_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            # the cell: its own process group (what it starts goes with it if it is
            # rolled back), the first the OOM killer takes
            os.close(commit_r)
            os.setpgid(0, 0)
            try:
                with open("/proc/self/oom_score_adj", "w") as f:
                    f.write("1000")
            except OSError:
                pass
            for fd, to in ((stdin, 0), (stdout, 1), (stderr, 2)):
                os.dup2(fd, to)
                os.close(fd)
            args, env = read_program(program)
            os.environb.clear()
            os.environb.update(env)
            reopen_stdio()
            code = execute(args, main)
            flush_streams()
            # its output is complete: the pipes are the worker's to read to the end
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            try:
                os.write(commit_w, b"%d" % code)  # the last good state is this one now
            except OSError:
                CHANNEL.send(b"DONE %d" % code)  # the previous one is gone: say it here
            os.close(commit_w)
            continue
        for fd in (program, stdin, stdout, stderr, commit_w):
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        try:
            socket.send_fds(CHANNEL, [b"FORKED"], [pidfd])
        except OSError:
            pass
        os.close(pidfd)
        got = b""
        while True:
            try:
                got = os.read(commit_r, 16)
                break
            except InterruptedError:
                continue
        os.close(commit_r)
        if got:
            try:
                CHANNEL.send(b"DONE " + got)
            except OSError:
                pass
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        try:
            os.killpg(pid, signal.SIGKILL)  # what the cell started
        except OSError:
            pass
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
        code = 128 + sig if sig else os.WEXITSTATUS(status)
        try:
            CHANNEL.send(b"LOST %d %d" % (code, sig))
        except OSError:
            os._exit(0)


def serve_runs(sock, enter):
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(sock, 4096, 5)
        except InterruptedError:
            continue
        if not msg:
            os._exit(0)  # the server is gone
        parts = msg.split(b"\0")
        if len(fds) != 5 or len(parts) < 3 or parts[0] not in (b"RUN", b"SES"):
            for fd in fds:
                os.close(fd)
            continue
        if os.fork():
            for fd in fds:
                os.close(fd)
            continue
        # the fork that joins the run
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        sock.close()
        stdin, stdout, stderr, channel, status_fd = fds
        for fd, to in ((stdin, 0), (stdout, 1), (stderr, 2), (channel, 3)):
            os.dup2(fd, to)
        for fd in (stdin, stdout, stderr, channel):
            if fd > 3:
                os.close(fd)
        info = (ctypes.c_longlong * 5)()
        err = ctypes.create_string_buffer(1024)
        global CHANNEL
        CHANNEL = socket.socket(fileno=3)
        r = enter(parts[1], parts[2], info, err, len(err))
        if r == 0:
            os.set_inheritable(3, False)  # the channel is not for the programs it starts
            run_session() if parts[0] == b"SES" else run_program()
        CHANNEL.detach()  # the join closed it on this side
        try:
            os.write(status_fd, b"OK %d %d %d %d %d\n" % tuple(info) if r == 1 else b"ERR " + err.value + b"\n")
        except OSError:
            pass  # the worker is gone (its client hung up): nobody to tell
        os._exit(0)


def main():
    fd, lib, preload = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    os.close(4)  # this program, read
    for name in filter(None, preload.split(",")):
        __import__(name)
    enter = ctypes.PyDLL(lib).sbx_warm_enter  # PyDLL: the GIL stays held across the fork in it
    enter.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_longlong), ctypes.c_char_p,
                      ctypes.c_size_t]
    enter.restype = ctypes.c_int
    sock = socket.socket(fileno=fd)
    # the forks report to the server, not to us
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    sock.send(b"READY")
    serve_runs(sock, enter)


main()
