#!/bin/bash
# run.sh OUTDIR RUNTIME RESULTS_DIR: runs crun's Python suite (prepared in OUTDIR by
# build.sh from Debian's crun source package) against RUNTIME, one tests/test_*.py at a time, as root.
#
# For each FILE it writes RESULTS_DIR/crun/FILE.tap (the TAP on stdout) and FILE.log
# (stderr: the suite's diagnostics), prints
#   crun/FILE: P passed, F failed, S skipped
# where P counts every `ok` line, a `# SKIP` too (as TAP does), and S is how many of
# them were skips; a file that ended before its plan also gets `; plan N, M missing`.
# Totals and per-file seconds go to RESULTS_DIR/crun/summary.txt.
#
# Environment:
#   SBX_CONFORMANCE_TESTS         only these files (space-separated, e.g. "test_pid.py")
#   RUN_TESTS                     the suite's own filter: only these case names
#   SBX_CONFORMANCE_FILE_TIMEOUT  seconds per file (default 600), the last resort
#   SBX_CONFORMANCE_CALL_TIMEOUT  seconds per subprocess call the suite gives no
#                                 timeout (default 60, sitecustomize.py)
#   SBX_CONFORMANCE_SOCKET_TIMEOUT  the same for socket waits (default 15)
# Exit status: 0 when every file ran (failures are results, not errors), 1 on a
# harness problem (a file killed by its timeout, or cleanup that left something).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ $# -ne 3 ]; then
	echo "usage: $0 OUTDIR RUNTIME RESULTS_DIR" >&2
	exit 2
fi
out=$(cd "$1" && pwd)
runtime=$(command -v "$2" || true)
results=$3/crun
src=$out/crun
tests=$src/tests
init=$out/init
file_timeout=${SBX_CONFORMANCE_FILE_TIMEOUT:-600}
python=/usr/bin/python3

if [ -z "$runtime" ] || [ ! -x "$runtime" ]; then
	echo "run.sh: runtime $2 not found" >&2
	exit 2
fi
runtime=$(realpath "$runtime")
if [ ! -d "$tests" ] || [ ! -x "$init" ]; then
	echo "run.sh: $out is not prepared: run tests/conformance/crun/build.sh $out" >&2
	exit 2
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "run.sh: run as root (the suite creates namespaces, mounts and cgroups)" >&2
	exit 2
fi

# Cleanup below deletes whatever state roots it finds in the suite's cwd, so two runs
# must not share OUTDIR.
exec 9>"$out/.run.lock"
if ! flock -n 9; then
	echo "run.sh: another run is using $out" >&2
	exit 1
fi

mkdir -p "$results"
rm -f "$results"/*.tap "$results"/*.log "$results"/summary.txt

# Every cgroup hierarchy mounted here (v1 controllers, v2, or both on a hybrid host).
cgroup_roots() {
	awk '{ split($0, p, " - "); split(p[2], f, " ");
	       if (f[1] == "cgroup" || f[1] == "cgroup2") print $5 }' /proc/self/mountinfo | sort -u
}

# The cgroups the suite creates by fixed names, at the top of each hierarchy (the
# container cgroups it names by cgroupsPath all start with "test", and crun's default
# path is the id, test-*).
named_cgroups() {
	local root d
	while read -r root; do
		for d in "$root"/frozen "$root"/cgrouptest "$root"/testdir "$root"/test*; do
			[ -d "$d" ] && echo "$d"
		done
	done < <(cgroup_roots)
	return 0
}

# Those present before the run are someone else's: never removed.
cgroups_before=$(named_cgroups)

# The suite's tempfile.mkdtemp() calls without dir= (rootfs for chown_rootfs_to cases)
# land in TMPDIR and are never removed: give each file its own, dropped afterwards.
# Under /tmp rather than OUTDIR: those cases need every parent directory traversable
# by the container's non-root user.
tmp_base=$(mktemp -d "${TMPDIR:-/tmp}/sbx-crun-suite.XXXXXX")
chmod 755 "$tmp_base"
# sitecustomize.py thaws the same cgroups before the suite drops a state root, and
# moves a root it could not empty into $kept (see there).
printf '%s\n' "$cgroups_before" >"$tmp_base/cgroups-before"
kept=$out/kept-state
mkdir -p "$kept"

# Unmounts anything left mounted below $1 (deepest first) and removes it.
remove_tree() {
	local dir=$1 m
	[ -e "$dir" ] || return 0
	while read -r m; do
		umount -l "$m" 2>/dev/null || true
	done < <(awk -v d="$dir/" 'substr($5, 1, length(d)) == d { print $5 }' /proc/self/mountinfo | sort -r)
	rm -rf --one-file-system "$dir" 2>/dev/null || true
	if [ -e "$dir" ]; then
		echo "run.sh: could not remove $dir" >&2
		return 1
	fi
}

# Deletes every container in a state root with the runtime itself (delete -f kills it
# and removes its cgroup), by `list` and, in case list misbehaves, by directory name
# (names with @ or a dot are a runtime's caches and locks). Fails when one is left.
delete_containers() {
	local root=$1 id left=0 ids
	[ -d "$root" ] || return 0
	ids=$({
		timeout 30 "$runtime" --root "$root" list -q 2>/dev/null || true
		find "$root" -mindepth 1 -maxdepth 1 -type d ! -name '@*' ! -name '.*' -printf '%f\n'
	} | sort -u)
	while read -r id; do
		[ -n "$id" ] || continue
		if timeout 30 "$runtime" --root "$root" delete -f "$id" >/dev/null 2>&1; then
			echo "# run.sh: deleted leftover container $id"
		elif [ -d "$root/$id" ]; then
			echo "# run.sh: leftover container $id could not be deleted, $root left in place"
			left=1
		fi
	done <<<"$ids"
	return $left
}

# The suite's named cgroups that this run created.
new_cgroups() {
	local c
	while read -r c; do
		[ -n "$c" ] || continue
		grep -qxF "$c" <<<"$cgroups_before" || echo "$c"
	done < <(named_cgroups)
	return 0
}

# test_delete (on v1) freezes a container's init in a "frozen" cgroup of its own to
# make delete -f fail, and leaves it frozen when its own rmdir fails: thaw what this
# run's cgroups froze, so that the SIGKILL delete -f queued is delivered.
thaw_new_cgroups() {
	local c f
	while read -r c; do
		[ -n "$c" ] || continue
		while read -r f; do
			case $f in
			*/freezer.state) grep -q FROZEN "$f" && echo THAWED >"$f" ;;
			*/cgroup.freeze) grep -qx 1 "$f" && echo 0 >"$f" ;;
			esac
		done < <(find "$c" \( -name freezer.state -o -name cgroup.freeze \) 2>/dev/null)
	done < <(new_cgroups)
	return 0
}

# What a file left behind: containers in its state roots (.testsuite-run-PID, which
# the suite removes itself unless it was killed), those roots, its TMPDIR, and the
# suite's named cgroups that this run created and that are now empty (rmdir refuses
# a cgroup with processes or children, so nothing live is removed).
cleanup_after_file() {
	local log=$1 tmp=$2 ok=0 d r c i
	thaw_new_cgroups 2>>"$log" || true
	for d in "$src"/.testsuite-run-* "$kept"/*; do
		[ -d "$d" ] || continue
		r=$d
		[ -d "$d/root" ] && r=$d/root
		# A root whose containers survive stays, for the next file's cleanup to retry
		# and for a human to see: removing it would orphan them.
		if ! delete_containers "$r" >>"$log"; then
			ok=1
			continue
		fi
		remove_tree "$d" 2>>"$log" || ok=1
	done
	remove_tree "$tmp" 2>>"$log" || ok=1
	while read -r c; do
		[ -n "$c" ] || continue
		# A thawed or just killed process takes a moment to leave its cgroup.
		for i in 1 2 3 4 5 6 7 8 9 10; do
			[ -z "$(find "$c" -name cgroup.procs -exec cat {} + 2>/dev/null)" ] && break
			[ "$i" -lt 10 ] && sleep 0.2
		done
		find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null || true
		if [ -d "$c" ]; then
			echo "# run.sh: cgroup $c is not empty, left in place" >>"$log"
			ok=1
		fi
	done < <(new_cgroups)
	return $ok
}

# shellcheck disable=SC2317 # called by the EXIT trap
cleanup_all() {
	rm -rf --one-file-system "$tmp_base" 2>/dev/null || true
}
trap cleanup_all EXIT

# Counts TAP points: prints "ok not_ok skip plan".
count_tap() {
	awk '
		/^1\.\.[0-9]+/ { split($0, a, /\.\./); plan = a[2] + 0 }
		/^ok / { ok++; if (toupper($0) ~ /# *SKIP/) skip++ }
		/^not ok / { nok++ }
		END { printf "%d %d %d %d\n", ok, nok, skip, plan }' "$1"
}

if [ -n "${SBX_CONFORMANCE_TESTS:-}" ]; then
	read -ra files <<<"$SBX_CONFORMANCE_TESTS"
else
	files=()
	for f in "$tests"/test_*.py; do
		files+=("$(basename "$f")")
	done
fi

status=0
t_ok=0 t_nok=0 t_skip=0 t_missing=0
start=$(date +%s)
summary=$results/summary.txt
printf '# file\tpassed\tfailed\tskipped\tmissing\tseconds\texit\n' >"$summary.files"

for f in "${files[@]}"; do
	tap=$results/$f.tap
	log=$results/$f.log
	tmp=$tmp_base/${f%.py}
	mkdir -p "$tmp"
	chmod 755 "$tmp"
	t0=$(date +%s)
	rc=0
	# PYTHONPATH: libmount.py and sitecustomize.py (per-call timeouts, cleanup before
	# the suite's rmtree of its state root). No bytecode: it would land in the repo.
	# Unbuffered: a file killed by its timeout keeps the TAP lines of its finished cases.
	env_args=(
		OCI_RUNTIME="$runtime" INIT="$init" TMPDIR="$tmp" SHELL=/bin/bash
		PYTHONPATH="$here" PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 SBX_CONFORMANCE_SITE=1
		SBX_CONFORMANCE_CGROUPS_BEFORE="$tmp_base/cgroups-before" SBX_CONFORMANCE_KEEP="$kept"
	)
	case $f in
	test_terminal.py | test_tty.py)
		# These run only when stdout is a tty: script(1) gives them a pty for stdin,
		# stdout and stderr; stderr goes back to the log inside it, and the pty's
		# CRLF is undone.
		(cd "$src" && env "${env_args[@]}" timeout -k 10 "$file_timeout" \
			script -qec "exec $python tests/$(printf %q "$f") 2>>$(printf %q "$log")" /dev/null \
			</dev/null >"$tap.raw" 2>>"$log") || rc=$?
		tr -d '\r' <"$tap.raw" >"$tap"
		rm -f "$tap.raw"
		;;
	*)
		# stdin an empty pipe, not /dev/null: Debian's crun 1.8.1 fchowns stdio that is
		# not a tty to the container's root, devices included (crun issue 1845), so the
		# reference run would hand the host's /dev/null to a mapped id.
		(cd "$src" && env "${env_args[@]}" timeout -k 10 "$file_timeout" \
			"$python" "tests/$f" < <(:) >"$tap" 2>>"$log") || rc=$?
		;;
	esac
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "# run.sh: $f killed after ${file_timeout}s" >>"$log"
		status=1
	fi
	cleanup_after_file "$log" "$tmp" || status=1
	secs=$(($(date +%s) - t0))

	read -r ok nok skip plan < <(count_tap "$tap")
	missing=$((plan > ok + nok ? plan - ok - nok : 0))
	line="crun/$f: $ok passed, $nok failed, $skip skipped"
	[ "$missing" -gt 0 ] && line+="; plan $plan, $missing missing (exit $rc)"
	echo "$line"
	printf '%s\t%d\t%d\t%d\t%d\t%d\t%d\n' "$f" "$ok" "$nok" "$skip" "$missing" "$secs" "$rc" >>"$summary.files"
	t_ok=$((t_ok + ok)) t_nok=$((t_nok + nok)) t_skip=$((t_skip + skip))
	t_missing=$((t_missing + missing))
done

wall=$(($(date +%s) - start))
{
	echo "runtime: $runtime"
	echo "points: $t_ok passed (of which $t_skip skipped), $t_nok failed, $t_missing missing"
	echo "wall: ${wall}s"
	cat "$summary.files"
} >"$summary"
rm -f "$summary.files"
echo "crun: $t_ok passed (of which $t_skip skipped), $t_nok failed, $t_missing missing; ${wall}s"
exit $status
