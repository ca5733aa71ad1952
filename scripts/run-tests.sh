#!/usr/bin/env bash
# The whole test suite, as `make test` runs it: three pytest processes at once.
#
# The suites that drive deployed services (the Airflow scheduler, dag-processor, triggerer and
# api-server; the Dagster webserver and daemon; a Spark standalone cluster) spend much of their
# time waiting on those processes, and the Spark and documentation suites on JVMs and child
# processes, so each group runs beside the engine's own tests instead of after them. Each
# process has its own temporary directory; every port and database schema is picked per test.
# GRAVELER_TEST_JOBS=1 runs everything in one process instead. Extra arguments go to each.
#
# Usage: scripts/run-tests.sh PYTHON [PYTEST-ARGS...]
set -uo pipefail
PY=${1:?usage: run-tests.sh PYTHON [PYTEST-ARGS...]}
shift
GROUPS_BESIDE=("tests/airflow tests/dagster_provider tests/spark_cluster" "tests/spark tests/docs")
BASE=$(mktemp -d "${TMPDIR:-/tmp}/graveler-tests.XXXXXX")
trap 'rm -rf "$BASE"' EXIT
PYTEST=("$PY" -m pytest -q -p no:cacheprovider "$@")

if [[ "${GRAVELER_TEST_JOBS:-3}" == 1 ]]; then
	"${PYTEST[@]}" --basetemp="$BASE/all"
	exit $?
fi

started=$SECONDS
pids=()
IGNORE=()
for i in "${!GROUPS_BESIDE[@]}"; do
	read -r -a dirs <<<"${GROUPS_BESIDE[$i]}"
	for dir in "${dirs[@]}"; do IGNORE+=("--ignore=$dir"); done
	"${PYTEST[@]}" --basetemp="$BASE/group$i" "${dirs[@]}" >"$BASE/group$i.log" 2>&1 &
	pids+=($!)
	echo "running beside the rest, output after it: ${GROUPS_BESIDE[$i]}"
done
"${PYTEST[@]}" --basetemp="$BASE/rest" "${IGNORE[@]}"
status=$?
echo "the rest: exit $status"
for i in "${!pids[@]}"; do
	wait "${pids[$i]}"
	code=$?
	echo
	echo "=============== ${GROUPS_BESIDE[$i]} ==============="
	cat "$BASE/group$i.log"
	echo "${GROUPS_BESIDE[$i]}: exit $code"
	if ((status == 0)); then status=$code; fi
done
echo "$((SECONDS - started)) s in all"
exit "$status"
