"""Runs in a subprocess with the session's Airflow environment: builds Airflow's own API app
(``airflow.api_fastapi.app.create_app``, plugins and auth manager included) and requests the
graveler UI through it, without and with an Airflow user's token. Prints one JSON document.

A separate process keeps the API server's global state (auth manager, ORM) out of pytest.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def main(paths: list[str]) -> None:
    from airflow.api_fastapi.app import create_app, get_auth_manager
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser
    from fastapi.testclient import TestClient

    app = create_app("core")
    http = TestClient(app, raise_server_exceptions=False)
    token = get_auth_manager().generate_jwt(SimpleAuthManagerUser(username="ada", role="admin"))
    out: dict[str, Any] = {"anonymous": {}, "cookie": {}, "bearer": {}}
    for path in paths:
        out["anonymous"][path] = _get(http, path, {})
        out["bearer"][path] = _get(http, path, {"Authorization": f"Bearer {token}"})
        http.cookies.set("_token", token)
        out["cookie"][path] = _get(http, path, {})
        http.cookies.clear()
    plugins = http.get("/api/v2/plugins", headers={"Authorization": f"Bearer {token}"}).json()
    out["plugins"] = [p for p in plugins["plugins"] if p["name"] == "graveler_ui"]
    print(json.dumps(out))


def _get(http: Any, path: str, headers: dict[str, str]) -> dict[str, Any]:
    response = http.get(path, headers=headers, follow_redirects=True)
    return {"status": response.status_code, "url": str(response.url), "body": response.text}


if __name__ == "__main__":
    main(sys.argv[1:])
