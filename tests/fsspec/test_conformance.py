"""fsspec's own abstract conformance suites (``fsspec.tests.abstract``) against graveler.

Every suite fsspec ships for implementations runs: copy, get, put, open and pipe. The only
module left out is ``fsspec.tests.abstract.mv``, which holds module-level tests of the *local*
filesystem (no class to inherit), so there is nothing in it to run against another backend.
``supports_empty_directories`` is True: directories holding objects are implicit, as in object
stores, and a directory made with ``mkdir`` (or by copying a directory) exists, empty, on the
filesystem instance until it is removed (``graveler_fsspec.dirs``).
The suites run on SQLite; the same engine code serves PostgreSQL, which the other fsspec
tests cover.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fsspec.tests import abstract
from graveler_fsspec import GravelerFileSystem

from graveler.client import Graveler


class GravelerFixtures(abstract.AbstractFixtures):  # type: ignore[misc]
    @pytest.fixture
    def fs(self, tmp_path) -> Iterator[GravelerFileSystem]:
        client = Graveler(home=tmp_path / "home", database_url=f"sqlite:///{tmp_path}/refs.db")
        client.create_repository("lake", (tmp_path / "lake-ns").as_uri())
        try:
            yield GravelerFileSystem(client=client, skip_instance_cache=True)
        finally:
            client.close()

    @pytest.fixture
    def fs_path(self) -> str:
        return "lake/main/root"

    @pytest.fixture
    def fs_join(self):
        return lambda *parts: "/".join(parts)

    @pytest.fixture
    def supports_empty_directories(self) -> bool:
        return True


class TestGravelerCopy(abstract.AbstractCopyTests, GravelerFixtures):  # type: ignore[misc]
    pass


class TestGravelerGet(abstract.AbstractGetTests, GravelerFixtures):  # type: ignore[misc]
    pass


class TestGravelerPut(abstract.AbstractPutTests, GravelerFixtures):  # type: ignore[misc]
    pass


class TestGravelerOpen(abstract.AbstractOpenTests, GravelerFixtures):  # type: ignore[misc]
    pass


class TestGravelerPipe(abstract.AbstractPipeTests, GravelerFixtures):  # type: ignore[misc]
    pass
