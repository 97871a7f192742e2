#!/usr/bin/env python3
"""The source tree's layering (DEVELOPERS.md, "Layout"), checked on every `make check`.

1. Includes: a file includes its own folder and the layers below it only.
2. Calls: no cycle between object files (A calls B and B, directly or not, calls A),
   read from the built objects with nm; run by `make check` after the build.

Run from the build directory (automake sets $srcdir); exits 1 naming each breach.
"""
import collections
import os
import re
import subprocess
import sys

# Lowest first. A folder may include/call only folders of a lower rank (or its own).
LAYERS = {
    "runtime/base": 0,
    "oci": 1,
    "hooks": 2,
    "runtime/cgroup": 2,
    "runtime/linux": 3,  # the kernel mechanisms (mounts, namespaces, seccomp, ...): may use a cgroup
    "runtime/container": 4,  # a container's lifecycle, the engine every command shares
    "runtime/sandbox": 5,
    "runtime/warm": 6,  # libsbx-warm.so's entry: the engine's exec for a warm interpreter
    "runtime/serve": 6,  # the warm server, sessions and wire: calls sandbox/'s run, never called by it
    "runtime/cli": 7,
}
GENERATED = {"build-config.h"}

srcdir = os.environ.get("srcdir", ".")
top = srcdir  # automake runs TESTS with srcdir = the top source directory
build = os.getcwd()
problems = []


def sources():
    for folder in LAYERS:
        d = os.path.join(top, folder)
        for name in sorted(os.listdir(d)):
            if name.endswith((".c", ".h")):
                yield f"{folder}/{name}"


def check_includes():
    for name in sorted(os.listdir(os.path.join(top, "runtime"))):
        if name.endswith((".c", ".h")):
            problems.append(f"runtime/{name}: at the top of runtime/, in no layer (the engine is container/ and linux/)")
    for f in sources():
        here = os.path.dirname(f)
        with open(os.path.join(top, f), encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                m = re.match(r'#include "([^"]+)"', line)
                if not m or m.group(1) in GENERATED:
                    continue
                inc = m.group(1)
                target = os.path.dirname(inc)
                if not os.path.exists(os.path.join(top, inc)) and not os.path.exists(os.path.join(build, inc)):
                    problems.append(f"{f}:{n}: includes {inc}: not a path from the top of the tree")
                elif target not in LAYERS:
                    problems.append(f"{f}:{n}: includes {inc}: not in a known layer")
                elif target != here and LAYERS[target] >= LAYERS[here]:
                    problems.append(f"{f}:{n}: includes {inc}: {target}/ is not below {here}/")


def strongly_connected(graph):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def check_calls():
    objects = []
    for folder in LAYERS:
        d = os.path.join(build, folder)
        if os.path.isdir(d):
            objects += [f"{folder}/{n}" for n in sorted(os.listdir(d)) if n.endswith(".o")]
    if not objects:
        problems.append(f"no object files under {build}: build first")
        return
    defined, used = {}, collections.defaultdict(set)
    for o in objects:
        out = subprocess.run(["nm", os.path.join(build, o)], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBR":
                defined[parts[2]] = o
            elif len(parts) == 2 and parts[0] == "U":
                used[o].add(parts[1])
    graph = collections.defaultdict(set)
    for o, symbols in used.items():
        for s in symbols:
            d = defined.get(s)
            if d and d != o:
                graph[o].add(d)
                fo, fd = os.path.dirname(o), os.path.dirname(d)
                if fo != fd and LAYERS[fd] >= LAYERS[fo]:
                    problems.append(f"{o[:-2]}.c calls {s} of {d[:-2]}.c: {fd}/ is not below {fo}/")
    for comp in strongly_connected(graph):
        problems.append("files that call each other: " + ", ".join(c[:-2] + ".c" for c in comp))


check_includes()
check_calls()
for p in problems:
    print(p)
print(f"layers: {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
