#!/usr/bin/env bash
# Fetches the source distribution that scripts/lakefs-spec-suite.txt pins (lakefs-spec's own
# tests are in it) from the package index with pip, checks its SHA-256, and keeps it in a cache
# outside the clone (~/.cache/graveler/sdists) and in DIR (default .suites). Nothing is
# downloaded at test time.
#
# Usage: scripts/fetch-lakefs-spec-suite.sh PYTHON [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:?usage: fetch-lakefs-spec-suite.sh PYTHON [DIR]}
DIR=${2:-.suites}
read -r requirement sha256 < <(grep -v '^#' scripts/lakefs-spec-suite.txt | grep -v '^$' | head -1)
project=${requirement%%==*}
version=${requirement#*==}
name="${project//-/_}-$version.tar.gz"
CACHE=${GRAVELER_SDIST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/graveler/sdists}
mkdir -p "$DIR" "$CACHE"
check() { echo "$sha256  $1" | sha256sum -c --quiet - 2>/dev/null; }
if [[ -s "$DIR/$name" ]] && check "$DIR/$name"; then exit 0; fi
if ! { [[ -s "$CACHE/$name" ]] && check "$CACHE/$name"; }; then
	TMP=$(mktemp -d)
	trap 'rm -rf "$TMP"' EXIT
	echo "fetching $requirement (source distribution)" >&2
	"$PY" -m pip download --quiet --no-deps --no-binary :all: --dest "$TMP" "$requirement" >&2
	[[ -s "$TMP/$name" ]] || { echo "fetch-lakefs-spec-suite: pip gave no $name" >&2; exit 1; }
	check "$TMP/$name" ||
		{ echo "fetch-lakefs-spec-suite: $name does not have the pinned SHA-256" >&2; exit 1; }
	mv "$TMP/$name" "$CACHE/$name"
fi
cp "$CACHE/$name" "$DIR/$name.tmp"
mv "$DIR/$name.tmp" "$DIR/$name"
echo "$DIR/$name"
