#!/bin/bash
# Inside the systemd guest (run-systemd-check.sh, VM_SYSTEMD=1): rootful podman as a
# systemd host has it. Debian's containers.conf is left as shipped, so podman picks
# its own defaults for a host whose PID 1 is systemd (cgroup_manager "systemd",
# events and logs in the journal) and passes --systemd-cgroup and a
# machine.slice:libpod:ID cgroupsPath; contrib/podman/sbx-oci.conf is the only
# drop-in, as contrib/podman/README.md tells users to install it. The same cases for
# each runtime; one line per case ("podman-CASE RUNTIME pass|FAIL: why").
#   podman-systemd-check.sh SNAP DROPIN RUNTIME...
#     SNAP holds sbx-oci and podman-rootfs/ (busybox, alloc); DROPIN is contrib's
#     sbx-oci.conf; RUNTIME is a name podman knows (sbx-oci, runc, crun)
set -uo pipefail
snap=$1 dropin=$2
shift 2
note() { echo "podman-$1 $2 $3"; }

# Podman's storage on a tmpfs: the guest's root is itself an overlay, and overlay
# does not take an overlay upper layer.
mkdir -p /var/lib/containers /etc/containers/containers.conf.d
mount -t tmpfs tmpfs /var/lib/containers || exit 2
trap 'podman rm -af -t 0 >/dev/null 2>&1; podman rmi -af >/dev/null 2>&1; umount -l /var/lib/containers' EXIT
# The drop-in's runtime table, with the binary under test first.
sed "s|^sbx-oci = \[|sbx-oci = [\n  \"$snap/sbx-oci\",|" "$dropin" >/etc/containers/containers.conf.d/sbx-oci.conf
out=$(podman info --format '{{.Host.CgroupManager}} {{.Host.CgroupsVersion}}' 2>&1)
echo "podman-check: podman info: $out"
tar -C "$snap/podman-rootfs" -c . | podman import -q --change 'ENV PATH=/bin' - localhost/sbx-busybox >/dev/null || exit 2

field() { systemctl show "$1" -p "$2" --value 2>/dev/null; }

check_runtime() {
	local rt=$1 name="p-$1" id cg unit pid out
	local P=(podman --runtime "$rt")
	if ! out=$("${P[@]}" run -d --name "$name" --network none --memory 64m --pids-limit 32 \
		localhost/sbx-busybox sleep 1000 2>&1); then
		note start "$rt" "FAIL: $out"
		return
	fi
	note start "$rt" pass
	id=$out
	unit="libpod-$id.scope"
	pid=$(podman inspect -f '{{.State.Pid}}' "$name")
	cg=$(field "$unit" ControlGroup)
	out="$(field "$unit" Delegate) $cg $(field "$unit" MemoryMax) $(field "$unit" TasksMax)"
	[ "$out" = "yes /machine.slice/$unit 67108864 32" ] && note unit "$rt" pass || note unit "$rt" "FAIL: systemctl show $unit: $out"
	out=$(grep '^0::' "/proc/$pid/cgroup")
	[ "$out" = "0::$cg" ] && note init-in-scope "$rt" pass || note init-in-scope "$rt" "FAIL: the init is in $out, the unit's cgroup is $cg"
	# conmon, which podman starts, is in a scope of its own beside the container's
	out=$(field "libpod-conmon-$id.scope" ActiveState)
	[ "$out" = active ] && note conmon-scope "$rt" pass || note conmon-scope "$rt" "FAIL: libpod-conmon-$id.scope is '$out'"
	out=$("${P[@]}" exec "$name" cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max 2>&1 | tr '\n' ' ')
	[ "$out" = "67108864 32 " ] && note exec "$rt" pass || note exec "$rt" "FAIL: exec saw memory.max pids.max '$out'"
	"${P[@]}" exec "$name" /alloc 128 >/dev/null 2>&1
	out=$?
	[ "$out" = 137 ] && note oom "$rt" pass || note oom "$rt" "FAIL: a 128 MiB allocation under 64 MiB ended $out, not 137"
	out=$(podman stats --no-stream --format '{{.MemUsage}}' "$name" 2>&1)
	case $out in
	*"/ 67.11MB") note stats "$rt" pass ;;
	*) note stats "$rt" "FAIL: podman stats: $out" ;;
	esac
	# (sleep as PID 1 ignores SIGTERM: podman warns, and kills it after 2 s)
	podman stop -t 2 "$name" >/dev/null 2>&1
	out=$(podman inspect -f '{{.State.Status}}' "$name" 2>&1)
	[ "$out" = exited ] && note stop "$rt" pass || note stop "$rt" "FAIL: after podman stop: $out"
	out=$(podman rm -f "$name" 2>&1 >/dev/null)
	out+="$(systemctl list-units --all --no-legend "libpod-$id.scope" "libpod-conmon-$id.scope" 2>&1)"
	out+="$(ls -d "/sys/fs/cgroup$cg" 2>/dev/null)"
	[ -z "$out" ] && note rm "$rt" pass || note rm "$rt" "FAIL: left after rm -f: $out"
	# a foreground run with --rm: its output, and no unit left that was not there before
	local before left
	before=$(systemctl list-units --all --no-legend --plain 'libpod-*.scope' 2>&1)
	if out=$("${P[@]}" run --rm --network none --memory 64m localhost/sbx-busybox \
		sh -c 'echo hi; cat /proc/self/cgroup' 2>&1); then
		left=$(comm -13 <(echo "$before" | sort) <(systemctl list-units --all --no-legend --plain 'libpod-*.scope' 2>&1 | sort))
		case "$out" in
		"hi"$'\n'"0::/") [ -z "$left" ] && note run-rm "$rt" pass || note run-rm "$rt" "FAIL: left: $left" ;;
		*) note run-rm "$rt" "FAIL: output '$out'" ;;
		esac
	else
		note run-rm "$rt" "FAIL: $out"
	fi
}

# podman knows runc and crun by name, sbx-oci through the drop-in's table
for rt in "$@"; do
	check_runtime "$rt"
done
exit 0
