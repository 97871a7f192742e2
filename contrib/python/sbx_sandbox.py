#!/usr/bin/env python3
"""Run untrusted Python once in an sbx-oci sandbox, from Python.

A thin, standard-library-only client of ``sbx-oci python --result -``: it writes the
caller's input files into a fresh workdir, runs the code with ``-c``, parses the one
JSON object the runtime prints, reads back the files the code created or modified
(without ever following a symlink the code planted), and removes the workdir.

    from sbx_sandbox import run_python
    r = run_python("print(6*7)")
    assert r.ok and r.stdout == "42\\n"

Why a subprocess and not a library binding: sbx-oci is the trust boundary. The
sandbox is set up, watched and torn down by the runtime; this module only decides
what to ask for and how to read the answer, so it can stay small enough to audit.

CLI: ``python3 sbx_sandbox.py -c CODE [--timeout S] [--memory SIZE] ...`` prints the
result JSON and exits with the program's status (125 if the sandbox could not be set
up, 2 for a bad command line), like ``sbx-oci python`` itself.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Mapping, Optional, Union

__all__ = ["run_python", "Result", "SandboxError"]

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

# Exit status of sbx-oci when the sandbox could not be set up, and for a bad command line.
EXIT_SETUP = 125
EXIT_USAGE = 2

NETWORKS = ("none", "loopback", "full")

FileContent = Union[str, bytes, bytearray, memoryview]


class SandboxError(RuntimeError):
    """The sandbox could not be set up, so no program ran (or the runtime gave no result).

    Distinct from a program that failed: a non-zero exit, a timeout or an OOM kill is a
    normal ``Result``. This is raised when the JSON says ``error`` (exit 125), or when
    there is no JSON at all (exit 2 for a bad command line, a crashed or missing runtime);
    ``message`` then carries the runtime's one-line ``sbx-oci: ...`` complaint.
    """

    def __init__(self, message: str, *, returncode: Optional[int] = None,
                 stderr: str = "", raw: Optional[Dict[str, Any]] = None):
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
        chunks, total = [], 0
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


def _read_back(workdir: str, entries: List[Dict[str, Any]]):
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


def _build_command(code: str, *, workdir: str, sandbox_id: str, timeout, memory, network, env, python,
                   cpu_time, pids, max_output, allow_degraded, sbx_oci, root) -> List[str]:
    if not isinstance(code, str):
        raise TypeError("code must be a str")
    if "\0" in code:
        raise ValueError("code contains a NUL byte (it is passed as one argv string)")
    if network not in NETWORKS:
        raise ValueError(f"network must be one of {', '.join(NETWORKS)}, not {network!r}")
    cmd = [sbx_oci]
    if root is not None:
        cmd += ["--root", os.fspath(root)]
    cmd += ["python", "--result", "-", "--id", sandbox_id, "--workdir", workdir,
            "--timeout", _timeout_arg(timeout), "--memory", _size_arg("memory", memory), "--network", network]
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


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith("sbx-oci:") and "warning" not in line:
            return line
    return lines[-1] if lines else ""


def _parse_result(out: bytes, err: str, returncode: int) -> Dict[str, Any]:
    """The result object from sbx-oci's stdout, or SandboxError if there is none."""
    text = out.decode("utf-8", "replace").strip()
    raw = None
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


def _kill_and_delete(proc: subprocess.Popen, cmd_root: List[str], sandbox_id: str) -> None:
    """Stop a runtime that outlived the guard, and remove what it left in the state root.

    A SIGKILLed sbx-oci cannot tear down its container, so `delete --force` does.
    """
    try:
        proc.send_signal(signal.SIGKILL)
    except OSError:
        pass
    proc.wait()
    subprocess.run(cmd_root + ["delete", "--force", sandbox_id], stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def run_python(code: str, *, timeout: Optional[float] = 300, memory: Union[str, int] = "2048M",
               network: str = "loopback", files: Optional[Mapping[str, FileContent]] = None,
               env: Optional[Mapping[str, str]] = None, python: Optional[str] = None,
               cpu_time: Optional[int] = None, pids: Optional[int] = None,
               max_output: Union[str, int, None] = None, allow_degraded: bool = False,
               sbx_oci: str = "sbx-oci", root: Optional[str] = None,
               keep_workdir: bool = False, sandbox_id: Optional[str] = None) -> Result:
    """Run ``code`` once with ``python -c`` in a fresh sbx-oci sandbox and report how it ended.

    timeout      wall clock in seconds (0 or None: none); everything is killed at it
    memory       for the whole sandbox, '2048M' or bytes; going over is an OOM kill
    network      'none', 'loopback' (only lo; the default) or 'full' (the host's)
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

    A program that fails, times out or is OOM-killed returns a Result (check ``.ok``);
    SandboxError means no program ran. ValueError/TypeError for bad arguments are
    raised before anything is created or run.
    """
    plan = _plan_files(files)
    # The id is chosen here, not by sbx-oci, so that a runtime killed by the guard
    # can still be cleaned up with `delete --force ID`.
    sandbox_id = sandbox_id if sandbox_id is not None else "py-" + secrets.token_hex(8)
    cmd_root = [sbx_oci] + (["--root", os.fspath(root)] if root is not None else [])
    # Validate the command line before the workdir exists, so bad arguments leave nothing.
    _build_command(code, workdir="/", sandbox_id=sandbox_id, timeout=timeout, memory=memory, network=network,
                   env=env, python=python, cpu_time=cpu_time, pids=pids, max_output=max_output,
                   allow_degraded=allow_degraded, sbx_oci=sbx_oci, root=root)
    workdir = tempfile.mkdtemp(prefix="sbx-work-")
    try:
        _write_files(workdir, plan)
        cmd = _build_command(code, workdir=workdir, sandbox_id=sandbox_id, timeout=timeout, memory=memory,
                             network=network, env=env, python=python, cpu_time=cpu_time, pids=pids,
                             max_output=max_output, allow_degraded=allow_degraded, sbx_oci=sbx_oci, root=root)
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE)
        except OSError as exc:
            raise SandboxError(f"cannot run {sbx_oci}: {exc.strerror or exc}") from exc
        guard = (float(timeout) + GUARD_SECONDS) if timeout else None
        try:
            out, err_b = proc.communicate(timeout=guard)
        except subprocess.TimeoutExpired:
            _kill_and_delete(proc, cmd_root, sandbox_id)
            raise SandboxError(f"sbx-oci did not finish within {guard:g} s (--timeout {timeout} + guard); "
                               f"killed it and deleted {sandbox_id}", returncode=None)
        except BaseException:  # KeyboardInterrupt and the like: leave nothing running
            _kill_and_delete(proc, cmd_root, sandbox_id)
            raise
        err = err_b.decode("utf-8", "replace")
        raw = _parse_result(out, err, proc.returncode)
        got, skipped = _read_back(workdir, raw.get("files") or [])
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
            workdir=workdir if keep_workdir else None,
            messages=err,
            limits_hit=list(raw.get("limits_hit") or []),
        )
    finally:
        if not keep_workdir:
            _remove_tree(workdir)


# ------------------------------------------------------------------ CLI

def main(argv: Optional[List[str]] = None) -> int:
    """`python3 sbx_sandbox.py -c CODE`: print the result JSON, exit with the program's status."""
    ap = argparse.ArgumentParser(description="Run Python code once in an sbx-oci sandbox and print the result JSON.")
    ap.add_argument("-c", dest="code", required=True, help="the code to run")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--memory", default="2048M")
    ap.add_argument("--network", choices=NETWORKS, default="loopback")
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
    a = ap.parse_args(argv)
    try:
        env = dict(kv.split("=", 1) for kv in a.env)
        files = {}
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
                       keep_workdir=a.keep_workdir)
    except (ValueError, TypeError) as exc:
        print(f"sbx_sandbox: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SandboxError as exc:
        print(json.dumps(exc.raw if exc.raw is not None else {"error": exc.message}))
        print(f"sbx_sandbox: {exc.message}", file=sys.stderr)
        return exc.returncode if exc.returncode not in (None, 0) else EXIT_SETUP
    sys.stderr.write(r.messages)
    print(json.dumps(r.to_json_dict()))
    return r.exit_code if r.exit_code is not None else EXIT_SETUP


if __name__ == "__main__":
    sys.exit(main())
