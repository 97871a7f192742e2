#!/usr/bin/env python3
"""Run untrusted Python once in an sbx-oci sandbox, from Python.

A thin, standard-library-only client of ``sbx-oci python --result -``: it writes the
caller's input files into a fresh workdir, runs the code with ``-c``, parses the one
JSON object the runtime prints, reads back the files the code created or modified
(without ever following a symlink the code planted), and removes the workdir.

    from sbx_sandbox import run_python
    r = run_python("print(6*7)")
    assert r.ok and r.stdout == "42\\n"

    # in a coroutine: the same arguments and Result; cancelling the task ends the run
    r = await run_python_async("print(6*7)")

    # through a warm server (`sbx-oci serve --socket S --preload numpy`): the same
    # Result, from an interpreter that has numpy imported already
    r = run_python("import numpy; print(numpy.ones(3).sum())", connect="/run/sbx.sock")

Why a subprocess and not a library binding: sbx-oci is the trust boundary. The
sandbox is set up, watched and torn down by the runtime; this module only decides
what to ask for and how to read the answer, so it can stay small enough to audit.

It is one file on purpose: copy it next to your code, or install it as the typed
package ``sbx_sandbox`` (``pip install --no-index --no-build-isolation contrib/python``).

CLI: ``python3 sbx_sandbox.py -c CODE [--timeout S] [--memory SIZE] ...`` (or
``python3 -m sbx_sandbox ...``) prints the result JSON and exits with the program's
status (125 if the sandbox could not be set up, 2 for a bad command line), like
``sbx-oci python`` itself.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import dataclasses
import json
import re
import os
import secrets
import select
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import threading
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Tuple, TypeVar, Union

__all__ = ["run_python", "run_python_async", "Session", "Result", "SandboxError", "FileContent"]

__version__ = "0.1.0"  # that of the sbx-oci it was written with (sbx-oci --version)

# Bounds on what is read back from the workdir. The code in the sandbox controls the
# files, so without a bound it controls how much memory the caller spends on them
# (--fsize alone allows 256M per file, and there may be many).
MAX_FILE_BYTES = 16 << 20
MAX_TOTAL_BYTES = 64 << 20

# sbx-oci's default --host-id: the host uid/gid of the sandbox user when it runs as
# root. The client's workdir is its own fresh directory: it and the input files are
# handed to that uid, and sbx-oci binds them as they are. (A workdir of someone else's
# sbx-oci never chowns: it binds it id-mapped, so this stays correct should the
# runtime's default ever differ.)
SANDBOX_HOST_ID = 101000

# How long past --timeout the client waits for sbx-oci itself before giving up on it.
# The runtime enforces the wall clock; this only guards against a runtime that hangs.
GUARD_SECONDS = 30.0

# How long a cancelled run_python_async gives sbx-oci, after SIGTERM, to end the program
# and tear the sandbox down itself, before SIGKILL and `sbx-oci delete --force`.
STOP_GRACE_SECONDS = 5.0

# Exit status of sbx-oci when the sandbox could not be set up, and for a bad command line.
EXIT_SETUP = 125
EXIT_USAGE = 2

NETWORKS = ("none", "loopback", "full")
DEFAULT_MEMORY = "2048M"
DEFAULT_NETWORK = "loopback"

FileContent = Union[str, bytes, bytearray, memoryview]


class SandboxError(RuntimeError):
    """The sandbox could not be set up, so no program ran (or the runtime gave no result).

    Distinct from a program that failed: a non-zero exit, a timeout or an OOM kill is a
    normal ``Result``. This is raised when the JSON says ``error`` (exit 125), or when
    there is no JSON at all (exit 2 for a bad command line, a crashed or missing runtime);
    ``message`` then carries the runtime's one-line ``sbx-oci: ...`` complaint.
    """

    def __init__(self, message: str, *, returncode: Optional[int] = None,
                 stderr: str = "", raw: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(message)
        self.message = message
        self.returncode = returncode  # sbx-oci's exit status (None if it never ran)
        self.stderr = stderr  # everything sbx-oci printed on stderr
        self.raw = raw  # the result JSON, when there was one


@dataclasses.dataclass
class Result:
    """How one run ended: the fields of sbx-oci's result JSON, plus the files read back.

    ``files`` holds the bytes of each regular file the code created or modified in the
    workdir, keyed by its path relative to the workdir; what was listed but not read
    (a symlink, a FIFO, a file over MAX_FILE_BYTES...) is in ``files_skipped`` with the
    reason. ``raw`` is the whole JSON object, for the fields not copied here (limits,
    network, cpu_scope, landlock_abi...). ``messages`` is what sbx-oci itself said on
    stderr (warnings, "timed out after ..."), never the program's output.
    """

    exit_code: Optional[int]
    signal: Optional[str]
    oom_killed: bool
    timed_out: bool
    cpu_time_exceeded: bool
    stdout: str
    stderr: str
    wall_ms: float
    cpu_user_ms: float
    cpu_sys_ms: float
    peak_memory_bytes: int
    stdout_truncated: bool
    stderr_truncated: bool
    degraded: List[str]
    error: Optional[str]
    files: Dict[str, bytes]
    raw: Dict[str, Any]
    files_skipped: Dict[str, str] = dataclasses.field(default_factory=dict)
    files_truncated: bool = False
    workdir: Optional[str] = None  # the host path, only when keep_workdir=True
    messages: str = ""
    # the limits that stopped or hampered the run ("memory", "pids", "fsize",
    # "cpu_time", "timeout", "output", "tmp_size"): "hit the process limit" is not "hung"
    limits_hit: List[str] = dataclasses.field(default_factory=list)
    # a Session's call: "kept" (its state is the session's now) or "rolled back" (it
    # died: the session is as it was before it); None for a run of its own
    session_state: Optional[str] = None
    # the repr of the last expression's value, as the REPL shows it (a Session's cell,
    # or show_value=True), capped; None when there was none (or it was None)
    value: Optional[str] = None
    value_truncated: bool = False
    # the uncaught exception that ended the program: {"type", "message", "traceback"}
    exception: Optional[Dict[str, str]] = None
    # matplotlib figures left open or shown (plt.show()), as PNG bytes, in order;
    # figures_dropped counts those over the caps (count, pixels, bytes)
    figures: List[bytes] = dataclasses.field(default_factory=list)
    figures_dropped: int = 0

    @property
    def ok(self) -> bool:
        """The sandbox worked and the program exited 0 (not killed, not timed out)."""
        return self.error is None and self.exit_code == 0

    def to_json_dict(self) -> Dict[str, Any]:
        """The raw result with the read-back files as text where they decode, for printing."""
        out = dict(self.raw)
        out["files_content"] = {p: _printable(b) for p, b in self.files.items()}
        if self.files_skipped:
            out["files_skipped"] = dict(self.files_skipped)
        if self.workdir:
            out["workdir"] = self.workdir
        return out


def _printable(b: bytes) -> Union[str, Dict[str, str]]:
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return {"hex": b.hex()}


# ------------------------------------------------------------------ input files

def _split_relpath(path: str) -> List[str]:
    """The components of a path that must stay inside the workdir, or ValueError.

    Absolute paths and ".." are refused outright (not normalised away): a caller
    passing one has a bug or is being steered, and either way nothing should run.
    """
    if not isinstance(path, str):
        raise TypeError(f"files: key {path!r} is not a str")
    if "\0" in path:
        raise ValueError(f"files: {path!r} contains a NUL byte")
    if path.startswith("/"):
        raise ValueError(f"files: {path!r} is absolute; give a path relative to the workdir")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ValueError(f"files: {path!r} has a '..' component")
    if not parts:
        raise ValueError(f"files: {path!r} names no file")
    return parts


def _plan_files(files: Optional[Mapping[str, FileContent]]) -> Dict[str, bytes]:
    """Validate every input file before anything is created, so a bad key runs nothing."""
    plan: Dict[str, bytes] = {}
    for key, content in (files or {}).items():
        rel = "/".join(_split_relpath(key))
        if rel in plan:
            raise ValueError(f"files: {key!r} names {rel!r} twice")
        if isinstance(content, str):
            data = content.encode("utf-8")
        elif isinstance(content, (bytes, bytearray, memoryview)):
            data = bytes(content)
        else:
            raise TypeError(f"files: {key!r} must be str or bytes, not {type(content).__name__}")
        plan[rel] = data
    for rel in plan:  # "a" as a file and "a/b" under it cannot both exist
        parts = rel.split("/")
        for i in range(1, len(parts)):
            if "/".join(parts[:i]) in plan:
                raise ValueError(f"files: {'/'.join(parts[:i])!r} is both a file and a directory")
    return plan


def _write_files(workdir: str, plan: Mapping[str, bytes]) -> None:
    """Write the input files, then (as root) hand the tree to the sandbox user.

    Nothing runs in the workdir yet, so plain paths are safe here. O_EXCL still
    guards against writing one file twice.
    """
    for rel, data in plan.items():
        path = os.path.join(workdir, rel)
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    if os.geteuid() == 0:
        # Ours, made just now: owned by the sandbox user it is bound as it is, and
        # the code can modify its inputs and write beside them.
        for dirpath, dirnames, filenames in os.walk(workdir):
            for name in dirnames + filenames:
                os.lchown(os.path.join(dirpath, name), SANDBOX_HOST_ID, SANDBOX_HOST_ID)
        os.lchown(workdir, SANDBOX_HOST_ID, SANDBOX_HOST_ID)


# ------------------------------------------------------------------ reading back

_O_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_O_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def _read_beneath(root_fd: int, rel: str, limit: int) -> bytes:
    """Read workdir/rel without following any symlink on the way, at most limit bytes.

    The code in the sandbox owns the workdir: it may have replaced a file or one of its
    parent directories with a symlink to /etc/shadow, or with a FIFO that would block a
    reader forever. So the path is walked one component at a time with openat and
    O_NOFOLLOW (a symlink anywhere fails with ELOOP/ENOTDIR), opened O_NONBLOCK, and
    only a regular file is read. Raises OSError or ValueError with the reason to skip.
    """
    parts = _split_relpath(rel)
    fd = os.dup(root_fd)
    try:
        for part in parts[:-1]:
            nfd = os.open(part, _O_DIR, dir_fd=fd)
            os.close(fd)
            fd = nfd
        ffd = os.open(parts[-1], _O_FILE, dir_fd=fd)
    finally:
        os.close(fd)
    try:
        st = os.fstat(ffd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("not a regular file")
        if st.st_size > limit:
            raise ValueError(f"{st.st_size} bytes, over the read-back limit of {limit}")
        chunks: List[bytes] = []
        total = 0
        while True:
            chunk = os.read(ffd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise ValueError(f"over the read-back limit of {limit} bytes")
        return b"".join(chunks)
    finally:
        os.close(ffd)


def _read_back(workdir: str, entries: List[Dict[str, Any]]) -> Tuple[Dict[str, bytes], Dict[str, str]]:
    """The created/modified regular files of the result's ``files`` list, bounded."""
    files: Dict[str, bytes] = {}
    skipped: Dict[str, str] = {}
    budget = MAX_TOTAL_BYTES
    root_fd = os.open(workdir, _O_DIR)
    try:
        for e in entries:
            path, change, kind = e.get("path"), e.get("change"), e.get("type")
            if not isinstance(path, str) or change not in ("created", "modified") or kind == "dir":
                continue
            if kind != "file":
                skipped[path] = f"{kind}, not read" + (" (symlinks are never followed)" if kind == "symlink" else "")
                continue
            try:
                data = _read_beneath(root_fd, path, min(MAX_FILE_BYTES, budget))
            except (OSError, ValueError) as exc:
                skipped[path] = str(exc.strerror if isinstance(exc, OSError) and exc.strerror else exc)
                continue
            files[path] = data
            budget -= len(data)
    finally:
        os.close(root_fd)
    return files, skipped


def _remove_tree(path: str) -> None:
    """Remove the workdir whatever the code left in it: parts made unreadable (chmod
    000), or a tree deeper than Python's recursion limit (shutil.rmtree recurses in
    3.11 and raised RecursionError past ~1000 levels).

    shutil.rmtree first; then GNU chmod -R and rm -rf, which walk iteratively and
    never follow a symlink met inside the tree.
    """
    try:
        shutil.rmtree(path)
        return
    except FileNotFoundError:
        return
    except (OSError, RecursionError):
        pass
    for argv in (["chmod", "-R", "u+rwx", "--", path], ["rm", "-rf", "--one-file-system", "--", path]):
        subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False)


# ------------------------------------------------------------------ running

def _size_arg(name: str, v: Union[str, int]) -> str:
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        raise TypeError(f"{name}: a size such as '2048M' or a number of bytes")
    s = str(v)
    if not s or s.startswith("-"):
        raise ValueError(f"{name}: {v!r} is not a size")
    return s


def _timeout_arg(timeout: Optional[float]) -> str:
    """--timeout's value; 0 means none, so a tiny positive one must not round to it."""
    t = float(timeout or 0)
    if t < 0 or t != t or t == float("inf"):
        raise ValueError(f"timeout: {timeout!r} is not a number of seconds >= 0")
    return "0" if t == 0 else f"{max(t, 0.001):.3f}"


def _build_command(code: str, *, workdir: str, sandbox_id: Optional[str], timeout: Optional[float],
                   memory: Union[str, int, None], network: Optional[str], env: Optional[Mapping[str, str]],
                   python: Optional[str], cpu_time: Optional[int], pids: Optional[int],
                   max_output: Union[str, int, None], allow_degraded: bool, sbx_oci: str,
                   root: Optional[str], show_value: bool = False) -> List[str]:
    """sbx-oci's command line. An option left None is not given (the runtime's, or
    through a server its own, default applies): a server's standby, a sandbox made
    ahead of the run, is taken only by a run that asks for nothing else."""
    if not isinstance(code, str):
        raise TypeError("code must be a str")
    if "\0" in code:
        raise ValueError("code contains a NUL byte (it is passed as one argv string)")
    if network is not None and network not in NETWORKS:
        raise ValueError(f"network must be one of {', '.join(NETWORKS)}, not {network!r}")
    cmd = [sbx_oci]
    if root is not None:
        cmd += ["--root", os.fspath(root)]
    cmd += ["python", "--result", "-"]
    if sandbox_id is not None:
        cmd += ["--id", sandbox_id]
    cmd += ["--workdir", workdir, "--timeout", _timeout_arg(timeout)]
    if memory is not None:
        cmd += ["--memory", _size_arg("memory", memory)]
    if network is not None:
        cmd += ["--network", network]
    if show_value:
        cmd.append("--show-value")
    if python is not None:
        cmd += ["--python", os.fspath(python)]
    if cpu_time is not None:
        cmd += ["--cpu-time", str(int(cpu_time))]
    if pids is not None:
        cmd += ["--pids", str(int(pids))]
    if max_output is not None:
        cmd += ["--max-output", _size_arg("max_output", max_output)]
    for k, v in (env or {}).items():
        if not isinstance(k, str) or not k or "=" in k or "\0" in k or "\0" in str(v):
            raise ValueError(f"env: invalid variable name or value {k!r}")
        cmd += ["--env", f"{k}={v}"]
    if allow_degraded:
        cmd.append("--allow-degraded")
    # Options end here; everything after -c belongs to the program.
    cmd += ["-c", code]
    return cmd


class _Connection:
    """One run through `sbx-oci serve` (the wire is runtime/serve/wire.h in sbx-oci).

    What is sent is python's own command line (without the runtime and its --root)
    and this process's environment (as the runtime would inherit it), with /dev/null
    (or ``stdin_fd``) as stdin, two pipes as stdout and stderr and ``cwd`` as the cwd;
    the server's worker runs it as `sbx-oci python` would here, and ends with the exit
    status on the socket. What comes on the pipes is kept, and handed to ``on_stdout``
    and ``on_stderr`` as it arrives. ``interrupt()`` asks the server to interrupt the
    program (SIGINT: KeyboardInterrupt in Python). Closing the socket before the end
    ends the run (the server kills it and deletes its container), which is how a
    cancelled or timed-out call stops it.
    """

    def __init__(self, path: str, args: List[str], cwd: str, *, stdin_fd: Optional[int] = None,
                 on_stdout: Optional[Callable[[bytes], None]] = None,
                 on_stderr: Optional[Callable[[bytes], None]] = None) -> None:
        env = [k + b"=" + v for k, v in os.environb.items()]
        payload = b"".join(a.encode("utf-8", "surrogateescape") + b"\0" for a in args) + \
            b"".join(e + b"\0" for e in env)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        fds: List[int] = []
        try:
            self.sock.connect(os.fspath(path))
            out_r, out_w = os.pipe()
            err_r, err_w = os.pipe()
            fds = [out_r, out_w, err_r, err_w]
            stdin = os.dup(stdin_fd) if stdin_fd is not None else os.open(os.devnull, os.O_RDONLY)
            fds.append(stdin)
            cwd_fd = os.open(cwd, os.O_PATH | os.O_DIRECTORY)
            fds.append(cwd_fd)
            head = b"SBX1" + struct.pack("=III", len(args), len(env), len(payload))
            socket.send_fds(self.sock, [head], [stdin, out_w, err_w, cwd_fd])
            self.sock.sendall(payload)
        except BaseException:
            self.sock.close()
            for fd in fds:
                os.close(fd)
            raise
        for fd in (out_w, err_w, stdin, cwd_fd):
            os.close(fd)
        self.pipes = {out_r: bytearray(), err_r: bytearray()}
        self.out_r, self.err_r = out_r, err_r
        self.callbacks = {out_r: on_stdout, err_r: on_stderr}
        self.reply = bytearray()
        self.lock = threading.Lock()

    def interrupt(self) -> None:
        """KeyboardInterrupt in the running program (the server sends it SIGINT)."""
        with self.lock:
            try:
                self.sock.sendall(b"SBXI")
            except OSError:
                pass

    def cancel(self) -> None:
        """End the run: the server sees the hangup."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def close(self) -> None:
        self.sock.close()
        for fd in (self.out_r, self.err_r):
            try:
                os.close(fd)
            except OSError:
                pass

    def _reply_done(self) -> bool:
        r = bytes(self.reply)
        return (len(r) >= 8 and r[:4] == b"SBXX") or \
            (len(r) >= 8 and r[:4] == b"SBXE" and len(r) >= 8 + struct.unpack("=I", r[4:8])[0])

    def _take(self, fd: int, chunk: bytes) -> None:
        self.pipes[fd] += chunk
        cb = self.callbacks.get(fd)
        if cb is not None:
            cb(chunk)

    def _drain(self, fds: List[int]) -> None:
        """What the pipes hold, read without waiting for their EOF."""
        for fd in fds:
            os.set_blocking(fd, False)
            try:
                while True:
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        break
                    self._take(fd, chunk)
            except BlockingIOError:
                pass

    def communicate(self, timeout: Optional[float]) -> Tuple[bytes, bytes, int]:
        """stdout, stderr and the exit status; SandboxError if the server refused the
        run; TimeoutError (the run is ended) past timeout."""
        import time
        deadline = None if timeout is None else time.monotonic() + timeout
        open_fds = [self.out_r, self.err_r, self.sock.fileno()]
        while open_fds:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                self.cancel()
                raise TimeoutError("sbx-oci serve did not finish the run in time")
            ready, _, _ = select.select(open_fds, [], [], left)
            for fd in ready:
                chunk = os.read(fd, 1 << 16) if fd != self.sock.fileno() else self.sock.recv(1 << 16)
                if not chunk:
                    open_fds.remove(fd)
                elif fd == self.sock.fileno():
                    self.reply += chunk
                else:
                    self._take(fd, chunk)
            if self._reply_done():
                # the server replies after the program's last write (and the result's)
                # reached the pipes: what is in them now is all of it. Their EOF would
                # only come with the sandbox's teardown, which the reply does not wait for.
                self._drain([fd for fd in open_fds if fd != self.sock.fileno()])
                break
        r = bytes(self.reply)
        if r[:4] == b"SBXX" and len(r) >= 8:
            return bytes(self.pipes[self.out_r]), bytes(self.pipes[self.err_r]), struct.unpack("=i", r[4:8])[0]
        if r[:4] == b"SBXE" and len(r) >= 8:
            raise SandboxError(r[8:8 + struct.unpack("=I", r[4:8])[0]].decode("utf-8", "replace"),
                               returncode=EXIT_SETUP)
        raise SandboxError("sbx-oci serve ended the run without a status", returncode=EXIT_SETUP,
                           stderr=bytes(self.pipes[self.err_r]).decode("utf-8", "replace"))


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith("sbx-oci:") and "warning" not in line:
            return line
    return lines[-1] if lines else ""


def _parse_result(out: bytes, err: str, returncode: int) -> Dict[str, Any]:
    """The result object from sbx-oci's stdout, or SandboxError if there is none."""
    text = out.decode("utf-8", "replace").strip()
    raw: Any = None
    if text:
        try:
            # "\n" only: str.splitlines also splits at U+2028 and U+0085, which
            # the JSON may carry unescaped in a file name or the output
            raw = json.loads(text.split("\n")[-1])
        except ValueError:
            raw = None
    if not isinstance(raw, dict):
        why = _last_line(err) or f"sbx-oci exited with status {returncode} and printed no result"
        raise SandboxError(why, returncode=returncode, stderr=err)
    if raw.get("error") is not None:
        raise SandboxError(str(raw["error"]), returncode=returncode, stderr=err, raw=raw)
    return raw


def _delete_quietly(argv: List[str]) -> None:
    """`sbx-oci delete --force ID`: what a runtime that died before its teardown left."""
    subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)


class _Run:
    """One call of run_python or run_python_async, except starting sbx-oci and waiting.

    Both calls share everything else through it, in this order: the constructor checks
    every argument and builds the command line once with a dummy workdir, so that a bad
    argument raises before anything exists; make_workdir creates the workdir and the
    input files; result turns what sbx-oci printed into a Result (or SandboxError);
    remove_workdir removes the workdir unless it is to be kept. The methods that touch
    the file system block, so the async call runs them in a thread.
    """

    def __init__(self, code: str, *, timeout: Optional[float], memory: Union[str, int, None],
                 network: Optional[str], files: Optional[Mapping[str, FileContent]],
                 env: Optional[Mapping[str, str]], python: Optional[str], cpu_time: Optional[int],
                 pids: Optional[int], max_output: Union[str, int, None], allow_degraded: bool, sbx_oci: str,
                 root: Optional[str], keep_workdir: bool, sandbox_id: Optional[str],
                 connect: Optional[str] = None, show_value: bool = False) -> None:
        if connect is not None and root is not None:
            raise ValueError("root: a server (connect) runs in its own state root")
        self.connect = connect
        self.plan = _plan_files(files)
        # The id is chosen here, not by sbx-oci, so that a runtime that was killed can
        # still be cleaned up with `delete --force ID`.
        sid = sandbox_id if sandbox_id is not None else "py-" + secrets.token_hex(8)
        self.sandbox_id = sid
        self.sbx_oci = sbx_oci
        self.timeout = timeout
        self.keep_workdir = keep_workdir
        # how long to wait for sbx-oci itself; it enforces the wall clock, this only
        # guards against a runtime that hangs
        self.guard: Optional[float] = (float(timeout) + GUARD_SECONDS) if timeout else None
        self.delete_argv = [sbx_oci] + (["--root", os.fspath(root)] if root is not None else []) + \
            ["delete", "--force", sid]

        if connect is None:  # one-shot: the defaults are the library's, the id ours
            memory = DEFAULT_MEMORY if memory is None else memory
            network = DEFAULT_NETWORK if network is None else network
        # through a server, an id is passed only when asked for: the server names the run
        given_id = sid if connect is None or sandbox_id is not None else None

        def command(workdir: str) -> List[str]:
            return _build_command(code, workdir=workdir, sandbox_id=given_id, timeout=timeout, memory=memory,
                                  network=network, env=env, python=python, cpu_time=cpu_time, pids=pids,
                                  max_output=max_output, allow_degraded=allow_degraded, sbx_oci=sbx_oci,
                                  root=root, show_value=show_value)

        command("/")  # validate the command line before the workdir exists
        self._command = command
        self.workdir: Optional[str] = None
        self.cmd: List[str] = []

    def connection(self) -> _Connection:
        """The run, sent to the server (connect): python's command line, from the workdir."""
        assert self.workdir is not None
        try:
            return _Connection(self.connect or "", self.cmd[self.cmd.index("python") + 1:], self.workdir)
        except OSError as exc:
            raise SandboxError(f"cannot reach sbx-oci serve at {self.connect}: {exc.strerror or exc}") from exc

    def make_workdir(self) -> None:
        """Create the workdir with the input files, and the command line that names it."""
        self.workdir = tempfile.mkdtemp(prefix="sbx-work-")
        _write_files(self.workdir, self.plan)
        self.cmd = self._command(self.workdir)

    def remove_workdir(self) -> None:
        if self.workdir is not None and not self.keep_workdir:
            _remove_tree(self.workdir)

    def cannot_start(self, exc: OSError) -> SandboxError:
        return SandboxError(f"cannot run {self.sbx_oci}: {exc.strerror or exc}")

    def guard_expired(self) -> SandboxError:
        return SandboxError(f"sbx-oci did not finish within {self.guard:g} s (--timeout {self.timeout} + guard); "
                            f"killed it and deleted {self.sandbox_id}", returncode=None)

    def result(self, out: bytes, err_b: bytes, returncode: int) -> Result:
        """The Result of a run that ended, with the files read back from the workdir."""
        assert self.workdir is not None
        err = err_b.decode("utf-8", "replace")
        raw = _parse_result(out, err, returncode)
        got, skipped = _read_back(self.workdir, raw.get("files") or [])
        return _make_result(raw, err, got, skipped, self.workdir if self.keep_workdir else None)


def _make_result(raw: Dict[str, Any], err: str, got: Dict[str, bytes], skipped: Dict[str, str],
                 workdir: Optional[str]) -> Result:
    session = raw.get("session")
    return Result(
            exit_code=raw.get("exit_code"),
            signal=raw.get("signal"),
            oom_killed=bool(raw.get("oom_killed")),
            timed_out=bool(raw.get("timed_out")),
            cpu_time_exceeded=bool(raw.get("cpu_time_exceeded")),
            stdout=raw.get("stdout") or "",
            stderr=raw.get("stderr") or "",
            wall_ms=float(raw.get("wall_ms") or 0),
            cpu_user_ms=float(raw.get("cpu_user_ms") or 0),
            cpu_sys_ms=float(raw.get("cpu_sys_ms") or 0),
            peak_memory_bytes=int(raw.get("peak_memory_bytes") or 0),
            stdout_truncated=bool(raw.get("stdout_truncated")),
            stderr_truncated=bool(raw.get("stderr_truncated")),
            degraded=list(raw.get("degraded") or []),
            error=raw.get("error"),
            files=got,
            raw=raw,
            files_skipped=skipped,
            files_truncated=bool(raw.get("files_truncated")),
            workdir=workdir,
            messages=err,
            limits_hit=list(raw.get("limits_hit") or []),
            session_state=session.get("state") if isinstance(session, dict) else None,
            value=raw.get("value"),
            value_truncated=bool(raw.get("value_truncated")),
            exception=raw.get("exception") if isinstance(raw.get("exception"), dict) else None,
            figures=[base64.b64decode(f.get("data", "")) for f in raw.get("figures") or [] if isinstance(f, dict)],
            figures_dropped=int(raw.get("figures_dropped") or 0),
        )


class Session:
    """A session of an `sbx-oci serve` (connect=its socket), as a notebook kernel is
    one: the calls share one interpreter's state (globals, imports, the files in its
    /work), each in its own sandboxed fork of the last good state. A cell that ends,
    even by an exception or an interrupt, is the session's state from then on; one
    that dies (a crash, os._exit, the OOM killer, its timeout) leaves the session as it
    was before it (``Result.session_state`` says which).

        with Session("/run/sbx.sock", memory="512M") as s:
            s.put("data.csv", b"a,b\\n1,2\\n")
            s.run("import pandas as pd; df = pd.read_csv('data.csv')")
            r = s.run("df.a.sum()")            # r.value == "1", as the REPL shows it
            s.run("import matplotlib.pyplot as plt; plt.plot(df.a)")   # r.figures: [PNG bytes]
            s.get("out.csv")                   # a file the cells wrote, as bytes

    A cell's ``Result`` has its output (``on_stdout``/``on_stderr`` get it as it is
    written), the ``value`` of its last expression, its uncaught ``exception`` (type,
    message, traceback) and the matplotlib ``figures`` it left open or showed, as PNG.
    ``interrupt()`` (from another thread) raises KeyboardInterrupt in the running cell.

    The session's sandbox is made by its first call, with memory, network and workdir
    (the server's own options otherwise); workdir=DIR makes a directory of this
    machine the session's /work (never a system directory), else the session has a
    fresh one that goes with it. It ends with close() (or the with block), after the
    server's --session-idle, or when the server stops.
    """

    def __init__(self, connect: str, name: Optional[str] = None, *, memory: Union[str, int, None] = None,
                 network: Optional[str] = None, workdir: Optional[str] = None) -> None:
        self.connect = os.fspath(connect)
        self.name = name if name is not None else "s-" + secrets.token_hex(8)
        if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,63}", self.name):
            raise ValueError(f"name: {self.name!r} is not a session name (letters, digits, '.', '_', '-')")
        self.sandbox: List[str] = []
        if memory is not None:
            self.sandbox += ["--memory", _size_arg("memory", memory)]
        if network is not None:
            if network not in NETWORKS:
                raise ValueError(f"network: {network!r} is not none, loopback or full")
            self.sandbox += ["--network", network]
        if workdir is not None:
            self.sandbox += ["--workdir", os.path.abspath(os.fspath(workdir))]
        # where the server writes each cell's result (this user's, private)
        self._tmp = tempfile.mkdtemp(prefix="sbx-session-")
        self._conn: Optional[_Connection] = None

    def _call(self, args: List[str], timeout: Optional[float], *, stdin_fd: Optional[int] = None,
              on_stdout: Optional[Callable[[bytes], None]] = None,
              on_stderr: Optional[Callable[[bytes], None]] = None) -> Tuple[bytes, bytes, int]:
        """The call to the session's own socket once it exists, else to the server (which
        begins it); a session ending as the call came resets it unread: the server then."""
        direct = self.connect + ".sessions/" + self.name
        for path in (direct, self.connect):
            try:
                conn = _Connection(path, args, self._tmp, stdin_fd=stdin_fd, on_stdout=on_stdout,
                                   on_stderr=on_stderr)
            except OSError as exc:
                if path == direct:
                    continue
                raise SandboxError(f"cannot reach sbx-oci serve at {self.connect}: {exc.strerror or exc}") from exc
            self._conn = conn
            try:
                return conn.communicate(None if timeout is None else float(timeout) + GUARD_SECONDS)
            except ConnectionResetError:
                if path == direct:
                    continue
                raise SandboxError("sbx-oci serve ended the call without a status", returncode=EXIT_SETUP)
            except TimeoutError as exc:
                raise SandboxError(f"sbx-oci serve did not finish the call within {timeout} s + guard",
                                   returncode=None) from exc
            finally:
                self._conn = None
                conn.close()
        raise AssertionError("unreachable")

    def run(self, code: str, *, timeout: Optional[float] = 300, max_output: Union[str, int, None] = None,
            on_stdout: Optional[Callable[[bytes], None]] = None,
            on_stderr: Optional[Callable[[bytes], None]] = None) -> Result:
        """One cell: CODE in the session's state. Its Result: stdout and stderr (also
        given to on_stdout/on_stderr as they come), value, exception, figures..."""
        if not isinstance(code, str) or "\0" in code:
            raise ValueError("code: a str without NUL bytes")
        result = os.path.join(self._tmp, "result.json")
        args = ["--session", self.name, "--result", "result.json"] + self.sandbox
        if timeout is not None:
            args += ["--timeout", _timeout_arg(timeout)]
        if max_output is not None:
            args += ["--max-output", _size_arg("max_output", max_output)]
        out, err_b, returncode = self._call(args + ["-c", code], timeout, on_stdout=on_stdout, on_stderr=on_stderr)
        err = err_b.decode("utf-8", "replace")
        try:
            with open(result, "rb") as f:
                raw_text = f.read()
            os.unlink(result)
        except OSError:
            raw_text = b""
        raw = _parse_result(raw_text, err, returncode)
        raw.setdefault("stdout", out.decode("utf-8", "replace"))
        raw.setdefault("stderr", err)
        return _make_result(raw, "", {}, {}, None)

    def interrupt(self) -> None:
        """KeyboardInterrupt in the cell running now (from another thread); the cell
        then ends as by any exception: what it did until then is the session's state."""
        conn = self._conn
        if conn is not None:
            conn.interrupt()

    def _file_call(self, option: str, name: str, *, stdin_fd: Optional[int] = None) -> bytes:
        if not isinstance(name, str) or not name or "\0" in name:
            raise ValueError(f"name: {name!r} is not a file name under /work")
        out, err_b, returncode = self._call(["--session", self.name] + self.sandbox + [option, name], 60,
                                            stdin_fd=stdin_fd)
        if returncode != 0:
            raise SandboxError(_last_line(err_b.decode("utf-8", "replace")) or f"{option} {name}: failed",
                               returncode=returncode, stderr=err_b.decode("utf-8", "replace"))
        return out

    def put(self, name: str, data: FileContent) -> None:
        """Write DATA as /work/NAME in the session (directories made as needed; a file
        there is replaced, never written through a link)."""
        blob = data.encode() if isinstance(data, str) else bytes(data)
        fd = os.memfd_create("sbx-put", os.MFD_CLOEXEC)
        try:
            os.write(fd, blob)
            os.lseek(fd, 0, os.SEEK_SET)
            self._file_call("--put-file", name, stdin_fd=fd)
        finally:
            os.close(fd)

    def get(self, name: str) -> bytes:
        """The content of the regular file /work/NAME."""
        return self._file_call("--get-file", name)

    def list(self, path: str = ".") -> List[Dict[str, Any]]:
        """What is under /work/PATH: {"path", "type", "size", "mtime"} each, bounded."""
        out = self._file_call("--list-files", path)
        return [json.loads(line) for line in out.decode("utf-8", "replace").splitlines() if line.strip()]

    def remove(self, name: str) -> None:
        """Remove /work/NAME (a directory with what is in it)."""
        self._file_call("--remove-file", name)

    def close(self) -> None:
        """End the session (its sandbox and state go); one already gone is no error."""
        try:
            self._call(["--session", self.name, "--end-session"], 10)
        except SandboxError:
            pass
        finally:
            shutil.rmtree(self._tmp, ignore_errors=True)

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _kill_and_delete(proc: subprocess.Popen[bytes], delete_argv: List[str]) -> None:
    """Stop a runtime that outlived the guard, and remove what it left in the state root.

    A SIGKILLed sbx-oci cannot tear down its container, so `delete --force` does.
    """
    try:
        proc.send_signal(signal.SIGKILL)
    except OSError:
        pass
    proc.wait()
    _delete_quietly(delete_argv)


def run_python(code: str, *, timeout: Optional[float] = 300, memory: Union[str, int, None] = None,
               network: Optional[str] = None, files: Optional[Mapping[str, FileContent]] = None,
               env: Optional[Mapping[str, str]] = None, python: Optional[str] = None,
               cpu_time: Optional[int] = None, pids: Optional[int] = None,
               max_output: Union[str, int, None] = None, allow_degraded: bool = False,
               sbx_oci: str = "sbx-oci", root: Optional[str] = None,
               keep_workdir: bool = False, sandbox_id: Optional[str] = None,
               connect: Optional[str] = None, show_value: bool = False) -> Result:
    """Run ``code`` once with ``python -c`` in a fresh sbx-oci sandbox and report how it ended.

    timeout      wall clock in seconds (0 or None: none); everything is killed at it
    memory       for the whole sandbox, '2048M' (the default) or bytes; going over is
                 an OOM kill (through a server: the server's default when None)
    network      'none', 'loopback' (only lo; the default) or 'full' (the host's)
                 (through a server: the server's default when None)
    files        {relative path: str | bytes} written into the workdir (/work, the cwd)
    env          variables to set; the sandbox's environment is otherwise scrubbed
    python       the host interpreter (default: sbx-oci's, /usr/bin/python3)
    cpu_time, pids, max_output   as sbx-oci python's --cpu-time, --pids, --max-output
    allow_degraded   run even if a limit cannot be enforced (needed when not root);
                 what was not enforced is listed in Result.degraded
    sbx_oci      the runtime binary (a path, or a name looked up on PATH)
    root         sbx-oci's state root (--root); default the runtime's own
    keep_workdir leave the workdir on the host (its path in Result.workdir)
    sandbox_id   the container id (--id; default py-<random>): the name of its state
                 dir and cgroup, for logs; the client needs to know it to clean up
    show_value   the last expression's value shown as the REPL shows it (on stdout,
                 and as Result.value)
    connect      the socket of an `sbx-oci serve` (of this user): the run is forked from
                 its warm interpreter (its --preload modules already imported), as
                 isolated as a one-shot run; the server's options are the defaults
                 that these arguments override (not root, nor a python other than the
                 server's)

    A program that fails, times out or is OOM-killed returns a Result (check ``.ok``);
    SandboxError means no program ran. ValueError/TypeError for bad arguments are
    raised before anything is created or run.
    """
    run = _Run(code, timeout=timeout, memory=memory, network=network, files=files, env=env, python=python,
               cpu_time=cpu_time, pids=pids, max_output=max_output, allow_degraded=allow_degraded,
               sbx_oci=sbx_oci, root=root, keep_workdir=keep_workdir, sandbox_id=sandbox_id,
               connect=connect, show_value=show_value)
    try:
        run.make_workdir()
        if connect is not None:
            conn = run.connection()
            try:
                out, err, returncode = conn.communicate(run.guard)
            except TimeoutError:
                raise run.guard_expired() from None
            finally:
                conn.close()
            return run.result(out, err, returncode)
        try:
            proc = subprocess.Popen(run.cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE)
        except OSError as exc:
            raise run.cannot_start(exc) from exc
        try:
            out, err = proc.communicate(timeout=run.guard)
        except subprocess.TimeoutExpired:
            _kill_and_delete(proc, run.delete_argv)
            raise run.guard_expired()
        except BaseException:  # KeyboardInterrupt and the like: leave nothing running
            _kill_and_delete(proc, run.delete_argv)
            raise
        return run.result(out, err, proc.returncode)
    finally:
        run.remove_workdir()


# ------------------------------------------------------------------ asyncio

_T = TypeVar("_T")


async def _settle(aw: Awaitable[_T]) -> Tuple[asyncio.Future[_T], bool]:
    """Await aw to its end even if the calling task is cancelled meanwhile: the done
    future, and whether a cancellation was asked for (and held back) on the way.
    """
    fut = asyncio.ensure_future(aw)
    cancelled = False
    while not fut.done():
        try:
            await asyncio.wait([fut])  # unlike awaiting fut, never cancels it
        except asyncio.CancelledError:
            cancelled = True
    return fut, cancelled


async def _to_the_end(aw: Awaitable[_T]) -> _T:
    """aw's result, awaited to its end, and then the cancellation if one came meanwhile:
    for the steps that must not be cut short (writing, reading or removing the workdir
    in a thread, which cannot be interrupted, and stopping the sandbox).
    """
    fut, cancelled = await _settle(aw)
    if cancelled:
        if not fut.cancelled():
            fut.exception()  # retrieved: the cancellation is what the caller asked for
        raise asyncio.CancelledError()
    return fut.result()


async def _in_thread(fn: Callable[..., _T], *args: Any) -> _T:
    """fn(*args) in the loop's default executor, to its end (see _to_the_end)."""
    return await _to_the_end(asyncio.get_running_loop().run_in_executor(None, fn, *args))


def _blocks(pid: int, sig: int) -> bool:
    """Whether process pid (single-threaded) has sig blocked, from /proc/PID/status."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("SigBlk:"):
                    return bool(int(line.split()[1], 16) >> (sig - 1) & 1)
    except (OSError, ValueError, IndexError):
        pass
    return False


async def _stop(proc: asyncio.subprocess.Process, io: asyncio.Future[Tuple[bytes, bytes]], run: _Run,
                grace: float) -> None:
    """End sbx-oci and its sandbox, and leave nothing of them behind.

    With a grace period (a cancelled call), SIGTERM first: sbx-oci passes it on to the
    program, tears the sandbox down and exits. But it handles the signal only from when
    it blocks it, just before it starts the program: a SIGTERM before that kills it
    halfway through its setup, where it may have made the container's cgroups but not
    yet its state, and then `delete --force` does not find them. So the signal waits for
    sbx-oci to block it (/proc/PID/status), which takes milliseconds. Without a grace
    period (the runtime outlived the guard) or past it: SIGKILL, and `delete --force`
    for what a runtime that died of a signal left. sbx-oci's output is read all along
    (io), so that it never blocks writing its result.
    """
    loop = asyncio.get_running_loop()

    def send(sig: int) -> None:
        if proc.returncode is None:
            try:
                proc.send_signal(sig)
            except ProcessLookupError:
                pass

    if grace > 0:
        deadline = loop.time() + grace
        while not io.done() and not _blocks(proc.pid, signal.SIGTERM) and loop.time() < deadline:
            await asyncio.wait([io], timeout=0.005)
        if not io.done() and loop.time() < deadline:
            send(signal.SIGTERM)
            await asyncio.wait([io], timeout=max(0.0, deadline - loop.time()))
    if not io.done():
        send(signal.SIGKILL)
        # only sbx-oci holds the pipes: they close as it dies
        await asyncio.wait([io], timeout=GUARD_SECONDS)
    if proc.returncode is None or proc.returncode < 0:
        await loop.run_in_executor(None, _delete_quietly, run.delete_argv)
    if not io.done():
        await asyncio.wait([io], timeout=GUARD_SECONDS)
    if not io.done():
        io.cancel()
    elif not io.cancelled():
        io.exception()  # what it read is of no use any more


async def _communicate(run: _Run) -> Tuple[bytes, bytes, int]:
    """Run sbx-oci as run.cmd says: its stdout, stderr and exit status."""
    # Started to the end even if cancelled meanwhile, and then stopped like a running
    # one: asyncio would SIGKILL a runtime cancelled while starting, maybe mid-setup.
    spawn, cancelled = await _settle(asyncio.create_subprocess_exec(
        *run.cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    try:
        proc = spawn.result()
    except OSError as exc:
        if cancelled:
            raise asyncio.CancelledError() from None
        raise run.cannot_start(exc) from exc
    io = asyncio.ensure_future(proc.communicate())
    try:
        if cancelled:
            raise asyncio.CancelledError()
        out, err = await asyncio.wait_for(asyncio.shield(io), run.guard)
    except asyncio.TimeoutError:
        await _to_the_end(_stop(proc, io, run, grace=0))
        raise run.guard_expired() from None
    except BaseException:  # the task was cancelled: end the run, then let it go on
        await _to_the_end(_stop(proc, io, run, grace=STOP_GRACE_SECONDS))
        raise
    assert proc.returncode is not None
    return out, err, proc.returncode


async def _communicate_connected(run: _Run) -> Tuple[bytes, bytes, int]:
    """_communicate through a server: the connection read in a thread, cancelled by
    closing it (the run ends; the thread then sees the pipes and socket close)."""
    conn = await _in_thread(run.connection)
    work = asyncio.ensure_future(asyncio.get_running_loop().run_in_executor(None, conn.communicate, run.guard))
    try:
        return await asyncio.shield(work)  # a cancellation stops here; work goes on
    except asyncio.CancelledError:
        conn.cancel()
        done, _ = await _settle(work)
        if not done.cancelled():
            done.exception()  # the hangup it saw is what the caller asked for
        raise
    except TimeoutError:
        raise run.guard_expired() from None
    finally:
        if work.done():
            conn.close()
        else:
            conn.cancel()


async def run_python_async(code: str, *, timeout: Optional[float] = 300, memory: Union[str, int, None] = None,
                           network: Optional[str] = None, files: Optional[Mapping[str, FileContent]] = None,
                           env: Optional[Mapping[str, str]] = None, python: Optional[str] = None,
                           cpu_time: Optional[int] = None, pids: Optional[int] = None,
                           max_output: Union[str, int, None] = None, allow_degraded: bool = False,
                           sbx_oci: str = "sbx-oci", root: Optional[str] = None,
                           keep_workdir: bool = False, sandbox_id: Optional[str] = None,
                           connect: Optional[str] = None, show_value: bool = False) -> Result:
    """run_python for asyncio: the same arguments, the same Result and exceptions.

    sbx-oci runs as an asyncio subprocess, so the event loop goes on meanwhile; the
    workdir is written, read back and removed in the loop's default executor.

    Cancelling the awaiting task (task.cancel(), asyncio.wait_for, a TaskGroup...)
    ends the run: sbx-oci gets SIGTERM, ends the program and tears the sandbox down
    (or, after STOP_GRACE_SECONDS, gets SIGKILL and the container is deleted with
    ``sbx-oci delete --force``), the workdir is removed, and then CancelledError
    propagates. A second cancellation does not cut that cleanup short.

    Through a server (connect), the run is read in the default executor; cancelling
    closes the connection, which ends the run (the server kills it and deletes its
    container), and CancelledError propagates once the server has let go of it.
    """
    run = _Run(code, timeout=timeout, memory=memory, network=network, files=files, env=env, python=python,
               cpu_time=cpu_time, pids=pids, max_output=max_output, allow_degraded=allow_degraded,
               sbx_oci=sbx_oci, root=root, keep_workdir=keep_workdir, sandbox_id=sandbox_id,
               connect=connect, show_value=show_value)
    try:
        await _in_thread(run.make_workdir)
        if connect is not None:
            out, err, returncode = await _communicate_connected(run)
        else:
            out, err, returncode = await _communicate(run)
        return await _in_thread(run.result, out, err, returncode)
    finally:
        await _in_thread(run.remove_workdir)


# ------------------------------------------------------------------ CLI

def main(argv: Optional[List[str]] = None) -> int:
    """`python3 sbx_sandbox.py -c CODE`: print the result JSON, exit with the program's status."""
    ap = argparse.ArgumentParser(description="Run Python code once in an sbx-oci sandbox and print the result JSON.")
    ap.add_argument("-c", dest="code", required=True, help="the code to run")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--memory", default=None, help="default 2048M (through a server: its own)")
    ap.add_argument("--network", choices=NETWORKS, default=None, help="default loopback (through a server: its own)")
    ap.add_argument("--env", action="append", default=[], metavar="K=V")
    ap.add_argument("--file", action="append", default=[], metavar="NAME=HOSTPATH",
                    help="copy a host file into the workdir as NAME")
    ap.add_argument("--python")
    ap.add_argument("--cpu-time", type=int)
    ap.add_argument("--pids", type=int)
    ap.add_argument("--max-output")
    ap.add_argument("--allow-degraded", action="store_true")
    ap.add_argument("--sbx-oci", default=os.environ.get("SBX_OCI", "sbx-oci"))
    ap.add_argument("--root")
    ap.add_argument("--keep-workdir", action="store_true")
    ap.add_argument("--connect", metavar="SOCKET", help="run through `sbx-oci serve --socket SOCKET`")
    ap.add_argument("--show-value", action="store_true", help="show the last expression's value, as the REPL does")
    a = ap.parse_args(argv)
    try:
        env: Dict[str, str] = {}
        for kv in a.env:
            k, v = kv.split("=", 1)
            env[k] = v
        files: Dict[str, FileContent] = {}
        for spec in a.file:
            name, host = spec.split("=", 1)
            with open(host, "rb") as f:
                files[name] = f.read()
    except (ValueError, OSError) as exc:
        print(f"sbx_sandbox: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        r = run_python(a.code, timeout=a.timeout, memory=a.memory, network=a.network, files=files, env=env,
                       python=a.python, cpu_time=a.cpu_time, pids=a.pids, max_output=a.max_output,
                       allow_degraded=a.allow_degraded, sbx_oci=a.sbx_oci, root=a.root,
                       keep_workdir=a.keep_workdir, connect=a.connect, show_value=a.show_value)
    except (ValueError, TypeError) as exc:
        print(f"sbx_sandbox: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SandboxError as exc:
        print(json.dumps(exc.raw if exc.raw is not None else {"error": exc.message}))
        print(f"sbx_sandbox: {exc.message}", file=sys.stderr)
        return exc.returncode or EXIT_SETUP
    sys.stderr.write(r.messages)
    print(json.dumps(r.to_json_dict()))
    return r.exit_code if r.exit_code is not None else EXIT_SETUP


if __name__ == "__main__":
    sys.exit(main())
