"""Scratch PostgreSQL schemas: an isolated, empty namespace on a shared server.

Tests and benchmarks run many stores side by side on one database. Each gets a fresh schema
that is the only entry of its connections' ``search_path`` (set in the URL, so processes
spawned with the URL land in it too), and the schema is dropped with its contents afterwards.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def scratch_schema(admin_url: str, prefix: str = "graveler_t_") -> Iterator[str]:
    """Create a schema named ``prefix`` + a random suffix on the PostgreSQL server of
    ``admin_url``; yield a URL whose connections use only that schema; drop it on exit."""
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    schema = f"{prefix}{uuid.uuid4().hex[:12]}"
    admin = create_engine(admin_url, pool_size=1)
    try:
        with admin.begin() as conn:
            conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
        url = make_url(admin_url).update_query_dict({"options": f"-csearch_path={schema}"})
        try:
            yield url.render_as_string(hide_password=False)
        finally:
            with admin.begin() as conn:
                conn.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')
    finally:
        admin.dispose()
