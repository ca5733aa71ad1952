#!/usr/bin/env bash
# Builds lakeFS's Hadoop FileSystem (the assembly jar) from lakeFS's source at the commit that
# scripts/lakefs-hadoopfs.txt pins, into a cache outside the clone, and copies it into DIR
# (default .jars). Maven fetches the build's dependencies into ~/.m2 (Maven Central); nothing
# here runs at test time. Why it is built: see scripts/lakefs-hadoopfs.txt.
#
# lakeFS's source: LAKEFS_SRC, a clone or bare mirror of lakeFS's repository holding the
# commit; otherwise the first of ../.mirror/treeverse+lakeFS/repo (beside the clone) and
# /work/.mirror/treeverse+lakeFS/repo that exists.
#
# Usage: scripts/build-lakefs-hadoopfs.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DIR=${1:-.jars}
read -r coordinate commit < <(grep -v '^#' scripts/lakefs-hadoopfs.txt | grep -v '^$' | head -1)
IFS=: read -r _group artifact version <<<"$coordinate"
name="$artifact-$version-${commit:0:8}.jar"
CACHE=${GRAVELER_JAR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/graveler/jars}
mkdir -p "$DIR" "$CACHE"
if [[ -s "$DIR/$name" ]]; then exit 0; fi
if [[ ! -s "$CACHE/$name" ]]; then
	src=${LAKEFS_SRC:-}
	if [[ -z "$src" ]]; then
		for candidate in "$ROOT/../.mirror/treeverse+lakeFS/repo" /work/.mirror/treeverse+lakeFS/repo; do
			if [[ -d "$candidate" ]]; then src=$candidate; break; fi
		done
	fi
	if [[ -z "$src" ]] || ! git -C "$src" cat-file -e "$commit^{commit}" 2>/dev/null; then
		echo "build-lakefs-hadoopfs: lakeFS's source at $commit is needed to build $name" >&2
		echo "  (a clone of lakeFS's repository, treeverse/lakeFS: point LAKEFS_SRC at it)" >&2
		exit 1
	fi
	command -v mvn >/dev/null || { echo "build-lakefs-hadoopfs: 'mvn' not found" >&2; exit 1; }
	echo "building $name from lakeFS $commit"
	BUILD=$(mktemp -d)
	trap 'rm -rf "$BUILD"' EXIT
	git -C "$src" archive "$commit" clients/java clients/hadoopfs | tar -x -C "$BUILD"
	# The FileSystem names the SDK release it was built with; the same commit's SDK source
	# stands in for it, under a version of its own in ~/.m2.
	sdk="0.0.0-graveler-${commit:0:8}"
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
