"""A Jupyter kernel in an sbx-oci sandbox: the kernel provisioner of jupyter_client 7.

The kernel is the host's ipykernel, run by `sbx-oci python -m ipykernel_launcher` with
the defaults of `sbx-oci python` (the host's system paths read-only, the notebook's
directory as the writable /work, no network, memory and process limits, no
capabilities, seccomp, Landlock). Jupyter reaches it over ZeroMQ's ipc transport: its
five sockets and its connection file (with the kernel's HMAC key) are in a directory of
its own, bound into that sandbox only, so the kernel needs no network, and no kernel
sees another's key or sockets.

The kernelspec "sbx-oci" names this provisioner (`python3 -m sbx_oci_kernel install`);
its config (kernel.json's metadata.kernel_provisioner.config) may set:
    sbx_oci   the runtime (default: sbx-oci on PATH)
    memory    "1G"; network: "none" | "loopback" | "full"; pids; tmp_size
    options   more `sbx-oci python` options, as a list
"""
import os
import shutil
import tempfile
from typing import Any, Dict, List

from jupyter_client.provisioning import LocalProvisioner
from traitlets import Dict as TDict, List as TList, Unicode

__all__ = ["SbxOciProvisioner"]

INLINE = "module://matplotlib_inline.backend_inline"
HOST_ID = 101000  # sbx-oci python's --host-id as root


class SbxOciProvisioner(LocalProvisioner):
    """LocalProvisioner's lifecycle (a process to poll, signal and wait for), with the
    kernel started in a sandbox and reached over ipc sockets in a private directory."""

    sbx_oci = Unicode("sbx-oci", config=True, help="the sbx-oci binary")
    memory = Unicode("1G", config=True, help="the sandbox's memory limit")
    # loopback: a lo of the sandbox's own, which reaches nothing outside it; ipykernel
    # relays what forked subprocesses print through a tcp socket on 127.0.0.1 (with
    # none, that output is lost, and the kernel logs so)
    network = Unicode("loopback", config=True, help="none, loopback (the sandbox's own lo) or full")
    options = TList(Unicode(), [], config=True, help="more `sbx-oci python` options")
    env = TDict({}, config=True, help="variables for the kernel (its environment is otherwise scrubbed)")

    kernel_dir = None

    def _make_kernel_dir(self) -> str:
        """The kernel's own directory (0700): its connection file and ipc sockets."""
        base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
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
        # IPython's history and matplotlib's font cache in the sandbox's /tmp, not in the
        # notebook's directory (HOME is /work there)
        # --die-with-parent: a server killed without shutting its kernels down leaves
        # none running (ipykernel's own parent poller cannot see it from the sandbox)
        cmd = [self.sbx_oci, "python", "--timeout", "0", "--die-with-parent", "--memory", self.memory,
               "--network", self.network,
               "--rw", f"{self.kernel_dir}:{self.kernel_dir}", "--max-output", "64M",
               "--env", f"MPLBACKEND={INLINE}", "--env", "IPYTHONDIR=/tmp/ipython",
               "--env", "MPLCONFIGDIR=/tmp/matplotlib"]
        for k, v in self.env.items():
            cmd += ["--env", f"{k}={v}"]
        if cwd:
            cmd += ["--workdir", cwd]
        cmd += list(self.options)
        return cmd + argv[1:]

    async def cleanup(self, restart: bool = False) -> None:
        if self.kernel_dir:
            shutil.rmtree(self.kernel_dir, ignore_errors=True)
            self.kernel_dir = None
