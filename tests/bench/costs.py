#!/usr/bin/python3
"""What one run costs, by process, by syscall and in page faults (issue 41).

    costs.py OUT.md N SBX_OCI [GLOBAL-OPTION...]   (make bench: tests/bench/run.sh costs)

Six ways of running print(1), each N times back to back: bare python3, the one-shot
`sbx-oci python`, and `sbx-oci python --connect` through a server with no preload, with
`--preload numpy,pandas`, with `--standby 0` (every run made on request, as when a busy
server's standbys are used up), and with the preload from 8 clients at once (N runs
each: where the throughput of warm.sh is made). COSTS_MODES="a;b" picks some by name.

Counted with bpftrace rather than sampled (perf's samples pile on the hypervisor's
pvm_irq_enable on this machine kind): every process's fork and exit with its own CPU
time (sum_exec_runtime, ns) and page faults, the ones alive at both ends of the window
from /proc; in a second window of N runs, every syscall by process. A process is named
by its line of descent (client > init > program, server > zygote > ...): those names are
what the table's rows are. Kernel threads are one row (the work our exits leave to them:
namespaces, mounts), and what no process was charged with is the machine's /proc/stat
less all of it. Nothing here is timed against a limit: it is a benchmark.
"""
import collections
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

BT_PROCS = r"""
tracepoint:sched:sched_process_fork { printf("F %d %d\n", pid, args->child_pid); }
tracepoint:sched:sched_process_exit {
  printf("X %d %d %llu %lu %lu %s\n", pid, tid, curtask->se.sum_exec_runtime,
         curtask->min_flt, curtask->maj_flt, comm);
}
"""
BT_SYSCALLS = BT_PROCS + "tracepoint:raw_syscalls:sys_enter { @s[pid, args->id] = count(); }\n"

HARNESS = "this bench's own (costs.py, bpftrace)"

# the friendly names of the lines of descent we know; any other is shown as it is
NAMES = {
    "bare": "python3",
    "client": "client (sbx-oci python)",
    "client > sbx-oci": "sandbox init",
    "client > sbx-oci > python3": "program (python3)",
    "client > sbx-oci > sbx-oci": "init's helper",
    "server": "server",
    "server > sbx-oci": "worker (a run's sandbox, its reply)",
    "server > sbx-oci > sbx-oci": "sandbox init (holding)",
    "server > python3": "zygote (warm interpreter)",
    "server > python3 > python3": "zygote's fork (a standby's run, or a copy that makes a run)",
    "server > python3 > python3 > python3": "run made by a copy",
}


def syscall_names():
    names = {}
    try:
        with open("/usr/include/x86_64-linux-gnu/asm/unistd_64.h") as f:
            for m in re.finditer(r"#define __NR_(\w+) (\d+)", f.read()):
                names[int(m.group(2))] = m.group(1)
    except OSError:
        pass
    return names


def snapshot():
    """tid -> (tgid, ppid, comm, cpu_ns, minflt, majflt) of every task alive now"""
    tasks = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    stat = f.read()
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    ns = int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                continue
            comm = stat[stat.index("(") + 1 : stat.rindex(")")]
            rest = stat[stat.rindex(")") + 2 :].split()
            tasks[int(tid)] = (int(pid), int(rest[1]), comm, ns, int(rest[7]), int(rest[9]))
    return tasks


def machine_ms():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (v[0] + v[1] + v[2] + v[5] + v[6]) * 1000 / os.sysconf("SC_CLK_TCK")


class Trace:
    """bpftrace running PROGRAM over a window of runs"""

    def __init__(self, program):
        env = dict(os.environ, BPFTRACE_MAP_KEYS_MAX="200000", BPFTRACE_PERF_RB_PAGES="256")
        self.proc = subprocess.Popen(["bpftrace", "-e", program], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, env=env)
        self.lines = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        # attached once a marker's exit is seen (BEGIN may come before the other probes)
        deadline = time.time() + 30
        while time.time() < deadline:
            marker = subprocess.Popen(["/bin/true"])
            marker.wait()
            time.sleep(0.3)
            if any(l.startswith("X ") and l.split()[2] == str(marker.pid) for l in list(self.lines)):
                break
            if self.proc.poll() is not None:
                break
        else:
            self.proc.kill()
            sys.exit("costs.py: bpftrace attached no probe in 30 s: " + "".join(self.lines))
        if self.proc.poll() is not None:
            sys.exit("costs.py: bpftrace ended: " + "".join(self.lines))

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)

    def stop(self):
        self.proc.send_signal(2)
        self.proc.wait(timeout=60)
        self.reader.join(timeout=60)
        return self.lines


def window(program, runs, n, clients):
    """run RUNS() n times under PROGRAM, from CLIENTS threads at once:
    (start tasks, end tasks, bpftrace lines, (machine ms, wall ms), bpftrace's pid)"""
    trace = Trace(program)
    mark = len(trace.lines)
    before, m0, t0 = snapshot(), machine_ms(), time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        for f in [pool.submit(lambda: [runs() for _ in range(n // clients)]) for _ in range(clients)]:
            f.result()
    t1, after, m1 = time.monotonic(), snapshot(), machine_ms()
    lines = trace.stop()
    return before, after, lines[mark:], (m1 - m0, (t1 - t0) * 1000), trace.proc.pid


def descent(before, after, lines, roots, skip):
    """tgid -> name of its line of descent, for every process under ROOTS (tgid -> name)"""
    parent, comm = {}, {}
    for tasks in (before, after):
        for tid, (tgid, ppid, c, *_) in tasks.items():
            if tid == tgid:
                parent.setdefault(tgid, ppid)
                comm[tgid] = c
    for l in lines:
        f = l.split()
        if f[:1] == ["F"] and len(f) == 3:
            parent[int(f[2])] = int(f[1])
        elif f[:1] == ["X"] and len(f) >= 7 and f[1] == f[2]:
            comm[int(f[1])] = " ".join(f[6:])
    names = {}

    def name(tgid, depth=0):
        if tgid in names:
            return names[tgid]
        if tgid in roots:
            return roots[tgid]
        p = parent.get(tgid)
        if p is None or depth > 12 or tgid in skip:
            return None
        up = name(p, depth + 1)
        if up is None:
            return None
        # the first generation under us is the command itself (a client, or bare)
        names[tgid] = up if up == "me" else f"{up} > {comm.get(tgid, '?')}"
        if names[tgid] == "me":
            names[tgid] = "client"
        return names[tgid]

    for tgid in set(parent) | set(comm):
        name(tgid)
    return {t: n for t, n in names.items() if n not in (None, "me")}


def costs(before, after, lines, names):
    """name -> [processes, cpu ns, minflt, majflt]: each task's share of the window"""
    rows = collections.defaultdict(lambda: [0, 0, 0, 0])
    ended = {}
    for l in lines:
        f = l.split()
        if f[:1] == ["X"] and len(f) >= 7:
            ended[int(f[2])] = (int(f[1]), int(f[3]), int(f[4]), int(f[5]))
    born = set()
    for l in lines:
        f = l.split()
        if f[:1] == ["F"] and len(f) == 3:
            born.add(int(f[2]))
    tids = set(ended) | set(after)
    for tid in tids:
        if tid in ended:
            tgid, ns, mn, mj = ended[tid]
        else:
            tgid, _, _, ns, mn, mj = after[tid]
        n = names.get(tgid)
        if n is None:
            continue
        b = before.get(tid)
        if b is not None and b[0] == tgid:
            ns, mn, mj = ns - b[3], mn - b[4], mj - b[5]
        row = rows[n]
        row[0] += tid == tgid and tid in born
        row[1] += max(ns, 0)
        row[2] += max(mn, 0)
        row[3] += max(mj, 0)
    return rows


def kernel_threads_ns(before, after):
    return sum(max(a[3] - before[t][3], 0) for t, a in after.items()
               if (a[1] == 2 or a[0] == 2) and t in before and before[t][0] == a[0])


def syscalls(lines, names):
    """(name, syscall nr) -> count, of the runs' processes (not this bench's own)"""
    out = collections.Counter()
    for l in lines:
        m = re.match(r"@s\[(\d+), (\d+)\]: (\d+)", l)
        if m and names.get(int(m.group(1))) not in (None, HARNESS):
            out[(names[int(m.group(1))], int(m.group(2)))] += int(m.group(3))
    return out


def measure(label, argv, n, server=None, clients=1):
    me = os.getpid()

    def run():
        r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd="/tmp")
        if r.returncode != 0 or r.stdout.strip() not in ("1", ""):
            raise RuntimeError(f"costs.py: {label}: {argv} failed ({r.returncode}): {r.stderr.strip()}")

    for _ in range(3):
        run()
    time.sleep(1)
    roots = {me: "me"}
    if server:
        roots[server] = "server"
    def named(before, after, lines, bt):
        """the window's processes by name, this bench's own among them"""
        names = descent(before, after, lines, roots, {bt})
        names[me] = names[bt] = HARNESS
        return {t: "bare" if label == "bare" and v == "client" else v for t, v in names.items()}

    before, after, lines, machine, bt = window(BT_PROCS, run, n, clients)
    rows = costs(before, after, lines, named(before, after, lines, bt))
    kthreads = kernel_threads_ns(before, after)
    time.sleep(1)
    before2, after2, lines2, _, bt2 = window(BT_SYSCALLS, run, n, clients)
    names2 = named(before2, after2, lines2, bt2)
    return {"rows": rows, "kthreads": kthreads, "machine": machine[0], "wall": machine[1],
            "syscalls": syscalls(lines2, names2), "n": n}


def mount_tracefs():
    """bpftrace's tracepoints are in tracefs, which a machine without systemd may not mount"""
    if not os.path.isdir("/sys/kernel/tracing/events"):
        subprocess.run(["mount", "-t", "tracefs", "tracefs", "/sys/kernel/tracing"], check=True)


def start_server(sbx, sock, extra):
    log = f"{sock}.log"
    for p in (sock, log):
        if os.path.exists(p):
            os.unlink(p)
    with open(log, "w") as f:
        srv = subprocess.Popen([*sbx, "serve", "--socket", sock, *extra], stdout=f, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL)
    for _ in range(1200):
        with open(log) as f:
            if "listening on" in f.read():
                return srv
        if srv.poll() is not None:
            break
        time.sleep(0.1)
    srv.kill()
    sys.exit(f"costs.py: serve {extra} did not start: {open(log).read()}")


def stop_server(srv):
    srv.terminate()
    srv.wait(timeout=60)


def table(label, r, out):
    n = r["n"]
    nr = syscall_names()
    sc, each = collections.Counter(), collections.defaultdict(collections.Counter)
    for (name, s), c in r["syscalls"].items():
        sc[name] += c
        each[name][s] += c
    out.append(f"\n### {label} (per run, {n} runs back to back: {r['wall'] / n:.1f} ms wall a run)\n")
    out.append("| process | made per run | CPU ms | minor faults | major faults | syscalls | the most frequent |")
    out.append("|---|---:|---:|---:|---:|---:|---|")
    tot = [0, 0, 0, 0]
    rows = {k: v for k, v in r["rows"].items() if k != HARNESS}
    for name, (procs, ns, mn, mj) in sorted(rows.items(), key=lambda kv: -kv[1][1]):
        out.append(f"| {NAMES.get(name, name)} | {procs / n:.1f} | {ns / n / 1e6:.2f} | {mn / n:.0f} | "
                   f"{mj / n:.1f} | {sc[name] / n:.0f} | "
                   + ", ".join(f"{nr.get(k, k)} {c / n:.0f}" for k, c in each[name].most_common(5)) + " |")
        tot = [a + b for a, b in zip(tot, (procs, ns, mn, mj))]
    out.append(f"| **all of the run's processes** | {tot[0] / n:.1f} | {tot[1] / n / 1e6:.2f} | "
               f"{tot[2] / n:.0f} | {tot[3] / n:.1f} | {sum(sc.values()) / n:.0f} | |")
    kt = r["kthreads"] / n / 1e6
    out.append(f"| kernel threads (the whole machine's) | | {kt:.2f} | | | | |")
    harness = r["rows"].get(HARNESS, [0, 0])[1] / n / 1e6
    out.append(f"| {HARNESS} | | {harness:.2f} | | | | |")
    rest = r["machine"] / n - tot[1] / n / 1e6 - kt - harness
    out.append(f"| charged to no process above (/proc/stat less the rows) | | {rest:.2f} | | | | |")
    out.append(f"| **the machine** | | {r['machine'] / n:.2f} | | | | |")


def syscall_table(results, out, top=25):
    nr = syscall_names()
    per = {label: collections.Counter() for label in results}
    for label, r in results.items():
        for (_, s), c in r["syscalls"].items():
            per[label][s] += c / r["n"]
    total = collections.Counter()
    for label in ("one-shot", "warm"):
        total.update(per.get(label, {}))
    out.append(f"\n### syscalls per run, all processes (the {top} most frequent of one-shot and warm)\n")
    out.append("| syscall | " + " | ".join(results) + " |")
    out.append("|---|" + "---:|" * len(results))
    for s, _ in total.most_common(top):
        out.append(f"| {nr.get(s, s)} | " + " | ".join(f"{per[l][s]:.1f}" for l in results) + " |")
    out.append("| **all** | " + " | ".join(f"{sum(per[l].values()):.0f}" for l in results) + " |")


def main():
    dest, n = sys.argv[1], int(sys.argv[2])
    sbx = [os.path.abspath(sys.argv[3]), *sys.argv[4:]]
    mount_tracefs()
    sock = os.path.join(tempfile.mkdtemp(prefix="sbx-costs-"), "serve.sock")
    code = ["-c", "print(1)"]
    results = {}
    only = os.environ.get("COSTS_MODES")
    modes = [("bare", None, 1), ("one-shot", None, 1), ("warm", [], 1),
             ("warm, numpy+pandas", ["--preload", "numpy,pandas"], 1),
             ("warm, --standby 0", ["--standby", "0"], 1),
             ("warm, numpy+pandas, 8 clients", ["--preload", "numpy,pandas", "--max-runs", "8"], 8)]
    for label, extra, clients in modes:
        if only and label not in only.split(";"):
            continue
        if label == "bare":
            results[label] = measure(label, ["/usr/bin/python3", *code], n)
        elif extra is None:
            results[label] = measure(label, [*sbx, "python", *code], n)
        else:
            srv = start_server(sbx, sock, extra)
            try:
                results[label] = measure(label, [*sbx, "python", "--connect", sock, *code], n * clients,
                                         server=srv.pid, clients=clients)
            finally:
                stop_server(srv)
    out = [f"## What a print(1) costs, by process, syscall and page fault ({os.cpu_count()} cpus, "
           f"load {open('/proc/loadavg').read().split()[0]})"]
    for label, r in results.items():
        table(label, r, out)
    syscall_table(results, out)
    text = "\n".join(out) + "\n"
    with open(dest, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
