"""graveler_dagster: graveler in Dagster -- every run writes to its own branch, merged on success.

* :class:`GravelerResource`: a connected graveler client bound to one repository.
* :class:`GravelerIOManager`: asset values on the run's branch (Parquet for tables, pickle
  otherwise), inputs at the version Dagster's lineage names.
* :class:`GravelerIcebergIOManager`: assets as Iceberg tables on the run's branch, merged by
  Iceberg's rules when runs are published.
* Sensors: publish on success (exactly once per run), keep or delete on failure, run a job on
  new commits.
* :func:`publish_run` / :func:`publish_or_fail`: the Dagster side of :mod:`graveler.runs`.
* :func:`graveler_definitions`: all of the above as ``Definitions`` keyword arguments.
"""

# ruff: noqa: E402 -- the extra is checked before anything imports Dagster
from graveler.extras import require_extra

require_extra("dagster", package=__name__)

from graveler_dagster.definitions import DefinitionsPieces as DefinitionsPieces
from graveler_dagster.definitions import graveler_definitions as graveler_definitions
from graveler_dagster.handlers import TypeHandler as TypeHandler
from graveler_dagster.iceberg import GravelerIcebergIOManager as GravelerIcebergIOManager
from graveler_dagster.inputs import triggering_commit as triggering_commit
from graveler_dagster.io_manager import GravelerIOManager as GravelerIOManager
from graveler_dagster.resource import GravelerResource as GravelerResource
from graveler_dagster.runs import RUN_ID_KEY as RUN_ID_KEY
from graveler_dagster.runs import commit_staged as commit_staged
from graveler_dagster.runs import ensure_run_branch as ensure_run_branch
from graveler_dagster.runs import open_run_branch as open_run_branch
from graveler_dagster.runs import publish_or_fail as publish_or_fail
from graveler_dagster.runs import publish_run as publish_run
from graveler_dagster.runs import read_ref as read_ref
from graveler_dagster.runs import read_ref_for_prefix as read_ref_for_prefix
from graveler_dagster.runs import run_lineage as run_lineage
from graveler_dagster.sensors import RESOURCE_KEY as RESOURCE_KEY
from graveler_dagster.sensors import build_graveler_diff_sensor as build_graveler_diff_sensor
from graveler_dagster.sensors import build_graveler_failure_sensor as build_graveler_failure_sensor
from graveler_dagster.sensors import build_graveler_merge_sensor as build_graveler_merge_sensor

__all__ = [
    "RESOURCE_KEY",
    "RUN_ID_KEY",
    "DefinitionsPieces",
    "GravelerIOManager",
    "GravelerIcebergIOManager",
    "GravelerResource",
    "TypeHandler",
    "build_graveler_diff_sensor",
    "build_graveler_failure_sensor",
    "build_graveler_merge_sensor",
    "commit_staged",
    "ensure_run_branch",
    "graveler_definitions",
    "open_run_branch",
    "publish_or_fail",
    "publish_run",
    "read_ref",
    "read_ref_for_prefix",
    "run_lineage",
    "triggering_commit",
]
