#!/bin/bash
# run-in-vm.sh 'COMMAND': runs COMMAND with /bin/sh, as root, in a throw-away QEMU guest
# (a Debian 6.12 cloud kernel) whose root filesystem is this host's / over virtiofs,
# read-only, with a pure cgroup v2 hierarchy at /sys/fs/cgroup (cpuset cpu io memory
# pids hugetlb enabled for the root's children) and fresh tmpfs on /tmp /run /var/tmp
# /root /dev/shm. See README.md.
#
# Exit status: COMMAND's; 124 if VM_TIMEOUT expired; 125 if the harness or the VM
# failed (the serial log's tail is printed and the run directory kept).
# COMMAND's stdout and stderr are replayed on ours after the VM exits, or followed
# live with VM_STREAM=1.
#
#   VM_MEM=1024        guest RAM, MiB
#   VM_CPUS=2          guest vCPUs
#   VM_TIMEOUT=600     seconds before the VM is killed
#   VM_RW_DIRS=a:b     host directories bind-mounted read-write at the same path
#   VM_RO_DIRS=a:b     host directories bind-mounted read-only at the same path (only
#                      needed for ones under /tmp /run /var/tmp /root, which are hidden)
#   VM_ENV="A B"       host variables passed to COMMAND (the environment is otherwise
#                      PATH, HOME=/root, TERM=dumb, LANG, IN_TEST_VM=1, VM_RUN_DIR)
#   VM_STREAM=1        follow COMMAND's output while it runs
#   VM_ACCEL=auto|kvm|tcg  auto: tcg on a PVM host, whose KVM cannot boot stock kernels
#   VM_CPU=max         the TCG CPU model
#   VM_CACHE=/var/cache/sbx-vm   kernel, initramfs and run directories
#   VM_KERNEL=path     kernel to boot (default: $VM_CACHE/vmlinux, else vmlinuz)
#   VM_KERNEL_PKG, VM_MODULES   see build-initramfs.sh
#   VM_APPEND="..."    extra kernel command line
#   VM_KEEP=1          keep the run directory (serial log, output) and print its path
#   VM_DEBUG=1         full kernel log in the serial log; implies VM_KEEP=1
#   VM_TIMING=1        print boot / command / shutdown times on stderr
#   VM_SYSTEMD=1       boot Debian's systemd as PID 1 (tests/vm/systemd-init): an overlay
#                      root in guest memory, dbus and logind, COMMAND as a service;
#                      the guest's memory defaults to 3072 MiB then
# COMMAND runs in the caller's directory (read-only unless in VM_RW_DIRS); $VM_RUN_DIR
# is a read-write directory shared with the host.
set -uo pipefail
[ "${VM_DEBUG:-0}" = 1 ] && VM_KEEP=1
t0=$(date +%s.%N)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VM_CACHE=${VM_CACHE:-/var/cache/sbx-vm}
export VM_CACHE
[ $# -eq 1 ] || { echo "usage: $0 'COMMAND'" >&2; exit 125; }
# virtiofsd needs root to serve the host's files with their owners and modes.
[ "$(id -u)" = 0 ] || { echo "run-in-vm: must run as root (virtiofsd)" >&2; exit 125; }

"$here/build-initramfs.sh" || { echo "run-in-vm: preparing the kernel and initramfs failed" >&2; exit 125; }

mem=${VM_MEM:-1024}
systemd_append=
if [ "${VM_SYSTEMD:-0}" = 1 ]; then
	mem=${VM_MEM:-3072}
	# fstab=0: the host's fstab is not the guest's; the unified hierarchy alone, as
	# on the hosts users run (systemd 252's default, said explicitly).
	systemd_append="vm.systemd=1 systemd.unit=sbx-vm.target fstab=0 systemd.unified_cgroup_hierarchy=1 \
systemd.show_status=0 systemd.log_level=warning systemd.journald.forward_to_console=0"
fi
cpus=${VM_CPUS:-2}
tmo=${VM_TIMEOUT:-600}
accel=${VM_ACCEL:-auto}
if [ "$accel" = auto ]; then
	# A PVM /dev/kvm (module kvm_pvm) only runs guest kernels built for PVM: a stock
	# kernel dies with "KVM internal error". Emulate instead.
	if [ -w /dev/kvm ] && [ ! -d /sys/module/kvm_pvm ]; then accel=kvm; else accel=tcg; fi
fi
case $accel in
kvm) accel_opts=(-accel kvm -cpu host) ;;
tcg) accel_opts=(-accel tcg,thread=multi,tb-size=256 -cpu "${VM_CPU:-max}") ;;
*) echo "run-in-vm: VM_ACCEL must be auto, kvm or tcg" >&2; exit 125 ;;
esac

mkdir -p "$VM_CACHE/runs"
# Run directories kept by VM_KEEP or by a failure go after a day.
find "$VM_CACHE/runs" -mindepth 1 -maxdepth 1 -mmin +1440 -exec rm -rf {} + 2>/dev/null
run=$(mktemp -d "$VM_CACHE/runs/r.XXXXXX")
vfs_pid="" qemu_pid="" tail_pids=()
cleanup() {
	[ -z "$qemu_pid" ] || kill "$qemu_pid" 2>/dev/null
	[ -z "$vfs_pid" ] || kill "$vfs_pid" 2>/dev/null
	[ ${#tail_pids[@]} -eq 0 ] || kill "${tail_pids[@]}" 2>/dev/null
	wait 2>/dev/null
	if [ "${VM_KEEP:-0}" = 1 ]; then echo "run-in-vm: run directory kept: $run" >&2; else rm -rf "$run"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# What the guest's init reads: the command, where to run it, its environment, and
# the directories to re-expose.
printf '%s\n' "$1" >"$run/cmd"
pwd -P >"$run/cwd"
: >"$run/env"
for v in ${VM_ENV:-}; do
	[ -z "${!v+x}" ] || printf 'export %s=%q\n' "$v" "${!v}" >>"$run/env"
done
dirs_file() { # VAR FILE: the colon-separated list in VAR, resolved, one per line
	local d
	[ -n "${!1:-}" ] || return 0
	tr ':' '\n' <<<"${!1}" | while IFS= read -r d; do
		[ -z "$d" ] || readlink -f "$d"
	done >"$2"
}
dirs_file VM_RW_DIRS "$run/rw_dirs"
dirs_file VM_RO_DIRS "$run/ro_dirs"
# Created here so that VM_STREAM can follow them from the start.
: >"$run/stdout"
: >"$run/stderr"

# One virtiofsd per run exports the host's /; the guest mounts it read-only except for
# the run directory and VM_RW_DIRS. sandbox=chroot: sandbox=namespace fails on this
# host (pivot_root: EBUSY). It exits by itself when QEMU disconnects.
/usr/lib/qemu/virtiofsd --socket-path="$run/vfs.sock" -o source=/ -o cache=always \
	-o sandbox=chroot -o log_level=err -o max_idle_threads=16 \
	</dev/null >"$run/virtiofsd.log" 2>&1 &
vfs_pid=$!
for _ in $(seq 200); do
	[ -S "$run/vfs.sock" ] && break
	sleep 0.01
done
if [ ! -S "$run/vfs.sock" ]; then
	echo "run-in-vm: virtiofsd did not start:" >&2
	cat "$run/virtiofsd.log" >&2
	VM_KEEP=1
	exit 125
fi

kernel=${VM_KERNEL:-$VM_CACHE/vmlinux}
[ -s "$kernel" ] || kernel=$VM_CACHE/vmlinuz
quiet=quiet
[ "${VM_DEBUG:-0}" = 1 ] && quiet="ignore_loglevel printk.time=1"
# mitigations=off, tsc=reliable, no_timer_check, no i8042 probing, no crypto self-tests
# and nokaslr all shorten the emulated boot; panic=-1 turns a panic into an exit.
append="console=ttyS0 $quiet loglevel=4 panic=-1 rdinit=/init vm.run=$run \
mitigations=off tsc=reliable no_timer_check i8042.noaux i8042.nokbd i8042.nopnp \
cryptomgr.notests random.trust_cpu=on nokaslr audit=0 $systemd_append ${VM_APPEND:-}"

# q35 with a shared memfd backend (vhost-user needs guest RAM it can map); the serial
# console goes to a file, stdin is /dev/null: no TTY needed. -no-reboot + the guest's
# reboot -f end the run.
timeout -k 5 "$tmo" qemu-system-x86_64 -nodefaults -no-user-config -nographic -no-reboot \
	-machine q35,memory-backend=mem "${accel_opts[@]}" -smp "$cpus" -m "$mem" \
	-object memory-backend-memfd,id=mem,size="${mem}M",share=on \
	-chardev socket,id=vfs,path="$run/vfs.sock" \
	-device vhost-user-fs-pci,queue-size=1024,chardev=vfs,tag=hostroot \
	-kernel "$kernel" -initrd "$VM_CACHE/initramfs.cpio" -append "$append" \
	-serial file:"$run/serial.log" -monitor none -display none \
	</dev/null >"$run/qemu.log" 2>&1 &
qemu_pid=$!
if [ "${VM_STREAM:-0}" = 1 ]; then
	# virtiofsd writes the guest's output straight to these files; tail exits (after a
	# last read) once QEMU is gone.
	tail -n +1 -f --pid="$qemu_pid" "$run/stdout" &
	tail_pids+=($!)
	tail -n +1 -f --pid="$qemu_pid" "$run/stderr" >&2 &
	tail_pids+=($!)
fi
wait "$qemu_pid"
qrc=$?
qemu_pid=""
t1=$(date +%s.%N)

if [ ${#tail_pids[@]} -gt 0 ]; then
	wait "${tail_pids[@]}"
	tail_pids=()
else
	cat "$run/stdout"
	cat "$run/stderr" >&2
fi
if [ ! -f "$run/exitcode" ]; then
	if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
		echo "run-in-vm: timeout: the VM was killed after ${tmo}s (VM_TIMEOUT)" >&2
		rc=124
	else
		echo "run-in-vm: the VM stopped without running the command to its end (qemu exit status $qrc); last lines of its logs:" >&2
		rc=125
	fi
	tail -n 40 "$run/serial.log" "$run/qemu.log" >&2
	VM_KEEP=1
	exit $rc
fi
rc=$(cat "$run/exitcode")
if [ "${VM_TIMING:-0}" = 1 ]; then
	# Host mtimes of files the guest wrote over virtiofs: no clock sync needed.
	ts=$(stat -c %.9Y "$run/started")
	te=$(stat -c %.9Y "$run/exitcode")
	awk -v t0="$t0" -v ts="$ts" -v te="$te" -v t1="$t1" 'BEGIN {
		printf "run-in-vm: boot (script start to command start) %.2fs, command %.2fs, shutdown %.2fs, total %.2fs\n",
			ts - t0, te - ts, t1 - te, t1 - t0 }' >&2
fi
exit "$rc"
