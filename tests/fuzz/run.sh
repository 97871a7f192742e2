#!/bin/bash
# Build the libFuzzer target with clang (ASan + UBSan) and run it for SECONDS.
#   tests/fuzz/run.sh [SECONDS]        (default 60; CI uses a bounded run)
# Crashes are written to tests/fuzz/artifacts/ and fail the run; inputs worth keeping
# go to tests/fuzz/corpus/ as regression seeds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
secs=${1:-60}
build=${SBX_BUILD_DIR:-$top}
clang=$(command -v clang || command -v clang-14 || true)
[ -n "$clang" ] || { echo "fuzz: clang is needed (apt-get install clang)" >&2; exit 1; }
[ -f "$build/build-config.h" ] || { echo "fuzz: run ./configure first (needs build-config.h)" >&2; exit 1; }
out=$here/.build
mkdir -p "$out" "$here/artifacts"
srcs=(runtime/base/json.c runtime/base/json_parse.c oci/vocab.c oci/vocab_caps.c oci/vocab_mount.c oci/config.c oci/config_linux.c oci/validate.c oci/state.c oci/resources.c
	oci/seccomp_config.c runtime/base/error.c runtime/base/util.c)
"$clang" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -std=gnu11 \
	-I"$top" -I"$build" $(pkg-config --cflags yajl libcap mount) \
	"$here/fuzz_config.c" "${srcs[@]/#/$top/}" -o "$out/fuzz-config" $(pkg-config --libs yajl libcap mount)
# a scratch copy of the seed corpus: the fuzzer adds to it, the committed seeds stay small
work=$out/corpus
mkdir -p "$work"
cp -n "$here"/corpus/* "$work"/ 2>/dev/null || true
cd "$here/artifacts"
"$out/fuzz-config" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 "$work"
