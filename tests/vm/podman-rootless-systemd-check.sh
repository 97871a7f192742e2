#!/bin/bash
# Inside the systemd guest (run-systemd-check.sh, VM_SYSTEMD=1): rootless podman as a
# user of a systemd host has it. A lingering user (user@UID.service and its bus run
# without a login, Debian's dbus-user-session) with subordinate ids; podman's own
# defaults there (cgroup_manager "systemd": it passes --systemd-cgroup and a
# user.slice:libpod:ID cgroupsPath, and the runtime runs as uid 0 of the user's
# namespace, where it must reach the user's own manager over the user's bus). The
# same cases for each runtime; one line per case ("podman-rootless-CASE RUNTIME
# pass|FAIL: why").
#   podman-rootless-systemd-check.sh SNAP RUNTIME=PATH...
#     SNAP holds podman-rootfs/ (busybox, alloc)
set -uo pipefail
snap=$1
shift
note() { echo "podman-rootless-$1 $2 $3"; }
u=sbxpod
id -u "$u" >/dev/null 2>&1 || useradd -m -s /bin/sh "$u" || exit 2
uid=$(id -u "$u")
grep -q "^$u:" /etc/subuid || usermod --add-subuids 300000-365535 --add-subgids 300000-365535 "$u" || exit 2
rt=/run/user/$uid
loginctl enable-linger "$u" || exit 2
trap 'loginctl disable-linger "$u"' EXIT
for _ in $(seq 150); do [ -S "$rt/bus" ] && break; sleep 0.2; done
[ -S "$rt/bus" ] || { echo "podman-rootless: no user bus at $rt/bus" >&2; exit 2; }
# the runtimes where the user can run them
mkdir -p /tmp/sbx-rootless && chmod 755 /tmp/sbx-rootless
AS_USER=(setpriv --reuid="$uid" --regid="$(id -g "$u")" --init-groups env -i PATH=/usr/bin:/bin:/usr/sbin:/sbin
	HOME="/home/$u" XDG_RUNTIME_DIR="$rt" DBUS_SESSION_BUS_ADDRESS="unix:path=$rt/bus")
P=("${AS_USER[@]}" podman --storage-driver vfs)
field() { "${AS_USER[@]}" systemctl --user show "$1" -p "$2" --value 2>/dev/null; }
(cd /tmp && tar -C "$snap/podman-rootfs" -c . | "${P[@]}" import -q --change 'ENV PATH=/bin' - localhost/sbx-busybox >/dev/null) ||
	{ echo "podman-rootless: podman import failed" >&2; exit 2; }
echo "podman-rootless: podman info: $(cd /tmp && "${P[@]}" info --format '{{.Host.CgroupManager}} {{.Host.CgroupsVersion}}' 2>&1)"

check_runtime() {
	local name=$1 path=$2 id unit cg pid out
	cp "$path" "/tmp/sbx-rootless/$name" && chmod 755 "/tmp/sbx-rootless/$name"
	local R=("${P[@]}" --runtime "/tmp/sbx-rootless/$name")
	cd /tmp || return
	# --ulimit nproc: contrib's drop-in (installed by the rootful check, as users have
	# it) asks for 32768, above this small guest's hard limit for a user (3484), and
	# runc and crun then refuse the container in setrlimit
	if ! out=$("${R[@]}" run -d --name "r-$name" --network none --memory 64m --pids-limit 32 --ulimit nproc=1024:1024 \
		localhost/sbx-busybox sleep 1000 2>&1); then
		note start "$name" "FAIL: $out"
		return
	fi
	note start "$name" pass
	id=$out
	unit=libpod-$id.scope
	pid=$("${R[@]}" inspect -f '{{.State.Pid}}' "r-$name")
	cg=$(field "$unit" ControlGroup)
	out="$(field "$unit" Delegate) $cg $(field "$unit" MemoryMax) $(field "$unit" TasksMax)"
	[ "$out" = "yes /user.slice/user-$uid.slice/user@$uid.service/user.slice/$unit 67108864 32" ] &&
		note unit "$name" pass || note unit "$name" "FAIL: systemctl --user show $unit: $out"
	out=$(grep '^0::' "/proc/$pid/cgroup")
	[ "$out" = "0::$cg" ] && note init-in-scope "$name" pass ||
		note init-in-scope "$name" "FAIL: the init is in $out, the unit's cgroup is $cg"
	out=$("${R[@]}" exec "r-$name" cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max 2>&1 | tr '\n' ' ')
	[ "$out" = "67108864 32 " ] && note limits "$name" pass || note limits "$name" "FAIL: exec saw memory.max pids.max '$out'"
	"${R[@]}" exec "r-$name" /alloc 128 >/dev/null 2>&1
	out=$?
	[ "$out" = 137 ] && note oom "$name" pass || note oom "$name" "FAIL: a 128 MiB allocation under 64 MiB ended $out, not 137"
	out=$("${R[@]}" rm -f -t 0 "r-$name" 2>&1 >/dev/null)
	out+=$("${AS_USER[@]}" systemctl --user list-units --all --no-legend "$unit" 2>&1)
	[ -z "$out" ] && note rm "$name" pass || note rm "$name" "FAIL: left after rm -f: $out"
}

for spec in "$@"; do
	check_runtime "${spec%%=*}" "${spec#*=}"
done
"${P[@]}" rm -af -t 0 >/dev/null 2>&1
"${P[@]}" rmi -af >/dev/null 2>&1
exit 0
