# graveler: developer entry points. `make test` and `make demo` work on a fresh clone.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
EXTRAS ?= dev,s3,postgres,airflow,airflow-postgres,dagster,dagster-postgres,spark,fsspec,dataframes,bench,docs,ui,server,tables,clients,lakefs-clients
PG_URL ?= postgresql+psycopg://graveler:graveler@127.0.0.1:5432/graveler_test

.PHONY: venv dvc-env delta-spark-env iceberg-spark shim jars lakefs-hadoopfs lakefs-openapi lakefs-spec-suite lakectl esti test test-fast stress lint typecheck postgres browser demo tour bench docs docs-serve clean

SHIM_JAR := providers/graveler_spark/jars/graveler-spark-shim.jar
SHIM_SRC := $(wildcard providers/graveler_spark/jvm/src/io/graveler/spark/*.java) \
	providers/graveler_spark/jvm/resources/META-INF/services/org.apache.spark.sql.sources.DataSourceRegister

venv: $(STAMP) $(SHIM_JAR)

# The install resolves against constraints.txt (every package pinned). uv (pinned here) does it
# in about a minute where pip takes several; pip does it alone where uv cannot be installed.
UV_VERSION := 0.13.9

$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	if $(PY) -m pip install --quiet 'uv==$(UV_VERSION)' && \
		$(PY) -m uv pip install --quiet --python $(PY) -c constraints.txt -e '.[$(EXTRAS)]'; then :; \
	else \
		$(PY) -m pip install --quiet --upgrade pip && \
		$(PY) -m pip install --quiet -c constraints.txt -e '.[$(EXTRAS)]'; \
	fi
	$(PY) scripts/providers_pth.py
	@touch $(STAMP)

# The JVM shim that makes df.write.format("graveler").partitionBy(...) work (see docs/spark.md):
# compiled with the machine's JDK against the Spark jars of the installed pyspark wheel.
shim: $(SHIM_JAR)

$(SHIM_JAR): $(SHIM_SRC) | $(STAMP)
	bash scripts/build-spark-shim.sh $(PY) $@

# JVM jars for Spark's s3a://, Delta and Iceberg (scripts/jars.txt), from Maven Central into
# .jars/, cached; tests find them there (tests/jars.py) and never download.
jars:
	@bash scripts/fetch-jars.sh .jars

# lakeFS's Hadoop FileSystem (io.lakefs:hadoop-lakefs-assembly) for the Spark client suite of
# tests/lakefs_clients: no version is served by Maven Central here, so it is built from lakeFS's
# source at a pinned commit into a cache outside the clone (scripts/lakefs-hadoopfs.txt says why
# and where the source comes from) and copied into .jars/.
lakefs-hadoopfs:
	@bash scripts/build-lakefs-hadoopfs.sh .jars

# lakefs-spec's own test suite (its source distribution, where its tests are), from the package
# index at the version and SHA-256 of scripts/lakefs-spec-suite.txt, cached outside the clone
# and copied into .suites/; tests/lakefs_clients/test_lakefs_spec_suite.py runs it unmodified.
lakefs-spec-suite: $(STAMP)
	@bash scripts/fetch-lakefs-spec-suite.sh $(PY) .suites

# lakeFS's OpenAPI document (api/swagger.yml of the same pinned lakeFS release), into .suites/:
# the lakeFS API tests validate every answer against it.
lakefs-openapi:
	@bash scripts/lakefs-source.sh .suites/lakefs-api api/swagger.yml
	@cp .suites/lakefs-api/api/swagger.yml .suites/lakefs-api-v1.84.0.yml

# lakectl, lakeFS's command-line client, built from the lakeFS release of
# scripts/lakefs-hadoopfs.txt (its API client generated as lakeFS's Makefile does) into a cache
# outside the clone; tests/lakefs_clients/test_lakectl.py drives it.
lakectl:
	@bash scripts/build-lakectl.sh >/dev/null

# lakeFS's own system tests (esti, the esti/ folder of the same lakeFS release) against graveler
# serve: scripts/build-esti.sh builds them into a Go test binary cached beside lakectl, and
# tests/lakefs_clients/test_esti.py runs the ones that pass (docs/lakefs-clients.md lists the
# rest, and why). Not part of `make test`: the build and the run add several minutes.
esti: venv lakectl
	@bash scripts/build-esti.sh >/dev/null
	GRAVELER_ESTI=1 $(PY) -m pytest -q -p no:cacheprovider tests/lakefs_clients/test_esti.py

# delta-spark's own environment, for the Delta Lake oracle of tests/tables/delta: pyspark 4.2.1,
# the newest Spark that delta-spark 4.4.0 (the newest release) supports. The project's pinned
# pyspark 4.3.0 cannot run delta-spark (docs/delta.md); nothing else uses this environment.
DELTA_SPARK_PY := .venv-delta-spark/bin/python
delta-spark-env: $(DELTA_SPARK_PY)

$(DELTA_SPARK_PY):
	$(PYTHON) -m venv .venv-delta-spark
	.venv-delta-spark/bin/pip install --quiet 'pyspark==4.2.1'

# Spark 4.1 in its own environment for the Iceberg suites (tests/iceberg/spark.py): Iceberg's
# newest Spark runtime (scripts/jars.txt) is built for Spark 4.1 and does not load in the
# pinned pyspark 4.3.0. Only the tests' Spark driver runs there.
ICEBERG_SPARK := .venv-iceberg-spark/bin/python
ICEBERG_PYSPARK := 4.1.4
iceberg-spark: $(ICEBERG_SPARK)

$(ICEBERG_SPARK):
	$(PYTHON) -m venv .venv-iceberg-spark
	.venv-iceberg-spark/bin/pip install --quiet 'pyspark==$(ICEBERG_PYSPARK)'

# Starts the machine's PostgreSQL 15 cluster (idempotent) and creates the test role and database.
postgres:
	@bash scripts/start-postgres.sh

# Debian's Chromium (and its driver) for the UI's real-browser test, tests/ui: Playwright
# drives /usr/bin/chromium (its own browser download cannot work here). Installed when
# missing, as root, non-interactively.
browser:
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq && apt-get install -y -qq --no-install-recommends \
			chromium chromium-driver >/dev/null; \
	fi

# Two pytest processes at once: the deployed-service suites beside the rest (scripts/run-tests.sh;
# GRAVELER_TEST_JOBS=1 for one after the other).
test: venv jars lakefs-hadoopfs lakefs-spec-suite lakefs-openapi lakectl delta-spark-env iceberg-spark postgres browser
	GRAVELER_TEST_POSTGRES_URL='$(PG_URL)' bash scripts/run-tests.sh $(PY)

# The long form of tests/stress (the short form runs inside `make test`): 8 writer processes x
# 250 operations on PostgreSQL, 60 SIGKILLed writers, 30 rounds through the faulty S3 proxy,
# 400 fuzzed inputs per property. The figures land in docs/benchmarks/stress-report.json (README "Reliability").
STRESS_REPORT ?= docs/benchmarks/stress-report.json
stress: venv postgres
	GRAVELER_TEST_POSTGRES_URL='$(PG_URL)' GRAVELER_STRESS=long \
	GRAVELER_STRESS_REPORT='$(STRESS_REPORT)' \
	$(PY) -m pytest -q -p no:cacheprovider tests/stress

test-fast: venv
	$(PY) -m pytest -q -x -p no:cacheprovider -m 'not slow'

lint: venv
	$(PY) -m ruff check graveler tests benchmarks providers dags_examples docs/hooks
	$(PY) -m mypy
	$(PY) -m mypy --ignore-missing-imports providers/graveler_airflow providers/graveler_dagster \
		providers/graveler_spark providers/graveler_fsspec providers/pyspark_graveler docs/hooks

# The example Airflow DAG (dags_examples/airflow), run end to end by Airflow under ./.demo.
demo: venv
	$(PY) dags_examples/airflow/demo.py

# A quick tour of the Python API, no orchestrator.
tour: venv
	$(PY) -m graveler.cli.tour

# The documentation site (MkDocs Material + mkdocstrings) into ./site; any warning fails it.
docs: venv
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir site

docs-serve: venv
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs serve

bench: venv
	$(PY) -m benchmarks committed

# DVC for the import benchmark's peer (benchmarks/importcmp.py), in its own environment: with
# Airflow's constraints (constraints.txt) pip can only resolve DVC 0.62, from 2019.
dvc-env: .venv-dvc/bin/dvc

.venv-dvc/bin/dvc:
	$(PYTHON) -m venv .venv-dvc
	.venv-dvc/bin/pip install --quiet 'dvc==3.67.1'

clean:
	rm -rf $(VENV) .venv-delta-spark .venv-iceberg-spark site .graveler .graveler-demo .demo .pytest_cache .mypy_cache .ruff_cache .hypothesis
