#!/usr/bin/env bash
# Builds the graveler JVM shim (providers/graveler_spark/jvm) into a jar, with the JDK's javac
# and jar against the Spark jars inside the installed pyspark wheel. Nothing is downloaded.
# Usage: scripts/build-spark-shim.sh PYTHON OUTPUT_JAR
set -euo pipefail
PYTHON=$1
OUT=$2
SRC=providers/graveler_spark/jvm
for tool in javac jar; do
  command -v "$tool" >/dev/null || { echo "build-spark-shim: '$tool' not found (install a JDK, 17+)" >&2; exit 1; }
done
JARS=$("$PYTHON" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')
BUILD=$(mktemp -d)
trap 'rm -rf "$BUILD"' EXIT
javac --release 17 -nowarn -d "$BUILD" -cp "$JARS/*" "$SRC"/src/io/graveler/spark/*.java
cp -r "$SRC"/resources/. "$BUILD"/
mkdir -p "$(dirname "$OUT")"
jar cf "$OUT.tmp" -C "$BUILD" .
mv "$OUT.tmp" "$OUT"
echo "built $OUT"
