#!/bin/bash
# The static libraries sbx-oci links (libseccomp, yajl, libcap, libmount, libdbus-1), built against musl from
# Debian's own source packages, into DIR (default: .musl in the tree). configure
# --with-musl=DIR then builds the runtime with musl-gcc.
#
# Why musl: glibc's start-up (static or dynamic alike) asks the CPU for its features
# and cache sizes with some 70 cpuid instructions, and each one traps to the
# hypervisor: 6.5 us apiece on our nested VMs, 0.47 ms before main() on every exec of
# the runtime (`run`, and each of a client's create/start/state/delete). musl's
# start-up runs no cpuid: 0.03 ms (DEVELOPERS.md, "Startup cost").
#
#   contrib/musl-deps.sh [DIR]   needs root for apt-get (musl-tools, gperf, dpkg-dev)
# Nothing is installed system-wide but those packages: the sources come through a
# private apt source list, and the system's apt configuration is left alone. A DIR
# already built for the same source versions is left as it is; a build root made
# before for them is copied from $SBX_CACHE/musl (default /var/cache/sbx-oci/musl).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$top/.musl}")
jobs=$(nproc)

# Debian's package for each tool this needs
need=()
for t in musl-gcc:musl-tools gperf:gperf dpkg-source:dpkg-dev; do
	command -v "${t%%:*}" >/dev/null || need+=("${t#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || { echo "musl-deps: missing ${need[*]}; run as root to install them" >&2 && exit 1; }
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

# The versions the archive serves now (contrib/debian-source.sh: a private apt state,
# /etc/apt untouched): a DIR built from them is reused, and so is any DIR built before
# when the archive cannot be reached.
apt_dir=$out/apt
seccomp_ver= yajl_ver= cap_ver= ul_ver= dbus_ver=
{ read -r seccomp_ver; read -r yajl_ver; read -r cap_ver; read -r ul_ver; read -r dbus_ver; } < <(
	"$top/contrib/debian-source.sh" versions "$apt_dir" libseccomp yajl libcap2 util-linux dbus || true) || true
if [ -z "$seccomp_ver" ] || [ -z "$yajl_ver" ] || [ -z "$cap_ver" ] || [ -z "$ul_ver" ] || [ -z "$dbus_ver" ]; then
	if compgen -G "$out/prefix/.built-*" >/dev/null; then
		echo "musl-deps: no source index (offline?); keeping the libraries built before in $out" >&2
		exit 0
	fi
	cat "$apt_dir/update.log" >&2
	echo "musl-deps: no source package for libseccomp, yajl, libcap2, util-linux or dbus in Debian's index;" \
		"SBX_LIBC=glibc contrib/dev-setup.sh builds without musl" >&2
	exit 1
fi
# (-euid: libdbus's geteuid() is the runtime's, below; a build without it is rebuilt)
stamp=.built-libseccomp-$seccomp_ver-yajl-$yajl_ver-libcap2-${cap_ver#*:}-util-linux-$ul_ver-dbus-$dbus_ver-euid
[ -f "$out/prefix/$stamp" ] && exit 0

# musl has no kernel headers of its own: the kernel's uapi headers (linux-libc-dev)
# are libc-neutral, and only those directories are made visible next to musl's.
link_kernel_headers() {
	rm -rf "$out/include"
	mkdir -p "$out/include"
	for d in linux asm-generic mtd; do
		[ -d "/usr/include/$d" ] && ln -s "/usr/include/$d" "$out/include/$d"
	done
	ln -s "/usr/include/$(gcc -dumpmachine)/asm" "$out/include/asm"
}

# The same libraries, built for the same source versions by another checkout, are
# kept outside the tree ($SBX_CACHE/musl, default /var/cache/sbx-oci/musl): a fresh
# clone copies them (a few MiB) instead of building them again (some 3 minutes of
# both cores). Only root's cache is used: what a build links must not come from a
# directory another user could write.
cache=${SBX_CACHE:-/var/cache/sbx-oci}/musl
if [ "$(id -u)" = 0 ] && [ -f "$cache/prefix/$stamp" ] && [ "$(stat -c %u "$cache")" = 0 ]; then
	link_kernel_headers
	rm -rf "$out/prefix.new"
	cp -a "$cache/prefix" "$out/prefix.new"
	rm -rf "$out/prefix"
	mv "$out/prefix.new" "$out/prefix"
	echo "musl-deps: the libraries for these source versions, from $cache"
	exit 0
fi
# Built into prefix.new and swapped in at the end: a failed download or build leaves
# the libraries built before as they were (and in use, with a warning).
new=$out/prefix.new
keep_old() {
	if compgen -G "$out/prefix/.built-*" >/dev/null; then
		echo "musl-deps: building libseccomp $seccomp_ver, yajl $yajl_ver, libcap2 $cap_ver, util-linux $ul_ver or dbus $dbus_ver failed; keeping the libraries built before in $out" >&2
		exit 0
	fi
	exit 1
}
trap keep_old ERR
rm -rf "$new" "$out/src"
mkdir -p "$new/lib" "$new/include/yajl" "$out/src"
link_kernel_headers

cd "$out/src"
"$top/contrib/debian-source.sh" download "$apt_dir" . "libseccomp=$seccomp_ver" "yajl=$yajl_ver" \
	"libcap2=$cap_ver" "util-linux=$ul_ver" "dbus=$dbus_ver"
for p in libseccomp yajl libcap2 util-linux dbus; do
	dpkg-source -x "$p"_*.dsc "$p" >/dev/null 2>&1
done

cflags="-O2 -fPIE -fstack-protector-strong -isystem $out/include"

# libseccomp: its own build, the library and headers only
(
	cd libseccomp
	./configure CC=musl-gcc CFLAGS="$cflags" --prefix="$new" --disable-shared --enable-static \
		--disable-python >/dev/null
	make -j"$jobs" -C src libseccomp.la >/dev/null
	make -C src install-libLTLIBRARIES >/dev/null
	make -C include install >/dev/null
)

# yajl: a handful of C files; its cmake build would only add cmake. The version
# header is generated as yajl's CMakeLists.txt does.
(
	cd yajl
	IFS=. read -r major minor micro <<<"${yajl_ver%%-*}"
	sed -e "s/\${YAJL_MAJOR}/$major/; s/\${YAJL_MINOR}/$minor/; s/\${YAJL_MICRO}/$micro/" \
		src/api/yajl_version.h.cmake >"$new/include/yajl/yajl_version.h"
	cp src/api/yajl_common.h src/api/yajl_gen.h src/api/yajl_parse.h src/api/yajl_tree.h "$new/include/yajl/"
	objs=()
	for c in src/yajl.c src/yajl_alloc.c src/yajl_buf.c src/yajl_encode.c src/yajl_gen.c src/yajl_lex.c \
		src/yajl_parser.c src/yajl_tree.c src/yajl_version.c; do
		musl-gcc $cflags -I"$new/include" -c "$c" -o "${c%.c}.o"
		objs+=("${c%.c}.o")
	done
	ar rcs "$new/lib/libyajl_s.a" "${objs[@]}"
)
# libcap: its own Makefile, the static library only. Its capability-name lookup is a
# gperf table (case-insensitive), which is why gperf is needed; the name list comes
# from the kernel header libcap ships.
(
	cd libcap2
	make -C libcap CC=musl-gcc BUILD_CC=gcc USE_GPERF=yes COPTS="$cflags" libcap.a >/dev/null
	cp libcap/libcap.a "$new/lib/"
	mkdir -p "$new/include/sys"
	cp libcap/include/sys/capability.h "$new/include/sys/"
)

# libmount (and the libblkid it needs to build): util-linux's configure with every
# program and optional dependency off. The runtime takes only libmount's option maps,
# so a static link pulls in nothing that runs before main().
(
	cd util-linux
	./configure CC=musl-gcc CFLAGS="$cflags" --prefix="$new" --disable-all-programs --enable-libmount \
		--enable-libblkid --disable-shared --enable-static --disable-nls --disable-pylibmount \
		--disable-bash-completion --disable-asciidoc --disable-poman --without-python --without-selinux \
		--without-udev --without-systemd --without-cryptsetup --without-econf --without-readline \
		--without-ncurses --without-ncursesw --without-tinfo --without-libz --without-user \
		--without-btrfs >configure.log 2>&1 || { cat configure.log >&2; false; }
	make -j"$jobs" libmount.la >/dev/null
	cp .libs/libmount.a "$new/lib/"
	mkdir -p "$new/include/libmount"
	cp libmount/src/libmount.h "$new/include/libmount/"
)
# libdbus-1: the D-Bus client library of the `dbus` source package, for the systemd
# cgroup driver (runtime/cgroup/systemd_bus.c). Only the library: configure asks for
# expat, which the daemon alone uses, so its flags are given empty and no link test
# reaches for glibc's. No systemd, SELinux, AppArmor or audit support: those are the
# daemon's too.
(
	cd dbus
	./configure CC=musl-gcc CFLAGS="$cflags" EXPAT_CFLAGS=" " EXPAT_LIBS=" " --prefix="$new" \
		--disable-shared --enable-static --disable-systemd --disable-selinux --disable-apparmor \
		--disable-libaudit --disable-tests --disable-doxygen-docs --disable-xml-docs \
		--disable-ducktype-docs --disable-launchd --disable-kqueue --disable-inotify --without-x \
		--disable-user-session --disable-asserts --disable-verbose-mode >configure.log 2>&1 ||
		{ cat configure.log >&2; false; }
	make -j"$jobs" -C dbus libdbus-1.la >/dev/null
	# The uid libdbus claims when it authenticates (EXTERNAL) is its geteuid(): in a
	# user namespace (rootless podman runs the runtime as its uid 0) the bus sees
	# another, and refuses. Its calls go to the runtime's sbx_dbus_geteuid instead
	# (runtime/cgroup/bus_identity.c: the uid the namespace's parent knows).
	objcopy --redefine-sym geteuid=sbx_dbus_geteuid dbus/.libs/libdbus-1.a "$new/lib/libdbus-1.a"
	mkdir -p "$new/include/dbus"
	cp dbus/dbus.h dbus/dbus-address.h dbus/dbus-bus.h dbus/dbus-connection.h dbus/dbus-errors.h \
		dbus/dbus-macros.h dbus/dbus-memory.h dbus/dbus-message.h dbus/dbus-misc.h dbus/dbus-pending-call.h \
		dbus/dbus-protocol.h dbus/dbus-server.h dbus/dbus-shared.h dbus/dbus-signature.h dbus/dbus-syntax.h \
		dbus/dbus-threads.h dbus/dbus-types.h dbus/dbus-arch-deps.h "$new/include/dbus/"
)
touch "$new/$stamp"
trap - ERR
rm -rf "$out/prefix"
mv "$new" "$out/prefix"
# into the cache, replacing what was there (swapped in whole: a reader never sees half)
if [ "$(id -u)" = 0 ] && mkdir -p "$cache" 2>/dev/null; then
	rm -rf "$cache/prefix.new"
	cp -a "$out/prefix" "$cache/prefix.new" && rm -rf "$cache/prefix" && mv "$cache/prefix.new" "$cache/prefix" ||
		echo "musl-deps: could not keep the libraries in $cache (the next clone builds them again)" >&2
fi
