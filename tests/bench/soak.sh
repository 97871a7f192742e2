#!/bin/bash
# SOAK_RUNS (default 1000) sequential `sbx-oci run` of bb-base in one hyperfine
# invocation (report.py compares the first and last 100 times), and what a leak would
# leave behind, counted before and after: host mounts, cgroups under our prefix, state
# dirs, fds handed to the container, processes still running the runtime binary.
source "$(dirname "$0")/lib.sh"
N=${SOAK_RUNS:-1000}
out=$RESULTS/soak-leaks.tsv

# the fd check runs busybox ls in the same bundle shape: the fds the payload inherits
fdb=$BUNDLES/bb-fds
mkdir -p "$fdb"
jq '.process.args = ["/bin/busybox", "ls", "/proc/self/fd"] | .linux.cgroupsPath += "-fds"' \
	"$BUNDLES/bb-base/config.json" >"$fdb/config.json"

count() {
	echo "mountinfo_lines $(wc -l </proc/self/mountinfo)"
	echo "mounts_of_bench $(grep -cE "$W|sbx-oci" /proc/self/mountinfo || true)"
	echo "cgroups_under_prefix $(find /sys/fs/cgroup -mindepth 3 -type d -regex "/sys/fs/cgroup/[^/]*$CG_PREFIX/.*" | wc -l)"
	echo "state_dirs $(find "$STATE/sbx-oci" -mindepth 1 -maxdepth 1 ! -name '@*' | wc -l)"
	echo "container_fds $("${SBX[@]}" run --bundle "$fdb" "fds-$$" </dev/null | wc -l)"
	echo "runtime_processes $(for p in /proc/[0-9]*; do readlink "$p/exe" 2>/dev/null; done | grep -cxF "$SBX_OCI" || true)"
}
before=$(count)
RUNS=$N WARMUP=0 hf soak -n "sbx-oci run bb-base" "$(rt sbx-oci) run --bundle $BUNDLES/bb-base soak-{id}"
after=$(count)

printf 'what\tbefore\tafter\n' >"$out"
join <(sort <<<"$before") <(sort <<<"$after") | tr ' ' '\t' >>"$out"
cat "$out"
# mountinfo_lines counts the whole host, where other jobs may mount; the rest are ours
if awk -F'\t' 'NR > 1 && $1 != "mountinfo_lines" && $3 > $2 { bad = 1 } END { exit !bad }' "$out"; then
	echo "soak.sh: LEAK after $N runs (above)" >&2
	exit 1
fi
