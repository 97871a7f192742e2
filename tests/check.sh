#!/bin/bash
# Every test stage, in order; what `make check` (the README's test command) and CI run.
#   SBX_STAGES="bats warm conformance asan compat fuzz vm clients kubernetes mcp jupyter"   the default: all of them
#   SBX_STAGES=bats make check               just the black-box suites (a few minutes)
#   SBX_FUZZ_SECONDS=120                     the bounded fuzz run
# Stages:
#   bats     tests/run.sh: the bats suites against the built binary (hybrid host)
#   warm     the sandbox suites again (sandbox.bats, sandbox-workloads.bats), every run
#            through `sbx-oci serve` as `python --connect` (SBX_VIA_CONNECT=1): a run
#            forked from the warm interpreter is what a one-shot run is
#   conformance  tests/conformance/run.sh: crun's own test suite, from Debian's crun
#            source package, against the built binary and, in the same run, runc and
#            crun; fails on a failing point of sbx-oci not in
#            tests/conformance/expected-failures.txt
#   compat   tests/compat/run.sh: CPython's regression tests (tests/compat/modules.txt)
#            bare and in `sbx-oci python` at its defaults, compared test by test; fails
#            on a difference not in tests/compat/intended-denials.txt; then numpy's
#            own test suite the same way (tests/compat/numpy.sh, numpy-denials.txt)
#   asan     tests/asan.sh: the suites again against an ASan+UBSan build
#   fuzz     (beside bats: its output is shown whole when it ends)
#            tests/fuzz/run.sh: libFuzzer over config/process/resources/state JSON
#   vm       (beside asan: its output is shown whole when it ends)
#            tests/vm/run-cgroup-suite.sh: cgroups.bats in a pure cgroup v2 QEMU guest, then
#            tests/vm/run-python-check.sh: `sbx-oci check` (the Python sandbox) and warm runs
#            through `serve` (tests/vm/serve-check.sh) in the same kind,
#            and tests/vm/run-crun-v2.sh: crun's cgroup test files there (their v2 cases),
#            and tests/vm/run-systemd-check.sh: the systemd cgroup driver of sbx-oci, runc
#            and crun, case by case, in a guest that boots Debian's systemd as PID 1
#   clients  tests/clients/run.sh: podman and containerd driving sbx-oci (when present)
#   kubernetes  tests/kubernetes/run.sh: a single-node Kubernetes 1.20 (built from
#            Debian's source, cached outside the tree) whose kubelet runs pods on
#            sbx-oci through containerd's RuntimeClass handler, and on runc beside it
#            (the two suites at once, each in a namespace of its own)
#   mcp      tests/mcp/run.sh: contrib/mcp's MCP server driven by the official SDK's
#            client over stdio and Streamable HTTP and by the MCP Inspector's CLI, and
#            three HTTP nodes behind nginx (tests/mcp/fleet.sh)
#   jupyter  tests/jupyter/run.sh: the sbx-oci kernelspec and provisioner driven by
#            nbclient (notebooks compared cell by cell with Debian's python3 kernel),
#            nbconvert, jupyter_client's KernelManager, ipykernel's and
#            jupyter_client's own tests (beside Debian's python3 kernel), and Debian's
#            Notebook server driven by headless Chromium (screenshots in tests/.tmp/jupyter)
# A failing stage does not stop the others; the exit status is non-zero if any failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# The stages need root: a user with sudo gets there through it (`make check` as is).
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || { echo "tests/check.sh: run make check as root (sudo is not installed)" >&2; exit 1; }
	exec sudo --preserve-env=SBX_STAGES,SBX_TESTS,SBX_MUST_WORK,SBX_FUZZ_SECONDS,SBX_CACHE "$0" "$@"
fi
stages=${SBX_STAGES:-bats warm conformance asan compat fuzz vm clients kubernetes mcp jupyter}
failed=()
summary=()

# The host's own device nodes, which every stage binds into containers: a stage that
# leaves one with another owner or mode (a chown meant for a container's stdio or its
# /dev landing on the host's node) fails, whatever its tests said. The one seen so far:
# Debian's crun 1.8.1 fchowns stdio that is not a tty to the container's root, devices
# included (crun issue 1845), so a crun run of a user-namespace bundle with /dev/null
# as stdin gave the host's /dev/null to 100000; every crun and runc command of the
# tests and the bench gets an empty pipe as stdin since. helpers/nodewatch.c watches
# the nodes with fanotify for the whole run and names the process that changed one.
nodes=(/dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty)
host_nodes() { stat -c '%n %u:%g %a' "${nodes[@]}" 2>&1; }
watch_dir=$(mktemp -d /tmp/sbx-check-nodes.XXXXXX)
watch_log=$watch_dir/changes
: >"$watch_log"
watch_pid=
k8s_build_pid=
vm_stages_pid=
fuzz_pid=
if gcc -O2 -o "$watch_dir/nodewatch" "$here/helpers/nodewatch.c" 2>"$watch_dir/build.log"; then
	"$watch_dir/nodewatch" "$watch_log" "${nodes[@]}" 2>>"$watch_dir/build.log" &
	watch_pid=$!
fi
# shellcheck disable=SC2317 # the EXIT trap
stop_watch() {
	[ -z "$watch_pid" ] || kill "$watch_pid" 2>/dev/null
	[ -z "$k8s_build_pid" ] || kill -- -"$k8s_build_pid" 2>/dev/null
	[ -z "$vm_stages_pid" ] || kill -- -"$vm_stages_pid" 2>/dev/null
	[ -z "$fuzz_pid" ] || kill -- -"$fuzz_pid" 2>/dev/null
	rm -rf "$watch_dir"
}
trap stop_watch EXIT

# The kubernetes stage's binaries, built from Debian's source when the cache outside
# the tree lacks them, took over 10 minutes of a cold CI run, with both cores busy
# while nothing else ran. The packages and the source are fetched now, in the
# foreground (apt's lock and the private apt state are not shared with the stages),
# and the build runs in the background at the lowest priority (nice 19: the stages'
# processes have ~60 times its weight on a shared core), in a session of its own so
# that the trap ends all of it. The stage waits for it, then finds the cache filled.
k8s_build_log=$watch_dir/kubernetes-build.log
case " $stages " in
*" kubernetes "*)
	if "$here/kubernetes/build.sh" --prepare >"$k8s_build_log" 2>&1; then
		setsid nice -n 19 "$here/kubernetes/build.sh" >>"$k8s_build_log" 2>&1 </dev/null &
		k8s_build_pid=$!
	fi
	;;
esac
wait_k8s_build() {
	[ -n "$k8s_build_pid" ] || return 0
	wait "$k8s_build_pid" || echo "check: the kubernetes build in the background failed; the stage builds again" >&2
	k8s_build_pid=
	cat "$k8s_build_log"
}

# Runs a stage's command in a subshell of its own, then writes to FILE the CPU time
# that the command and every process it waited for used (the subshell's cutime and
# cstime, in seconds): a stage's own cost, even while another stage runs beside it.
cpu_of() {
	local file=$1
	shift
	(
		"$@"
		rc=$?
		read -ra st </proc/$BASHPID/stat
		echo $(((st[15] + st[16]) / $(getconf CLK_TCK))) >"$file"
		exit $rc
	)
}

# run_stage [--beside] NAME COMMAND...: runs a stage and records its result in the
# summary. --beside: the stage runs beside others, so its output goes to its log
# alone (it is shown whole once it ends).
run_stage() {
	local beside= name start=$SECONDS rc before after seen
	[ "$1" != --beside ] || { beside=1 && shift; }
	name=$1
	shift
	[ -n "$beside" ] || echo "=== stage $name: $*"
	before=$(host_nodes)
	seen=$(wc -l <"$watch_log")
	if [ -n "$beside" ]; then
		echo "=== stage $name (beside the others): $*" >"$watch_dir/stage-$name.log"
		cpu_of "$watch_dir/cpu-$name" "$@" >>"$watch_dir/stage-$name.log" 2>&1
		rc=$?
	else
		cpu_of "$watch_dir/cpu-$name" "$@" 2>&1 | tee "$watch_dir/stage-$name.log"
		rc=${PIPESTATUS[0]}
	fi
	after=$(host_nodes)
	if [ "$before" != "$after" ]; then
		{
			echo "check: stage $name changed the host's device nodes:"
			diff <(echo "$before") <(echo "$after")
			if [ "$(wc -l <"$watch_log")" -gt "$seen" ]; then
				echo "check: who changed them (helpers/nodewatch.c):"
				tail -n +"$((seen + 1))" "$watch_log"
			else
				echo "check: the process that changed them is not known (nodewatch: $(cat "$watch_dir/build.log" 2>/dev/null || echo not running))"
			fi
		} | if [ -n "$beside" ]; then cat >>"$watch_dir/stage-$name.log"; else cat >&2; fi
		[ $rc != 0 ] || rc=99
	fi
	# files, not variables: a stage run beside the others is in a subshell
	printf '%-8s %s in %d s (CPU %s s)\n' "$name" "$([ $rc = 0 ] && echo passed || echo "FAILED ($rc)")" \
		$((SECONDS - start)) "$(cat "$watch_dir/cpu-$name" 2>/dev/null || echo ?)" >>"$watch_dir/summary"
	[ $rc = 0 ] || echo "$name" >>"$watch_dir/failed"
}

# The stages in the QEMU guests (vm) touch nothing of the host's that the others
# look at (their mounts, cgroups and processes are the guest's), and leave a core
# half idle (vm-systemd: 497 s, 230 s of CPU): they start once bats is done (with
# its leaks.bats, which counts the whole host's open files, and the fuzz stage
# beside it) and run beside warm, conformance and asan, the longest, whose end waits
# for them; compat, whose CPython tests are the most sensitive to a busy machine,
# comes after. (They were beside asan alone: its slot was the guests' 1100 s.) In a
# process group of their own, which the trap ends.
start_vm_stages() {
	[ -z "$vm_stages_pid" ] || return 0
	case " $stages " in *" vm "*) ;; *) return 0 ;; esac
	set -m
	(
		run_stage --beside vm "$here/vm/run-cgroup-suite.sh"
		run_stage --beside vm-python "$here/vm/run-python-check.sh"
		run_stage --beside vm-crun "$here/vm/run-crun-v2.sh"
		run_stage --beside vm-systemd "$here/vm/run-systemd-check.sh"
	) </dev/null &
	vm_stages_pid=$!
	set +m
}
wait_vm_stages() {
	[ -n "$vm_stages_pid" ] || return 0
	wait "$vm_stages_pid"
	vm_stages_pid=
	local name
	for name in vm vm-python vm-crun vm-systemd; do
		cat "$watch_dir/stage-$name.log" 2>/dev/null
	done
}

# The fuzz stage keeps one core busy for its bounded time and touches nothing of the
# host's (one process, its corpus in the tree), and the bats stage leaves most of the
# other core idle (1111 s of CPU in 1018 s): fuzz runs beside bats. In a process group
# of its own, which the trap ends.
start_fuzz_beside() {
	set -m
	run_stage --beside fuzz "$here/fuzz/run.sh" "${SBX_FUZZ_SECONDS:-120}" </dev/null &
	fuzz_pid=$!
	set +m
}
wait_fuzz() {
	[ -n "$fuzz_pid" ] || return 0
	wait "$fuzz_pid"
	fuzz_pid=
	cat "$watch_dir/stage-fuzz.log" 2>/dev/null
}

# What CI shows of a run is its tail: a failed stage's failing tests are said again
# there, each with the lines bats printed after it.
failed_tests() {
	local name log
	for name in "${failed[@]}"; do
		log=$watch_dir/stage-$name.log
		[ -s "$log" ] || continue
		echo "=== failed in $name"
		# bats' "not ok" with its diagnostics; summarize.py's unexpected conformance points
		grep -a -A 30 -e '^not ok' -e '^UNEXPECTED' "$log" | grep -av '^ok ' | head -150
	done
}

for stage in $stages; do
	case $stage in
	bats)
		case " $stages " in *" fuzz "*) start_fuzz_beside ;; esac
		run_stage bats "$here/run.sh"
		wait_fuzz
		;;
	warm)
		start_vm_stages
		SBX_VIA_CONNECT=1 SBX_TESTS="sandbox sandbox-workloads" run_stage warm "$here/run.sh"
		;;
	conformance)
		start_vm_stages
		run_stage conformance "$here/conformance/run.sh"
		;;
	compat)
		wait_vm_stages
		run_stage compat "$here/compat/run.sh"
		;;
	asan)
		start_vm_stages
		run_stage asan "$here/asan.sh"
		wait_vm_stages
		;;
	fuzz)
		# beside bats when both are asked for (above), on its own otherwise
		case " $stages " in *" bats "*) ;; *) run_stage fuzz "$here/fuzz/run.sh" "${SBX_FUZZ_SECONDS:-120}" ;; esac
		;;
	vm)
		# beside warm, conformance and asan when any of them is asked for (above), on
		# their own otherwise
		case " $stages " in *" warm "* | *" conformance "* | *" asan "*) ;; *) start_vm_stages && wait_vm_stages ;; esac
		;;
	clients)
		if [ -x "$here/clients/run.sh" ]; then
			run_stage clients "$here/clients/run.sh"
		else
			summary+=("clients  not present yet")
		fi
		;;
	kubernetes)
		wait_k8s_build
		run_stage kubernetes "$here/kubernetes/run.sh"
		;;
	mcp) run_stage mcp "$here/mcp/run.sh" ;;
	jupyter) run_stage jupyter "$here/jupyter/run.sh" ;;
	*)
		echo "check: unknown stage '$stage' (known: bats warm conformance compat asan fuzz vm clients kubernetes mcp jupyter)" >&2
		failed+=("$stage")
		;;
	esac
done

wait_fuzz
wait_vm_stages
echo "=== summary"
cat "$watch_dir/summary"
[ ${#summary[@]} = 0 ] || printf '%s\n' "${summary[@]}"
[ ! -s "$watch_dir/failed" ] || mapfile -t -O ${#failed[@]} failed <"$watch_dir/failed"
if [ ${#failed[@]} -gt 0 ]; then
	failed_tests
	echo "check: FAILED stages: ${failed[*]}" >&2
	exit 1
fi
