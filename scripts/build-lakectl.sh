#!/usr/bin/env bash
# Builds lakectl, lakeFS's command-line client, from the lakeFS source release that
# scripts/lakefs-hadoopfs.txt pins (the same Go module zip the Hadoop FileSystem is built
# from, fetched and checked by scripts/build-lakefs-hadoopfs.sh's rules), into a cache outside
# the clone, and prints the binary's path. lakeFS's API client is generated at build time, so
# `go install` of the module cannot build it: this runs lakeFS's own generators (`go generate`
# of pkg/api/apigen, pkg/auth and pkg/authentication, as its Makefile's gen-api does; their
# tools come from the Go module proxy) and then `go build ./cmd/lakectl`. Nothing here runs at
# test time; tests/lakefs_clients/test_lakectl.py finds the binary in the cache.
#
# Usage: scripts/build-lakectl.sh
set -euo pipefail
cd "$(dirname "$0")/.."
read -r _coordinate module sha256 < <(grep -v '^#' scripts/lakefs-hadoopfs.txt | grep -v '^$' | head -1)
path=${module%@*}
release=${module#*@}
CACHE=${GRAVELER_JAR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/graveler/jars}
BIN_CACHE=${GRAVELER_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/graveler/bin}
binary="$BIN_CACHE/lakectl-$release"
if [[ -x "$binary" ]]; then
	echo "$binary"
	exit 0
fi
command -v go >/dev/null || { echo "build-lakectl: 'go' not found" >&2; exit 1; }
mkdir -p "$CACHE" "$BIN_CACHE"

zip="$CACHE/${path//\//+}@$release.zip"
if [[ ! -s "$zip" ]]; then
	proxy=$(go env GOPROXY 2>/dev/null || true)
	proxy=${proxy:-https://proxy.golang.org}
	proxy=${proxy%%[,|]*}
	[[ "$proxy" == http* ]] || proxy=https://proxy.golang.org
	echo "fetching $module from $proxy" >&2
	curl -fsSL --retry 3 -o "$zip.tmp" "$proxy/$path/@v/$release.zip"
	echo "$sha256  $zip.tmp" | sha256sum -c --quiet - ||
		{ echo "build-lakectl: $module does not have the pinned SHA-256" >&2; rm -f "$zip.tmp"; exit 1; }
	mv "$zip.tmp" "$zip"
fi
echo "$sha256  $zip" | sha256sum -c --quiet - ||
	{ echo "build-lakectl: $zip does not have the pinned SHA-256" >&2; exit 1; }

BUILD=$(mktemp -d)
trap 'chmod -R u+w "$BUILD" 2>/dev/null; rm -rf "$BUILD"' EXIT
echo "building lakectl from $module" >&2
python3 - "$zip" "$path@$release/" "$BUILD/src" <<'PY'
import sys, zipfile
archive, prefix, target = sys.argv[1:]
with zipfile.ZipFile(archive) as zf:
    for info in zf.infolist():
        rel = info.filename[len(prefix):] if info.filename.startswith(prefix) else None
        if rel and ".." not in rel.split("/"):
            info.filename = rel
            zf.extract(info, target)
PY
cd "$BUILD/src"
export GOFLAGS=-mod=mod
go generate ./pkg/api/apigen ./pkg/auth ./pkg/authentication >&2
go build -trimpath -o "$binary.tmp" \
	-ldflags "-X github.com/treeverse/lakefs/pkg/version.Version=${release#v}" ./cmd/lakectl >&2
mv "$binary.tmp" "$binary"
echo "$binary"
