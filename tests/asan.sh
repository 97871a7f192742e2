#!/bin/bash
# The bats suites against an AddressSanitizer + UBSan build of sbx-oci.
#   tests/asan.sh                 build into tests/.tmp/asan, run the suites
#   SBX_TESTS="a b" tests/asan.sh only these suites
# Sanitizer reports go to files (the suites compare stderr, and a report must not
# hide among expected messages); any report fails the stage and is printed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${SBX_ASAN_DIR:-$here/.tmp/asan}
logs=$build/reports

# A separate tree: the main build stays static and untouched. The tracked files when
# this is a git checkout, otherwise the source tree as it is.
rm -rf "$build"
mkdir -p "$build/src"
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$root" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$build/src")
else
	(cd "$root" && tar --exclude=./tests/.tmp -cf - .) | tar -xf - -C "$build/src"
fi
(
	cd "$build/src"
	./autogen.sh >/dev/null 2>&1
	./configure --enable-asan --enable-werror >/dev/null
	make -j"$(nproc)" sbx-oci libsbx-warm.so tests/unit/mount_options_test tests/unit/json_test tests/unit/sha256_test >/dev/null
) || { echo "asan: the sanitizer build failed" >&2; exit 1; }
# The unit tests under the sanitizers, against glibc's shared libcap and libmount.
for t in mount_options_test json_test sha256_test; do
	"$build/src/tests/unit/$t" >/dev/null || { echo "asan: unit test $t failed" >&2; exit 1; }
done
echo "asan: unit tests passed (mount_options_test json_test sha256_test)"

mkdir -p "$logs"
# The leak check runs at exit of the runtime; a clone that _exit()s skips it, the
# parent's own allocations are checked. halt_on_error: one UB report ends the process.
export ASAN_OPTIONS="log_path=$logs/asan:detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1:halt_on_error=1"
# The 500-run leak suite and the CPython workload measure the host and the
# profile, not the runtime's memory safety, and take most of the time: skipped here.
# So are the suites that drive no code of this build's: packaging (make dist, then
# a build from the tarball with the system's compiler: 74 s under this stage), and
# the Python client library's (contrib-python: 36 s), whose server-side paths the
# serve suites run here. CI's 90 minutes are the budget.
if [ -z "${SBX_TESTS:-}" ]; then
	SBX_TESTS=$(cd "$here" && ls *.bats | sed 's/\.bats$//' |
		grep -v -x -e leaks -e python -e packaging -e contrib-python | tr '\n' ' ')
fi
# The 200-round loops (a mount race, cgroup cycles) run 50 rounds here: the same
# code paths for the sanitizers, while the race's odds are the bats stage's job
# (the two took 118 s under this stage; 50 rounds save about 88 s).
rc=0
SBX_ROUNDS=50 SBX_OCI=$build/src/sbx-oci SBX_TESTS=$SBX_TESTS "$here/run.sh" || rc=$?
if compgen -G "$logs/*" >/dev/null; then
	echo "asan: sanitizer reports:" >&2
	for f in "$logs"/*; do
		echo "==> $f" >&2
		head -60 "$f" >&2
	done
	exit 1
fi
exit "$rc"
