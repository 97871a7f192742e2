"""own_compare.py EXPECTED SBX_LOG CONTROL_LOG: the outcomes of ipykernel's and
jupyter_client's own tests (pytest -rA) with the sbx-oci kernel beside Debian's python3
kernel. Fails when a test fails only with sbx-oci and EXPECTED does not give the
reason, when a test EXPECTED names passes with sbx-oci, or when either run has no
outcomes (it did not run)."""
import re
import sys

LINE = re.compile(r"^(PASSED|FAILED|ERROR) (\S+)")


def outcomes(log):
    """{test id: PASSED|FAILED|ERROR}; the id from dist-packages/ on"""
    got = {}
    for line in open(log, errors="replace"):
        m = LINE.match(line)
        if m and "::" in m.group(2):
            test = m.group(2).split("dist-packages/")[-1]
            got[test] = "FAILED" if m.group(1) == "ERROR" or got.get(test) == "FAILED" else m.group(1)
    return got


def expected(path):
    """{test id: why} from 'test id | why' lines"""
    out = {}
    for line in open(path):
        if line.strip() and not line.startswith("#"):
            test, why = (x.strip() for x in line.split("|", 1))
            out[test] = why
    return out


def main():
    exp = expected(sys.argv[1])
    sbx, ctl = outcomes(sys.argv[2]), outcomes(sys.argv[3])
    if not sbx or not ctl:
        print("own tests: a run has no outcomes (see its log)", file=sys.stderr)
        return 1
    only_sbx = sorted(t for t, o in sbx.items() if o == "FAILED" and ctl.get(t) == "PASSED")
    both = sorted(t for t, o in sbx.items() if o == "FAILED" and ctl.get(t) != "PASSED")
    only_ctl = sorted(t for t, o in ctl.items() if o == "FAILED" and sbx.get(t) == "PASSED")
    unexplained = [t for t in only_sbx if t not in exp]
    stale = sorted(t for t in exp if sbx.get(t) != "FAILED")
    passed = sum(o == "PASSED" for o in sbx.values())
    print("own tests: %d with sbx-oci: %d passed, %d fail only in the sandbox (%d expected), "
          "%d fail with Debian's kernel too; with Debian's kernel: %d passed, %d fail there only"
          % (len(sbx), passed, len(only_sbx), len(only_sbx) - len(unexplained), len(both),
             sum(o == "PASSED" for o in ctl.values()), len(only_ctl)))
    for t in both:
        print("  fails with both kernels: %s" % t)
    for t in only_ctl:
        print("  fails with Debian's kernel only: %s" % t)
    for t in unexplained:
        print("UNEXPECTED: fails only with sbx-oci: %s" % t)
    for t in stale:
        print("UNEXPECTED: listed as failing in the sandbox, but %s: %s" % (sbx.get(t, "not run"), t))
    return 1 if unexplained or stale else 0


if __name__ == "__main__":
    sys.exit(main())
