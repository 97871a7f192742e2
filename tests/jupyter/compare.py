#!/usr/bin/env python3
"""compare.py [--timeout S] [--expected FILE] KERNEL_A KERNEL_B NOTEBOOK[:TIMEOUT]...

Executes each notebook with nbclient (Debian's python3-nbclient) once with kernelspec
KERNEL_A and once with KERNEL_B, each in a copy of the notebook's directory (its cwd,
where it may write), with errors allowed and a cell past its timeout interrupted, as
`jupyter nbconvert --execute` does. Then compares the outputs cell by cell, as a
reader would see them: streams, results and displays by MIME type (a PNG by its size
in pixels), errors by name and message; memory addresses and execution counts aside.

A difference listed in --expected ("notebook | cell | why", cells from 0) is reported
as expected; any other fails (status 1). Prints the counts.
"""
import argparse
import base64
import os
import re
import shutil
import struct
import sys
import tempfile

import nbformat
from nbclient import NotebookClient

ADDRESS = re.compile(r"0x[0-9a-f]{6,}")


def png_size(data: str):
    raw = base64.b64decode(data)
    if raw[:8] != b"\x89PNG\r\n\x1a\n":
        return ("not a png",)
    return ("png",) + struct.unpack(">II", raw[16:24])


def normal(output) -> tuple:
    kind = output["output_type"]
    if kind == "stream":
        return (kind, output["name"], ADDRESS.sub("0x…", output["text"]))
    if kind == "error":
        return (kind, output["ename"], ADDRESS.sub("0x…", output["evalue"]))
    data = output.get("data", {})
    shown = []
    for mime in sorted(data):
        value = data[mime]
        if mime == "image/png":
            shown.append((mime, png_size(value)))
        else:
            text = value if isinstance(value, str) else repr(value)
            shown.append((mime, ADDRESS.sub("0x…", text)))
    return ("display", tuple(shown))


def outputs(cell) -> list:
    """A cell's outputs, consecutive stream chunks of one stream joined (their split
    depends on timing)."""
    out = []
    for o in cell.get("outputs", []):
        n = normal(o)
        if out and n[0] == "stream" and out[-1][0] == "stream" and out[-1][1] == n[1]:
            out[-1] = ("stream", n[1], out[-1][2] + n[2])
        else:
            out.append(n)
    return out


def execute(path: str, kernel: str, timeout: int) -> nbformat.NotebookNode:
    work = tempfile.mkdtemp(prefix=f"nb-{kernel}-")
    src = os.path.dirname(os.path.abspath(path))
    shutil.copytree(src, work, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, kernel_name=kernel, timeout=timeout, allow_errors=True,
                            interrupt_on_timeout=True, resources={"metadata": {"path": work}})
    try:
        client.execute()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return nb


def read_expected(path):
    expected = {}
    if path:
        for line in open(path):
            line = line.split("#", 1)[0].strip()
            if line:
                nb, cell, why = (x.strip() for x in line.split("|", 2))
                expected[(nb, int(cell))] = why
    return expected


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--timeout", type=int, default=60)
    p.add_argument("--expected")
    p.add_argument("kernel_a")
    p.add_argument("kernel_b")
    p.add_argument("notebooks", nargs="+")
    args = p.parse_args()
    expected = read_expected(args.expected)
    cells = same = known = 0
    unexplained = []
    for spec in args.notebooks:
        path, _, t = spec.partition(":")
        timeout = int(t) if t else args.timeout
        name = os.path.basename(path)
        a = execute(path, args.kernel_a, timeout)
        b = execute(path, args.kernel_b, timeout)
        for i, (ca, cb) in enumerate(zip(a.cells, b.cells)):
            if ca.cell_type != "code":
                continue
            cells += 1
            oa, ob = outputs(ca), outputs(cb)
            if oa == ob:
                same += 1
            elif (name, i) in expected:
                known += 1
                print(f"expected difference: {name} cell {i}: {expected[(name, i)]}")
            else:
                unexplained.append(f"{name} cell {i}:\n  {args.kernel_a}: {oa}\n  {args.kernel_b}: {ob}")
        print(f"{name}: executed with {args.kernel_a} and {args.kernel_b}")
    for u in unexplained:
        print(f"DIFFERENT: {u}")
    print(f"compare: {len(args.notebooks)} notebooks, {cells} code cells: {same} the same, "
          f"{known} expected differences, {len(unexplained)} unexplained")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
