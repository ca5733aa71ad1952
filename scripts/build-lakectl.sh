#!/usr/bin/env bash
# Builds lakectl, lakeFS's command-line client, from the lakeFS source release that
# scripts/lakefs-hadoopfs.txt pins (the same Go module zip the Hadoop FileSystem is built
# from, fetched and checked by scripts/lakefs-source.sh), into a cache outside the clone,
# and prints the binary's path. lakeFS's API client is generated at build time, so
# `go install` of the module cannot build it: this runs lakeFS's own generators first
# (scripts/lakefs-source.sh --generate), then `go build ./cmd/lakectl`. Nothing here runs at
# test time; tests/lakefs_clients/test_lakectl.py finds the binary in the cache.
#
# Usage: scripts/build-lakectl.sh
set -euo pipefail
cd "$(dirname "$0")/.."
read -r _coordinate module _sha256 < <(grep -v '^#' scripts/lakefs-hadoopfs.txt | grep -v '^$' | head -1)
release=${module#*@}
BIN_CACHE=${GRAVELER_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/graveler/bin}
binary="$BIN_CACHE/lakectl-$release"
if [[ -x "$binary" ]]; then
	echo "$binary"
	exit 0
fi
command -v go >/dev/null || { echo "build-lakectl: 'go' not found" >&2; exit 1; }
mkdir -p "$BIN_CACHE"

BUILD=$(mktemp -d)
trap 'chmod -R u+w "$BUILD" 2>/dev/null; rm -rf "$BUILD"' EXIT
echo "building lakectl from $module" >&2
bash scripts/lakefs-source.sh --generate "$BUILD/src"
cd "$BUILD/src"
export GOFLAGS=-mod=mod
go build -trimpath -o "$binary.tmp" \
	-ldflags "-X github.com/treeverse/lakefs/pkg/version.Version=${release#v}" ./cmd/lakectl >&2
mv "$binary.tmp" "$binary"
echo "$binary"
