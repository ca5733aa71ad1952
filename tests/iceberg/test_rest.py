"""The Iceberg REST catalog of ``graveler serve`` (the suite's server, with two workers),
driven by pyiceberg's RestCatalog and by raw HTTP: configuration, OAuth2 tokens, access
rights, the spec's error model, tables at refs, transactions and racing commits."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
import requests
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import CommitFailedException, ForbiddenError, NoSuchTableError
from pyiceberg.types import StringType

from tests.iceberg.helpers import SCHEMA, SPEC, content, rows
from tests.serving import Key, Served


@pytest.fixture(scope="module")
def server(iceberg_server: Served) -> Served:
    return iceberg_server


@pytest.fixture(scope="module")
def key(iceberg_key: Key) -> Key:
    return iceberg_key


@pytest.fixture(scope="module")
def catalog(server: Served, key: Key) -> RestCatalog:
    return connect(server, key)


def connect(server: Served, key: Key, **props: str) -> RestCatalog:
    return RestCatalog(
        "graveler",
        uri=server.urls["iceberg"],
        warehouse="lake",
        credential=f"{key.access_key_id}:{key.secret_access_key}",
        **props,
    )


@pytest.fixture(scope="module")
def http(server: Served, key: Key) -> Http:
    return Http(server.urls["iceberg"], token(server, key))


def token(server: Served, key: Key) -> str:
    reply = requests.post(
        server.urls["iceberg"] + "/v1/oauth/tokens",
        data={
            "grant_type": "client_credentials",
            "client_id": key.access_key_id,
            "client_secret": key.secret_access_key,
            "scope": "catalog",
        },
        timeout=10,
    )
    assert reply.status_code == 200, reply.text
    doc = reply.json()
    assert doc["token_type"] == "bearer" and doc["expires_in"] > 0
    return str(doc["access_token"])


class Http:
    def __init__(self, base: str, bearer: str | None) -> None:
        self.base = base
        self.headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}

    def __call__(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        return requests.request(
            method, self.base + path, headers=self.headers, timeout=30, **kwargs
        )


def error(reply: requests.Response) -> tuple[int, str]:
    doc = reply.json()["error"]
    assert doc["code"] == reply.status_code and doc["message"]
    return reply.status_code, doc["type"]


def test_config_names_the_repository_as_prefix(http: Http):
    doc = http("GET", "/v1/config", params={"warehouse": "lake"}).json()
    assert doc["overrides"] == {"prefix": "lake"}
    assert "POST /v1/{prefix}/transactions/commit" in doc["endpoints"]
    assert error(http("GET", "/v1/config")) == (400, "BadRequestException")
    assert error(http("GET", "/v1/config", params={"warehouse": "nope"})) == (
        404,
        "NoSuchWarehouseException",
    )


def test_tokens_and_their_refusals(server: Served, key: Key, http: Http):
    url = server.urls["iceberg"] + "/v1/oauth/tokens"
    bad = {"grant_type": "client_credentials", "client_id": key.access_key_id}
    reply = requests.post(url, data={**bad, "client_secret": "wrong"}, timeout=10)
    assert reply.status_code == 401 and reply.json()["error"] == "invalid_client"
    reply = requests.post(url, data={"grant_type": "password"}, timeout=10)
    assert reply.status_code == 400 and reply.json()["error"] == "unsupported_grant_type"
    exchange = {
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "subject_token": http.headers["Authorization"][7:],
        "subject_token_type": "urn:ietf:params:oauth:token-type:access_token",
    }
    refreshed = requests.post(url, data=exchange, timeout=10).json()["access_token"]
    assert Http(http.base, refreshed)("GET", "/v1/lake/namespaces").status_code == 200
    for bearer in (None, "forged.token", refreshed + "x"):
        reply = Http(http.base, bearer)("GET", "/v1/lake/namespaces")
        assert error(reply) == (401, "NotAuthorizedException")


def test_access_keys_rights_apply(server: Served, catalog: RestCatalog):
    catalog.create_namespace_if_not_exists(("main", "rights"))
    catalog.create_table("main.rights.t", SCHEMA)
    reader = connect(server, server.credentials("--read-only"))
    table = reader.load_table("main.rights.t")
    with pytest.raises(ForbiddenError):
        table.append(rows([1], 1))
    elsewhere = server.credentials("--repository", "other")
    http = Http(server.urls["iceberg"], token(server, elsewhere))
    assert error(http("GET", "/v1/lake/namespaces")) == (403, "ForbiddenException")
    assert http("GET", "/v1/other/namespaces").status_code == 200


def test_pyiceberg_end_to_end_with_reads_at_refs(server: Served, catalog: RestCatalog):
    catalog.create_namespace(("main", "sales"), {"owner": "ana"})
    assert ("main", "sales") in catalog.list_namespaces(("main",))
    assert catalog.load_namespace_properties(("main", "sales")) == {"owner": "ana"}
    table = catalog.create_table("main.sales.orders", SCHEMA, partition_spec=SPEC)
    table.append(rows([1, 2, 3], 1))
    table.append(rows([4], 2))
    table = catalog.load_table("main.sales.orders")
    table.overwrite(rows([40], 2), overwrite_filter="p = 2")
    table.delete("id = 2")
    server.cli("tag", "create", "graveler://lake/v1", "graveler://lake/main")
    commit = server.cli("--json", "log", "graveler://lake/main", "--amount", "1").stdout
    commit_id = json.loads(commit)[0]["id"]
    with table.update_schema() as update:
        update.add_column("note", StringType())
    table = catalog.load_table("main.sales.orders")
    assert [f.name for f in table.schema().fields] == ["id", "p", "v", "note"]
    at_main = content(table)
    assert at_main == [(1, 1, "x", None), (3, 1, "x", None), (40, 2, "x", None)]
    assert content(catalog.load_table("v1.sales.orders")) == [
        (1, 1, "x"),
        (3, 1, "x"),
        (40, 2, "x"),
    ]
    assert content(catalog.load_table(f"{commit_id}.sales.orders")) == content(
        catalog.load_table("v1.sales.orders")
    )
    with pytest.raises(ForbiddenError):
        catalog.load_table("v1.sales.orders").append(rows([9], 1))
    assert catalog.list_tables(("main", "sales")) == [("main", "sales", "orders")]


def test_error_model(http: Http, catalog: RestCatalog):
    catalog.create_namespace_if_not_exists(("main", "errs"))
    catalog.create_table("main.errs.t", SCHEMA)
    ns = "/v1/lake/namespaces"
    assert error(http("GET", f"{ns}/main\x1ferrs/tables/nope")) == (404, "NoSuchTableException")
    assert error(http("GET", f"{ns}/main\x1fnope")) == (404, "NoSuchNamespaceException")
    no_ref = http("GET", f"{ns}/nobranch\x1ferrs/tables/t")
    assert error(no_ref) == (404, "NoSuchTableException")  # as Iceberg's catalogs answer
    assert error(http("GET", f"{ns}/nobranch\x1ferrs")) == (404, "NoSuchNamespaceException")
    assert http("HEAD", f"{ns}/main\x1ferrs/tables/t").status_code == 204
    assert http("HEAD", f"{ns}/main\x1ferrs/tables/nope").status_code == 404
    assert http("HEAD", f"{ns}/main\x1ferrs").status_code == 204
    created = http("POST", ns, json={"namespace": ["main", "errs"]})
    assert error(created) == (409, "AlreadyExistsException")
    assert error(http("DELETE", f"{ns}/main\x1ferrs")) == (409, "NamespaceNotEmptyException")
    both = {"removals": ["a"], "updates": {"a": "1"}}
    assert error(http("POST", f"{ns}/main\x1ferrs/properties", json=both))[0] == 422
    unknown = {"requirements": [], "updates": [{"action": "frobnicate"}]}
    assert error(http("POST", f"{ns}/main\x1ferrs/tables/t", json=unknown)) == (
        400,
        "BadRequestException",
    )
    bad_name = {"name": "../x", "schema": SCHEMA.model_dump(by_alias=True)}
    assert error(http("POST", f"{ns}/main\x1ferrs/tables", data=json.dumps(bad_name)))[0] == 400
    assert error(http("GET", "/v1/lake/nowhere"))[0] == 404
    assert http("POST", "/v1/lake/namespaces", data=b"{not json").status_code == 400


def test_transactions_are_all_or_nothing(http: Http, catalog: RestCatalog):
    catalog.create_namespace_if_not_exists(("main", "tx"))
    a = catalog.create_table("main.tx.a", SCHEMA)
    b = catalog.create_table("main.tx.b", SCHEMA)

    def change(name: str, uuid: str, value: str) -> dict[str, Any]:
        return {
            "identifier": {"namespace": ["main", "tx"], "name": name},
            "requirements": [{"type": "assert-table-uuid", "uuid": uuid}],
            "updates": [{"action": "set-properties", "updates": {"k": value}}],
        }

    good = [
        change("a", str(a.metadata.table_uuid), "1"),
        change("b", str(b.metadata.table_uuid), "1"),
    ]
    assert (
        http("POST", "/v1/lake/transactions/commit", json={"table-changes": good}).status_code
        == 204
    )
    bad = [
        change("a", str(a.metadata.table_uuid), "2"),
        change("b", str(a.metadata.table_uuid), "2"),
    ]
    reply = http("POST", "/v1/lake/transactions/commit", json={"table-changes": bad})
    assert error(reply) == (409, "CommitFailedException")
    for name in ("a", "b"):
        assert catalog.load_table(f"main.tx.{name}").properties["k"] == "1"


def test_racing_commits_one_gets_409(server: Served, key: Key, catalog: RestCatalog):
    catalog.create_namespace_if_not_exists(("main", "race"))
    catalog.create_table("main.race.t", SCHEMA, properties={"commit.retry.num-retries": "0"})
    clients = [connect(server, key) for _ in range(2)]
    tables = [c.load_table("main.race.t") for c in clients]
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def write(i: int) -> None:
        barrier.wait()
        try:
            tables[i].append(rows([i], 1))
            outcomes.append("ok")
        except CommitFailedException:
            outcomes.append("409")

    threads = [threading.Thread(target=write, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["409", "ok"]
    assert len(content(catalog.load_table("main.race.t"))) == 1


def test_rename_drop_register_and_stage_create(catalog: RestCatalog):
    catalog.create_namespace_if_not_exists(("main", "life"))
    catalog.create_table("main.life.t", SCHEMA).append(rows([1], 1))
    location = catalog.load_table("main.life.t").metadata_location
    catalog.rename_table("main.life.t", "main.life.u")
    assert not catalog.table_exists("main.life.t")
    catalog.drop_table("main.life.u")
    with pytest.raises(NoSuchTableError):
        catalog.load_table("main.life.u")
    assert content(catalog.register_table("main.life.back", location)) == [(1, 1, "x")]
    catalog.purge_table("main.life.back")
    with catalog.create_table_transaction("main.life.ctas", SCHEMA) as tx:
        tx.append(rows([7], 1))
    assert content(catalog.load_table("main.life.ctas")) == [(7, 1, "x")]
