#!/bin/bash
# run.sh OUTDIR RUNTIME RESULTS: every validation/NAME/NAME.t of the runtime-tools
# build in OUTDIR (build.sh) against RUNTIME, one at a time, each under a timeout,
# with a private --root. Writes RESULTS/runtime-tools/NAME.tap (the test's TAP, on
# stdout), NAME.log (stderr) and NAME.exit (its status); prints a line per test. After each test, what it
# left is removed: containers in the private root (delete --force), its bundles in
# $TMPDIR, and the cgroups the suite names (cgrouptest, testdir) if they are empty
# and were not there before.
set -uo pipefail
out=$1 runtime=$2 results=$3
dir=$out/runtime-tools
timeout_s=${SBX_CONFORMANCE_TIMEOUT:-120}
[ -x "$dir/runtimetest" ] || { echo "runtime-tools: not built in $dir" >&2; exit 1; }
mkdir -p "$results/runtime-tools"

root=$(mktemp -d /tmp/sbx-conformance-root.XXXXXX)
wrapper=$root.runtime
# the suite runs "$RUNTIME <command> ...": the wrapper adds the private state root
printf '#!/bin/sh\nexec %q --root %q "$@"\n' "$runtime" "$root" >"$wrapper"
chmod 755 "$wrapper"

suite_cgroups() {
	find /sys/fs/cgroup -maxdepth 4 -type d \( -name cgrouptest -o -name testdir \) 2>/dev/null | sort
}
before_cgroups=$(suite_cgroups)

cleanup_after_test() {
	local id
	for id in $("$wrapper" list -q 2>/dev/null); do
		"$wrapper" delete --force "$id" >/dev/null 2>&1 || true
	done
	find "$root" -mindepth 1 -maxdepth 1 -exec rm -rf {} + 2>/dev/null
	# the suite's bundles (util.PrepareBundle: $TMPDIR/ocitest*), unmounted first
	local b
	for b in "${TMPDIR:-/tmp}"/ocitest*; do
		[ -d "$b" ] || continue
		grep -q " $b" /proc/self/mounts && umount -R "$b"/* 2>/dev/null
		rm -rf "$b"
	done
	# deepest first; rmdir refuses a cgroup with tasks or children
	local cg
	for cg in $(comm -13 <(echo "$before_cgroups") <(suite_cgroups) | awk '{ print length, $0 }' | sort -rn | cut -d' ' -f2-); do
		rmdir "$cg/container" 2>/dev/null
		rmdir "$cg" 2>/dev/null
	done
}

cd "$dir" || exit 1
for t in validation/*/*.t; do
	name=$(basename "$t" .t)
	start=$SECONDS
	RUNTIME=$wrapper timeout -k 10 "$timeout_s" "./$t" >"$results/runtime-tools/$name.tap" 2>"$results/runtime-tools/$name.log" </dev/null
	rc=$?
	echo "$rc" >"$results/runtime-tools/$name.exit"
	[ $rc = 124 ] && echo "not ok - timed out after ${timeout_s}s" >>"$results/runtime-tools/$name.tap"
	cleanup_after_test
	printf 'runtime-tools/%s: %s ok, %s not ok (exit %s, %ss)\n' "$name" \
		"$(grep -c '^ok' "$results/runtime-tools/$name.tap")" "$(grep -c '^not ok' "$results/runtime-tools/$name.tap")" \
		"$rc" $((SECONDS - start))
done
rm -rf "$root" "$wrapper"
