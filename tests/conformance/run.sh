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

status=0
for name in sbx-oci $peers; do
	path=$(runtime "$name") || { echo "conformance: $name is not installed (apt-get install $name)" >&2; status=1; continue; }
	start=$SECONDS
	echo "=== conformance: crun's suite against $name ($path)"
	"$here/crun/run.sh" "$build" "$path" "$results/$name" || status=1
	echo "=== conformance: $name ran in $((SECONDS - start)) s"
done
"$here/summarize.py" "$results" "$here/expected-failures.txt" || status=1
exit $status
