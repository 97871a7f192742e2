"""A Jupyter kernel in an sbx-oci sandbox: the kernel provisioner of jupyter_client 7.

The kernel is the host's ipykernel, run by `sbx-oci python -m ipykernel_launcher` with
the defaults of `sbx-oci python` (the host's system paths read-only, the notebook's
directory as the writable /work, no network, memory and process limits, no
capabilities, seccomp, Landlock). Jupyter reaches it over ZeroMQ's ipc transport: its
five sockets and its connection file (with the kernel's HMAC key) are in a directory of
its own, bound into that sandbox only, so the kernel needs no network, and no kernel
sees another's key or sockets.

Warm: with `serve` naming the socket of an `sbx-oci serve --preload ipykernel,zmq`, the
kernel is a warm run of that server (`sbx-oci python --connect`): a sandbox the server
made before it was asked, forked from an interpreter that has imported ipykernel
already. The kernel's directory is then in /tmp (a warm run binds a client's directory
at /tmp/NAME only), at the same path inside as outside, and the sandbox's memory limit
is the server's unless `memory` is set (a request that asks for another memory or
network than the server's gets a sandbox of its own, made afresh: not warm).

The kernelspec "sbx-oci" names this provisioner (`python3 -m sbx_oci_kernel install`);
its config (kernel.json's metadata.kernel_provisioner.config) may set:
    sbx_oci   the runtime (default: sbx-oci on PATH)
    serve     the socket of an `sbx-oci serve` (default: none, every kernel is cold)
    memory    default "1G" (warm: the server's); network: "none" | "loopback" | "full"
    options   more `sbx-oci python` options, as a list
"""
import asyncio
import json
import os
import shutil
import tempfile
import time
from typing import Any, Dict, List

from jupyter_client.provisioning import LocalProvisioner
from traitlets import Dict as TDict, List as TList, Unicode

__all__ = ["SbxOciProvisioner"]

INLINE = "module://matplotlib_inline.backend_inline"
HOST_ID = 101000  # sbx-oci python's --host-id as root
KERNEL_LISTEN_WAIT_S = 60  # launch_kernel's wait for the kernel's sockets, at most


class SbxOciProvisioner(LocalProvisioner):
    """LocalProvisioner's lifecycle (a process to poll, signal and wait for), with the
    kernel started in a sandbox and reached over ipc sockets in a private directory."""

    sbx_oci = Unicode("sbx-oci", config=True, help="the sbx-oci binary")
    serve = Unicode("", config=True, help="the socket of an `sbx-oci serve` the kernel starts warm from")
    memory = Unicode("", config=True, help="the sandbox's memory limit (default 1G; warm: the server's)")
    # loopback: a lo of the sandbox's own, which reaches nothing outside it; ipykernel
    # relays what forked subprocesses print through a tcp socket on 127.0.0.1 (with
    # none, that output is lost, and the kernel logs so)
    network = Unicode("loopback", config=True, help="none, loopback (the sandbox's own lo) or full")
    options = TList(Unicode(), [], config=True, help="more `sbx-oci python` options")
    env = TDict({}, config=True, help="variables for the kernel (its environment is otherwise scrubbed)")

    kernel_dir = None

    def _make_kernel_dir(self) -> str:
        """The kernel's own directory (0700): its connection file and ipc sockets. Warm,
        in /tmp: a standing sandbox takes a directory of the client's at /tmp/NAME, and
        the ipc paths in the connection file are the same inside and outside."""
        base = "/tmp" if self.serve else os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
        return tempfile.mkdtemp(prefix="sbx-kernel-", dir=base)

    def _give_to_sandbox(self, *paths: str) -> None:
        """As root, the sandbox's user is host uid 101000: it reads the connection file
        and makes the sockets, so it owns the two, which this provisioner made (a user's
        sandbox is that user, who owns them already)."""
        if os.geteuid() == 0:
            for p in paths:
                os.chown(p, HOST_ID, HOST_ID, follow_symlinks=False)

    async def pre_launch(self, **kwargs: Any) -> Dict[str, Any]:
        km = self.parent
        self.kernel_dir = self._make_kernel_dir()
        km.transport = "ipc"
        km.ip = os.path.join(self.kernel_dir, "k")
        km.connection_file = os.path.join(self.kernel_dir, "connection.json")
        for name in ("shell_port", "iopub_port", "stdin_port", "hb_port", "control_port"):
            setattr(km, name, 0)
        km.write_connection_file()
        self._give_to_sandbox(self.kernel_dir, km.connection_file)
        self.connection_info = km.get_connection_info()
        extra = kwargs.pop("extra_arguments", [])
        argv = km.format_kernel_cmd(extra_arguments=extra)
        cmd = self.sandbox_cmd(argv, kwargs.get("cwd"))
        kwargs["env"] = {k: v for k, v in (kwargs.get("env") or os.environ).items()
                         if k in ("PATH", "LANG", "LC_ALL", "HOME", "XDG_RUNTIME_DIR")}
        return await super(LocalProvisioner, self).pre_launch(cmd=cmd, **kwargs)

    def sandbox_cmd(self, argv: List[str], cwd) -> List[str]:
        """`sbx-oci python OPTIONS -m ipykernel_launcher ...` from the kernelspec's argv
        (its interpreter replaced by the sandbox's)."""
        # IPython's history, matplotlib's font cache and jedi's in the sandbox's /tmp, not in the
        # notebook's directory (HOME is /work there)
        # --die-with-parent: a server killed without shutting its kernels down leaves
        # none running (ipykernel's own parent poller cannot see it from the sandbox)
        cmd = [self.sbx_oci, "python"]
        if self.serve:
            cmd += ["--connect", self.serve]
        if self.memory or not self.serve:
            cmd += ["--memory", self.memory or "1G"]
        cmd += ["--timeout", "0", "--die-with-parent", "--network", self.network,
                "--rw", f"{self.kernel_dir}:{self.kernel_dir}", "--max-output", "64M",
                "--env", f"MPLBACKEND={INLINE}", "--env", "IPYTHONDIR=/tmp/ipython",
                "--env", "MPLCONFIGDIR=/tmp/matplotlib", "--env", "XDG_CACHE_HOME=/tmp/cache"]
        for k, v in self.env.items():
            cmd += ["--env", f"{k}={v}"]
        if cwd:
            cmd += ["--workdir", cwd]
        cmd += list(self.options)
        return cmd + argv[1:]

    async def launch_kernel(self, cmd: List[str], **kwargs: Any):
        """LocalProvisioner's launch, returning once the kernel listens or has exited.
        A client that connects before the kernel binds waits for ZeroMQ's next
        reconnect (100 ms), and a warm kernel binds its sockets some 60 ms after it is
        asked for. ipykernel, once bound, writes the connection file afresh (removed,
        then made again); jupyter_client reads it as soon as this returns, so the wait
        is for that file to be whole again, new (a second name keeps ours alive, so
        that its inode number cannot be the new file's). A kernel that never writes
        it (not ipykernel) is waited for at most a second after its five sockets exist."""
        keep = os.path.join(self.kernel_dir, "connection.ours")
        os.link(self.parent.connection_file, keep)
        ours = os.stat(keep).st_ino
        try:
            return await self._launch_and_wait(cmd, ours, **kwargs)
        finally:
            os.unlink(keep)

    async def _launch_and_wait(self, cmd: List[str], ours: int, **kwargs: Any):
        info = await super().launch_kernel(cmd, **kwargs)
        sockets = [f"{self.parent.ip}-{self.connection_info[p]}"
                   for p in ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")]
        deadline = time.monotonic() + KERNEL_LISTEN_WAIT_S
        while self.process.poll() is None and time.monotonic() < deadline:
            if self._rewritten(ours):
                break
            if all(os.path.exists(n) for n in sockets):
                deadline = min(deadline, time.monotonic() + 1)
            await asyncio.sleep(0.002)
        return info

    def _rewritten(self, ours: int) -> bool:
        """Whether the connection file is the kernel's (not inode OURS), and whole."""
        try:
            with open(self.parent.connection_file) as f:
                if os.fstat(f.fileno()).st_ino == ours:
                    return False
                json.load(f)
            return True
        except (OSError, ValueError):
            return False

    async def cleanup(self, restart: bool = False) -> None:
        if self.kernel_dir:
            shutil.rmtree(self.kernel_dir, ignore_errors=True)
            self.kernel_dir = None
