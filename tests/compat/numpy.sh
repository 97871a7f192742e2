#!/bin/bash
# numpy's own test suite (Debian's python3-numpy, with pytest and hypothesis), run bare
# as an unprivileged user and in `sbx-oci python` at its defaults, then compared test
# by test (compare.py, against numpy-denials.txt): a test that passes bare must pass in
# the sandbox (issue 21). numpy sizes some tests by the memory it sees
# (/proc/meminfo's MemAvailable), which is why the sandbox shows its limit there.
# numpy.test()'s default label "fast" (no tests marked slow), both runs at once. Run
# by tests/compat/run.sh after CPython's modules.
#   SBX_OCI               the binary (default: the build's)
#   SBX_COMPAT_KEEP=1     keep the scratch dir
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sbx=${SBX_OCI:-$here/../../sbx-oci}
python=/usr/bin/python3
user=sbxtest

[ "$(id -u)" = 0 ] || { echo "compat-numpy: run as root" >&2; exit 1; }
"$python" -c 'import numpy, pytest, hypothesis' 2>/dev/null ||
	{ echo "compat-numpy: python3-numpy, python3-pytest and python3-hypothesis are needed (contrib/dev-setup.sh)" >&2; exit 1; }
id -u "$user" >/dev/null 2>&1 || useradd -M -s /bin/sh "$user"

work=$(mktemp -d /tmp/sbx-compat-numpy.XXXXXX)
cleanup() {
	if [ "${SBX_COMPAT_KEEP:-}" = 1 ]; then echo "compat-numpy: kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
chmod 755 "$work"
mkdir "$work/bare" "$work/sandbox" "$work/state"
chown "$user:" "$work/bare"

# the same program both times: numpy.test() with a JUnit report, its exit status
# saying only whether it ran (the comparison decides)
prog='import sys, numpy
numpy.test(extra_argv=["-p", "no:cacheprovider", "-q", "--continue-on-collection-errors", "--junitxml=" + sys.argv[1]])'

start=$SECONDS
# both at once: each is one pytest process, mostly on one CPU
(cd "$work/bare" && runuser -u "$user" -- env -i HOME="$work/bare" PATH=/usr/bin:/bin LANG=C.UTF-8 \
	"$python" -c "$prog" "$work/bare/numpy.xml") >"$work/bare.log" 2>&1 &
bare_pid=$!
set +e
"$sbx" --root "$work/state" python --python "$python" --workdir "$work/sandbox" --timeout 1800 \
	-c "$prog" /work/numpy.xml >"$work/sandbox.log" 2>&1
sandbox_rc=$?
wait "$bare_pid"
bare_rc=$?
set -e
echo "compat-numpy: bare (exit $bare_rc) and in the sandbox (exit $sandbox_rc) in $((SECONDS - start)) s"
for side in bare sandbox; do
	echo "compat-numpy: $side: $(tr -d '\000' <"$work/$side.log" | grep -aE '[0-9]+ (passed|failed)' | tail -n 1)"
done
# a bare run that broke would compare as "no differences"
n=$("$python" -c 'import sys, xml.etree.ElementTree as E; print(sum(1 for _ in E.parse(sys.argv[1]).getroot().iter("testcase")))' \
	"$work/bare/numpy.xml" 2>/dev/null || echo 0)
[ "$n" -ge 1000 ] || { echo "compat-numpy: the bare run reported $n tests; it broke:" >&2; tail -n 30 "$work/bare.log" >&2; exit 1; }
if ! "$python" "$here/compare.py" "$work/bare/numpy.xml" "$work/sandbox/numpy.xml" "$here/numpy-denials.txt"; then
	echo "--- the sandbox run's last lines:"
	tail -n 30 "$work/sandbox.log"
	exit 1
fi
