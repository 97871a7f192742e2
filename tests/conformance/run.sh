#!/bin/bash
# The conformance stage of `make check`: crun's own test suite, from Debian's crun
# source package (crun/build.sh), run against sbx-oci and, in the same run, against
# runc and crun (Debian's: the peers a user would otherwise pick). summarize.py judges
# sbx-oci's points against expected-failures.txt (the stage fails on a failing point
# not listed there with its reason) and prints the three side by side.
#
# This project builds and runs third-party code only when Debian's archive or npm
# ships it; opencontainers/runtime-tools' validation suite is in neither, so it is not
# run here (the behaviours it found wrong in this runtime have bats tests of our own:
# README.md in this directory lists them).
#   SBX_OCI=path                       binary under test (default: ../../sbx-oci)
#   SBX_CONFORMANCE_PEERS="runc crun"  the peers to run beside it (default: both; "" none)
#   SBX_CONFORMANCE_BUILD=dir          where the suite is prepared (default tests/.tmp/conformance)
#   SBX_CONFORMANCE_TESTS, RUN_TESTS   narrow the files and cases (crun/run.sh)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sbx_oci=${SBX_OCI:-$here/../../sbx-oci}
build=${SBX_CONFORMANCE_BUILD:-$here/../.tmp/conformance}
results=$build/results
peers=${SBX_CONFORMANCE_PEERS-runc crun}

[ "$(id -u)" = 0 ] || { echo "conformance: the suite needs root" >&2; exit 1; }
[ -x "$sbx_oci" ] || { echo "conformance: $sbx_oci is missing: build it first" >&2; exit 1; }
sbx_oci=$(cd "$(dirname "$sbx_oci")" && pwd)/$(basename "$sbx_oci")
rm -rf "$results"
mkdir -p "$results"

start=$SECONDS
"$here/crun/build.sh" "$build" || { echo "conformance: preparing crun's suite failed" >&2; exit 1; }
echo "=== conformance: crun's suite prepared in $((SECONDS - start)) s"

# runtime NAME: the path crun/run.sh is given for NAME
runtime() {
	case $1 in
	sbx-oci) echo "$sbx_oci" ;;
	runc) [ -x "$build/runc-reference" ] && echo "$build/runc-reference" ;;
	crun) [ -x "$build/crun-reference" ] && echo "$build/crun-reference" ;;
	*) return 1 ;;
	esac
}

# crun's test_exec.py exec_write_pid_file reads the exec'd process's pid file with
# re.match(r'\d{5}'): a pid under 10000 fails it, whatever the runtime. This VM's
# pid_max is 32768, so after hours of tests pids wrap under 10000 (one CI run here:
# sbx-oci and runc failed it, crun, run later, passed). Each runtime's run starts with
# the next pid at 10000 (the kernel's ns_last_pid, which CRIU sets the same way) when
# the pids are under that or near pid_max, so the point checks the pid file, not the
# pids' count.
pids_from_10000() {
	local last max
	last=$(cat /proc/sys/kernel/ns_last_pid 2>/dev/null) || return 0
	max=$(cat /proc/sys/kernel/pid_max)
	if [ "$last" -lt 10000 ] || [ "$last" -gt $((max - 15000)) ]; then
		echo 10000 2>/dev/null >/proc/sys/kernel/ns_last_pid ||
			echo "conformance: warning: pids run from $last (ns_last_pid not writable): exec_write_pid_file may fail" >&2
	fi
}

status=0
for name in sbx-oci $peers; do
	path=$(runtime "$name") || { echo "conformance: $name is not installed (apt-get install $name)" >&2; status=1; continue; }
	pids_from_10000
	start=$SECONDS
	echo "=== conformance: crun's suite against $name ($path)"
	"$here/crun/run.sh" "$build" "$path" "$results/$name" || status=1
	echo "=== conformance: $name ran in $((SECONDS - start)) s"
done
"$here/summarize.py" "$results" "$here/expected-failures.txt" || status=1
exit $status
