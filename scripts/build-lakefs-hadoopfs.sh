#!/usr/bin/env bash
# Builds lakeFS's Hadoop FileSystem (the assembly jar) from lakeFS's source release that
# scripts/lakefs-hadoopfs.txt pins, into a cache outside the clone, and copies it into DIR
# (default .jars). The source is the release's Go module zip, fetched and checked against the
# pinned SHA-256 by scripts/lakefs-source.sh; Maven fetches the build's dependencies into ~/.m2 (Maven Central). Nothing here runs at test
# time. Why it is built at all: see scripts/lakefs-hadoopfs.txt.
#
# Usage: scripts/build-lakefs-hadoopfs.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-.jars}
read -r coordinate module _sha256 < <(grep -v '^#' scripts/lakefs-hadoopfs.txt | grep -v '^$' | head -1)
IFS=: read -r _group artifact version <<<"$coordinate"
release=${module#*@}
name="$artifact-$version-lakefs-$release.jar"
CACHE=${GRAVELER_JAR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/graveler/jars}
mkdir -p "$DIR" "$CACHE"
if [[ -s "$DIR/$name" ]]; then exit 0; fi

if [[ ! -s "$CACHE/$name" ]]; then
	command -v mvn >/dev/null || { echo "build-lakefs-hadoopfs: 'mvn' not found" >&2; exit 1; }
	echo "building $name from $module"
	BUILD=$(mktemp -d)
	trap 'rm -rf "$BUILD"' EXIT
	bash scripts/lakefs-source.sh "$BUILD" clients/java/ clients/hadoopfs/
	# The FileSystem names the SDK release it was built with; the same release's SDK source
	# stands in for it, under a version of its own in ~/.m2.
	sdk="0.0.0-graveler-lakefs-$release"
	sed -i "0,/<version>0.0.0<\/version>/s//<version>$sdk<\/version>/" "$BUILD/clients/java/pom.xml"
	perl -0pi -e "s#(<artifactId>sdk</artifactId>\s*<version>)[^<]*#\${1}$sdk#" \
		"$BUILD/clients/hadoopfs/pom.xml"
	grep -q "$sdk" "$BUILD/clients/hadoopfs/pom.xml" ||
		{ echo "build-lakefs-hadoopfs: the SDK dependency was not found in hadoopfs/pom.xml" >&2; exit 1; }
	MVN=(mvn -B -q -Dmaven.test.skip=true -Dmaven.javadoc.skip=true -Dgpg.skip=true)
	(cd "$BUILD/clients/java" && "${MVN[@]}" install)
	(cd "$BUILD/clients/hadoopfs" && "${MVN[@]}" -Passembly -DfinalName="${name%.jar}" package)
	cp "$BUILD/clients/hadoopfs/target/$name" "$CACHE/$name.tmp"
	mv "$CACHE/$name.tmp" "$CACHE/$name"
fi
cp "$CACHE/$name" "$DIR/$name.tmp"
mv "$DIR/$name.tmp" "$DIR/$name"
echo "$DIR/$name"
