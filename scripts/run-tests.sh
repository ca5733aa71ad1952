#!/usr/bin/env bash
# The whole test suite, as `make test` runs it: two pytest processes at once.
#
# The suites that drive deployed services (the Airflow scheduler, dag-processor, triggerer and
# api-server; the Dagster webserver and daemon; a Spark standalone cluster; the Delta suite's
# delta-spark process and graveler serve; lakeFS's clients, among them a Spark driver per
# access mode of lakeFS's Hadoop FileSystem, lakectl, and lakefs-spec's own suite in a network
# namespace of its own, against graveler serve) spend much of their
# time waiting on those processes, so they run beside the rest instead of after it. Each
# process has its own temporary directory; every port and database schema is picked per test.
# GRAVELER_TEST_JOBS=1 runs them one after the other instead. Extra arguments go to both.
#
# Usage: scripts/run-tests.sh PYTHON [PYTEST-ARGS...]
set -uo pipefail
PY=${1:?usage: run-tests.sh PYTHON [PYTEST-ARGS...]}
shift
SERVICES=(tests/airflow tests/dagster_provider tests/spark_cluster tests/tables/delta tests/lakefs_clients)
IGNORE=()
for dir in "${SERVICES[@]}"; do IGNORE+=("--ignore=$dir"); done
BASE=$(mktemp -d "${TMPDIR:-/tmp}/graveler-tests.XXXXXX")
trap 'rm -rf "$BASE"' EXIT
PYTEST=("$PY" -m pytest -q -p no:cacheprovider "$@")

if [[ "${GRAVELER_TEST_JOBS:-2}" == 1 ]]; then
	"${PYTEST[@]}" --basetemp="$BASE/all"
	exit $?
fi

started=$SECONDS
"${PYTEST[@]}" --basetemp="$BASE/services" "${SERVICES[@]}" >"$BASE/services.log" 2>&1 &
services_pid=$!
echo "services suites (${SERVICES[*]}) running beside the rest; their output follows it"
"${PYTEST[@]}" --basetemp="$BASE/rest" "${IGNORE[@]}"
rest=$?
wait "$services_pid"
services=$?
echo
echo "=============== ${SERVICES[*]} ==============="
cat "$BASE/services.log"
echo
echo "rest: exit $rest; services: exit $services; $((SECONDS - started)) s in all"
if ((rest != 0)); then exit "$rest"; fi
exit "$services"
