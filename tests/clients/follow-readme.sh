#!/bin/bash
# follow-readme.sh README REPO IMAGE-TAR USER: runs the ```sh blocks of a contrib README
# as written, the way a new user would type them, and checks every `# -> X` comment
# (what the command prints; whitespace collapsed). A block that comes after a line
# mentioning "Rootless" runs as USER (its `sudo` lines stay root); `sudo ` is dropped
# since this runs as root.
#
# The README installs into the host (/usr/local, /etc/containers, podman's storage, the
# bridge network's firewall). Here it runs in a private mount and network namespace
# (tests/clients/podman.bats starts it under `unshare -mn`): /usr/local is a tmpfs,
# /etc/containers and /var are overlays of the host's whose changes are thrown away
# (podman's storage in it a tmpfs),
# /run and /dev/shm are fresh, and the bridge and its rules live in a network namespace
# that ends with this script. The image the README names is imported from IMAGE-TAR
# first (there is no registry here).
set -euo pipefail
readme=$1 repo=$2 image_tar=$3 user=$4
# a new user's environment: the standard PATH (not the suites' podman wrapper)
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
unset SBX_CLIENT_RT CONTAINERS_CONF CONTAINERS_STORAGE_CONF CONTAINERS_REGISTRIES_CONF
scratch=$(mktemp -d "${TMPDIR:-/tmp}/sbx-readme.XXXXXX") # the overlays' upper dirs, the user's home
unset TMPDIR
mount --make-rprivate /
for d in /etc/containers /var; do
	mkdir -p "$scratch/upper$d" "$scratch/work$d"
	mount -t overlay overlay -o "lowerdir=$d,upperdir=$scratch/upper$d,workdir=$scratch/work$d" "$d"
done
mkdir -p /var/lib/containers # podman's overlay storage cannot sit on an overlay
mount -t tmpfs tmpfs /var/lib/containers
mount -t tmpfs tmpfs /usr/local
mount -t tmpfs -o mode=755 tmpfs /run
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
ip link set lo up
home=$scratch/home
mkdir -p "$home/run"
chown -R "$user:" "$home"
chmod 700 "$home/run"
chmod 755 "$scratch"
# rootless podman leaves a pause process holding its user namespace: end it with us
# (found by its pid file, never by name)
end_pause() {
	local p
	p=$(cat "$home/run/libpod/tmp/pause.pid" 2>/dev/null) || return 0
	[ -z "$p" ] || kill -9 "$p" 2>/dev/null || true
}
trap end_pause EXIT
as_user() { setpriv --reuid="$user" --regid="$user" --init-groups env HOME="$home" XDG_RUNTIME_DIR="$home/run" "$@"; }

# what the README pulls: the fixture image under that name, for root and for the user
name=$(grep -o 'docker\.io/library/[a-z0-9]*' "$readme" | head -1)
podman import -q --change 'CMD ["/bin/sh"]' "$image_tar" "$name" >/dev/null
cp "$image_tar" "$scratch/image.tar" && chmod 644 "$scratch/image.tar"
(cd "$home" && as_user podman import -q --change 'CMD ["/bin/sh"]' "$scratch/image.tar" "$name" >/dev/null)

cd "$repo"
rootless= in_block= n=0
while IFS= read -r line; do
	case $line in
	'```sh') in_block=1; continue ;;
	'```') in_block=; continue ;;
	*Rootless*) [ -n "$in_block" ] || rootless=1 ;;
	esac
	[ -n "$in_block" ] || continue
	cmd=${line%%   # *}
	want=
	[[ $line == *'   # -> '* ]] && want=${line##*   # -> }
	as=root
	if [[ $cmd == "sudo "* ]]; then
		cmd=${cmd#sudo }
	elif [ -n "$rootless" ]; then
		as=$user
	fi
	n=$((n + 1))
	echo "readme: [$as] $cmd"
	if [ "$as" = root ]; then
		got=$(bash -c "$cmd" 2>&1) || { echo "readme: failed: $cmd" >&2; echo "$got" >&2; exit 1; }
	else
		got=$(cd "$home" && as_user bash -c "$cmd" 2>&1) || { echo "readme: failed as $user: $cmd" >&2; echo "$got" >&2; exit 1; }
	fi
	if [ -n "$want" ]; then
		# podman's warnings about the host (a non-shared /, an unused CNI file) are not the output
		got=$(grep -v '^time=.*level=warning' <<<"$got" | tr -s ' \t\n' '   ' | sed 's/^ //; s/ $//')
		if [ "$got" != "$want" ]; then
			echo "readme: '$cmd' printed '$got', the README says '$want'" >&2
			exit 1
		fi
	fi
done <"$readme"
echo "readme: $n commands of $readme ran as written"
