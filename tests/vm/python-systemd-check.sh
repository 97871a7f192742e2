#!/bin/bash
# Inside the systemd guest (run-systemd-check.sh, VM_SYSTEMD=1): `sbx-oci python` on a
# host whose PID 1 is systemd. Its sandbox's cgroup must be a scope that systemd made
# (Delegate=yes, in system.slice), with the memory and pids limits on the unit and in
# its files; an allocation over --memory is the sandbox's OOM kill; nothing is left,
# and nothing is made at the root of the hierarchy (/sys/fs/cgroup/sbx-oci).
# One line per case ("python-CASE sbx-oci pass|FAIL: why").
#   python-systemd-check.sh SBX_OCI   (libsbx-warm.so beside it, for serve)
set -uo pipefail
sbx=$1
note() { echo "python-$1 sbx-oci $2"; }
field() { systemctl show "$1" -p "$2" --value 2>/dev/null; }
units() { systemctl list-units --all --no-legend --plain 'sbx-oci-py-*.scope' 2>/dev/null | awk '{ print $1 }'; }
W=/tmp/python-check
mkdir -p "$W"

# 1. a run that waits: its unit, seen from outside while it runs
"$sbx" python --memory 64M --pids 32 --result "$W/wait.json" \
	-c 'import time; open("/tmp/up", "w").close(); time.sleep(30)' >"$W/wait.out" 2>&1 &
run=$!
unit=
for _ in $(seq 150); do
	unit=$(units | head -1)
	[ -n "$unit" ] && [ "$(field "$unit" ActiveState)" = active ] && break
	sleep 0.2
done
if [ -z "$unit" ]; then
	note scope "FAIL: no sbx-oci-py-*.scope while the run ran ($(cat "$W/wait.out"))"
else
	cg=$(field "$unit" ControlGroup)
	out="$(field "$unit" Delegate) $cg $(field "$unit" MemoryMax) $(field "$unit" TasksMax)"
	[ "$out" = "yes /system.slice/$unit 67108864 32" ] && note scope pass || note scope "FAIL: systemctl show $unit: $out"
	out="$(cat "/sys/fs/cgroup$cg/memory.max" "/sys/fs/cgroup$cg/pids.max" 2>&1 | tr '\n' ' ')"
	[ "$out" = "67108864 32 " ] && note limits pass || note limits "FAIL: memory.max pids.max: $out"
	# the python process itself is in the scope (or a cgroup below it)
	py=$(pgrep -f 'time.sleep\(30\)' | while read -r p; do [ "$p" != "$run" ] && grep -q "^0::$cg" "/proc/$p/cgroup" && echo "$p"; done)
	[ -n "$py" ] && note in-scope pass || note in-scope "FAIL: no process of the run in $cg"
fi
kill -TERM "$run" 2>/dev/null
wait "$run" 2>/dev/null
for _ in $(seq 50); do [ -z "$(units)" ] && break; sleep 0.2; done
out="$(units)$(ls -d /sys/fs/cgroup/sbx-oci 2>/dev/null)"
[ -z "$out" ] && note end pass || note end "FAIL: left after the run ended: $out"

# 2. over --memory: the sandbox's OOM kill, reported as such
"$sbx" python --memory 64M --result "$W/oom.json" -c 'b = bytearray(256 << 20); b[::4096] = b"x" * len(b[::4096])' \
	>"$W/oom.out" 2>&1
# (the numbers from the scope's cgroup, read after the sandbox had gone: the
# runtime's keeper held the scope, which systemd would have removed with them)
out=$(jq -c '[.oom_killed, .limits_hit, .cpu_scope]' "$W/oom.json" 2>&1)
[ "$out" = '[true,["memory"],"cgroup"]' ] && note oom pass || note oom "FAIL: result $(cat "$W/oom.json") ($(tail -2 "$W/oom.out"))"
out="$(units)$(ls -d /sys/fs/cgroup/sbx-oci 2>/dev/null)"
[ -z "$out" ] && note oom-end pass || note oom-end "FAIL: left after the OOM kill: $out"

# 3. as a user with a systemd manager of their own (lingering: user@UID.service and
#    its bus run without a login): the scope is the user manager's, in the subtree
#    systemd delegated to it, and --memory is enforced without root
user_case() {
	local u=sbxpy uid rt cg out
	id -u "$u" >/dev/null 2>&1 || useradd -m -s /bin/sh "$u" || { note user "FAIL: useradd"; return; }
	uid=$(id -u "$u")
	rt=/run/user/$uid
	loginctl enable-linger "$u" || { note user "FAIL: loginctl enable-linger"; return; }
	for _ in $(seq 150); do [ -S "$rt/bus" ] && break; sleep 0.2; done
	[ -S "$rt/bus" ] || { note user "FAIL: no user bus at $rt/bus (dbus-user-session)"; return; }
	# (serve finds libsbx-warm.so beside the binary)
	mkdir -p /tmp/sbx-user && cp "$sbx" /tmp/sbx-user/sbx-oci && cp "$(dirname "$sbx")/libsbx-warm.so" /tmp/sbx-user/ &&
		chmod 755 /tmp/sbx-user /tmp/sbx-user/sbx-oci /tmp/sbx-user/libsbx-warm.so
	# setpriv execs (runuser would stay between, and a signal to it not reach sbx-oci)
	U=(setpriv --reuid="$uid" --regid="$(id -g "$u")" --init-groups env -i PATH=/usr/bin:/bin HOME="/home/$u" XDG_RUNTIME_DIR="$rt" \
		DBUS_SESSION_BUS_ADDRESS="unix:path=$rt/bus" /tmp/sbx-user/sbx-oci)
	(cd /tmp && exec "${U[@]}" python --memory 64M --pids 32 -c 'import time; time.sleep(30)' >"$W/user.out" 2>&1) &
	local run=$! py=
	for _ in $(seq 150); do
		py=$(pgrep -u "$u" -f 'time.sleep\(30\)' | while read -r p; do grep -q '^0::.*/sbx-oci-py-[^/]*\.scope' "/proc/$p/cgroup" && echo "$p"; done 2>/dev/null | head -1)
		[ -n "$py" ] && break
		sleep 0.2
	done
	if [ -z "$py" ]; then
		note user "FAIL: no process of the run in a sbx-oci-py scope ($(cat "$W/user.out"))"
	else
		cg=$(sed -n 's/^0:://p' "/proc/$py/cgroup")
		cg=${cg%%.scope/*}
		cg=${cg%.scope}.scope
		out="$cg $(cat "/sys/fs/cgroup$cg/memory.max" "/sys/fs/cgroup$cg/pids.max" 2>&1 | tr '\n' ' ')"
		case $out in
		"/user.slice/user-$uid.slice/user@$uid.service/"*" 67108864 32 ") note user pass ;;
		*) note user "FAIL: the scope and its memory.max pids.max: $out" ;;
		esac
	fi
	kill -TERM "$run" 2>/dev/null
	wait "$run" 2>/dev/null
	(cd /tmp && "${U[@]}" python --memory 64M --result /tmp/user-oom.json \
		-c 'b = bytearray(256 << 20); b[::4096] = b"x" * len(b[::4096])' >"$W/user-oom.out" 2>&1)
	out=$(jq -c '[.oom_killed, .limits_hit]' /tmp/user-oom.json 2>&1)
	[ "$out" = '[true,["memory"]]' ] && note user-oom pass || note user-oom "FAIL: result $(cat /tmp/user-oom.json) ($(tail -2 "$W/user-oom.out"))"
	out=$(find "/sys/fs/cgroup/user.slice/user-$uid.slice/user@$uid.service" -name 'sbx-oci-py-*' 2>/dev/null)
	[ -z "$out" ] && note user-end pass || note user-end "FAIL: left: $out ($(cat "$W/user-oom.out"); $(runuser -u "$u" -- env XDG_RUNTIME_DIR="$rt" systemctl --user list-units --all --no-legend 'sbx-oci-py-*' 2>&1))"
}
user_case

# 5. serve, as root and as the user: the server in a scope of its own, its
#    sandboxes' cgroups (kept slots included) inside it, limits enforced, and nothing
#    left when it stops
serve_case() {
	local who=$1 base=$2 sock=/tmp/serve-$1.sock log=$W/serve-$1.log srv unit= scope out
	shift 2
	rm -f "$sock"
	(cd /tmp && exec "$@" serve --socket "$sock" >"$log" 2>&1) &
	for _ in $(seq 300); do grep -q "listening on" "$log" && break; sleep 0.2; done
	grep -q "listening on" "$log" || { note "serve-$who" "FAIL: the server did not start: $(cat "$log")"; return; }
	scope=$(sed -n "s/.*sandboxes' cgroups in \([^ ]*\) .*/\1/p" "$log")
	case $scope in
	"$base"/sbx-oci-serve-*.scope) ;;
	*) note "serve-$who" "FAIL: the server's log names no scope under $base: $(cat "$log")"; return ;;
	esac
	(cd /tmp && exec "$@" python --connect "$sock" --memory 64M --pids 32 -c 'import time; time.sleep(20)') >"$W/serve-$who.out" 2>&1 &
	local run=$! found=
	for _ in $(seq 150); do
		found=$(grep -lx 67108864 "/sys/fs/cgroup$scope"/*/memory.max 2>/dev/null | head -1)
		[ -n "$found" ] && break
		sleep 0.2
	done
	out=$(cat "$(dirname "$found")/pids.max" 2>&1)
	[ -n "$found" ] && [ "$out" = 32 ] && note "serve-$who" pass ||
		note "serve-$who" "FAIL: no cgroup in $scope with the run's limits ($(grep . "/sys/fs/cgroup$scope"/*/memory.max 2>&1 | tr '\n' ' '); $out; client: $(cat "$W/serve-$who.out"); server: $(tail -5 "$log"))"
	wait "$run"
	(cd /tmp && exec "$@" python --connect "$sock" --memory 64M --result "/tmp/serve-oom-$who.json" \
		-c 'b = bytearray(256 << 20); b[::4096] = b"x" * len(b[::4096])') >/dev/null 2>&1
	out=$(jq -c '[.oom_killed, .limits_hit]' "/tmp/serve-oom-$who.json" 2>&1)
	[ "$out" = '[true,["memory"]]' ] && note "serve-oom-$who" pass || note "serve-oom-$who" "FAIL: result $out"
	srv=${scope##*/sbx-oci-serve-}
	kill -TERM "${srv%.scope}" 2>/dev/null || true
	for _ in $(seq 100); do [ -d "/sys/fs/cgroup$scope" ] || break; sleep 0.2; done
	out="$(ls -d "/sys/fs/cgroup$scope" /sys/fs/cgroup/sbx-oci 2>/dev/null)"
	[ -z "$out" ] && note "serve-end-$who" pass || note "serve-end-$who" "FAIL: left when the server stopped: $out"
}
serve_case root /system.slice "$sbx"
serve_case user "/user.slice/user-$(id -u sbxpy).slice/user@$(id -u sbxpy).service/user.slice" \
	setpriv --reuid="$(id -u sbxpy)" --regid="$(id -g sbxpy)" --init-groups env -i PATH=/usr/bin:/bin \
	HOME=/home/sbxpy XDG_RUNTIME_DIR="/run/user/$(id -u sbxpy)" \
	DBUS_SESSION_BUS_ADDRESS="unix:path=/run/user/$(id -u sbxpy)/bus" /tmp/sbx-user/sbx-oci
loginctl disable-linger sbxpy

# 4. --cgroup-manager cgroupfs, given, is obeyed: no unit, the cgroup under /sbx-oci
out=$("$sbx" --cgroup-manager cgroupfs python --memory 64M -c 'print(open("/proc/self/cgroup").read().strip())' 2>&1)
[ -z "$(units)" ] && [ "$out" = "0::/" ] && note cgroupfs pass || note cgroupfs "FAIL: $out; units: $(units)"
exit 0
