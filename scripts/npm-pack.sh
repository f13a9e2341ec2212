#!/bin/sh
# Builds the npm packages from goreleaser's dist/ folder:
#   scripts/npm-pack.sh VERSION DIST_DIR OUT_DIR
# One package per platform (@lovia-dev/lovia-<os>-<cpu>, with "os"/"cpu" set so npm
# installs only the matching one) and the main @lovia-dev/lovia package whose
# optionalDependencies name them all. Publishing is `npm publish` of each tarball.
set -eu

if [ $# -ne 3 ]; then
	echo "usage: $0 VERSION DIST_DIR OUT_DIR" >&2
	exit 2
fi
version=${1#v}
dist=$2
out=$3
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# goreleaser's build folders are named lovia_<goos>_<goarch>[_<variant>].
for pair in linux:amd64:linux:x64 linux:arm64:linux:arm64 darwin:amd64:darwin:x64 \
	darwin:arm64:darwin:arm64 windows:amd64:win32:x64 windows:arm64:win32:arm64; do
	goos=${pair%%:*}
	rest=${pair#*:}
	goarch=${rest%%:*}
	rest=${rest#*:}
	npmos=${rest%%:*}
	npmcpu=${rest#*:}
	exe=lovia
	[ "$goos" = windows ] && exe=lovia.exe
	src=""
	for d in "$dist"/lovia_"$goos"_"$goarch"*; do
		[ -f "$d/$exe" ] && src="$d/$exe" && break
	done
	if [ -z "$src" ]; then
		echo "npm-pack: no $goos/$goarch binary under $dist" >&2
		exit 1
	fi
	name="lovia-$npmos-$npmcpu"
	dir="$work/$name"
	mkdir -p "$dir/bin"
	cp "$src" "$dir/bin/$exe"
	chmod 0755 "$dir/bin/$exe"
	cat >"$dir/package.json" <<JSON
{
  "name": "@lovia-dev/$name",
  "version": "$version",
  "description": "The lovia binary for $npmos/$npmcpu (installed by @lovia-dev/lovia)",
  "homepage": "https://github.com/lovia-dev/lovia",
  "repository": {"type": "git", "url": "git+https://github.com/lovia-dev/lovia.git"},
  "os": ["$npmos"],
  "cpu": ["$npmcpu"],
  "files": ["bin/$exe"],
  "preferUnplugged": true
}
JSON
	(cd "$out" && npm pack --silent "$dir" >/dev/null)
done

main="$work/lovia"
cp -R "$here/packaging/npm/lovia" "$main"
cp "$here/README.md" "$main/README.md"
node -e '
const fs = require("fs"), f = process.argv[1], v = process.argv[2];
const p = JSON.parse(fs.readFileSync(f, "utf8"));
p.version = v;
for (const k of Object.keys(p.optionalDependencies)) p.optionalDependencies[k] = v;
fs.writeFileSync(f, JSON.stringify(p, null, 2) + "\n");
' "$main/package.json" "$version"
(cd "$out" && npm pack --silent "$main" >/dev/null)
ls "$out"
