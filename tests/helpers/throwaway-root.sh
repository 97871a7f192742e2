#!/bin/bash
# throwaway-root.sh DIR COMMAND...: runs COMMAND (as root, with bash -c semantics for
# one string) with its root in a throw-away copy of this machine's root: an overlay whose
# lower layer is the host's / and whose upper layer is a tmpfs at DIR/upper, in a
# private mount namespace. Whatever COMMAND writes to /, /etc, /usr, /var ... lands in
# DIR/upper, never in the host's own directories; the caller inspects DIR/upper after.
#
# For the tests of the system-path refusal (sandbox-syspaths.bats): a test that offers
# /etc or / as a workdir must not be able to write the real ones if the refusal ever
# regresses. Inside, /proc and /sys are the host's (the runtime needs them, and
# neither lets a file be created), /dev is a tmpfs with binds of the host's six
# standard nodes, /run and /tmp are the overlay's (empty) directories, and the runtime
# binary under test ($SBX_OCI) is bound at its own path.
set -euo pipefail
dir=$1
shift
[ "$(id -u)" = 0 ] || { echo "throwaway-root: needs root" >&2; exit 2; }
[ -n "${SBX_OCI:-}" ] || { echo "throwaway-root: SBX_OCI is not set" >&2; exit 2; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

# The rest runs in a mount namespace of its own: every mount below goes with it.
exec unshare --mount --propagation private -- /bin/bash -s "$dir" "$SBX_OCI" "$@" <<'INNER'
set -euo pipefail
dir=$1 sbx=$2
shift 2
mount -t tmpfs -o mode=0755 sbx-throwaway "$dir"
mkdir -p "$dir/upper" "$dir/work" "$dir/root"
mount -t overlay sbx-throwaway-root -o "lowerdir=/,upperdir=$dir/upper,workdir=$dir/work" "$dir/root"
root=$dir/root
mount --rbind /proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --make-rslave "$root/sys"
mount -t tmpfs -o mode=0755,nosuid sbx-throwaway-dev "$root/dev"
for n in null zero full random urandom tty; do
	touch "$root/dev/$n"
	mount --bind "/dev/$n" "$root/dev/$n"
done
mkdir -p "$root/dev/pts" "$root/dev/shm"
mkdir -p "$root$(dirname "$sbx")"
touch "$root$sbx"
mount --bind "$sbx" "$root$sbx"
# pivot_root, not chroot: a chrooted process may not make a user namespace, and the
# sandbox needs one.
mkdir -p "$root/.throwaway-old-root"
cd "$root"
pivot_root . .throwaway-old-root
umount -l /.throwaway-old-root
rmdir /.throwaway-old-root
cd /
exec /bin/bash -c "$*"
INNER
