#!/bin/bash
# The systemd cgroup driver on a host as users run one: Debian's systemd 252 as PID 1
# on the pure cgroup v2 hierarchy (run-in-vm.sh with VM_SYSTEMD=1), sbx-oci beside
# runc and crun on the same cases (systemd-check.sh: the unit systemd made, its
# Delegate, ControlGroup and limits; the init in it; the limits in the files and
# enforced; exec, update, daemon-reload, systemctl stop, delete, a foreground run);
# rootful podman with the host's own defaults and contrib's drop-in, on each of the
# three (podman-systemd-check.sh); rootless podman as a lingering user, its own
# defaults, on each of the three (podman-rootless-systemd-check.sh); `sbx-oci
# python`, whose sandbox gets a scope of its own (python-systemd-check.sh);
# containerd 1.6 with contrib's config and SystemdCgroup = true, pods asked for as
# the kubelet's systemd driver does (containerd-systemd-check.sh, through
# tests/clients/cri.py).
# Fails on a case sbx-oci fails that is not in systemd-expected-failures.txt with its
# reason (one that runc or crun passes must name the isolation it would weaken).
#   SBX_OCI=path   binary under test (default: the checkout's ./sbx-oci)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
sbx_oci=${SBX_OCI:-$root/sbx-oci}
[ "$(id -u)" = 0 ] || { echo "run-systemd-check: must run as root" >&2; exit 1; }
[ -x "$sbx_oci" ] || { echo "run-systemd-check: $sbx_oci is missing: build it first" >&2; exit 1; }
# podman (with conmon) runs in the guest from the host's root: installed here if missing
need=()
for p in podman conmon runc crun busybox-static jq containerd python3-grpcio uidmap; do
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	echo "run-systemd-check: apt-get install ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${need[@]}" >/dev/null ||
		{ echo "run-systemd-check: could not install ${need[*]}" >&2; exit 1; }
fi
VM_CACHE=${VM_CACHE:-/var/cache/sbx-vm}
export VM_CACHE
mkdir -p "$VM_CACHE/runs" || exit 1
snap=$(mktemp -d "$VM_CACHE/runs/s.XXXXXX") || exit 1
trap 'rm -rf "$snap"' EXIT
cp "$sbx_oci" "$snap/sbx-oci" && cp "$(dirname "$sbx_oci")/libsbx-warm.so" "$snap/" && cp "$here/systemd-check.sh" "$here/podman-systemd-check.sh" "$here/python-systemd-check.sh" "$snap/" || exit 1
cp "$root/contrib/podman/sbx-oci.conf" "$snap/podman-dropin.conf" || exit 1
cp "$here/containerd-systemd-check.sh" "$here/podman-rootless-systemd-check.sh" "$root/tests/clients/cri.py" "$snap/" &&
	cp "$root/contrib/containerd/config.toml" "$snap/containerd.toml" || exit 1
# The containers' root: static busybox, and a program that touches N MiB.
mkdir -p "$snap/rootfs/proc" "$snap/rootfs/dev" "$snap/rootfs/sys" "$snap/rootfs/tmp"
cp /bin/busybox "$snap/rootfs/busybox"
cat >"$snap/alloc.c" <<'EOF'
#include <stdlib.h>
#include <string.h>
int main (int argc, char **argv)
{
  size_t mib = argc > 1 ? strtoul (argv[1], 0, 10) : 1;
  for (size_t i = 0; i < mib; i++)
    memset (malloc (1 << 20), 1, 1 << 20);
  return 0;
}
EOF
gcc -static -O2 -o "$snap/rootfs/alloc" "$snap/alloc.c" || exit 1
# podman's image: the same programs, with the applets a shell user calls on PATH
pr=$snap/podman-rootfs
mkdir -p "$pr/bin" "$pr/etc" "$pr/proc" "$pr/dev" "$pr/sys" "$pr/tmp"
cp /bin/busybox "$pr/bin/busybox" && cp "$snap/rootfs/alloc" "$pr/alloc" || exit 1
for a in sh sleep cat echo true; do ln -s busybox "$pr/bin/$a"; done
echo 'root:x:0:0:root:/:/bin/sh' >"$pr/etc/passwd"
echo 'root:x:0:' >"$pr/etc/group"
out=$snap/out
VM_TIMEOUT=${VM_TIMEOUT:-1200} VM_SYSTEMD=1 VM_RO_DIRS=$snap \
	"$here/run-in-vm.sh" "$snap/systemd-check.sh $snap sbx-oci=$snap/sbx-oci runc=$(command -v runc) crun=$(command -v crun) && $snap/podman-systemd-check.sh $snap $snap/podman-dropin.conf sbx-oci runc crun && $snap/podman-rootless-systemd-check.sh $snap sbx-oci=$snap/sbx-oci runc=$(command -v runc) crun=$(command -v crun) && $snap/python-systemd-check.sh $snap/sbx-oci && $snap/containerd-systemd-check.sh $snap $snap/containerd.toml $snap/cri.py sbx-oci=$snap/sbx-oci runc=$(command -v runc) crun=$(command -v crun)" |
	tee "$out"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || { echo "run-systemd-check: the guest's check failed (status $rc)" >&2; exit 1; }

# sbx-oci's failures, judged against the expected ones and the peers' results
expected=$here/systemd-expected-failures.txt
status=0
while read -r c rt result; do
	[ "$rt" = sbx-oci ] && [ "$result" != pass ] || continue
	if grep -qE "^$c[[:space:]]" "$expected" 2>/dev/null; then
		echo "run-systemd-check: expected failure: $c"
		continue
	fi
	peers=$(awk -v c="$c" '$1 == c && ($2 == "runc" || $2 == "crun") && $3 == "pass" { print $2 }' "$out" | tr '\n' ' ')
	echo "run-systemd-check: UNEXPECTED: sbx-oci fails '$c'${peers:+ (passed by $peers)}" >&2
	status=1
done < <(grep -E '^[a-z-]+ (sbx-oci|runc|crun) ' "$out")
grep -q '^podman-start sbx-oci ' "$out" || { echo "run-systemd-check: no podman result for sbx-oci" >&2; status=1; }
grep -q '^python-scope sbx-oci ' "$out" || { echo "run-systemd-check: no result for sbx-oci python" >&2; status=1; }
grep -q '^podman-rootless-start sbx-oci ' "$out" || { echo "run-systemd-check: no rootless podman result for sbx-oci" >&2; status=1; }
grep -q '^cri-pod sbx-oci ' "$out" || { echo "run-systemd-check: no containerd result for sbx-oci" >&2; status=1; }
grep -q '^start sbx-oci ' "$out" || { echo "run-systemd-check: no result for sbx-oci" >&2; status=1; }
exit $status
