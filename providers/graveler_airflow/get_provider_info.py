"""Provider metadata, exposed through the ``apache_airflow_provider`` entry point.

The dictionary validates against Airflow's ``provider_info.schema.json`` (a test checks it).
Connection form metadata is declarative (``conn-fields``, ``ui-field-behaviour``), so the UI
does not import the hook to draw the form.
"""

from __future__ import annotations

from typing import Any

INTEGRATION = "Graveler"
_MODULE = "graveler_airflow"


def _text(label: str, description: str, *, secret: bool = False) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": ["string", "null"]}
    if secret:
        schema["format"] = "password"
    return {"label": label, "description": description, "schema": schema}


def _integer(label: str, description: str) -> dict[str, Any]:
    return {"label": label, "description": description, "schema": {"type": ["integer", "null"]}}


CONN_FIELDS: dict[str, Any] = {
    "database_url": _text(
        "Refs database URL",
        "SQLAlchemy URL of the database holding graveler's refs, e.g. "
        "postgresql+psycopg://host/airflow (it may be Airflow's metadata database). "
        "Default: SQLite in the cache directory (single machine only).",
    ),
    "home": _text(
        "Cache directory",
        "Local directory for the tree cache and default local storage namespaces. "
        "Default: $AIRFLOW_HOME/graveler.",
    ),
    "s3_endpoint_url": _text("S3 endpoint URL", "For MinIO and other S3-compatible stores."),
    "s3_region": _text("S3 region", "Default: AWS_REGION, then us-east-1."),
    "aws_access_key_id": _text("S3 access key ID", "Default: boto3's credential chain."),
    "aws_secret_access_key": _text("S3 secret access key", "Default: boto3's chain.", secret=True),
    "ui_url": _text(
        "Run branch link",
        "URL template of the task link to a run's branch, with {repository}, {branch} and "
        "{uri}. Default: the branch's graveler:// URI.",
    ),
    "cache_ram_bytes": _integer("Tree cache in RAM (bytes)", "Default: 512 MiB."),
    "cache_disk_bytes": _integer("Tree cache on disk (bytes)", "Default: 4 GiB."),
}


def get_provider_info() -> dict[str, Any]:
    """The provider's metadata for Airflow's ProvidersManager."""
    from graveler import __version__

    modules = {kind: [f"{_MODULE}.{kind}.graveler"] for kind in ("hooks", "operators")}
    return {
        "package-name": "graveler",
        "name": "Graveler",
        "description": "Git for data lakes, embedded: a branch per DAG run, merged on success.",
        "versions": [__version__],
        "integrations": [{"integration-name": INTEGRATION, "tags": ["software"]}],
        "hooks": [{"integration-name": INTEGRATION, "python-modules": modules["hooks"]}],
        "operators": [
            {
                "integration-name": INTEGRATION,
                "python-modules": [
                    *modules["operators"],
                    f"{_MODULE}.operators.objects",
                    f"{_MODULE}.run_branch",
                ],
            }
        ],
        "sensors": [
            {"integration-name": INTEGRATION, "python-modules": [f"{_MODULE}.sensors.graveler"]}
        ],
        "triggers": [
            {
                "integration-name": INTEGRATION,
                "python-modules": [f"{_MODULE}.triggers.graveler", f"{_MODULE}.triggers.events"],
            }
        ],
        "filesystems": [f"{_MODULE}.fs.graveler"],
        "extra-links": [f"{_MODULE}.links.GravelerRunBranchLink"],
        "connection-types": [
            {
                "connection-type": "graveler",
                "hook-class-name": f"{_MODULE}.hooks.graveler.GravelerHook",
                "hook-name": "Graveler",
                "conn-fields": CONN_FIELDS,
                "ui-field-behaviour": {
                    "hidden-fields": ["host", "schema", "port", "extra"],
                    "relabeling": {"login": "Database user", "password": "Database password"},
                    "placeholders": {"login": "(optional, if not in the URL)"},
                },
            }
        ],
        "asset-uris": [
            {
                "schemes": ["graveler"],
                "handler": f"{_MODULE}.assets.graveler.sanitize_uri",
                "factory": f"{_MODULE}.assets.graveler.create_asset",
            }
        ],
        "db-managers": [f"{_MODULE}.db_manager.GravelerDBManager"],
    }
