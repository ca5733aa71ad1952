#!/usr/bin/env bash
# Start the local PostgreSQL 15 cluster and create the role/database the test suite uses.
# Idempotent: safe to run when the server is already up and the objects already exist.
set -euo pipefail
if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  echo "start-postgres: pg_ctlcluster not found; PostgreSQL 15 must be installed" >&2
  exit 1
fi
pg_ctlcluster 15 main start 2>/dev/null || true
for _ in $(seq 1 30); do
  pg_isready -q -h 127.0.0.1 -p 5432 && break
  sleep 0.5
done
pg_isready -h 127.0.0.1 -p 5432 >/dev/null || { echo "start-postgres: server did not come up" >&2; exit 1; }
as_postgres() { if [ "$(id -u)" = 0 ]; then su postgres -c "$1"; else bash -c "$1"; fi; }
as_postgres "psql -qtAc \"SELECT 1 FROM pg_roles WHERE rolname='graveler'\"" | grep -q 1 \
  || as_postgres "psql -qc \"CREATE ROLE graveler LOGIN PASSWORD 'graveler' CREATEDB\""
as_postgres "psql -qtAc \"SELECT 1 FROM pg_database WHERE datname='graveler_test'\"" | grep -q 1 \
  || as_postgres "createdb -O graveler graveler_test"
echo "start-postgres: ready (graveler_test)"
