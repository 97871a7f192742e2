#!/bin/bash
# The conformance stage of `make check`: the two public suites that runc, crun and
# youki are judged by, built from the pinned snapshots in ../shared/conformance and
# run against the built binary, then compared with expected-failures.txt
# (summarize.py): the stage fails on any failing point that is not listed there
# with its reason.
#   SBX_OCI=path                       binary under test (default: ../../sbx-oci)
#   SBX_CONFORMANCE="runtime-tools crun"   the suites to run (default: both)
#   SBX_CONFORMANCE_BUILD=dir          where the suites are built (cached across runs)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sbx_oci=${SBX_OCI:-$here/../../sbx-oci}
build=${SBX_CONFORMANCE_BUILD:-$here/../.tmp/conformance}
results=$build/results
suites=${SBX_CONFORMANCE:-runtime-tools crun}

[ "$(id -u)" = 0 ] || { echo "conformance: the suites need root" >&2; exit 1; }
[ -x "$sbx_oci" ] || { echo "conformance: $sbx_oci is missing: build it first" >&2; exit 1; }
sbx_oci=$(cd "$(dirname "$sbx_oci")" && pwd)/$(basename "$sbx_oci")
rm -rf "$results"
mkdir -p "$results"

status=0
for suite in $suites; do
	[ -x "$here/$suite/run.sh" ] || { echo "conformance: unknown suite '$suite'" >&2; exit 2; }
	start=$SECONDS
	"$here/$suite/build.sh" "$build" || { echo "conformance: building $suite failed" >&2; status=1; continue; }
	echo "=== conformance: $suite (built in $((SECONDS - start)) s)"
	start=$SECONDS
	"$here/$suite/run.sh" "$build" "$sbx_oci" "$results" || status=1
	echo "=== conformance: $suite ran in $((SECONDS - start)) s"
done
"$here/summarize.py" "$results" "$here/expected-failures.txt" || status=1
exit $status
