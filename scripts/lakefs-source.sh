#!/usr/bin/env bash
# Unpacks lakeFS's source release, as scripts/lakefs-hadoopfs.txt pins it, into TARGET: the
# release's Go module zip from the Go module proxy ($GOPROXY's first entry, proxy.golang.org by
# default), checked against the pinned SHA-256 and kept in a cache outside the clone. With
# SUBTREE arguments, only those folders of the release (for example clients/java/) are unpacked.
# With --generate (the whole release only), lakeFS's code generators run afterwards, as its
# Makefile's gen-api does (`go generate` of pkg/api/apigen, pkg/auth and pkg/authentication;
# their tools come from the Go module proxy): lakeFS's Go API client exists only then, and
# lakectl and esti import it. Shared by scripts/build-lakefs-hadoopfs.sh, build-lakectl.sh and
# build-esti.sh; never runs at test time.
#
# Usage: scripts/lakefs-source.sh [--generate] TARGET [SUBTREE...]
set -euo pipefail
generate=false
if [[ "${1:-}" == --generate ]]; then
	generate=true
	shift
fi
TARGET=${1:?usage: lakefs-source.sh [--generate] TARGET [SUBTREE...]}
shift
cd "$(dirname "$0")/.."
read -r _coordinate module sha256 < <(grep -v '^#' scripts/lakefs-hadoopfs.txt | grep -v '^$' | head -1)
path=${module%@*}
release=${module#*@}
CACHE=${GRAVELER_JAR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/graveler/jars}
mkdir -p "$CACHE"
zip="$CACHE/${path//\//+}@$release.zip"
if [[ ! -s "$zip" ]]; then
	proxy=$(go env GOPROXY 2>/dev/null || true)
	proxy=${proxy:-https://proxy.golang.org}
	proxy=${proxy%%[,|]*}
	[[ "$proxy" == http* ]] || proxy=https://proxy.golang.org
	echo "fetching $module from $proxy" >&2
	curl -fsSL --retry 3 -o "$zip.tmp" "$proxy/$path/@v/$release.zip"
	echo "$sha256  $zip.tmp" | sha256sum -c --quiet - ||
		{ echo "lakefs-source: $module does not have the pinned SHA-256" >&2; rm -f "$zip.tmp"; exit 1; }
	mv "$zip.tmp" "$zip"
fi
echo "$sha256  $zip" | sha256sum -c --quiet - ||
	{ echo "lakefs-source: $zip does not have the pinned SHA-256" >&2; exit 1; }
python3 - "$zip" "$path@$release/" "$TARGET" "$@" <<'PY'
import sys, zipfile
archive, prefix, target, *subtrees = sys.argv[1:]
with zipfile.ZipFile(archive) as zf:
    for info in zf.infolist():
        rel = info.filename[len(prefix):] if info.filename.startswith(prefix) else ""
        if not rel or ".." in rel.split("/"):
            continue
        if subtrees and not rel.startswith(tuple(subtrees)):
            continue
        info.filename = rel
        zf.extract(info, target)
PY
if $generate; then
	(cd "$TARGET" && GOFLAGS=-mod=mod go generate ./pkg/api/apigen ./pkg/auth ./pkg/authentication >&2)
fi
