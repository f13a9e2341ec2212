#!/bin/sh
# Installs lovia from a GitHub release:
#
#   curl -fsSL https://raw.githubusercontent.com/lovia-dev/lovia/main/scripts/install.sh | sh
#   sh install.sh [--version vX.Y.Z] [--prefix DIR]
#
# It picks the archive for this OS and CPU, checks it against the release's
# checksums.txt (SHA-256) before unpacking anything, and installs the binary into
# PREFIX/bin (default ~/.local/bin) and its manual pages into PREFIX/share/man/man1.
# Nothing else on the system is touched. LOVIA_INSTALL_BASE_URL points it at a mirror
# laid out as GitHub's releases are (BASE/latest, BASE/download/TAG/FILE).
set -eu

base=${LOVIA_INSTALL_BASE_URL:-https://github.com/lovia-dev/lovia/releases}
version=${LOVIA_VERSION:-latest}
prefix=${LOVIA_PREFIX:-$HOME/.local}

say() { printf '%s\n' "$*"; }
die() {
	printf 'lovia install: %s\n' "$*" >&2
	exit 1
}

while [ $# -gt 0 ]; do
	case $1 in
	--version) [ $# -ge 2 ] || die "--version needs a value (e.g. v0.4.0)"; version=$2; shift 2 ;;
	--version=*) version=${1#*=}; shift ;;
	--prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; prefix=$2; shift 2 ;;
	--prefix=*) prefix=${1#*=}; shift ;;
	-h | --help)
		sed -n '2,11s/^# \{0,1\}//p' "$0" 2>/dev/null || true
		exit 0
		;;
	*) die "unknown argument: $1 (see --help)" ;;
	esac
done

case $(uname -s) in
Linux) os=linux ;;
Darwin) os=darwin ;;
MINGW* | MSYS* | CYGWIN*) die "on Windows install with Scoop (scoop install lovia) or npm (npm i -g @lovia-dev/lovia)" ;;
*) die "no release for $(uname -s); build from source: go install github.com/lovia-dev/lovia@latest" ;;
esac
case $(uname -m) in
x86_64 | amd64) arch=amd64 ;;
aarch64 | arm64) arch=arm64 ;;
*) die "no release for CPU $(uname -m); build from source: go install github.com/lovia-dev/lovia@latest" ;;
esac

if command -v curl >/dev/null 2>&1; then
	fetch() { curl -fsSL --proto '=http,https' -o "$2" "$1"; }
	final_url() { curl -fsSL --proto '=http,https' -o /dev/null -w '%{url_effective}' "$1"; }
elif command -v wget >/dev/null 2>&1; then
	fetch() { wget -q -O "$2" "$1"; }
	final_url() { wget -q -S -O /dev/null "$1" 2>&1 | sed -n 's/^ *[Ll]ocation: *//p' | tail -n 1 | tr -d '\r'; }
else
	die "needs curl or wget"
fi
if command -v sha256sum >/dev/null 2>&1; then
	sha256() { sha256sum "$1" | cut -d' ' -f1; }
elif command -v shasum >/dev/null 2>&1; then
	sha256() { shasum -a 256 "$1" | cut -d' ' -f1; }
else
	die "needs sha256sum or shasum to check the download"
fi

if [ "$version" = latest ]; then
	# GitHub answers /latest with a redirect to /tag/TAG.
	url=$(final_url "$base/latest") || die "could not reach $base/latest (offline?)"
	version=${url##*/}
	case $version in
	v[0-9]*) ;;
	*) die "could not tell the newest release from $url; pass --version vX.Y.Z" ;;
	esac
fi
case $version in
v*) ;;
*) version=v$version ;;
esac
case $version in
*/* | *..* | *' '*) die "not a version: $version" ;;
esac

archive="lovia_${version#v}_${os}_${arch}.tar.gz"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

say "lovia install: downloading $archive ($version)"
fetch "$base/download/$version/$archive" "$tmp/$archive" || die "could not download $base/download/$version/$archive"
fetch "$base/download/$version/checksums.txt" "$tmp/checksums.txt" || die "could not download the checksums of $version"
want=$(awk -v f="$archive" '$2 == f || $2 == "*" f { print $1 }' "$tmp/checksums.txt")
[ -n "$want" ] || die "checksums.txt of $version does not list $archive"
got=$(sha256 "$tmp/$archive")
[ "$got" = "$want" ] || die "checksum mismatch for $archive (want $want, got $got); nothing was installed"

mkdir "$tmp/x"
tar -xzf "$tmp/$archive" -C "$tmp/x" || die "could not unpack $archive"
[ -f "$tmp/x/lovia" ] || die "$archive holds no lovia binary"

mkdir -p "$prefix/bin" || die "cannot create $prefix/bin (try --prefix)"
# Copy beside the target, then rename: a running lovia is never half overwritten.
new="$prefix/bin/.lovia.new.$$"
if ! { cp "$tmp/x/lovia" "$new" && chmod 0755 "$new" && mv -f "$new" "$prefix/bin/lovia"; }; then
	rm -f "$new"
	die "cannot write $prefix/bin/lovia"
fi
if [ -d "$tmp/x/manpages" ]; then
	if mkdir -p "$prefix/share/man/man1"; then
		cp "$tmp/x/manpages/"*.1 "$prefix/share/man/man1/" 2>/dev/null || say "lovia install: manual pages not installed"
	fi
fi

say "lovia install: installed $("$prefix/bin/lovia" version 2>/dev/null || echo "$version") to $prefix/bin/lovia"
case ":${PATH:-}:" in
*":$prefix/bin:"*) ;;
*)
	say "lovia install: $prefix/bin is not on your PATH; add it with:"
	say "  echo 'export PATH=\"$prefix/bin:\$PATH\"' >> ~/.profile   # then open a new shell"
	;;
esac
