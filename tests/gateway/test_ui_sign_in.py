"""The web UI of ``graveler serve``: anonymous visitors read on loopback only, writes need a
signed-in key that may write, and beyond loopback every page needs a sign-in. Each refusal
has its control (the same request succeeding once signed in)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from graveler.client import Graveler
from graveler.server.app import authenticator_for
from graveler.server.auth import SESSION
from graveler.server.ui.signin import COOKIE
from tests.serving import Key, Served


def _home(tmp: Path) -> Path:
    home = tmp / "home"
    with Graveler(home) as gv:
        repo = gv.create_repository("lake", (tmp / "ns").as_uri())
        repo.create_branch("feature", "main")
        repo.put("feature", "a.csv", b"x\n")
        repo.commit("feature", "a change")
    return home


@pytest.fixture(scope="module")
def loopback(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = _home(tmp_path_factory.mktemp("ui-loopback"))
    with Served(home) as server:
        yield server


@pytest.fixture(scope="module")
def exposed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = _home(tmp_path_factory.mktemp("ui-exposed"))
    with Served(home, None, "--host", "0.0.0.0") as server:
        server.urls = {k: str(v).replace("0.0.0.0", "127.0.0.1") for k, v in server.urls.items()}
        yield server


def _base(server: Served) -> str:
    return str(server.urls["ui"]).rstrip("/")


def _sign_in(
    client: httpx.Client, server: Served, key: Key, secret: str | None = None
) -> httpx.Response:
    return client.post(
        _base(server) + "/sign-in",
        data={
            "access_key_id": key.access_key_id,
            "secret_access_key": secret or key.secret_access_key,
        },
    )


def _merge(client: httpx.Client, server: Served) -> httpx.Response:
    page = client.get(_base(server) + "/repos/lake/compare?left=main&right=feature")
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    data = {"source": "feature", "dest": "main", "csrf_token": token.group(1) if token else ""}
    return client.post(_base(server) + "/repos/lake/actions/merge", data=data)


def test_anonymous_on_loopback_reads_but_may_not_write(loopback: Served):
    with httpx.Client() as client:
        page = client.get(_base(loopback) + "/repos/lake")
        assert page.status_code == 200 and "read-only" in page.text and "Sign in" in page.text
        assert _merge(client, loopback).status_code == 403


def test_a_wrong_secret_is_refused_and_the_right_one_signs_in(loopback: Served):
    key = loopback.credentials()
    with httpx.Client() as client:
        other = "A" if key.secret_access_key[-1] != "A" else "B"
        wrong = _sign_in(client, loopback, key, secret=key.secret_access_key[:-1] + other)
        assert wrong.status_code == 401 and COOKIE not in client.cookies
        right = _sign_in(client, loopback, key)
        assert right.status_code == 303 and COOKIE in client.cookies
        page = client.get(_base(loopback) + "/repos/lake")
        assert "read-write" in page.text and key.access_key_id in page.text
        merged = _merge(client, loopback)
        assert merged.status_code in (200, 303), merged.text[:500]
    with Graveler(loopback.home) as gv:
        assert gv.repository("lake").exists("main", "a.csv")


def test_a_read_only_key_signs_in_but_may_not_write(loopback: Served):
    key = loopback.credentials("--read-only")
    with httpx.Client() as client:
        assert _sign_in(client, loopback, key).status_code == 303
        assert "read-only" in client.get(_base(loopback) + "/repos/lake").text
        assert _merge(client, loopback).status_code == 403


def test_an_expired_session_is_a_visitor_again(loopback: Served):
    key = loopback.credentials()
    with Graveler(loopback.home) as gv:
        auth = authenticator_for(gv)
        principal = auth.lookup(key.access_key_id)[0]
        expired = auth.issue_token(principal, SESSION, -60)
        fresh = auth.issue_token(principal, SESSION, 600)
    with httpx.Client(cookies={COOKIE: expired}) as client:
        assert "read-only" in client.get(_base(loopback) + "/repos/lake").text
        assert _merge(client, loopback).status_code == 403
    with httpx.Client(cookies={COOKIE: fresh}) as client:  # the control
        assert "read-write" in client.get(_base(loopback) + "/repos/lake").text


def test_beyond_loopback_every_page_needs_a_sign_in(exposed: Served):
    key = exposed.credentials()
    with httpx.Client() as client:
        page = client.get(_base(exposed) + "/repos/lake")
        assert page.status_code == 303 and page.headers["location"].startswith("/sign-in")
        assert client.get(_base(exposed) + "/").status_code == 303
        assert client.post(_base(exposed) + "/repos/lake/actions/merge", data={}).status_code == 401
        assert client.get(_base(exposed) + "/sign-in").status_code == 200
        assert _sign_in(client, exposed, key).status_code == 303
        assert client.get(_base(exposed) + "/repos/lake").status_code == 200


def test_a_key_sees_only_its_repositories(loopback: Served):
    with Graveler(loopback.home) as gv:
        gv.create_repository("private", (loopback.home.parent / "private-ns").as_uri())
    key = loopback.credentials("--repository", "lake")
    with httpx.Client() as client:
        assert _sign_in(client, loopback, key).status_code == 303
        assert client.get(_base(loopback) + "/repos/lake").status_code == 200
        assert client.get(_base(loopback) + "/repos/private").status_code == 403


def test_sign_in_never_sends_you_elsewhere(loopback: Served):
    key = loopback.credentials()
    with httpx.Client() as client:
        got = client.post(
            _base(loopback) + "/sign-in",
            data={
                "access_key_id": key.access_key_id,
                "secret_access_key": key.secret_access_key,
                "next": "https://evil.example/",
            },
        )
        assert got.status_code == 303 and got.headers["location"] == "/"
        cross = client.post(
            _base(loopback) + "/sign-in",
            headers={"Origin": "https://evil.example"},
            data={"access_key_id": key.access_key_id, "secret_access_key": key.secret_access_key},
        )
        assert cross.status_code == 403


def test_signing_in_returns_to_the_page_asked_for_with_its_query(exposed: Served):
    """Reproduced before the fix: the redirect kept the path only, so
    ``compare?left=main&right=feature`` landed on an empty compare form."""
    key = exposed.credentials()
    wanted = "/repos/lake/compare?left=main&right=feature"
    with httpx.Client() as client:
        sent = client.get(_base(exposed) + wanted)
        assert sent.status_code == 303
        form = client.get(_base(exposed) + sent.headers["location"])
        hidden = re.search(r'name="next" value="([^"]+)"', form.text)
        assert hidden is not None and hidden.group(1).replace("&amp;", "&") == wanted
        signed = client.post(
            _base(exposed) + "/sign-in",
            data={
                "access_key_id": key.access_key_id,
                "secret_access_key": key.secret_access_key,
                "next": hidden.group(1).replace("&amp;", "&"),
            },
        )
        assert signed.status_code == 303 and signed.headers["location"] == wanted
        page = client.get(_base(exposed) + wanted)
        assert (
            page.status_code == 200
            and "a.csv" in page.text
            and '<form class="refbar"' not in page.text
        )
