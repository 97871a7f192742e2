#!/usr/bin/env python3
"""compare.py BARE.xml SANDBOX.xml DENIALS [--modules M1,M2,...] [--again AGAIN.xml] [--list-differences]

Compares CPython regression tests run bare and in `sbx-oci python`, test by test,
from the JUnit XML that `python -m test --junit-xml` writes. A test that passes bare
and does not pass in the sandbox (fails, errors, is skipped, or never ran because its
module crashed or timed out) is a difference. Every difference must match a line of
DENIALS:
    TEST-ID-GLOB | REASON
(fnmatch against the test id, e.g. "test.test_os.ChownFileTests.test_chown_without_permission");
"*" globs may cover a class. Prints the differences with their reasons, the ones no
line explains, and the lines that matched nothing (the list can shrink). Exits 1 on
an unexplained difference, or if a module given with --modules has no test in the
bare run (the bare run itself broke).

--again AGAIN.xml: a second sandbox run of the differing tests (run.sh); a test that
passes there passes. --list-differences: print only the ids of the differing tests
(before the denials are applied) and exit 0.
"""
import fnmatch
import os
import sys
import xml.etree.ElementTree as ET


def outcomes(path):
    """test id -> "pass" | "fail" | "skip" (error counts as fail)."""
    out = {}
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"compare: {path}: {e}", file=sys.stderr)
        return out
    for case in root.iter("testcase"):
        # regrtest's name is the whole id; pytest's is the function, its class apart
        name, cls = case.get("name", ""), case.get("classname", "")
        if cls and not name.startswith(cls + "."):
            name = f"{cls}.{name}"
        tags = {child.tag for child in case}
        if "failure" in tags or "error" in tags:
            out[name] = "fail"
        elif "skipped" in tags:
            out[name] = "skip"
        else:
            out[name] = "pass"
    return out


def in_module(test, module):
    """test.test_os.X.y is test_os's; a package's own tests (ctypes.test.X.y) are test_ctypes's."""
    return test.startswith(f"test.{module}.") or (module.startswith("test_") and test.startswith(module[5:] + ".test."))


def load_denials(path):
    rules = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            glob, sep, reason = line.partition("|")
            if not sep or not reason.strip():
                sys.exit(f"compare: {path}:{n}: a line needs 'TEST-ID-GLOB | REASON'")
            rules.append([glob.strip(), reason.strip(), 0])
    return rules


def main():
    args = sys.argv[1:]
    modules, again = [], {}
    if "--modules" in args:
        i = args.index("--modules")
        modules = [m for m in args[i + 1].split(",") if m]
        del args[i:i + 2]
    if "--again" in args:
        i = args.index("--again")
        again = outcomes(args[i + 1]) if os.path.exists(args[i + 1]) else {}
        del args[i:i + 2]
    list_only = "--list-differences" in args
    if list_only:
        args.remove("--list-differences")
    if len(args) != 3:
        sys.exit(__doc__)
    bare, sandbox = outcomes(args[0]), outcomes(args[1])
    for test, got in again.items():
        if got == "pass":
            sandbox[test] = "pass"
    if list_only:
        for test in sorted(bare):
            if bare[test] == "pass" and sandbox.get(test) != "pass":
                print(test)
        return 0
    rules = load_denials(args[2])
    broken = [m for m in modules if not any(in_module(t, m) for t in bare)]
    explained, unexplained = [], []
    for test in sorted(bare):
        if bare[test] != "pass":
            continue
        got = sandbox.get(test, "missing")
        if got == "pass":
            continue
        rule = next((r for r in rules if fnmatch.fnmatchcase(test, r[0])), None)
        if rule:
            rule[2] += 1
            explained.append(f"{test}: {got} | {rule[1]}")
        else:
            unexplained.append(f"{test}: {got}")
    passed_bare = sum(1 for v in bare.values() if v == "pass")
    print(f"compat: {len(bare)} tests bare ({passed_bare} passed), {len(sandbox)} in the sandbox; "
          f"{len(explained)} intended denials, {len(unexplained)} unexplained differences")
    for line in explained:
        print("  intended: " + line)
    unused = [r for r in rules if r[2] == 0]
    if unused:
        print("denials that matched nothing (the list can shrink):")
        for r in unused:
            print(f"  {r[0]}")
    if broken:
        print("modules with no test in the bare run: " + " ".join(broken))
    if unexplained:
        print("UNEXPLAINED differences (bare passes, the sandbox does not):")
        for line in unexplained:
            print("  " + line)
    return 1 if unexplained or broken else 0


if __name__ == "__main__":
    sys.exit(main())
