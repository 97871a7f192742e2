#!/usr/bin/env python3
"""summarize.py RESULTS EXPECTED: the conformance stage's verdict.

RESULTS holds one folder per suite (runtime-tools/, crun/), each with NAME.tap (the
test's TAP on stdout) and NAME.exit (its exit status) per test file. A point is a
TAP line, "ok ..." or "not ok ...", as the suites' own reports count them. A file
that printed no point and exited non-zero counts as one failed point, "no points
(exit N)", so that a file refused outright is seen.

EXPECTED lists the points known to fail here, one per line:
    SUITE/FILE: DESCRIPTION | REASON
DESCRIPTION is the TAP description (after "not ok N - "); "*" matches every
failing point of the file. Every line needs a reason.

Prints a table per file and the totals; exits 1 if a point fails that EXPECTED does
not list (a regression), and names it. An expected failure that now passes is
reported (so the list can shrink) but does not fail the stage.
"""
import os
import re
import sys

TAP_POINT = re.compile(r"^(ok|not ok)\b\s*(\d+)?\s*(?:-\s*)?(.*)$")


def load_expected(path):
    expected = {}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            m = re.match(r"^([\w.-]+/[\w.-]+): (.*?) \| (.+)$", line)
            if not m:
                sys.exit(f"{path}:{n}: not 'SUITE/FILE: DESCRIPTION | REASON': {line}")
            expected.setdefault(m.group(1), {})[m.group(2).strip()] = m.group(3).strip()
    return expected


def points(tap_path):
    """(passed, failed descriptions, skipped) of one TAP file."""
    passed, failed, skipped = 0, [], 0
    with open(tap_path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            m = TAP_POINT.match(line.rstrip("\n"))
            if not m:
                continue
            desc = m.group(3).strip()
            if m.group(1) == "ok":
                passed += 1
                skipped += re.search(r"#\s*SKIP", desc, re.I) is not None
            else:
                failed.append(re.sub(r"\s+#\s*[\d.]+s$", "", desc))  # crun's suite appends the duration
    return passed, failed, skipped


def main():
    results, expected_path = sys.argv[1], sys.argv[2]
    expected = load_expected(expected_path)
    unexpected, fixed = [], []
    totals = {}
    seen_files = set()
    for suite in sorted(os.listdir(results)):
        sdir = os.path.join(results, suite)
        if not os.path.isdir(sdir):
            continue
        print(f"{'file':<44} {'passed':>7} {'failed':>7} {'skipped':>8}  (suite {suite})")
        sp = sf = 0
        for tap in sorted(f for f in os.listdir(sdir) if f.endswith(".tap")):
            name = tap[:-4]
            key = f"{suite}/{name}"
            seen_files.add(key)
            passed, failed, skipped = points(os.path.join(sdir, tap))
            exit_path = os.path.join(sdir, name + ".exit")
            status = open(exit_path).read().strip() if os.path.exists(exit_path) else "0"
            if passed == 0 and not failed and status != "0":
                failed = [f"no points (exit {status})"]
            allowed = expected.get(key, {})
            for desc in failed:
                if desc not in allowed and "*" not in allowed:
                    unexpected.append(f"{key}: {desc}")
            for desc in allowed:
                if desc != "*" and desc not in failed:
                    fixed.append(f"{key}: {desc}")
            print(f"{name:<44} {passed:>7} {len(failed):>7} {skipped:>8}")
            sp += passed
            sf += len(failed)
        totals[suite] = (sp, sf)
        print(f"{'total ' + suite:<44} {sp:>7} {sf:>7}\n")
    for key in sorted(expected):
        if key not in seen_files and key.split("/")[0] in totals:
            fixed.append(f"{key}: (the file no longer exists or did not run)")
    for suite, (p, f) in totals.items():
        print(f"conformance {suite}: {p} passed, {f} failed")
    if fixed:
        print("\nexpected to fail, but passed (the list in " + os.path.basename(expected_path) + " can shrink):")
        for x in fixed:
            print("  " + x)
    if unexpected:
        print("\nUNEXPECTED failures (not in " + os.path.basename(expected_path) + "):")
        for x in unexpected:
            print("  " + x)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
