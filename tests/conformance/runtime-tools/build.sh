#!/bin/bash
# build.sh OUTDIR: opencontainers/runtime-tools' validation suite, from the pinned
# snapshot in ../shared/conformance (never copied into this tree), built into
# OUTDIR/runtime-tools: runtimetest (static: it runs inside the containers) and
# validation/NAME/NAME.t for every test. Everything is vendored (GOFLAGS=-mod=vendor):
# nothing is downloaded. Skipped when OUTDIR holds a build of the same tarball.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
out=$1
shared=${SBX_SHARED:-$top/../shared}
tarball=$(ls "$shared"/conformance/runtime-tools-*.tar.gz 2>/dev/null | head -n1)
[ -f "$tarball" ] || { echo "runtime-tools: no snapshot in $shared/conformance" >&2; exit 1; }
command -v go >/dev/null || { echo "runtime-tools: go is not installed (apt-get install golang-go)" >&2; exit 1; }

sum=$(sha256sum "$tarball" | cut -d' ' -f1)
dir=$out/runtime-tools
if [ -f "$dir/.built" ] && [ "$(cat "$dir/.built")" = "$sum" ]; then
	exit 0
fi
rm -rf "$dir"
mkdir -p "$out"
tar -xzf "$tarball" -C "$out"
[ -d "$dir/validation" ] || { echo "runtime-tools: $tarball did not unpack into $dir" >&2; exit 1; }
export GOFLAGS=-mod=vendor GOCACHE=$out/go-cache GOPATH=$out/go-path GOTOOLCHAIN=local
cd "$dir"
# runtimetest runs in containers whose rootfs has no C library: static, as the
# suite's Makefile builds it (netgo, osusergo)
CGO_ENABLED=0 go build -tags "netgo osusergo" -o runtimetest ./cmd/runtimetest
for t in validation/*/; do
	name=$(basename "$t")
	[ -f "$t/$name.go" ] || continue
	go build -o "$t/$name.t" "./$t"
done
echo "$sum" >.built
