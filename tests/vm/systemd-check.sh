#!/bin/bash
# Inside the systemd guest (run-systemd-check.sh, VM_SYSTEMD=1): the systemd cgroup
# driver of sbx-oci, runc and crun, the same cases for each, as podman and kubeadm's
# kubelet use it (--systemd-cgroup, a slice:prefix:name cgroupsPath). Prints one line
# per case and runtime ("CASE RUNTIME pass|FAIL: why") and a table at the end.
#   systemd-check.sh SNAP RUNTIME=PATH...   SNAP holds rootfs/ (busybox, alloc)
set -uo pipefail
snap=$1
shift
results=()
note() { results+=("$1 $2 $3"); echo "$1 $2 $3"; }

[ "$(cat /proc/1/comm)" = systemd ] || { echo "systemd-check: PID 1 is not systemd" >&2; exit 2; }
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || { echo "systemd-check: not a pure cgroup v2 host" >&2; exit 2; }
# (not is-system-running --wait: this command is part of the boot transaction)

# A bundle for runtime RT: busybox's sleep under 64 MiB and 32 pids, its cgroup a scope
# in machine.slice as podman asks for it.
make_bundle() {
	local rt=$1 id=$2 dir=/tmp/bundles/$1
	mkdir -p "$dir"
	"$sbx" spec --bundle "$dir" >/dev/null 2>&1 || (cd "$dir" && "$sbx" spec)
	jq --arg root "$snap/rootfs" --arg id "$id" '
		.ociVersion = "1.0.2"
		| .root = {path: $root, readonly: true}
		| .process.terminal = false
		| .process.args = ["/busybox", "sleep", "1000"]
		| .process.env = ["PATH=/"]
		| .linux.cgroupsPath = "machine.slice:libpod:" + $id
		| .linux.resources.memory = {limit: 67108864}
		| .linux.resources.pids = {limit: 32}' "$dir/config.json" >"$dir/config.json.new"
	mv "$dir/config.json.new" "$dir/config.json"
	echo "$dir"
}

field() { systemctl show "$1" -p "$2" --value 2>/dev/null; }

# The cases, for runtime RT at PATH; each case says pass or why not.
check_runtime() {
	local rt=$1 bin=$2 id="t-$1-$$" unit cg bundle pid out
	local R=("$bin" --root "/run/systemd-check-$rt" --systemd-cgroup)
	unit="libpod-$id.scope"
	bundle=$(make_bundle "$rt" "$id")
	# the container keeps the stdio it is given: a file, not a pipe to wait on
	if ! "${R[@]}" run -d --bundle "$bundle" "$id" </dev/null >"/tmp/run-$rt.log" 2>&1; then
		note start "$rt" "FAIL: $(cat "/tmp/run-$rt.log")"
		return
	fi
	note start "$rt" pass
	pid=$("${R[@]}" state "$id" | jq -r .pid)
	cg=$(field "$unit" ControlGroup)
	out="$(field "$unit" Delegate) $cg $(field "$unit" MemoryMax) $(field "$unit" TasksMax)"
	[ "$out" = "yes /machine.slice/$unit 67108864 32" ] && note unit "$rt" pass || note unit "$rt" "FAIL: systemctl show: $out"
	out=$(grep '^0::' "/proc/$pid/cgroup")
	[ "$out" = "0::$cg" ] && note init-in-scope "$rt" pass || note init-in-scope "$rt" "FAIL: the init is in $out, the unit's cgroup is $cg"
	out="$(cat "/sys/fs/cgroup$cg/memory.max" "/sys/fs/cgroup$cg/pids.max" 2>&1 | tr '\n' ' ')"
	[ "$out" = "67108864 32 " ] && note limits "$rt" pass || note limits "$rt" "FAIL: memory.max pids.max: $out"
	out=$("${R[@]}" exec "$id" /busybox cat /sys/fs/cgroup/memory.max 2>&1)
	[ "$out" = 67108864 ] && note exec "$rt" pass || note exec "$rt" "FAIL: exec saw memory.max '$out'"
	"${R[@]}" exec "$id" /alloc 128 >/dev/null 2>&1
	out=$?
	[ "$out" = 137 ] && note oom "$rt" pass || note oom "$rt" "FAIL: a 128 MiB allocation under 64 MiB ended $out, not 137"
	if out=$("${R[@]}" update --memory 100663296 --pids-limit 40 "$id" 2>&1); then
		out="$(field "$unit" MemoryMax) $(cat "/sys/fs/cgroup$cg/memory.max") $(field "$unit" TasksMax) $(cat "/sys/fs/cgroup$cg/pids.max")"
		[ "$out" = "100663296 100663296 40 40" ] && note update "$rt" pass || note update "$rt" "FAIL: unit and files after update: $out"
	else
		note update "$rt" "FAIL: $out"
	fi
	local before after
	before="$(cat "/sys/fs/cgroup$cg/memory.max" "/sys/fs/cgroup$cg/pids.max" | tr '\n' ' ')"
	systemctl daemon-reload
	after="$(cat "/sys/fs/cgroup$cg/memory.max" "/sys/fs/cgroup$cg/pids.max" | tr '\n' ' ')"
	[ "$before" = "$after" ] && note daemon-reload "$rt" pass || note daemon-reload "$rt" "FAIL: memory.max pids.max $before-> $after"
	systemctl stop "$unit"
	out=
	for _ in $(seq 50); do
		out=$("${R[@]}" state "$id" 2>&1 | jq -r .status 2>/dev/null)
		[ "$out" = stopped ] && break
		sleep 0.2
	done
	[ "$out" = stopped ] && note systemctl-stop "$rt" pass || note systemctl-stop "$rt" "FAIL: state says '$out' after systemctl stop"
	if out=$("${R[@]}" delete --force "$id" 2>&1); then
		out="$(systemctl list-units --all --no-legend "$unit" 2>&1)$(ls -d "/sys/fs/cgroup$cg" 2>/dev/null)"
		[ -z "$out" ] && note delete "$rt" pass || note delete "$rt" "FAIL: left after delete: $out"
	else
		note delete "$rt" "FAIL: $out"
	fi
	# a foreground run: its scope ends with it
	jq '.process.args = ["/busybox", "true"]' "$bundle/config.json" >"$bundle/c.new" && mv "$bundle/c.new" "$bundle/config.json"
	if out=$("${R[@]}" run --bundle "$bundle" "$id-fg" </dev/null 2>&1); then
		out=$(systemctl list-units --all --no-legend "libpod-$id-fg.scope" 2>&1)
		[ -z "$out" ] && note foreground-run "$rt" pass || note foreground-run "$rt" "FAIL: left: $out"
	else
		note foreground-run "$rt" "FAIL: $out"
	fi
}

sbx=
for spec in "$@"; do
	[ -z "$sbx" ] && sbx=${spec#*=}
done
for spec in "$@"; do
	check_runtime "${spec%%=*}" "${spec#*=}"
done

echo "=== systemd-check summary"
names=()
for spec in "$@"; do names+=("${spec%%=*}"); done
printf '%-16s' case
printf ' %-8s' "${names[@]}"
echo
for c in start unit init-in-scope limits exec oom update daemon-reload systemctl-stop delete foreground-run; do
	printf '%-16s' "$c"
	for n in "${names[@]}"; do
		r=$(printf '%s\n' "${results[@]}" | awk -v c="$c" -v n="$n" '$1 == c && $2 == n { print ($3 == "pass" ? "pass" : "FAIL") }')
		printf ' %-8s' "${r:-none}"
	done
	echo
done
