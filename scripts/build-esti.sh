#!/usr/bin/env bash
# Builds esti, lakeFS's system-test suite (the esti/ folder of lakeFS's source), as a Go test
# binary from the lakeFS source release that scripts/lakefs-hadoopfs.txt pins (the same Go module
# zip lakectl is built from, fetched and checked by scripts/lakefs-source.sh), into a cache outside
# the clone, and prints the cached directory's path. esti imports lakeFS's generated API client,
# so lakeFS's generators run first (scripts/lakefs-source.sh --generate), as for lakectl; then
# `go test -c ./esti`. The directory holds the binary (esti.test) and what esti reads from its
# working directory at run time (golden/, files/). Nothing here runs at test time;
# tests/lakefs_clients/test_esti.py finds the directory in the cache.
#
# Usage: scripts/build-esti.sh
set -euo pipefail
cd "$(dirname "$0")/.."
read -r _coordinate module _sha256 < <(grep -v '^#' scripts/lakefs-hadoopfs.txt | grep -v '^$' | head -1)
release=${module#*@}
BIN_CACHE=${GRAVELER_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/graveler/bin}
target="$BIN_CACHE/esti-$release"
if [[ -x "$target/esti.test" ]]; then
	echo "$target"
	exit 0
fi
command -v go >/dev/null || { echo "build-esti: 'go' not found" >&2; exit 1; }
mkdir -p "$BIN_CACHE"

BUILD=$(mktemp -d)
trap 'chmod -R u+w "$BUILD" 2>/dev/null; rm -rf "$BUILD"' EXIT
echo "building esti from $module" >&2
bash scripts/lakefs-source.sh --generate "$BUILD/src"
cd "$BUILD/src"
export GOFLAGS=-mod=mod
mkdir -p "$BUILD/out"
go test -c -trimpath -o "$BUILD/out/esti.test" ./esti >&2
cp -r esti/golden esti/files "$BUILD/out/"
rm -rf "$target.tmp"
mv "$BUILD/out" "$target.tmp"
rm -rf "$target"
mv "$target.tmp" "$target"
echo "$target"
