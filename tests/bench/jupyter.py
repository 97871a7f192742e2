#!/usr/bin/env python3
"""jupyter.py OUT.tsv [N]: issue 43's start time, for `make bench` (run.sh jupyter).

Two times from jupyter_client's AsyncKernelManager.start_kernel(), N times each
(default 15), the kernels alternated: Debian's python3 kernel (bare ipykernel), the
sbx-oci kernel (one-shot) and sbx-oci-warm (through `sbx-oci serve`):
  - to the first kernel_info_reply (a kernel_info request sent as soon as the channels
    are started);
  - to the return of the client's wait_for_ready(), which after that reply waits for an
    IOPub message up to 200 ms: a floor of jupyter_client's own when a kernel is quick.
Run by an interpreter that has the kernelspecs and the provisioner (jupyter.sh makes a
venv). Prints and writes: kernel, median and p90 of each.
"""
import asyncio
import statistics
import sys
import time

from jupyter_client.manager import AsyncKernelManager


async def start_once(name):
    """(ms to the first kernel_info_reply, ms to wait_for_ready's return)"""
    km = AsyncKernelManager(kernel_name=name)
    t0 = time.perf_counter()
    await km.start_kernel()
    kc = km.client()
    kc.start_channels()
    msg_id = kc.kernel_info()
    while (await kc.shell_channel.get_msg(timeout=120))["parent_header"].get("msg_id") != msg_id:
        pass
    first = (time.perf_counter() - t0) * 1000
    await kc.wait_for_ready(timeout=120)
    ready = (time.perf_counter() - t0) * 1000
    kc.stop_channels()
    await km.shutdown_kernel(now=True)
    return first, ready


async def main():
    out, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 15
    times = {"python3": [], "sbx-oci": [], "sbx-oci-warm": []}
    for name in times:  # one of each first, not timed: the page cache warm
        await start_once(name)
    for _ in range(n):
        for name in times:
            times[name].append(await start_once(name))
    lines = ["kernel\tfirst_reply_median_ms\tfirst_reply_p90_ms\tready_median_ms\tready_p90_ms"]
    med = {}
    for name, ts in times.items():
        row = [name]
        for i in (0, 1):
            xs = sorted(t[i] for t in ts)
            med[name, i] = statistics.median(xs)
            row += [f"{med[name, i]:.0f}", f"{xs[int(0.9 * (len(xs) - 1))]:.0f}"]
        lines.append("\t".join(row))
    for name in ("sbx-oci", "sbx-oci-warm"):
        lines.append(f"# {name} / bare ipykernel: {med[name, 0] / med['python3', 0]:.2f}x to the first kernel_info_reply, "
                     f"{med[name, 1] / med['python3', 1]:.2f}x to wait_for_ready")
    open(out, "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    asyncio.run(main())
