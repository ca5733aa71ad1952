"""The repository the UI tests (and the screenshots in docs/ui/) look at: a lake with raw
CSV, JSON config, a Parquet table, an image, two published Airflow runs (merge commits with
lineage metadata), a run in progress, a Dagster run branch, a protected ``main`` and a branch
with uncommitted changes. Keys, messages, metadata and a branch name carry markup (XSS)
that must come out escaped."""

from __future__ import annotations

import base64
import io

import pyarrow as pa
import pyarrow.parquet as pq

from graveler.client import Graveler
from graveler.core.model import Branch
from graveler.repository import Repository
from graveler.views.layers import new_staging_token

XSS = '<script>alert("x")</script>'
XSS_KEY = f"notes/{XSS}.txt"
XSS_BRANCH = "fix/<img-src=x-onerror=alert(1)>"
#: A name that would break a Content-Disposition header if copied into it raw.
HEADER_KEY = 'notes/say "hi"\r\nX-Injected: 1.txt'
AIRFLOW_LINK = "https://airflow.example.com/dags/orders/runs/scheduled__2026-11-04"
DAGSTER_BRANCH = "dagster-run-8c1f2a6e"
#: A 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
CSV = b"order_id,customer,amount\n1,alice,12.50\n2,bob,7.00\n3,carol,31.25\n"


def run_branch(day: str, n: int) -> str:
    """A branch named the way the Airflow provider names run branches."""
    return f"airflow-orders-scheduled__{day}T00-00-00-00-00-{n:08x}"


def parquet(rows: int) -> bytes:
    table = pa.table(
        {
            "order_id": list(range(1, rows + 1)),
            "customer": [f"customer-{i % 7}" for i in range(rows)],
            "amount": [round(1.5 * i, 2) for i in range(rows)],
        }
    )
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def lineage(day: str) -> dict[str, str]:
    return {
        "::lakefs::Airflow::dag_id": "orders",
        "::lakefs::Airflow::dag_run_id": f"scheduled__{day}T00:00:00+00:00",
        "::lakefs::Airflow::url[url:ui]": AIRFLOW_LINK,
    }


def build(gv: Graveler) -> Repository:
    repo = gv.create_repository("lake")
    repo.put("main", "raw/orders/2026-11-01.csv", CSV)
    repo.put("main", "config/pipeline.json", b'{"source": "shop", "tables": ["orders"]}')
    repo.put("main", "images/logo.png", PNG, content_type="image/png")
    repo.put("main", "README.txt", b"Orders lake: raw CSV in raw/, Parquet in tables/.\n")
    repo.put("main", XSS_KEY, XSS.encode())
    repo.put("main", HEADER_KEY, b"hi")
    repo.put("main", "site/page.html", b"<html><script>alert(1)</script></html>")
    meta = {XSS: XSS, "report[url:ui]": "javascript:alert(1)"}
    repo.commit("main", f"Load raw orders {XSS}", metadata=meta, committer="alice")
    for n, day in enumerate(["2026-11-03", "2026-11-04"]):
        _publish_run(repo, day, n)
    running = run_branch("2026-11-05", 2)
    repo.create_branch(running, "main")
    repo.put(running, "tables/orders/part-2026-11-05.parquet", parquet(5))
    repo.create_branch(DAGSTER_BRANCH, "main")
    repo.put(DAGSTER_BRANCH, "tables/customers/customers.csv", b"id,name\n1,alice\n")
    # No such name can be created now (graveler.core.validate); one an older version stored
    # still shows up in the UI, so it is inserted as that version stored it.
    head = repo.branch("main").commit_id
    repo.refs.create_branch(repo.name, Branch(XSS_BRANCH, head, new_staging_token("lake", "x")))
    repo.put(XSS_BRANCH, "raw/orders/2026-11-01.csv", CSV + b"4,dave,3.10\n")
    repo.delete(XSS_BRANCH, "README.txt")
    repo.put(XSS_BRANCH, "raw/new.csv", b"a\n1\n")
    repo.protect_branch("main")
    return repo


def _publish_run(repo: Repository, day: str, n: int) -> None:
    branch = run_branch(day, n)
    repo.create_branch(branch, "main")
    repo.put(branch, f"tables/orders/part-{day}.parquet", parquet(40 + n))
    repo.put(branch, f"raw/orders/{day}.csv", CSV)
    repo.commit(branch, f"Clean orders of {day}", metadata=lineage(day), committer="airflow")
    repo.put(branch, "tables/orders/_SUCCESS", day.encode())
    repo.commit(branch, "Mark the table complete", metadata=lineage(day), committer="airflow")
    message = f"Merge run scheduled__{day} of orders"
    repo.merge(branch, "main", fast_forward=False, metadata=lineage(day), message=message)
    repo.delete_branch(branch)
