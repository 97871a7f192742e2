#!/usr/bin/env python3
"""sessions.py SOCKET SERVER_PID OUT.tsv: live sessions at scale (issue 33's fourth row).

Against one `sbx-oci serve` (numpy and pandas preloaded), sessions are begun in steps
up to SESSIONS_MAX (default 1000; the issue's goal is 5000), each with numpy and pandas
imported and a variable of its own. At every step the row says how many are held, the
median latency of a cell (n += 1; n) in 21 of them chosen across all held, the
machine's memory per session (MemAvailable before minus now, over the count), and what
the server holds (its fds, its children). The first session that cannot be begun ends
the climb: its error is the row's `stopped_by`, and every session already held is then
checked (a cell in each: nothing lost). It also stops, saying so, before the machine's
available memory falls under SESSIONS_MEM_FLOOR percent (default 15) of its total.
Then every session is ended and the server must hold no session's process.
"""
import os
import random
import statistics
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "contrib", "python"))
from sbx_sandbox import SandboxError, Session  # noqa: E402

SOCK, SERVER, OUT = sys.argv[1], int(sys.argv[2]), sys.argv[3]
MAX = int(os.environ.get("SESSIONS_MAX", "1000"))
FLOOR = float(os.environ.get("SESSIONS_MEM_FLOOR", "15"))
STEPS = [s for s in (50, 100, 250, 500, 1000, 2000, 3000, 4000, 5000, 7500, 10000) if s < MAX] + [MAX]


def meminfo(key):
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(key)


def server_counts():
    fds = len(os.listdir(f"/proc/{SERVER}/fd"))
    with open(f"/proc/{SERVER}/task/{SERVER}/children") as f:
        children = len(f.read().split())
    return fds, children


def cell_median(held):
    sample = random.sample(held, min(21, len(held)))
    times = []
    for s in sample:
        t0 = time.perf_counter()
        r = s.run("n += 1\nn")
        times.append((time.perf_counter() - t0) * 1000)
        if r.exit_code != 0:
            raise SystemExit(f"sessions.py: a cell failed in {s.name}: {r.stderr}")
    return statistics.median(times)


def begin(i):
    s = Session(SOCK, name=f"scale-{i}")
    r = s.run("import numpy, pandas\nn = 0")
    if r.exit_code != 0:
        raise SandboxError(f"the first cell of {s.name} failed: {r.stderr.strip()[-200:]}")
    return s


def main():
    total = meminfo("MemTotal")
    avail0 = meminfo("MemAvailable")
    held, rows, stopped_by = [], [], ""
    t_begin = time.perf_counter()
    for step in STEPS:
        while len(held) < step and not stopped_by:
            if meminfo("MemAvailable") < total * FLOOR / 100:
                stopped_by = f"the machine's available memory reached {FLOOR:g}% of its total (SESSIONS_MEM_FLOOR)"
                break
            try:
                held.append(begin(len(held)))
            except (SandboxError, OSError) as e:
                stopped_by = f"session {len(held) + 1}: {e}"
        if not held:
            break
        fds, children = server_counts()
        per = (avail0 - meminfo("MemAvailable")) / len(held) / (1 << 20)
        rows.append((len(held), cell_median(held), per, fds, children,
                     (time.perf_counter() - t_begin) / len(held) * 1000))
        print("held %d: cell %.2f ms, %.2f MiB each, server fds %d, children %d" % rows[-1][:5], flush=True)
        if stopped_by:
            break
    # nothing lost: every session held answers, with its own state
    lost = [s.name for s in held if s.run("n").value is None]
    with open(OUT, "w") as f:
        f.write("held\tcell_median_ms\tmib_per_session\tserver_fds\tserver_children\tbegin_ms_each\n")
        for r in rows:
            f.write("%d\t%.2f\t%.2f\t%d\t%d\t%.1f\n" % r)
        f.write(f"# stopped by: {stopped_by or f'SESSIONS_MAX ({MAX}) reached'}\n")
        f.write(f"# sessions that did not answer after the climb: {len(lost)}\n")
    for s in held:
        s.close()
    # ended: the server's children are back to its workers and standbys
    time.sleep(2)
    fds, children = server_counts()
    print(open(OUT).read(), end="")
    print(f"after ending them all: server fds {fds}, children {children}")
    if lost:
        raise SystemExit(f"sessions.py: {len(lost)} sessions lost their state: {lost[:5]}")


main()
