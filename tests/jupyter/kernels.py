#!/usr/bin/env python3
"""kernels.py KERNEL: what a sandboxed Jupyter kernel may and may not do, driven by
jupyter_client's own KernelManager and client, as Jupyter's servers and nbclient drive
a kernel. Prints "ok what" or "FAIL what: why" per check; status 1 if any failed.

  - two kernels at once: each has its own HMAC key, and neither can see the other's
    connection file or sockets; neither sees this process's environment (a secret in
    it), the host's files beyond its workdir, or the network (a port on the host's
    loopback);
  - interrupt (signal mode): a running cell stops with KeyboardInterrupt, the kernel
    lives; input() through a stdin request; completion and inspection;
  - a cell past the sandbox's memory: the kernel dies, is said dead, and restarts;
  - shutdown leaves nothing: no process, no kernel directory, no sandbox that holds it;
  - a client killed without a shutdown leaves no kernel running.

KERNEL may be a warm one (kernelspec config "serve": a kernel forked by `sbx-oci serve`
into a sandbox it made before: its process is the warm interpreter's, whose command
line does not name ipykernel_launcher). What is left of a kernel is therefore looked
for both ways: by command line, and as a process that has the kernel's directory
mounted (its sandbox's mount namespace).
"""
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

from jupyter_client.manager import AsyncKernelManager

KERNEL = sys.argv[1] if len(sys.argv) > 1 else "sbx-oci"
failed = []


def check(what, ok, why=""):
    print(f"ok {what}" if ok else f"FAIL {what}: {why}", flush=True)
    if not ok:
        failed.append(what)


async def start(**kw):
    km = AsyncKernelManager(kernel_name=KERNEL)
    await km.start_kernel(**kw)
    kc = km.client()
    kc.start_channels()
    await kc.wait_for_ready(timeout=60)
    return km, kc


async def run(kc, code, stdin_reply=None, timeout=60):
    """Executes CODE: (reply content, [iopub messages of it])."""
    msg_id = kc.execute(code, allow_stdin=stdin_reply is not None)
    if stdin_reply is not None:
        await kc.get_stdin_msg(timeout=timeout)
        kc.input(stdin_reply)
    reply = await kc._async_get_shell_msg(timeout=timeout)
    msgs = []
    while True:
        m = await kc.get_iopub_msg(timeout=timeout)
        if m["parent_header"].get("msg_id") != msg_id:
            continue
        msgs.append(m)
        if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
            return reply["content"], msgs


def value(msgs):
    for m in msgs:
        if m["msg_type"] == "execute_result":
            return m["content"]["data"]["text/plain"]
    return None


def kernel_dir(km):
    return os.path.dirname(km.connection_file)


def kernel_holders(kdir=None):
    """Processes (pid, mount point) whose mounts include a kernel directory: KDIR, or
    any sbx-kernel-*. Every process of a sandboxed kernel has its directory mounted."""
    held = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/mountinfo") as f:
                points = [line.split()[4] for line in f]
        except OSError:
            continue
        held += [(int(pid), p) for p in points
                 if p == kdir or (kdir is None and os.path.basename(p).startswith("sbx-kernel-"))]
    return held


def kernels_left():
    """Kernel processes by command line, and processes that hold a kernel directory."""
    by_name = subprocess.run(["pgrep", "-f", "ipykernel_launcher"], capture_output=True, text=True).stdout.split()
    return by_name + [f"{pid} holds {p}" for pid, p in kernel_holders()]


async def isolation():
    os.environ["SBX_JUPYTER_SECRET"] = "do-not-leak-7f3a"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    marker = tempfile.NamedTemporaryFile(dir="/var/tmp", prefix="sbx-host-marker-")
    a, ka = await start()
    b, kb = await start()
    try:
        key_a, key_b = (json.load(open(k.connection_file))["key"] for k in (a, b))
        check("each kernel has its own HMAC key", key_a != key_b and len(key_a) >= 32)
        check("the kernel reaches Jupyter over ipc sockets, not the network",
              a.transport == "ipc" and a.connection_file.startswith(kernel_dir(a)))
        _, m = await run(ka, f"import os\nos.path.exists({b.connection_file!r}), os.path.exists({kernel_dir(b)!r})")
        check("a kernel cannot see another kernel's connection file or sockets", value(m) == "(False, False)", value(m))
        _, m = await run(ka, f"sorted(n for n in os.listdir({os.path.dirname(kernel_dir(a))!r}) if n.startswith('sbx-kernel-'))")
        check("a kernel sees only its own kernel directory", value(m) == repr([os.path.basename(kernel_dir(a))]), value(m))
        _, m = await run(ka, "os.environ.get('SBX_JUPYTER_SECRET'), os.environ.get('JPY_PARENT_PID')")
        check("a kernel does not see the Jupyter server's environment", value(m) == "(None, None)", value(m))
        _, m = await run(ka, f"os.path.exists({marker.name!r}), os.path.exists('/root'), os.path.exists('/etc/shadow')")
        check("a kernel does not see the host's files beyond its workdir", value(m) == "(False, False, False)", value(m))
        _, m = await run(ka, "import socket\ntry:\n    socket.create_connection(('127.0.0.1', %d), timeout=3)\n"
                         "    r = 'connected'\nexcept OSError as e:\n    r = type(e).__name__\nr" % port)
        # (its lo is its own: the host's port is not there, and the host saw nothing)
        listener.settimeout(0.5)
        try:
            listener.accept()
            reached = True
        except socket.timeout:
            reached = False
        check("a kernel has no network (the host's loopback port)",
              value(m) in ("'ConnectionRefusedError'", "'PermissionError'") and not reached, (value(m), reached))
        _, m = await run(ka, "import multiprocessing as mp\n"
                         "p = mp.get_context('fork').Process(target=print, args=('from a forked child',))\n"
                         "p.start(); p.join()")
        out = "".join(x["content"]["text"] for x in m if x["msg_type"] == "stream")
        check("what a forked subprocess prints reaches the client", "from a forked child" in out, out)
        _, m = await run(ka, "open('/usr/sbx-test', 'w')", timeout=30)
        err = [x for x in m if x["msg_type"] == "error"]
        check("the host's system paths are read-only", err and err[0]["content"]["ename"] == "OSError", err)
    finally:
        for km, kc in ((a, ka), (b, kb)):
            kc.stop_channels()
            await km.shutdown_kernel()
        listener.close()
        marker.close()
    check("shutdown removes the kernel directories", not os.path.exists(kernel_dir(a)) and not os.path.exists(kernel_dir(b)))


async def jupyter_features():
    km, kc = await start()
    try:
        # (stop_on_error off: else the kernel aborts the requests that come right after
        # the error, as any ipykernel does)
        kc.execute("import time\ntry:\n    time.sleep(60)\nfinally:\n    print('cleanup ran')",
                            stop_on_error=False)
        await asyncio.sleep(2)
        await km.interrupt_kernel()
        reply = await kc._async_get_shell_msg(timeout=30)
        check("interrupt: the running cell stops with KeyboardInterrupt",
              reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt", reply["content"])
        _, m = await run(kc, "'alive'")
        check("interrupt: the kernel lives on", value(m) == "'alive'", [(x["msg_type"], x["content"]) for x in m])
        _, m = await run(kc, "name = input('who? ')\nname.upper()", stdin_reply="ada")
        check("input() through a stdin request", value(m) == "'ADA'", value(m))
        kc.complete("import collections\ncollections.Ord", 34)
        r = await kc._async_get_shell_msg(timeout=30)
        check("completion", "collections.OrderedDict" in r["content"]["matches"] or "OrderedDict" in r["content"]["matches"],
              r["content"]["matches"][:5])
        kc.inspect("len", 3)
        r = await kc._async_get_shell_msg(timeout=30)
        check("inspection", r["content"]["found"] and "Return the number" in r["content"]["data"]["text/plain"])
        # past the sandbox's memory: the kernel dies (the kernelspec's 1G), and restarts
        kc.execute("b = bytearray(4 << 30)\nb[::4096] = b'x' * len(b[::4096])")
        for _ in range(300):
            if not await km.is_alive():
                break
            await asyncio.sleep(0.1)
        check("a cell past the memory limit: the kernel is dead", not await km.is_alive())
        await km.restart_kernel()
        kc.stop_channels()
        kc = km.client()
        kc.start_channels()
        await kc.wait_for_ready(timeout=60)
        _, m = await run(kc, "6 * 7")
        check("and it restarts", value(m) == "42", value(m))
    finally:
        kc.stop_channels()
        await km.shutdown_kernel()
    left = []
    for _ in range(50):  # (a sandbox is torn down just after its kernel ends)
        left = kernels_left()
        if not left:
            break
        await asyncio.sleep(0.1)
    check("shutdown leaves no kernel process", not left, left)


# A client (a Jupyter server, say) that starts a kernel and is then killed: it never
# shuts the kernel down. Debian's kernel polls its parent and exits; the sandboxed one
# is ended by sbx-oci python's --die-with-parent.
CLIENT = r"""
import asyncio, os, sys
from jupyter_client.manager import AsyncKernelManager
async def main():
    km = AsyncKernelManager(kernel_name=sys.argv[1])
    await km.start_kernel()
    kc = km.client()
    kc.start_channels()
    await kc.wait_for_ready(timeout=60)
    with open(sys.argv[2], "w") as f:  # (its stdout is the kernel's too)
        f.write("%d %s\n" % (km.provisioner.pid, km.connection_file))
    await asyncio.sleep(300)
asyncio.run(main())
"""


def running(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


async def orphaned():
    report = tempfile.mktemp(prefix="sbx-orphan-client-")
    client = subprocess.Popen([sys.executable, "-c", CLIENT, KERNEL, report], stdout=subprocess.DEVNULL)
    for _ in range(600):
        if os.path.exists(report) and open(report).read().endswith("\n"):
            break
        await asyncio.sleep(0.1)
    pid, connection_file = open(report).read().split()
    os.unlink(report)
    kdir = os.path.dirname(connection_file)
    before = running(pid) and bool(kernel_holders(kdir))
    client.kill()
    client.wait()
    left = []
    for _ in range(100):
        left = subprocess.run(["pgrep", "-f", f"ipykernel_launcher.*{connection_file}"], capture_output=True,
                              text=True).stdout.split() + kernel_holders(kdir)
        if not running(pid) and not left:
            break
        await asyncio.sleep(0.1)
    check("a kernel whose client is killed does not outlive it", before and not running(pid) and not left,
          (before, running(pid), left))
    # what the client would have removed at shutdown (Jupyter leaves a killed server's
    # connection files too): the sbx-oci kernel's own directory, or the connection file
    if os.path.basename(kdir).startswith("sbx-kernel-") and os.path.basename(connection_file) == "connection.json":
        shutil.rmtree(kdir)
    elif os.path.isfile(connection_file):
        os.unlink(connection_file)


async def main():
    await isolation()
    await jupyter_features()
    await orphaned()
    print(f"kernels: {KERNEL}: {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
