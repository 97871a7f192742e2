#!/bin/bash
# The Python compatibility stage (issue 21): CPython's own regression tests, from
# Debian's libpython3.11-testsuite, for the modules in modules.txt, run bare as an
# unprivileged user and in `sbx-oci python` at its defaults, then compared test by test
# (compare.py). A test that passes bare and not in the sandbox must be listed, with its
# reason, in intended-denials.txt; any other difference fails the stage.
#
# Both runs go at once (regrtest -j2 each: most of their time is tests waiting). A test
# that differs is run once more in the sandbox, alone, before it counts: a timing test
# that lost a race under the load of the other run is not a sandbox difference.
#
#   SBX_OCI               the binary (default: the build's)
# Then numpy's own test suite, bare and sandboxed, compared the same way (numpy.sh).
#
#   SBX_COMPAT_MODULES    only these modules (space-separated), instead of modules.txt,
#                         and not numpy's suite
#   SBX_COMPAT_KEEP=1     keep the scratch dir (its path is printed)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sbx=${SBX_OCI:-$here/../../sbx-oci}
python=/usr/bin/python3
user=sbxtest

[ "$(id -u)" = 0 ] || { echo "compat: run as root (the sandbox side runs as root, the bare side as $user)" >&2; exit 1; }
[ -d /usr/lib/python3.11/test/libregrtest ] ||
	{ echo "compat: libpython3.11-testsuite is not installed (contrib/dev-setup.sh installs it)" >&2; exit 1; }
id -u "$user" >/dev/null 2>&1 || useradd -M -s /bin/sh "$user"

if [ -n "${SBX_COMPAT_MODULES:-}" ]; then
	read -r -a modules <<<"$SBX_COMPAT_MODULES"
else
	mapfile -t modules < <(grep -v -e '^#' -e '^$' "$here/modules.txt")
fi

work=$(mktemp -d /tmp/sbx-compat.XXXXXX)
cleanup() {
	if [ "${SBX_COMPAT_KEEP:-}" = 1 ]; then
		echo "compat: kept $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
chmod 755 "$work"
mkdir "$work/bare" "$work/sandbox" "$work/again" "$work/state"
chown "$user:" "$work/bare"

start=$SECONDS
# bare: the user's own process, a clean environment, its own cwd (regrtest works there)
(cd "$work/bare" && runuser -u "$user" -- env -i HOME="$work/bare" PATH=/usr/bin:/bin LANG=C.UTF-8 \
	"$python" -m test -j2 --timeout 300 --junit-xml "$work/bare/bare.xml" "${modules[@]}") \
	>"$work/bare.log" 2>&1 &
bare_pid=$!
# the sandbox at its defaults; only the wall clock is the harness's (the default 300 s
# would end the whole run, not a test)
set +e
"$sbx" --root "$work/state" python --python "$python" --workdir "$work/sandbox" --timeout 1800 \
	-m test -j2 --timeout 300 --junit-xml /work/sandbox.xml "${modules[@]}" >"$work/sandbox.log" 2>&1
sandbox_rc=$?
wait "$bare_pid"
bare_rc=$?
set -e
echo "compat: ${#modules[@]} modules, bare (exit $bare_rc) and in the sandbox (exit $sandbox_rc) in $((SECONDS - start)) s"

# a second chance, alone, for the tests that differ
"$python" "$here/compare.py" "$work/bare/bare.xml" "$work/sandbox/sandbox.xml" /dev/null --list-differences \
	>"$work/again/tests.txt" || true
if [ -s "$work/again/tests.txt" ] && [ "$(wc -l <"$work/again/tests.txt")" -le 500 ]; then
	# test.test_os.X.y -> test_os; ctypes.test.X.y (a package's own tests) -> test_ctypes
	mapfile -t again_modules < <(sed -E -e 's/^test\.([^.]+)\..*/\1/' -e 's/^([a-z_]+)\.test\..*/test_\1/' \
		"$work/again/tests.txt" | sort -u)
	echo "compat: $(wc -l <"$work/again/tests.txt") differing tests of ${#again_modules[@]} modules run again in the sandbox"
	"$sbx" --root "$work/state" python --python "$python" --workdir "$work/again" --timeout 900 \
		-m test --timeout 300 --matchfile /work/tests.txt --junit-xml /work/again.xml "${again_modules[@]}" \
		>"$work/again.log" 2>&1 || true
fi

rc=0
if ! "$python" "$here/compare.py" "$work/bare/bare.xml" "$work/sandbox/sandbox.xml" "$here/intended-denials.txt" \
	--again "$work/again/again.xml" --modules "$(
		IFS=,
		echo "${modules[*]}"
	)"; then
	echo "--- the sandbox run's last lines:"
	tail -n 30 "$work/sandbox.log"
	rc=1
fi
# numpy's own suite the same way (numpy.sh), unless SBX_COMPAT_MODULES picked a few
if [ -z "${SBX_COMPAT_MODULES:-}" ]; then
	SBX_OCI=$sbx "$here/numpy.sh" || rc=1
fi
exit $rc
