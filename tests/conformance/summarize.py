#!/usr/bin/env python3
"""summarize.py RESULTS EXPECTED: the conformance stage's verdict.

RESULTS holds one folder per runtime (sbx-oci, and the peers run beside it: runc,
crun), each with one folder per suite (crun/, or crun-v2/ for the v2 guest's run)
holding FILE.tap per test file (the TAP it printed) and, optionally, FILE.exit (its
exit status). A point is a TAP line, "ok ..." or "not ok ...", as the suite's own
report counts them; "ok ... # SKIP" counts as passed, and is also counted as skipped.
A file that printed no point and exited non-zero counts as one failed point, "no
points (exit N)", so that a file refused outright is seen.

EXPECTED lists the points of sbx-oci known to fail here, one per line:
    SUITE/FILE: DESCRIPTION | REASON
DESCRIPTION is the TAP description (after "not ok N - "); "*" matches every failing
point of the file. Every line needs a reason.

Prints a table per suite with every runtime's passed/failed per file, the totals, the
cases a peer passes and sbx-oci fails (with the reason EXPECTED gives), and exits 1 if
sbx-oci fails a point that EXPECTED does not list (a regression), naming it. An
expected failure that now passes is reported (so the list can shrink) but does not
fail the stage. Only sbx-oci is judged: the peers are measured, not tested.
"""
import os
import re
import sys

JUDGED = "sbx-oci"
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
    """(passed descriptions, failed descriptions, skipped count) of one TAP file."""
    passed, failed, skipped = [], [], 0
    with open(tap_path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            m = TAP_POINT.match(line.rstrip("\n"))
            if not m:
                continue
            desc = re.sub(r"\s+#\s*[\d.]+s$", "", m.group(3).strip())  # a duration some suites append
            if m.group(1) == "ok":
                is_skip = re.search(r"#\s*SKIP", desc, re.I) is not None
                skipped += is_skip
                passed.append(re.sub(r"\s*#\s*SKIP.*$", "", desc, flags=re.I))
            else:
                failed.append(desc)
    return passed, failed, skipped


def load_runtime(rdir):
    """{suite: {file: (passed, failed, skipped)}} of one runtime's folder."""
    suites = {}
    for suite in sorted(os.listdir(rdir)):
        sdir = os.path.join(rdir, suite)
        if not os.path.isdir(sdir):
            continue
        files = {}
        for tap in sorted(f for f in os.listdir(sdir) if f.endswith(".tap")):
            name = tap[:-4]
            passed, failed, skipped = points(os.path.join(sdir, tap))
            exit_path = os.path.join(sdir, name + ".exit")
            status = open(exit_path).read().strip() if os.path.exists(exit_path) else "0"
            if not passed and not failed and status != "0":
                failed = [f"no points (exit {status})"]
            files[name] = (passed, failed, skipped)
        suites[suite] = files
    return suites


def print_table(suite, runtimes, results):
    header = f"{'file (suite ' + suite + ')':<36}" + "".join(f" {r + ' ok/fail':>18}" for r in runtimes)
    print(header)
    files = sorted({f for r in runtimes for f in results[r].get(suite, {})})
    totals = {r: [0, 0, 0] for r in runtimes}
    for f in files:
        row = f"{f:<36}"
        for r in runtimes:
            p, fl, s = results[r].get(suite, {}).get(f, ([], [], 0))
            row += f" {len(p):>8}/{len(fl):<9}"
            totals[r][0] += len(p)
            totals[r][1] += len(fl)
            totals[r][2] += s
        print(row)
    row = f"{'total':<36}" + "".join(f" {t[0]:>8}/{t[1]:<9}" for t in totals.values())
    print(row + "\n")
    for r, (p, fl, s) in totals.items():
        print(f"conformance {suite} {r}: {p} passed (of which {s} skipped), {fl} failed")
    print()


def main():
    results_dir, expected_path = sys.argv[1], sys.argv[2]
    expected = load_expected(expected_path)
    runtimes = [r for r in sorted(os.listdir(results_dir)) if os.path.isdir(os.path.join(results_dir, r))]
    if JUDGED not in runtimes:
        print(f"summarize: no {JUDGED} results in {results_dir}")
        return 1
    runtimes.remove(JUDGED)
    runtimes.insert(0, JUDGED)
    results = {r: load_runtime(os.path.join(results_dir, r)) for r in runtimes}
    unexpected, fixed, behind = [], [], []
    for suite, files in results[JUDGED].items():
        print_table(suite, runtimes, results)
        for name, (passed, failed, _) in files.items():
            key = f"{suite}/{name}"
            allowed = expected.get(key, {})
            for desc in failed:
                if desc not in allowed and "*" not in allowed:
                    unexpected.append(f"{key}: {desc}")
                peers = [r for r in runtimes[1:] if desc in results[r].get(suite, {}).get(name, ([],))[0]]
                if peers:
                    reason = allowed.get(desc, allowed.get("*", "NOT LISTED"))
                    behind.append(f"{key}: {desc} (passed by {', '.join(peers)}) | {reason}")
            for desc in allowed:
                if desc != "*" and desc not in failed:
                    fixed.append(f"{key}: {desc}")
        for key in sorted(expected):
            if key.split("/")[0] == suite and key.split("/", 1)[1] not in files:
                fixed.append(f"{key}: (the file no longer exists or did not run)")
    if behind:
        print("passed by a peer, failed by sbx-oci:")
        for x in behind:
            print("  " + x)
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
