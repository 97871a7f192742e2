#!/usr/bin/env python3
"""An agent loop on a sbx-oci session, used as a code interpreter.

The "model" is a fake that returns canned cells, so this runs without any API; the
loop is the real shape of one: it uploads the user's CSV into the session, then asks
the model for cell after cell, runs each in the session (state kept between cells, as
in a notebook), and feeds back what came out: the value of the last expression, the
output, the exception, and the figures (saved as PNG files here). One cell crashes
the interpreter (as a segfaulting extension would): the session rolls back to its
state before that cell, and the loop carries on with the same data.

    python3 notebook_agent.py [--socket SOCK] [--out DIR]

Without --socket it starts an `sbx-oci serve` of its own (sbx-oci from $SBX_OCI, else
PATH; the state root from $SBX_ROOT) and stops it at the end. Exits 0 when the
conversation went as scripted, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sbx_sandbox import Result, SandboxError, Session  # noqa: E402

SALES_CSV = "region,month,amount\nnorth,1,120\nsouth,1,80\nnorth,2,45\neast,2,200\nsouth,2,95\neast,3,60\n"

# The cells the fake model proposes, in order, with what the loop expects of each.
CELLS = [
    ("load the upload", "import csv\nrows = list(csv.DictReader(open('sales.csv')))\nlen(rows)", "6"),
    ("total by region",
     "import collections\ntotals = collections.Counter()\nfor r in rows:\n    totals[r['region']] += int(r['amount'])\n"
     "dict(sorted(totals.items()))", "{'east': 260, 'north': 165, 'south': 175}"),
    ("a bug: a wrong column", "max(rows, key=lambda r: int(r['amont']))", None),
    ("a crash (the interpreter dies)", "import ctypes\nrows = None\nctypes.string_at(0)", None),
    ("the state survived", "len(rows), sum(totals.values())", "(6, 600)"),
    ("a chart", "import matplotlib.pyplot as plt\nplt.bar(list(totals), list(totals.values()))\n"
     "plt.title('sales by region')\nplt.show()", None),
    ("write the answer", "open('answer.txt', 'w').write(max(totals, key=totals.get))", "4"),
]


def describe(label: str, r: Result) -> str:
    """What the tool says back to the model: bounded, as a context window needs."""
    lines = [f"[{label}] exit {r.exit_code}, state {r.session_state}"]
    if r.value is not None:
        lines.append(f"value: {r.value[:500]}")
    if r.exception:
        lines.append(f"exception: {r.exception['type']}: {r.exception['message']}")
    if r.stdout:
        lines.append("stdout: " + r.stdout[:500])
    if r.figures:
        lines.append(f"{len(r.figures)} figure(s)")
    return "\n".join(lines)


def start_server(sbx_oci: str, root: Optional[str], tmp: str) -> "tuple[subprocess.Popen[bytes], str]":
    sock = os.path.join(tmp, "sbx.sock")
    cmd = [sbx_oci] + (["--root", root] if root else []) + ["serve", "--socket", sock, "--preload",
                                                              "matplotlib.pyplot"]
    log = open(os.path.join(tmp, "serve.log"), "wb")
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    for _ in range(300):
        if os.path.exists(sock) and b"listening on" in open(log.name, "rb").read():
            return proc, sock
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    raise SandboxError("sbx-oci serve did not start: " + open(log.name, "rb").read().decode(errors="replace"))


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--socket", help="an sbx-oci serve of this user (default: start one)")
    ap.add_argument("--out", default=".", help="where the figures and the answer are saved")
    a = ap.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="notebook-agent-")
    server = None
    sock = a.socket
    ok = True
    try:
        if sock is None:
            server, sock = start_server(os.environ.get("SBX_OCI", "sbx-oci"), os.environ.get("SBX_ROOT"), tmp)
        with Session(sock, memory="512M", network="none") as s:
            s.put("sales.csv", SALES_CSV)
            for i, (label, code, want) in enumerate(CELLS):
                r = s.run(code, timeout=60)
                print(describe(label, r), flush=True)
                for k, png in enumerate(r.figures):
                    path = os.path.join(a.out, f"figure-{i}-{k}.png")
                    with open(path, "wb") as f:
                        f.write(png)
                    print(f"  saved {path}")
                if want is not None and r.value != want:
                    print(f"  expected value {want!r}", file=sys.stderr)
                    ok = False
                if label.startswith("a bug") and not (r.exception and r.exception["type"] == "KeyError"):
                    ok = False
                if label.startswith("a crash") and r.session_state != "rolled back":
                    ok = False
                if label == "a chart" and len(r.figures) != 1:
                    ok = False
            answer = s.get("answer.txt").decode()
            print(f"answer: {answer}")
            ok = ok and answer == "east" and any(e["path"] == "answer.txt" for e in s.list())
    except SandboxError as exc:
        print(f"notebook_agent: {exc.message}", file=sys.stderr)
        ok = False
    finally:
        if server is not None:
            server.terminate()
            server.wait(30)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
