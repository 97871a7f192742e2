# The warm interpreter of `sbx-oci serve` (runtime/serve/server.c starts it as
#   python3 -s -E -c 'import os; exec(compile(os.pread(4, ...), ...))' 3 LIB PRELOAD
# with this file on fd 4, its socket on fd 3 and the environment a sandbox gets). It
# imports the preload modules once, then forks once per run. The fork joins that
# run's sandbox through libsbx-warm.so (runtime/warm/warm_spawn.c: the engine's
# `exec`, without the exec) and, once it is the sandbox's process, waits on its run
# channel for the program, which it runs as `python3` would have. The server may have
# the fork join before any client asked (a standby, runtime/serve/warm_run.c).
#
# What passes through this process is only what names a run (its state root and
# container id) and fds: the program, its arguments and its environment come on the
# run channel, which only the fork reads, once inside; a run's container config, which
# holds the client's data, is read only by a throwaway copy (warm_serve.c).
# Nothing of one run is in the memory that the next run's fork starts from.
import ast
import atexit
import base64
import builtins
import ctypes
import importlib.abc
import io
import json
import os
import resource
import runpy
import shutil
import signal
import socket
import stat
import sys
import threading
import traceback
import types

ZYGOTE_FILE = "<sbx-oci-zygote>"
CHANNEL = None  # a joined fork's run channel (fd 3), made before the join
RESTRICT = None  # libsbx-warm.so's sbx_warm_restrict: the sandbox's Landlock rules, applied by the fork
SET_ENVIRON = None  # libsbx-warm.so's sbx_warm_environ: the C environ, in one step

# What a run or cell reports beyond its exit status (the worker puts it in the result):
# the value of its last expression, its uncaught exception, the figures it drew. The
# caps come with the program (controls(): the words after CELL or PROG on the channel).
DEFAULT_CONTROLS = {"value": 0, "max_value": 64 << 10, "max_figures": 16, "max_figure_bytes": 8 << 20,
                    "max_figure_pixels": 64 << 20}
CONTROLS = dict(DEFAULT_CONTROLS)
REPORT = {}
FIGURES = []


def controls(words):
    """KEY=VALUE words (integers) over the defaults; unknown keys are ignored."""
    c = dict(DEFAULT_CONTROLS)
    for w in words:
        k, _, v = w.decode("ascii", "replace").partition("=")
        if k in c and v.isdigit():
            c[k] = int(v)
    return c


def report_reset(words):
    global CONTROLS
    CONTROLS = controls(words)
    REPORT.clear()
    FIGURES.clear()


def report_fd():
    """The report as a memfd of JSON (sent with the run's end), or None when empty."""
    if FIGURES:
        REPORT["figures"] = FIGURES[:]
    if not REPORT:
        return None
    fd = os.memfd_create("sbx-report", os.MFD_CLOEXEC)
    os.write(fd, json.dumps(REPORT).encode())
    return fd


def exception_report(exc, tb):
    t = type(exc)
    name = t.__qualname__ if t.__module__ in ("builtins", "__main__") else f"{t.__module__}.{t.__qualname__}"
    try:
        message = str(exc)
    except Exception:
        message = "<the exception's str() failed>"
    text = "".join(traceback.format_exception(t, exc, tb))
    REPORT["exception"] = {"type": name, "message": message[:CONTROLS["max_value"]],
                           "traceback": text[-CONTROLS["max_value"]:]}


def show_value(value):
    """As the interactive interpreter shows it (sys.displayhook): nothing for None;
    else its repr on stdout, and builtins._ = value. The repr, capped, is reported."""
    if value is None:
        return
    text = repr(value)
    builtins._ = value
    print(text, flush=True)
    cap = CONTROLS["max_value"]
    REPORT["value"] = text[:cap]
    if len(text) > cap:
        REPORT["value_truncated"] = True
        REPORT["value_length"] = len(text)


def capture_figures():
    """Every open matplotlib figure as PNG, in the report, then closed: what a cell
    leaves open and what plt.show() shows. Bounded in count, pixels and bytes; what
    is dropped is counted."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    for num in plt.get_fignums():
        fig = plt.figure(num)
        try:
            w, h = fig.get_size_inches() * fig.dpi
            if len(FIGURES) >= CONTROLS["max_figures"] or w * h > CONTROLS["max_figure_pixels"]:
                REPORT["figures_dropped"] = REPORT.get("figures_dropped", 0) + 1
                continue
            buf = io.BytesIO()
            fig.savefig(buf, format="png")
            data = buf.getvalue()
            if len(data) > CONTROLS["max_figure_bytes"]:
                REPORT["figures_dropped"] = REPORT.get("figures_dropped", 0) + 1
                continue
            FIGURES.append({"format": "png", "width": int(w), "height": int(h), "bytes": len(data),
                            "data": base64.b64encode(data).decode("ascii")})
        except Exception as e:  # a figure that cannot be drawn is the program's error, not ours
            REPORT.setdefault("figure_errors", []).append(f"{type(e).__name__}: {e}"[:500])
        finally:
            plt.close(fig)


class _PyplotHook(importlib.abc.MetaPathFinder):
    """When matplotlib.pyplot is imported, its show() becomes capture_figures: the
    sandbox draws with Agg (MPLBACKEND, set for every sandbox), which shows nothing."""

    def find_spec(self, name, path, target=None):
        if name != "matplotlib.pyplot":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                real = spec.loader.exec_module

                def exec_module(module, real=real):
                    real(module)
                    patch_show(module)

                spec.loader.exec_module = exec_module
                return spec
        return None


def patch_show(pyplot):
    pyplot.show = lambda *args, **kwargs: capture_figures()


def install_figure_capture():
    """plt.show() in a run or cell hands the figures to the report."""
    if "matplotlib.pyplot" in sys.modules:
        patch_show(sys.modules["matplotlib.pyplot"])
    else:
        sys.meta_path.insert(0, _PyplotHook())

def read_all(fd):
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def warm_up():
    """What this process does once, while it waits for its program: in this fork, the
    first write to a page of the interpreter's is a copy of it, which would otherwise be
    paid with the client waiting (the compiler). Every fork pays for each page it
    writes, so the work is kept to what each must do itself: stdout and stderr are the
    warm interpreter's own (make_run_streams), the environment is set in one step
    (set_environment)."""
    compile("pass", "<string>", "exec")
    reseed_numpy()


def reseed_numpy():
    """numpy's legacy global generator (np.random.rand and the like) was seeded once, at
    the preload, and the interpreter's fork hooks reseed only `random`'s: a process of
    its own would have seeded it from the OS's entropy, and so is it, with the whole
    MT19937 key from os.urandom. (RandomState.seed() would draw the same from the OS
    through a SeedSequence, and write three times the pages: 172 copied against 70.)"""
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is None:
        return
    np = sys.modules["numpy"]
    key = np.frombuffer(os.urandom(624 * 4), dtype=np.uint32)
    numpy_random.mtrand._rand.set_state(("MT19937", key, 624, 0, 0.0))


def receive_program():
    """The program, from the run channel (fd 3): its arguments and environment on a
    sealed memfd (the number of arguments, the arguments, the environment, each
    NUL-terminated), and its stdin, which becomes fd 0. Sent once a client asked."""
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(CHANNEL, 512, 2)
            break
        except InterruptedError:
            continue
    words = msg.split()
    if not words or words[0] != b"PROG" or len(fds) != 2:
        os._exit(0)  # the worker gave the run up before it had a program
    report_reset(words[1:])
    # /work again: a standby's may have had the client's workdir mounted over it
    # since this process joined (runtime/serve/standby_workdir.c); then the sandbox's
    # Landlock rules, made now, on the directories as they are
    try:
        os.chdir(WORK)
    except OSError:
        pass
    restrict()
    # this process, for the worker to interrupt (the client's ^C: SIGINT)
    me = os.pidfd_open(os.getpid())
    try:
        socket.send_fds(CHANNEL, [b"PID"], [me])
    except OSError:
        pass
    os.close(me)
    program, stdin = fds
    os.dup2(stdin, 0)
    os.close(stdin)
    reopen_stdin()  # a stream caches whether its fd can seek: this one's is new
    return read_program(program)


def restrict():
    """The sandbox's Landlock rules, which the join left to this process (warm_spawn.c):
    applied before any program runs. A failure ends the run: fail closed."""
    err = ctypes.create_string_buffer(1024)
    if RESTRICT(err, len(err)) != 0:
        os.write(2, b"sbx-oci: landlock: " + err.value + b"\n")
        os._exit(125)


def read_program(program):
    """The memfd: the number of arguments, the arguments, the environment (closed)."""
    words = read_all(program).split(b"\0")[:-1]
    os.close(program)
    n = int(words[0])
    args = [a.decode("utf-8", "surrogateescape") for a in words[1:1 + n]]
    return args, words[1 + n:]


def set_environment(entries):
    """ENTRIES ("NAME=VALUE" bytes) as the process's environment: the C environ (what
    subprocesses and getenv see) and os.environ's dict (os.environ and os.environb
    share it: encoded names to encoded values), each in one step, as os.environb's
    clear() and update() would leave them (warm_environ.c says why not those)."""
    block = b"".join(kv + b"\0" for kv in entries)
    if SET_ENVIRON(block, len(block)) != 0:
        raise MemoryError("the environment")
    data = os.environb._data
    data.clear()
    data.update(kv.partition(b"=")[::2] for kv in entries)


def rederive_home_paths():
    """Paths that modules derive once, at import, from HOME or XDG_CACHE_HOME: a module
    the server preloaded derived them from the warm interpreter's (HOME=/), and a run
    must have its own (HOME=/work, or what its --env says). Only those a run writes to
    later: jedi's completion (IPython's, a Jupyter kernel's) saves parso's cache, and
    "/.cache" on the read-only root failed it, so completion found nothing."""
    try:
        parso_cache = sys.modules.get("parso.cache")
        if parso_cache is not None:
            parso_cache._default_cache_path = parso_cache._get_default_cache_path()
        jedi_settings = sys.modules.get("jedi.settings")
        if jedi_settings is not None:
            jedi_settings.cache_directory = os.path.expanduser(
                os.path.join(os.getenv("XDG_CACHE_HOME") or "~/.cache", "jedi"))
    except Exception:  # (another version of them: the run goes on as it would have)
        pass


def reopen_stdio():
    """Streams on the run's fds 0-2, unbuffered as PYTHONUNBUFFERED makes them."""
    enc = sys.stdout.encoding if sys.stdout else "utf-8"
    reopen_stdin(enc)
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(
        io.FileIO(1, "w", closefd=False), encoding=enc, errors="strict", write_through=True)
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(
        io.FileIO(2, "w", closefd=False), encoding=enc, errors="backslashreplace", write_through=True)


def reopen_stdin(enc=None):
    enc = enc or sys.stdout.encoding or "utf-8"
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(
        io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding=enc, errors="strict")


def make_run_streams():
    """sys.stdout and sys.stderr as a run's process wants them, made once here rather
    than in each fork: unbuffered on fds 1 and 2, which in a run are always pipes (the
    worker's, which caps the output). A stream caches whether its fd can seek when it
    is made (seekable(), and tell() raising io.UnsupportedOperation, as under
    `python3 ... | cat`), so they are made while 1 and 2 are a pipe; this process's
    own 1 and 2 (the server's log) are put back after. It never writes to them, so no
    fork inherits anything in them. A run's stdin is made anew (reopen_stdin), a
    cell's three streams too (cell_child)."""
    r, w = os.pipe()
    saved = (os.dup(1), os.dup(2))
    try:
        os.dup2(w, 1)
        os.dup2(w, 2)
        reopen_stdio()
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved + (r, w):
            os.close(fd)


def trimmed_traceback(exc):
    """The exception's traceback without the frames above the program (ours, runpy's)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename in (ZYGOTE_FILE, runpy.__file__):
        tb = tb.tb_next
    return tb


def print_exception(exc):
    """As the interpreter prints an uncaught one: without the frames above the program."""
    traceback.print_exception(type(exc), exc, trimmed_traceback(exc))


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
    set_environment(env)
    rederive_home_paths()
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
        send_with_report(b"EXIT %d %d %d %d" % (code, user, system, rss))
    except OSError:
        pass
    os._exit(code)


def send_with_report(msg):
    """MSG on the channel, with the report's memfd when there is one."""
    fd = report_fd()
    if fd is None:
        CHANNEL.send(msg)
        return
    try:
        socket.send_fds(CHANNEL, [msg], [fd])
    finally:
        os.close(fd)


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


def run_code(source, filename, main):
    """SOURCE as the interpreter runs it in MAIN; with the "value" control, a last
    statement that is an expression is evaluated and shown as the REPL shows it."""
    if not CONTROLS["value"]:
        exec(compile(source, filename, "exec"), main.__dict__)
        return
    tree = ast.parse(source, filename, "exec")
    last = None
    if CONTROLS["value"] and tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, filename, "exec"), main.__dict__)
    if last is not None:
        show_value(eval(compile(last, filename, "eval"), main.__dict__))


def execute(args, main):
    """ARGS (the interpreter's, from its options on) as `python3 ARGS` runs them, in the
    namespace of MAIN: the exit status it comes to (an exception printed as the
    interpreter prints it, and reported)."""
    rest = args[1:]
    try:
        if rest[0] == "-c":
            sys.argv = ["-c"] + rest[2:]
            run_code(rest[1], "<string>", main)
        elif rest[0] == "-m":
            sys.argv = ["-m"] + rest[2:]
            sys.path[0] = os.getcwd()
            runpy._run_module_as_main(rest[1], alter_argv=True)
        elif rest[0] == "-":
            sys.argv = ["-"] + rest[1:]
            run_code(sys.stdin.read(), "<stdin>", main)
        else:
            sys.argv = rest
            sys.path[0] = os.path.dirname(rest[0])
            runpy.run_path(rest[0], run_name="__main__")
        code = 0
    except SystemExit as e:
        code = exit_code(e)
    except BaseException as e:  # what the interpreter does with an uncaught one
        print_exception(e)
        exception_report(e, trimmed_traceback(e))
        code = 1
    capture_figures()
    return code


def run_session():
    """In the sandbox now, as a session's last good state: each cell the run channel
    sends runs in a fork of this process. A cell that ends (normally, by an exception
    or by SystemExit) becomes the session's last good state, and this process exits;
    one that dies (a crash, os._exit, the OOM killer, the worker's kill at its
    timeout) leaves this process as it was, which says so and waits for the next.
    Between cells, the worker may put, get, list or remove files of /work.

    The channel: "CELL [KEY=VALUE...]" (controls()) with the cell's program (the memfd
    of receive_program), its stdin, stdout and stderr; to the worker "FORKED" with a
    pidfd of the cell, "INFO" with the cell's report (a memfd, when it has one), then
    "DONE CODE" (the cell's state kept) or "LOST STATUS SIGNAL" (rolled back). File
    operations: "PUT\0NAME" with a memfd of the content, "GET\0NAME", "LS\0NAME",
    "RM\0NAME"; answered "OK" (GET and LS: with an fd to read) or "ERR\0MESSAGE"."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    restrict()
    warm_up()
    main = types.ModuleType("__main__")
    sys.modules["__main__"] = main
    null = os.open("/dev/null", os.O_RDWR)
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(CHANNEL, 8192, 4)
        except InterruptedError:
            continue
        except OSError:
            os._exit(0)
        op, _, name = msg.partition(b"\0")
        if op in FILE_OPS:
            file_op(op, name, fds)
            continue
        words = msg.split()
        if not words or words[0] != b"CELL" or len(fds) != 4:
            os._exit(0)  # the session is ended
        if run_cell(words[1:], fds, main, null):
            continue  # this process is the cell, and now the session's state


def run_cell(words, fds, main, null):
    """One cell in a fork. Returns True in the fork once its cell ended (it is the
    state from then on); in this process, returns False if the cell died (this
    process stays the state) and exits if it ended."""
    program, stdin, stdout, stderr = fds
    commit_r, commit_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(commit_r)
        cell_child(words, program, stdin, stdout, stderr, main, null, commit_w)
        return True
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
    return False


def cell_child(words, program, stdin, stdout, stderr, main, null, commit_w):
    """The cell: its own process group (what it starts goes with it if it is rolled
    back), the first the OOM killer takes. Runs the program, reports, commits."""
    os.setpgid(0, 0)
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    except OSError:
        pass
    for fd, to in ((stdin, 0), (stdout, 1), (stderr, 2)):
        os.dup2(fd, to)
        os.close(fd)
    report_reset(words)
    args, env = read_program(program)
    set_environment(env)
    rederive_home_paths()
    reopen_stdio()
    code = execute(args, main)
    flush_streams()
    # its output is complete: the pipes are the worker's to read to the end
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    try:
        fd = report_fd()
        if fd is not None:
            socket.send_fds(CHANNEL, [b"INFO"], [fd])
            os.close(fd)
    except OSError:
        pass
    REPORT.clear()
    FIGURES.clear()
    try:
        os.write(commit_w, b"%d" % code)  # the last good state is this one now
    except OSError:
        CHANNEL.send(b"DONE %d" % code)  # the previous one is gone: say it here
    os.close(commit_w)


# ------------------------------------------------------------ a session's files

WORK = "/work"
FILE_OPS = (b"PUT", b"GET", b"LS", b"RM")
LIST_MAX_ENTRIES = 10000
LIST_MAX_DEPTH = 32


def name_parts(raw):
    """A name under /work: relative, no "..", no NUL; its components."""
    name = raw.decode("utf-8", "surrogateescape")
    if not name or len(raw) > 4096:
        raise ValueError("a name of 1 to 4096 bytes")
    if name.startswith("/"):
        raise ValueError(f"{name!r}: a name relative to /work, not an absolute path")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise ValueError(f"{name!r}: '..' would leave /work")
    return parts


def open_dir(parts, create):
    """The directory /work/PARTS, each component opened without following a link."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(WORK, flags)
    try:
        for p in parts:
            try:
                nfd = os.open(p, flags, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(p, 0o755, dir_fd=fd)
                nfd = os.open(p, flags, dir_fd=fd)
            os.close(fd)
            fd = nfd
    except OSError:
        os.close(fd)
        raise
    return fd


def file_op(op, raw, fds):
    try:
        parts = name_parts(raw) if op != b"LS" or raw not in (b"", b".") else []
        if op != b"LS" and not parts:
            raise ValueError("a file under /work, not /work itself")
        reply, fd = FILE_OP_FNS[op](parts, fds)
    except (OSError, ValueError) as e:
        reply, fd = b"ERR\0" + (e.strerror if isinstance(e, OSError) and e.strerror else str(e)).encode(), None
    finally:
        for f in fds:
            os.close(f)
    try:
        if fd is None:
            CHANNEL.send(reply)
        else:
            socket.send_fds(CHANNEL, [reply], [fd])
    except OSError:
        os._exit(0)
    finally:
        if fd is not None:
            os.close(fd)


def put_file(parts, fds):
    """The memfd's content as /work/NAME, replacing a file (never through a link)."""
    if len(fds) != 1:
        raise ValueError("PUT without its content")
    dfd = open_dir(parts[:-1], create=True)
    tmp = f".sbx-put-{os.getpid()}"
    try:
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=dfd)
        try:
            size = os.fstat(fds[0]).st_size
            offset = 0
            while offset < size:
                offset += os.sendfile(out, fds[0], offset, size - offset) or size
        finally:
            os.close(out)
        os.rename(tmp, parts[-1], src_dir_fd=dfd, dst_dir_fd=dfd)
    except OSError:
        try:
            os.unlink(tmp, dir_fd=dfd)
        except OSError:
            pass
        raise
    finally:
        os.close(dfd)
    return b"OK", None


def get_file(parts, fds):
    """An fd of the regular file /work/NAME, for the worker to read."""
    dfd = open_dir(parts[:-1], create=False)
    try:
        fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
    finally:
        os.close(dfd)
    if not stat_is_regular(fd):
        os.close(fd)
        raise ValueError(f"{'/'.join(parts)}: not a regular file")
    return b"OK", fd


def stat_is_regular(fd):
    return stat.S_ISREG(os.fstat(fd).st_mode)


def list_files(parts, fds):
    """/work/NAME's tree, bounded, as JSON lines in a memfd: path, type, size, mtime."""
    out = os.memfd_create("sbx-ls", os.MFD_CLOEXEC)
    count = 0

    def walk(dfd, prefix, depth):
        nonlocal count
        for entry in sorted(os.scandir(dfd), key=lambda e: e.name):
            if count >= LIST_MAX_ENTRIES:
                return
            st = entry.stat(follow_symlinks=False)
            kind = "dir" if stat.S_ISDIR(st.st_mode) else "file" if stat.S_ISREG(st.st_mode) else \
                "link" if stat.S_ISLNK(st.st_mode) else "other"
            path = prefix + entry.name
            os.write(out, json.dumps({"path": path, "type": kind, "size": st.st_size,
                                      "mtime": int(st.st_mtime)}).encode() + b"\n")
            count += 1
            if kind == "dir" and depth < LIST_MAX_DEPTH:
                sub = os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)
                try:
                    walk(sub, path + "/", depth + 1)
                finally:
                    os.close(sub)

    dfd = open_dir(parts, create=False)
    try:
        walk(dfd, "/".join(parts) + "/" if parts else "", 0)
    finally:
        os.close(dfd)
    if count >= LIST_MAX_ENTRIES:
        os.write(out, b'{"truncated": true}\n')
    os.lseek(out, 0, os.SEEK_SET)
    return b"OK", out


def remove_file(parts, fds):
    """/work/NAME: a file or link unlinked, a directory removed with what is in it."""
    dfd = open_dir(parts[:-1], create=False)
    try:
        st = os.stat(parts[-1], dir_fd=dfd, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(parts[-1], dir_fd=dfd)
        else:
            os.unlink(parts[-1], dir_fd=dfd)
    finally:
        os.close(dfd)
    return b"OK", None


FILE_OP_FNS = {b"PUT": put_file, b"GET": get_file, b"LS": list_files, b"RM": remove_file}


class ForkHooks(ctypes.Structure):
    """os.fork's hooks, which the loop calls around each of its forks."""
    _fields_ = [("before", ctypes.c_void_p), ("after_child", ctypes.c_void_p), ("after_parent", ctypes.c_void_p)]


def fork_hooks():
    return ForkHooks(*(ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value
                       for name in ("PyOS_BeforeFork", "PyOS_AfterFork_Child", "PyOS_AfterFork_Parent")))


def serve_runs(sock, serve):
    """Each STB, RUN or SES the server or a worker sends becomes a process inside that
    sandbox, through the library's loop (runtime/warm/warm_serve.c: in C, since every
    page this process writes after a fork is copied while the child lives). It returns
    in a run's process, joined, with the message's kind; in this process, at EOF, once
    the last child was reaped (its children die with it: a parent-death signal, so a
    sandbox's process never outlives the one that reports it)."""
    hooks = fork_hooks()
    kind = ctypes.create_string_buffer(4)
    ret = serve(sock.fileno(), ctypes.byref(hooks), kind)
    if ret != 1:
        if ret < 0:
            os.write(2, b"sbx-oci: warm interpreter: its loop failed: %s\n" % os.strerror(ctypes.get_errno()).encode())
        os._exit(0 if ret == 0 else 125)
    become_run(kind.raw[:3], sock)


def become_run(kind, sock):
    """In the run's process, joined: the sandbox's process from here on."""
    global CHANNEL
    if sock.fileno() == 3:
        CHANNEL = sock  # the join put the run channel where this process's socket was
    else:
        sock.detach()  # closed in the join
        CHANNEL = socket.socket(fileno=3)
    os.set_inheritable(3, False)  # the channel is not for the programs it starts
    run_session() if kind == b"SES" else run_program()
    os._exit(0)


def main():
    fd, lib, preload = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    os.close(4)  # this program, read
    # a status pipe per live run: sessions by the thousand
    resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
    install_figure_capture()
    for name in filter(None, preload.split(",")):
        __import__(name)
    make_run_streams()
    global RESTRICT
    dll = ctypes.PyDLL(lib, use_errno=True)  # PyDLL: the GIL stays held in its loop and forks
    serve = dll.sbx_warm_serve
    serve.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p]
    serve.restype = ctypes.c_int
    RESTRICT = dll.sbx_warm_restrict
    RESTRICT.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    RESTRICT.restype = ctypes.c_int
    global SET_ENVIRON
    SET_ENVIRON = dll.sbx_warm_environ
    SET_ENVIRON.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    SET_ENVIRON.restype = ctypes.c_int
    sock = socket.socket(fileno=fd)
    sock.send(b"READY")
    serve_runs(sock, serve)


main()
