#!/bin/bash
# Debian's source packages, through a private apt state: the machine's own apt setup
# (/etc/apt) is never changed. Every piece of third-party code this project builds or
# runs comes from Debian's archive (or npm); this is how its sources are fetched.
#
#   contrib/debian-source.sh versions APTDIR PKG...    prints the newest version the
#                                                      archive serves of each PKG, a
#                                                      line each (empty: none)
#   contrib/debian-source.sh download APTDIR DEST PKG[=VER]...
#                                                      downloads the .dsc, .orig and
#                                                      .debian tarballs into DEST
#
# APTDIR holds the private state: a deb-src list made from the machine's binary
# sources (the same mirrors, suites, components and keys), the lists and the cache.
# `apt-get update` runs once per APTDIR and call of this script, quietly; its log is
# APTDIR/update.log. Needs root only when apt-get itself does (the cache's lock).
set -euo pipefail

usage() {
	sed -n '7,11p' "$0" >&2
	exit 2
}

# Writes APTDIR/parts: every deb822 stanza and one-line "deb" entry of the machine,
# turned into source entries.
write_source_list() {
	local apt_dir=$1 f src_list
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/parts" "$apt_dir/cache/archives/partial"
	src_list=$apt_dir/parts/sbx-oci-src.sources
	: >"$src_list"
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		sed -e 's/^Types:.*/Types: deb-src/' "$f" >>"$src_list"
		echo >>"$src_list"
	done
	cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' >"$apt_dir/parts/sbx-oci-src.list" || true
}

apt_opts() {
	local apt_dir=$1
	printf '%s\n' -o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$apt_dir/parts" \
		-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" \
		-o APT::Sandbox::User=root -qq
}

# update's own status is not the test: a third-party repository without source
# packages fails it, harmlessly. A package missing from the index is the failure.
update() {
	local apt_dir=$1
	local -a opts
	write_source_list "$apt_dir"
	mapfile -t opts < <(apt_opts "$apt_dir")
	apt-get "${opts[@]}" update >"$apt_dir/update.log" 2>&1 || true
}

newest_version() {
	local apt_dir=$1 pkg=$2
	local -a opts
	mapfile -t opts < <(apt_opts "$apt_dir")
	apt-cache "${opts[@]}" showsrc "$pkg" 2>/dev/null | awk '/^Version:/ { print $2 }' | sort -V | tail -1
}

[ $# -ge 1 ] || usage
cmd=$1
shift
case $cmd in
versions)
	[ $# -ge 2 ] || usage
	apt_dir=$(realpath -m "$1")
	shift
	update "$apt_dir"
	for pkg in "$@"; do
		echo "$(newest_version "$apt_dir" "$pkg" || true)"
	done
	;;
download)
	[ $# -ge 3 ] || usage
	apt_dir=$(realpath -m "$1")
	dest=$2
	shift 2
	update "$apt_dir"
	mapfile -t opts < <(apt_opts "$apt_dir")
	mkdir -p "$dest"
	(cd "$dest" && apt-get "${opts[@]}" source --download-only "$@" >/dev/null) || {
		echo "debian-source: could not download $* (see $apt_dir/update.log)" >&2
		exit 1
	}
	;;
*) usage ;;
esac
