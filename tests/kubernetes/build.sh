#!/bin/bash
# build.sh: the Kubernetes binaries the kubernetes stage runs, built from Debian's
# `kubernetes` source package (bookworm: 1.20.5+really1.20.2, the only Debian source
# that still holds cmd/kubelet and cmd/kube-apiserver, vendor/ included) with Debian's
# Go 1.19, and the pause container from the same tree's build/pause. Prints the
# directory that holds them:
#   kubelet kube-apiserver kube-controller-manager kubectl pause
#
# They are cached outside the tree, in $SBX_CACHE/kubernetes/KEY (default
# /var/cache/sbx-oci), KEY naming the source version, Go's and reflect2's: a second run
# on the same machine builds nothing. A cold build took 291 s on two
# cores (the source package already downloaded); its Go build cache stays in $SBX_CACHE/kubernetes/gocache.
#
# How (../../shared/clients/KUBERNETES.md has the facts this follows):
# - the source through contrib/debian-source.sh (a private apt state, /etc/apt
#   untouched), unpacked with dpkg-source into a scratch directory, removed after;
# - GOPATH mode (GO111MODULE=off), as Kubernetes 1.20 builds itself: the tree at
#   GOPATH/src/k8s.io/kubernetes;
# - the vendored github.com/modern-go/reflect2 1.0.1 crashes under Go >= 1.18 when
#   json-iterator encodes a map: Debian's golang-github-modern-go-reflect2-dev (1.0.2)
#   replaces it, as Debian's own Go packages use it;
# - CGO_ENABLED=0, tags selinux and notest, the version stamped as hack/lib does.
#
#   build.sh --prepare   only the packages and the source download (apt and the
#                        network), so that the build itself can run in the background
#                        beside other work: tests/check.sh does so (see there)
set -euo pipefail
prepare_only=
[ "${1:-}" != --prepare ] || prepare_only=1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${SBX_CACHE:-/var/cache/sbx-oci}
srcdl=$cache/debian-src
kcache=$cache/kubernetes
bins=(kubelet kube-apiserver kube-controller-manager kubectl)

log() { echo "kubernetes/build: $*" >&2; }

# Debian's packages this needs, installed when missing.
need=()
for p in golang-go golang-github-modern-go-reflect2-dev dpkg-dev gcc libc6-dev; do
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	log "apt-get install ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }
fi

version=$("$top/contrib/debian-source.sh" versions "$srcdl/apt" kubernetes || true)
if [ -z "$version" ]; then
	# offline: the newest source already downloaded
	dsc=$(ls "$srcdl"/kubernetes/kubernetes_*.dsc 2>/dev/null | sort -V | tail -1 || true)
	[ -n "$dsc" ] || { log "no kubernetes source package (Debian's archive: $srcdl/apt/update.log)"; exit 1; }
	version=$(basename "$dsc" .dsc)
	version=${version#kubernetes_}
fi
go_version=$(go env GOVERSION)
reflect2_version=$(dpkg-query -W -f='${Version}' golang-github-modern-go-reflect2-dev)
key="${version}_${go_version}_reflect2-${reflect2_version}"
out=$kcache/$key
ok=1
for b in "${bins[@]}" pause; do [ -x "$out/$b" ] || ok=0; done
if [ "$ok" = 1 ]; then
	echo "$out"
	exit 0
fi

dsc=$srcdl/kubernetes/kubernetes_${version#*:}.dsc
[ -f "$dsc" ] || "$top/contrib/debian-source.sh" download "$srcdl/apt" "$srcdl/kubernetes" "kubernetes=$version"
[ -z "$prepare_only" ] || exit 0

start=$SECONDS
scratch=$(mktemp -d "$kcache.build.XXXXXX" 2>/dev/null || { mkdir -p "$kcache" && mktemp -d "$kcache/build.XXXXXX"; })
trap 'rm -rf "$scratch"' EXIT
gopath=$scratch/gopath
tree=$gopath/src/k8s.io/kubernetes
mkdir -p "$(dirname "$tree")"
log "unpacking $(basename "$dsc")"
dpkg-source --no-check -x "$dsc" "$tree" >/dev/null

# reflect2 1.0.2 from Debian over the vendored 1.0.1 (the .go files only: no go.mod,
# no tests in a vendor directory)
r2=/usr/share/gocode/src/github.com/modern-go/reflect2
[ -f "$r2/reflect2.go" ] || { log "$r2 is missing (golang-github-modern-go-reflect2-dev)"; exit 1; }
rm -rf "$tree/vendor/github.com/modern-go/reflect2"
mkdir -p "$tree/vendor/github.com/modern-go/reflect2"
find "$r2" -maxdepth 1 -name '*.go' ! -name '*_test.go' -exec cp {} "$tree/vendor/github.com/modern-go/reflect2/" \;

# hack/lib/version.sh's stamps, from the Debian version (1.20.5+really1.20.2-...)
real=${version#*really}
real=${real%%-*}
pkg=k8s.io/kubernetes/vendor/k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=v$real -X $pkg.gitMajor=${real%%.*} -X $pkg.gitMinor=$(cut -d. -f2 <<<"$real")"
ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=v$real"

# pkg/generated/openapi is made at build time by Kubernetes' own Makefile
# (Makefile.generated_files, gen_openapi), not shipped: kube-apiserver and the
# controller-manager need it. The same generator on the same input directories:
# every directory (staging/src named as its vendor/ path) with a file that asks for
# it (+k8s:openapi-gen=), but code-generator's and sample-apiserver's.
log "generating pkg/generated/openapi (openapi-gen)"
(
	cd "$tree"
	export GOPATH=$gopath GO111MODULE=off CGO_ENABLED=0 GOFLAGS= GOCACHE=$kcache/gocache
	go build -o "$scratch/openapi-gen" ./vendor/k8s.io/kube-openapi/cmd/openapi-gen
	dirs=$(find -H . -not \( \( -path './_*' -o -path './.*' -o -path ./vendor \) -prune \) -type f -name '*.go' |
		sed -e 's|^\./staging/src|vendor|' -e 's|^\./||' -e 's|/[^/]*$||' | LC_ALL=C sort -u)
	inputs=$(for d in $dirs; do
		case $d in vendor/k8s.io/code-generator/* | vendor/k8s.io/sample-apiserver/*) continue ;; esac
		if [ -n "$(find "$d/" -maxdepth 1 -type f -name '*.go' -exec grep -q '+k8s:openapi-gen=' {} \; -print -quit 2>/dev/null)" ]; then
			echo "k8s.io/kubernetes/$d"
		fi
	done | paste -sd,)
	"$scratch/openapi-gen" --logtostderr -i "$inputs" -p k8s.io/kubernetes/pkg/generated/openapi \
		-O zz_generated.openapi -h vendor/k8s.io/code-generator/hack/boilerplate.go.txt \
		-r "$scratch/openapi-violations.report" 2>"$scratch/openapi-gen.log" ||
		{ tail -20 "$scratch/openapi-gen.log" >&2; exit 1; }
	[ -s pkg/generated/openapi/zz_generated.openapi.go ]
)

mkdir -p "$out.new"
log "building ${bins[*]} (Go $go_version, GOPATH mode)"
(
	cd "$tree"
	export GOPATH=$gopath GO111MODULE=off CGO_ENABLED=0 GOFLAGS= GOCACHE=$kcache/gocache
	args=()
	for b in "${bins[@]}"; do args+=("./cmd/$b"); done
	go build -tags 'selinux notest' -ldflags "$ldflags" -o "$out.new/" "${args[@]}"
)
# the pause container's program: static, it is the whole image
gcc -Os -static -Wall -DVERSION="v$real" -o "$out.new/pause" "$tree/build/pause/linux/pause.c"
rm -rf "$out"
mv "$out.new" "$out"
log "built in $((SECONDS - start)) s into $out"
echo "$out"
