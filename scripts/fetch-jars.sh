#!/usr/bin/env bash
# Fetch the jars listed in scripts/jars.txt from Maven Central into a directory (default
# .jars), skipping those already there. Maven's own cache (~/.m2) is reused across clones.
#
# Usage: scripts/fetch-jars.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-.jars}
mkdir -p "$DIR"
while read -r coordinate; do
	[[ -z "$coordinate" || "$coordinate" == \#* ]] && continue
	IFS=: read -r _group artifact version <<<"$coordinate"
	jar="$DIR/$artifact-$version.jar"
	[[ -s "$jar" ]] && continue
	echo "fetching $coordinate"
	mvn -B -q dependency:copy -Dartifact="$coordinate" -DoutputDirectory="$DIR" -Dmdep.overWriteIfNewer=false
	[[ -s "$jar" ]] || { echo "fetch-jars: $coordinate did not arrive as $jar" >&2; exit 1; }
done <scripts/jars.txt
