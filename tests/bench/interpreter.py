#!/usr/bin/env python3
"""interpreter.py SBX_OCI SOCKET OUT.tsv: the code-interpreter numbers (issues 31, 32),
measured in one process against one `sbx-oci serve` (started by warm.sh with
matplotlib.pyplot preloaded), beside bare python3 and the CLI's warm print(1):

  bare python3 -c pass                       a process per run
  CLI --connect -c print(1)                  a process per run (the reference)
  run_python(connect) print(1)               the library, in this process
  run_python(connect) one file in, one out   the library's usual call (workdir taken by a standby)
  session cell n+=1                          a cell without a value
  session cell n+=1; n                       the same cell, its value shown and reported
  session cell drawing a figure              plt.plot + plt.show: one PNG back
  CLI --connect --session s -c print(1)      a session cell from the CLI (the MCP cell's reference)
  MCP run_python print(1), session_run       the SDK's client driving contrib/mcp's server
                                             (contrib/mcp/bench/roundtrip.js), when node and
                                             contrib/mcp/node_modules (npm ci) are there

Each row: the median of N (default 41) calls with a 50 ms pause between them (as an
agent's calls come), in milliseconds. Prints the table and writes OUT.tsv.
"""
import os
import shutil
import statistics
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "contrib", "python"))
from sbx_sandbox import Session, run_python  # noqa: E402

SBX, SOCK, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
N = int(os.environ.get("INTERP_N", "41"))
PY = "/usr/bin/python3"


def median_ms(fn):
    fn()  # once first: caches, the session's state
    times = []
    for _ in range(N):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
        time.sleep(0.05)
    return statistics.median(times)


def run(cmd):
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, check=True)


def lib_files():
    r = run_python("open('out.txt', 'w').write(open('in.txt').read())", connect=SOCK, files={"in.txt": "x" * 100},
                   sbx_oci=SBX)
    assert r.ok and r.files == {"out.txt": b"x" * 100}, r


rows = []
rows.append(("bare python3 -c pass", median_ms(lambda: run([PY, "-c", "pass"]))))
rows.append(("CLI --connect -c print(1)", median_ms(lambda: run([SBX, "python", "--connect", SOCK, "-c", "print(1)"]))))
rows.append(("CLI --connect --session s -c print(1)",
             median_ms(lambda: run([SBX, "python", "--connect", SOCK, "--session", "clibench", "-c", "print(1)"]))))
run([SBX, "python", "--connect", SOCK, "--session", "clibench", "--end-session"])
rows.append(("run_python(connect) print(1)", median_ms(lambda: run_python("print(1)", connect=SOCK, sbx_oci=SBX))))
rows.append(("run_python(connect) one file in, one out", median_ms(lib_files)))
with Session(SOCK) as s:
    s.run("n = 0\nimport matplotlib.pyplot as plt")
    rows.append(("session cell n+=1", median_ms(lambda: s.run("n += 1"))))
    rows.append(("session cell n+=1; n (value)", median_ms(lambda: s.run("n += 1\nn"))))

    def figure():
        r = s.run("plt.plot([1, 3, 2])\nplt.show()")
        assert len(r.figures) == 1, r

    rows.append(("session cell drawing a figure", median_ms(figure)))


def mcp_rows():
    mcp = os.path.join(here, "..", "..", "contrib", "mcp")
    if not os.path.isdir(os.path.join(mcp, "node_modules")) or not shutil.which("node"):
        print("interpreter.py: no MCP rows (needs node and `npm ci` in contrib/mcp)", file=sys.stderr)
        return []
    out = subprocess.run(["node", os.path.join(mcp, "bench", "roundtrip.js"), SOCK, SBX, str(N)], check=True,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True).stdout
    return [(what, float(ms)) for what, ms in (line.split("\t") for line in out.splitlines())]


rows += mcp_rows()

cli = dict(rows)["CLI --connect -c print(1)"]
bare = dict(rows)["bare python3 -c pass"]
with open(OUT, "w") as f:
    f.write("what\tmedian_ms\tx_cli_print\tx_bare_python\n")
    for what, ms in rows:
        f.write(f"{what}\t{ms:.2f}\t{ms / cli:.2f}\t{ms / bare:.2f}\n")
print(open(OUT).read(), end="")
value = dict(rows)["session cell n+=1; n (value)"] - dict(rows)["session cell n+=1"]
print(f"the value costs {value:.2f} ms a cell; the library's call with files is "
      f"{dict(rows)['run_python(connect) one file in, one out'] / cli:.2f}x the CLI's print(1)")
if "MCP run_python print(1)" in dict(rows):
    print(f"MCP: run_python {dict(rows)['MCP run_python print(1)'] - cli:+.2f} ms beside the CLI's print(1), "
          f"session_run {dict(rows)['MCP session_run print(1)'] - dict(rows)['CLI --connect --session s -c print(1)']:+.2f} ms "
          f"beside the CLI's session cell")
