#!/bin/bash
# Peak RSS (GNU time %M, KiB) of `RT run`, RSS_N runs each, written to results/rss.tsv.
# %M is the largest of the runtime and the children it reaps: with busybox /bin/true the
# payload is small, so bb-base shows the runtime's own peak; with python it is python's.
source "$(dirname "$0")/lib.sh"
N=${RSS_N:-20}
out=$RESULTS/rss.tsv
printf 'command\tbundle\tn\tmin_kib\tmedian_kib\tmax_kib\n' >"$out"

measure() { # measure LABEL BUNDLE ARGV-STRING
	local label=$1 b=$2 v
	# shellcheck disable=SC2086 # $3 is an argv
	v=$(for _ in $(seq "$N"); do
		"${CLEAN_ENV[@]}" /usr/bin/time -f %M -o /dev/stdout $3 </dev/null 2>/dev/null | tail -1
	done | sort -n)
	[ "$(wc -l <<<"$v")" = "$N" ] || { echo "rss.sh: $label $b failed" >&2 && exit 1; }
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$b" "$N" "$(head -1 <<<"$v")" \
		"$(sed -n "$(((N + 1) / 2))p" <<<"$v")" "$(tail -1 <<<"$v")" | tee -a "$out"
}
for b in bb-base py; do
	for r in "${RUNTIMES[@]}"; do
		measure "$r run" "$b" "$(rt "$r") run --bundle $BUNDLES/$b rss-{id}"
	done
	measure floor "$b" "$(floor "$b")"
done
measure direct bb-base "$W/rootfs/busybox/bin/true"
