#!/bin/bash
# Removes what a benchmark run (also an interrupted one) leaves outside the scratch
# dir's bundles: containers in our own state roots, the tmpfs they live on, then the
# cgroups under our prefix, deepest first. rmdir only: a cgroup that still has a process stays and is reported.
source "$(dirname "$0")/lib.sh"
for r in "${RUNTIMES[@]}"; do
	read -ra c <<<"$(rt "$r")"
	c=("${c[@]:1}")
	[ -d "$STATE/$r" ] || continue
	for id in $("${c[@]}" list -q 2>/dev/null); do
		"${c[@]}" delete -f "$id" >/dev/null 2>&1 || echo "cleanup.sh: $r delete -f $id failed" >&2
	done
done
# the state roots' tmpfs (bundles.sh), once nothing is left in it
if mountpoint -q "$STATE" && [ -z "$(find "$STATE" -mindepth 2 -maxdepth 2 ! -name '@*' 2>/dev/null)" ]; then
	umount "$STATE" || echo "cleanup.sh: could not unmount $STATE" >&2
fi
find /sys/fs/cgroup -mindepth 2 -depth -type d -regex "/sys/fs/cgroup/[^/]*$CG_PREFIX\(/.*\)?" |
	while read -r d; do rmdir "$d" 2>/dev/null || echo "cleanup.sh: kept $d (not empty)" >&2; done
