# The warm interpreter of `sbx-oci serve` (runtime/sandbox/serve.c starts it as
#   python3 -s -E -c 'import os; exec(compile(os.pread(4, ...), ...))' 3 LIB PRELOAD
# with this file on fd 4, its socket on fd 3 and the environment a sandbox gets). It imports the preload modules once, then
# forks once per run. The fork joins that run's sandbox through libsbx-warm.so
# (runtime/warm/warm_enter.c: the engine's `exec`, without the exec) and, once it is
# the sandbox's process, runs the program as `python3` would have.
#
# What passes through this process is only what names a run (its state root and
# container id) and the fds of its streams: the program, its arguments and its
# environment come on fd 3, which only the fork reads, once inside. Nothing of one
# run is in the memory that the next run's fork starts from.
import atexit
import ctypes
import io
import os
import runpy
import signal
import socket
import sys
import threading
import traceback
import types

ZYGOTE_FILE = "<sbx-oci-zygote>"


def read_all(fd):
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def c_environ():
    """The environment the join set (the process's, from its config)."""
    envp = ctypes.POINTER(ctypes.c_char_p).in_dll(ctypes.CDLL(None), "environ")
    env, i = {}, 0
    while envp[i] is not None:
        key, _, value = envp[i].partition(b"=")
        env[key] = value
        i += 1
    return env


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
    """In the sandbox now: run what fd 3 names, as `python3 ARGS` would, and exit.

    Every module this needs was imported before the fork: an import now could meet
    the program's limits (its --nofile, say) instead of the program."""
    # the interpreter's own dispositions at start (the join reset them to the defaults)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    args = [a.decode("utf-8", "surrogateescape") for a in read_all(3).split(b"\0")[:-1]]
    os.close(3)
    env = c_environ()
    os.environb.clear()
    os.environb.update(env)
    reopen_stdio()
    # what the interpreter's fork hooks do not reseed: numpy's legacy global generator
    # was seeded once, at the preload; a process of its own would have seeded it now
    if "numpy.random" in sys.modules:
        sys.modules["numpy.random"].seed()
    main = types.ModuleType("__main__")
    sys.modules["__main__"] = main
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
    # What the interpreter does at exit that a program can see: wait for its threads,
    # run its atexit handlers, flush. Not the teardown of every module, which with
    # numpy and pandas loaded takes longer than the run.
    try:
        threading._shutdown()
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
    os._exit(code)


def serve_runs(sock, enter):
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(sock, 4096, 5)
        except InterruptedError:
            continue
        if not msg:
            os._exit(0)  # the server is gone
        parts = msg.split(b"\0")
        if len(fds) != 5 or len(parts) < 3 or parts[0] != b"RUN":
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
        stdin, stdout, stderr, program, status_fd = fds
        for fd, to in ((stdin, 0), (stdout, 1), (stderr, 2), (program, 3)):
            os.dup2(fd, to)
        for fd in (stdin, stdout, stderr, program):
            if fd > 3:
                os.close(fd)
        info = (ctypes.c_longlong * 5)()
        err = ctypes.create_string_buffer(1024)
        r = enter(parts[1], parts[2], info, err, len(err))
        if r == 0:
            run_program()
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
