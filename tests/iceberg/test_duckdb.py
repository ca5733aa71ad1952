"""DuckDB attaches graveler's REST catalog with its iceberg extension (from the PyPI
package, loaded by path: nothing downloads) and reads tables at a branch, a tag and a
commit, merge-on-read deletes applied."""

from __future__ import annotations

from pathlib import Path

import duckdb
import duckdb_extension_avro
import duckdb_extension_httpfs
import duckdb_extension_iceberg
from pyiceberg.catalog.rest import RestCatalog

from graveler.repository import Repository
from tests.iceberg.helpers import SCHEMA, SPEC, rows
from tests.serving import Key, Served


def extension(module: object, name: str) -> str:
    root = Path(module.__file__).parent / "extensions"  # type: ignore[attr-defined]
    return str(next(root.glob(f"*/{name}.duckdb_extension")))


def attach(server: Served, key: Key) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(
        config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}
    )
    for module, name in (
        (duckdb_extension_httpfs, "httpfs"),
        (duckdb_extension_avro, "avro"),
        (duckdb_extension_iceberg, "iceberg"),
    ):
        con.execute(f"LOAD '{extension(module, name)}'")
    uri = server.urls["iceberg"]
    con.execute(
        f"CREATE SECRET graveler (TYPE ICEBERG, CLIENT_ID '{key.access_key_id}', "
        f"CLIENT_SECRET '{key.secret_access_key}', OAUTH2_SERVER_URI '{uri}/v1/oauth/tokens')"
    )
    con.execute(f"ATTACH 'lake' AS gv (TYPE ICEBERG, ENDPOINT '{uri}', SECRET graveler)")
    return con


def test_duckdb_reads_tables_at_refs(
    iceberg_server: Served, iceberg_key: Key, served_repo: Repository
):
    catalog = RestCatalog(
        "duck",
        uri=iceberg_server.urls["iceberg"],
        warehouse="lake",
        credential=f"{iceberg_key.access_key_id}:{iceberg_key.secret_access_key}",
    )
    catalog.create_namespace(("main", "duck"))
    table = catalog.create_table("main.duck.t", SCHEMA, partition_spec=SPEC)
    table.append(rows([1, 2], 1))
    table.append(rows([3], 2))
    served_repo.create_tag("duck1", "main")
    commit = served_repo.branch("main").commit_id
    catalog.load_table("main.duck.t").delete("id = 2")
    con = attach(iceberg_server, iceberg_key)
    query = 'SELECT id, p FROM gv."{}".t ORDER BY id'
    assert con.execute(query.format("main.duck")).fetchall() == [(1, 1), (3, 2)]
    assert con.execute(query.format("duck1.duck")).fetchall() == [(1, 1), (2, 1), (3, 2)]
    assert con.execute(query.format(f"{commit}.duck")).fetchall() == [(1, 1), (2, 1), (3, 2)]
    schemas = {
        r[0]
        for r in con.execute(
            "SELECT schema_name FROM duckdb_schemas() WHERE database_name = 'gv'"
        ).fetchall()
    }
    assert {"main", "main.duck"} <= schemas
