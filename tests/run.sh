#!/bin/bash
# Runs the black-box suites against the built binary: `make check` calls this.
#   SBX_OCI=path     binary under test (default: ../sbx-oci)
#   SBX_TESTS="a b"  only these suites (tests/a.bats ...)
#   SBX_MUST_WORK=1  a missing host feature fails the test instead of skipping it
#   SBX_ROUNDS=N     the rounds of the two 200-round loops (a mount race, cgroup
#                    cycles); tests/asan.sh runs 50, for the code's memory safety
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export SBX_OCI=${SBX_OCI:-$here/../sbx-oci}
export SBX_FIXTURES=${SBX_FIXTURES:-$here/.tmp/fixtures}

[ "$(id -u)" = 0 ] || { echo "tests/run.sh: the suites need root (they create namespaces, mounts and cgroups)" >&2; exit 1; }
command -v bats >/dev/null || { echo "tests/run.sh: bats is not installed (apt-get install bats)" >&2; exit 1; }
command -v jq >/dev/null || { echo "tests/run.sh: jq is not installed (apt-get install jq)" >&2; exit 1; }

"$here/helpers/build-fixtures.sh" "$SBX_FIXTURES"

suites=()
if [ -n "${SBX_TESTS:-}" ]; then
	for t in $SBX_TESTS; do suites+=("$here/$t.bats"); done
else
	suites=("$here"/*.bats)
fi
exec bats --timing "${suites[@]}"
