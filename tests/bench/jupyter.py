#!/usr/bin/env python3
"""jupyter.py PYTHON OUT.tsv [N]: issue 43's start time, for `make bench` (run.sh jupyter).

The time from jupyter_client's AsyncKernelManager.start_kernel() to the first
kernel_info_reply (the client's wait_for_ready), N times each (default 15), the kernels
alternated: Debian's python3 kernel (bare ipykernel) and the sbx-oci kernel. PYTHON is
an interpreter that has the sbx-oci kernelspec and provisioner (a venv with contrib/python
installed and `python -m sbx_oci_kernel install --prefix` run: jupyter.sh makes one).
Prints and writes: kernel, median ms, p90 ms.
"""
import asyncio
import statistics
import sys
import time

from jupyter_client.manager import AsyncKernelManager


async def start_once(name):
    km = AsyncKernelManager(kernel_name=name)
    t0 = time.perf_counter()
    await km.start_kernel()
    kc = km.client()
    kc.start_channels()
    await kc.wait_for_ready(timeout=120)
    ms = (time.perf_counter() - t0) * 1000
    kc.stop_channels()
    await km.shutdown_kernel(now=True)
    return ms


async def main():
    out, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 15
    times = {"python3": [], "sbx-oci": []}
    for name in times:  # one of each first, not timed: the page cache warm
        await start_once(name)
    for _ in range(n):
        for name in times:
            times[name].append(await start_once(name))
    lines = ["kernel\tmedian_ms\tp90_ms"]
    for name, ts in times.items():
        ts.sort()
        lines.append(f"{name}\t{statistics.median(ts):.0f}\t{ts[int(0.9 * (len(ts) - 1))]:.0f}")
    ratio = statistics.median(times["sbx-oci"]) / statistics.median(times["python3"])
    lines.append(f"# sbx-oci / bare ipykernel: {ratio:.2f}x (start_kernel() to kernel_info_reply, cold: no warm kernels yet)")
    open(out, "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    asyncio.run(main())
