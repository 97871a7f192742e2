#!/usr/bin/env python3
"""sbx_sandbox.run_python as the code-execution tool of an agent loop.

The "model" here is a fake that returns canned snippets, so the example runs without
any API: it computes something, writes a CSV into the workdir, reads an input file,
and makes a mistake it then fixes after seeing the traceback. The loop is the real
shape of one: the model proposes code, the tool runs it in a fresh sandbox, and what
came out (stdout, stderr, exit status, files) goes back into the conversation.

    python3 agent_example.py            # sbx-oci from $SBX_OCI, else from PATH
    SBX_ROOT=/tmp/state python3 agent_example.py   # a different state root

Exits 0 when the conversation went as scripted (the failing step failed, and the
others succeeded), 1 otherwise, 125 if the sandbox could not be set up at all.
"""

from __future__ import annotations

import os
import sys
from typing import Dict, List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sbx_sandbox import Result, SandboxError, run_python  # noqa: E402

# What the tool returns to the model is bounded: a runaway print loop must not fill
# the model's context (sbx-oci already caps each stream at --max-output).
TOOL_OUTPUT_CHARS = 2000

SALES_CSV = "region,amount\nnorth,120\nsouth,80\nnorth,45\neast,200\n"


def fake_model(conversation: List[Dict[str, str]]) -> Optional[Dict[str, str]]:
    """Stands in for an LLM: the next tool call, chosen from how many ran so far.

    A real model would read the conversation; this one only peeks at the last tool
    result to "notice" its bug, which is enough to show the feedback path.
    """
    steps = [
        # 1. plain computation
        "import math\nprint(sum(math.comb(20, k) for k in range(0, 21, 2)))\n",
        # 2. read an input file, write a CSV back into the workdir
        "import csv, collections\n"
        "totals = collections.Counter()\n"
        "with open('sales.csv') as f:\n"
        "    for row in csv.DictReader(f):\n"
        "        totals[row['region']] += int(row['amount'])\n"
        "with open('totals.csv', 'w', newline='') as f:\n"
        "    w = csv.writer(f)\n"
        "    w.writerow(['region', 'total'])\n"
        "    for region, total in sorted(totals.items()):\n"
        "        w.writerow([region, total])\n"
        "print('wrote totals.csv with', len(totals), 'regions')\n",
        # 3. a bug: the wrong column name
        "import csv\n"
        "rows = list(csv.DictReader(open('sales.csv')))\n"
        "print(max(rows, key=lambda r: int(r['amont']))['region'])\n",
    ]
    n_calls = sum(1 for m in conversation if m["role"] == "tool")
    if n_calls < len(steps):
        return {"role": "assistant", "tool": "python", "code": steps[n_calls]}
    last = conversation[-1]
    if n_calls == len(steps) and "KeyError" in last["content"]:
        # 4. the fix, after reading the traceback
        return {"role": "assistant", "tool": "python",
                "code": "import csv\n"
                        "rows = list(csv.DictReader(open('sales.csv')))\n"
                        "print(max(rows, key=lambda r: int(r['amount']))['region'])\n"}
    return None  # done


def python_tool(code: str, files: Dict[str, bytes], sbx_oci: str, root: Optional[str]) -> Result:
    """One tool call: a fresh sandbox each time, so nothing leaks between steps.

    The workspace is carried across calls by the agent (``files``), not by the
    sandbox: each run sees exactly the inputs it is given, and its outputs are
    merged back only as bytes.
    """
    return run_python(code, files=files, timeout=30, memory="512M", network="none",
                      sbx_oci=sbx_oci, root=root, allow_degraded=os.geteuid() != 0)


def tool_message(r: Result) -> str:
    """What the model is told about a run: status, output, and which files appeared."""
    if r.timed_out:
        status = "timed out (killed)"
    elif r.oom_killed:
        status = "killed: out of memory"
    elif r.signal:
        status = f"killed by {r.signal}"
    else:
        status = f"exit {r.exit_code}"
    parts = [status]
    if r.stdout:
        parts.append("stdout:\n" + r.stdout[-TOOL_OUTPUT_CHARS:])
    if r.stderr:
        parts.append("stderr:\n" + r.stderr[-TOOL_OUTPUT_CHARS:])
    if r.files:
        parts.append("files: " + ", ".join(f"{p} ({len(b)} bytes)" for p, b in sorted(r.files.items())))
    return "\n".join(parts)


def main() -> int:
    sbx_oci = os.environ.get("SBX_OCI", "sbx-oci")
    root = os.environ.get("SBX_ROOT") or None
    workspace: Dict[str, bytes] = {"sales.csv": SALES_CSV.encode()}
    conversation: List[Dict[str, str]] = [
        {"role": "user", "content": "Summarise sales.csv by region and tell me the biggest sale."}]
    results: List[Result] = []
    while True:
        call = fake_model(conversation)
        if call is None:
            break
        conversation.append({"role": "assistant", "content": call["code"]})
        try:
            r = python_tool(call["code"], workspace, sbx_oci, root)
        except SandboxError as exc:  # the tool itself is broken: stop, do not retry blindly
            print(f"agent: the sandbox could not be set up: {exc}", file=sys.stderr)
            return 125
        results.append(r)
        workspace.update(r.files)
        msg = tool_message(r)
        conversation.append({"role": "tool", "content": msg})
        print(f"--- step {len(results)}\n{call['code'].rstrip()}\n>>> {msg.rstrip()}\n")

    expected_ok = [True, True, False, True]
    got_ok = [r.ok for r in results]
    checks = [
        got_ok == expected_ok,
        results[0].stdout == "524288\n",
        workspace.get("totals.csv") == b"region,total\r\neast,200\r\nnorth,165\r\nsouth,80\r\n",
        "KeyError" in results[2].stderr,
        results[3].stdout == "east\n",
    ]
    if not all(checks):
        print(f"agent: unexpected results: ok={got_ok}, checks={checks}", file=sys.stderr)
        return 1
    print("agent: done; workspace:", ", ".join(sorted(workspace)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
