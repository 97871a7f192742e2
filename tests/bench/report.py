#!/usr/bin/python3
"""report.py RESULTS_DIR: RESULTS.md from the hyperfine exports, rss.tsv and
soak-leaks.tsv of one benchmark run; prints the ratios issue 7 is judged by.
Medians, not means: on a shared machine a few runs hit by other jobs skew the mean."""
import json, os, statistics, sys

res = sys.argv[1]
out, ratios = [], []
TITLES = {
    "true": "run of busybox /bin/true",
    "py": "run of python3 -c pass (user ns, no caps, no_new_privs, python profile, memory+pids limits)",
    "pycmd": "sbx-oci python -c pass end to end (the one-shot sandbox with its own bundle and result)",
    "limits": "without / with memory+pids limits",
    "seccomp": "without / with the python seccomp profile (and with limits)",
    "userns": "without / with a user namespace",
    "idle": "back-to-back / after an idle gap",
    "phases": "create, start, delete timed alone (bb-base)",
    "soak": "sequential runs of sbx-oci (bb-base)",
    "warm": "through sbx-oci serve (numpy and pandas preloaded) beside the interpreter alone and one-shot, "
            "50 ms between runs",
    "warm-b2b": "through sbx-oci serve, back to back (a run may wait for its standby to be made)",
}


def ms(xs):
    return [x * 1000 for x in xs]


def load(name):
    path = os.path.join(res, name + ".json")
    if not os.path.exists(path):
        return None
    return {r["command"]: ms(r["times"]) for r in json.load(open(path))["results"]}


def table(name, rows):
    out.append(f"\n### {name}: {TITLES.get(name, '')}\n")
    out.append("| command | median ms | mean ± sd ms | min ms | runs |")
    out.append("|---|---:|---:|---:|---:|")
    for cmd, t in rows.items():
        sd = statistics.stdev(t) if len(t) > 1 else 0
        out.append(f"| {cmd} | {statistics.median(t):.2f} | {statistics.mean(t):.2f} ± {sd:.2f} "
                   f"| {min(t):.2f} | {len(t)} |")


def ratio(scn, a, b):
    """Ratio of medians. Every row of a scenario starts through idexec; where the
    scenario measured it, idexec's own cost (idexec noop minus noop: the spawn that
    every command pays stays in) is taken out of both sides (a cost added to both
    would pull the ratio towards 1)."""
    rows = load(scn)
    if rows and a in rows and b in rows:
        ra, rb = statistics.median(rows[a]), statistics.median(rows[b])
        note = ""
        if "idexec alone" in rows and "noop alone" in rows:
            x = statistics.median(rows["idexec alone"]) - statistics.median(rows["noop alone"])
            ra, rb, note = ra - x, rb - x, f" (idexec's {x:.2f} ms out)"
        ratios.append((scn, f"{a} / {b}{note}", f"{ra / rb:.2f}×", f"{ra - rb:+.2f} ms"))


for scn in ["true", "py", "pycmd", "limits", "seccomp", "userns", "idle", "phases", "warm", "warm-b2b"]:
    rows = load(scn)
    if rows:
        table(scn, rows)
for b, scn in [("bb-base", "true"), ("py", "py")]:
    for other in ["crun", "runc"]:
        ratio(scn, f"sbx-oci run {b}", f"{other} run {b}")
    ratio(scn, f"sbx-oci run {b}", "floor")
ratio("py", "sbx-oci run py", "floor+userns")
ratio("pycmd", "sbx-oci python -c pass", "floor+userns")
ratio("pycmd", "sbx-oci python -c pass", "direct")
# issue 17: through the warm server against the bare interpreter (targets 0.3x and 0.1x)
ratio("warm", "sbx-oci python --connect -c print(1)", "python3 -c pass")
ratio("warm", "sbx-oci python --connect import numpy, pandas", "python3 import numpy, pandas")
ratio("warm-b2b", "sbx-oci python --connect -c print(1)", "python3 -c pass")
ratio("warm", "sbx-oci python --connect --session: a cell", "python3 -c pass")
# what each feature adds, per runtime, within its scenario's table
for scn, a, b in [("limits", "bb-limits", "bb-base"), ("seccomp", "bb-seccomp", "bb-base"),
                  ("seccomp", "bb-seccomp-limits", "bb-base"), ("userns", "bb-userns", "bb-base")]:
    for r in ["sbx-oci", "crun", "runc"]:
        ratio(scn, f"{r} run {a}", f"{r} run {b}")
for r in ["sbx-oci", "crun", "runc"]:
    idle = [c for c in (load("idle") or {}) if c.startswith(f"{r} run") and c.endswith("idle")]
    for c in idle:
        ratio("idle", c, f"{r} run bb-base back-to-back")

soak = load("soak")
if soak:
    t = next(iter(soak.values()))
    k = min(100, len(t) // 2)
    first, last = statistics.mean(t[:k]), statistics.mean(t[-k:])
    table("soak", soak)
    out.append(f"\nmean of the first {k} runs {first:.2f} ms, of the last {k} {last:.2f} ms "
               f"(last/first {last / first:.2f}; medians {statistics.median(t[:k]):.2f} / "
               f"{statistics.median(t[-k:]):.2f} ms)")
    ratios.append(("soak", f"last {k} / first {k} (means)", f"{last / first:.2f}×", f"{last - first:+.2f} ms"))

deltas = os.path.join(res, "deltas.tsv")
if os.path.exists(deltas):
    for line in open(deltas).read().splitlines()[1:]:
        f = line.split("\t")
        # the paired median and its 95% interval (abrun.c), where the row has them
        paired = f" (paired {float(f[8]):+.2f} [{float(f[9]):+.2f}, {float(f[10]):+.2f}])" if len(f) >= 11 else ""
        ratios.append(("deltas", f"{f[0]} (alternated)", f"{float(f[2]) / float(f[1]):.2f}×",
                       f"{float(f[3]):+.2f} ms{paired}"))

for f, title in [("deltas.tsv", "feature costs, A and B alternated (medians, ms; paired: median of B-A per pair, 95% interval)"),
                 ("soak-leaks.tsv", "leak check around the sequential runs"),
                 ("warm-soak.tsv", "leak check around the sequential runs through sbx-oci serve"),
                 ("warm-throughput.tsv", "clients at once through sbx-oci serve"),
                 ("warm-ab.tsv", "clients at once through sbx-oci serve, an older build (WARM_AB_OLD) beside this one, alternated"),
                 ("warm-interpreter.tsv", "the code interpreter through sbx-oci serve: the library, cells with a value and a figure (medians, ms)"),
                 ("warm-sessions.tsv", "live sessions held by one sbx-oci serve (numpy and pandas imported in each): a cell's median, memory per session, the server's fds and children"),
                 ("mcp-http.tsv", "the HTTP MCP server under load, one node (contrib/mcp/bench/http-load.js): a call's p50 and p99 (ms) beside the CLI's warm run; past capacity, calls answered busy and calls that hung"),
                 ("jupyter.tsv", "a Jupyter kernel's start: start_kernel() to the first kernel_info_reply, Debian's python3 kernel (bare ipykernel) beside the sbx-oci kernel, alternated"),
                 ("rss.tsv", "peak RSS of `RT run` (GNU time %M, KiB)")]:
    path = os.path.join(res, f)
    if os.path.exists(path):
        text = [l.rstrip("\n") for l in open(path)]
        lines = [l.split("\t") for l in text if not l.startswith("#")]
        out.append(f"\n### {title}\n")
        out.append("| " + " | ".join(lines[0]) + " |")
        out.append("|" + "---|" * len(lines[0]))
        out += ["| " + " | ".join(l) + " |" for l in lines[1:]]
        # notes after the table ("# stopped by: ...")
        out += ["", *(l.lstrip("# ") for l in text if l.startswith("#"))]

# issue 41: what a run costs, by process, syscall and page fault (costs.py writes it whole)
costs = os.path.join(res, "costs.md")
if os.path.exists(costs):
    out += ["", open(costs).read().rstrip("\n")]

head = ["# sbx-oci one-shot benchmark", "",
        "Written by tests/bench/run.sh. Rows of one table come from one hyperfine invocation;",
        "compare rows within a table only (hyperfine does not interleave commands, and other",
        "jobs on the machine shift whole invocations).", "",
        "## Ratios (medians)", "", "| scenario | ratio | value | difference |", "|---|---|---:|---:|"]
head += [f"| {s} | {r} | {v} | {d} |" for s, r, v, d in ratios]
with open(os.path.join(res, "RESULTS.md"), "w") as f:
    f.write("\n".join(head + ["", "## Scenarios"] + out) + "\n")
for s, r, v, d in ratios:
    print(f"{s:8} {r:58} {v:>7} {d:>10}")
