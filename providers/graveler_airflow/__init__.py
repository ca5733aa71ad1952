"""graveler_airflow: the Airflow 3 provider of graveler.

    from graveler_airflow import GravelerRunBranch, GravelerHook, graveler_asset

Names are imported lazily, so ``get_provider_info`` (read by Airflow at start-up) and the
asset handlers load without pulling in operators and hooks.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from graveler.extras import require_extra

require_extra("airflow", package=__name__)

if TYPE_CHECKING:
    from graveler_airflow.assets.graveler import graveler_asset
    from graveler_airflow.hooks.graveler import GravelerHook
    from graveler_airflow.naming import run_branch_name
    from graveler_airflow.operators.graveler import (
        GravelerCommitOperator,
        GravelerCreateBranchOperator,
        GravelerDeleteBranchOperator,
        GravelerMergeOperator,
        GravelerPruneBranchesOperator,
        GravelerRevertOperator,
        GravelerTagOperator,
    )
    from graveler_airflow.operators.objects import GravelerGetObjectOperator, GravelerUploadOperator
    from graveler_airflow.run_branch import GravelerRunBranch
    from graveler_airflow.sensors.graveler import (
        GravelerCommitSensor,
        GravelerDiffSensor,
        GravelerObjectSensor,
    )
    from graveler_airflow.triggers.events import GravelerCommitEventTrigger
    from graveler_airflow.triggers.graveler import (
        GravelerCommitTrigger,
        GravelerDiffTrigger,
        GravelerObjectTrigger,
    )

_EXPORTS = {
    "GravelerHook": "graveler_airflow.hooks.graveler",
    "GravelerCreateBranchOperator": "graveler_airflow.operators.graveler",
    "GravelerCommitOperator": "graveler_airflow.operators.graveler",
    "GravelerMergeOperator": "graveler_airflow.operators.graveler",
    "GravelerDeleteBranchOperator": "graveler_airflow.operators.graveler",
    "GravelerTagOperator": "graveler_airflow.operators.graveler",
    "GravelerRevertOperator": "graveler_airflow.operators.graveler",
    "GravelerPruneBranchesOperator": "graveler_airflow.operators.graveler",
    "GravelerUploadOperator": "graveler_airflow.operators.objects",
    "GravelerGetObjectOperator": "graveler_airflow.operators.objects",
    "GravelerCommitSensor": "graveler_airflow.sensors.graveler",
    "GravelerDiffSensor": "graveler_airflow.sensors.graveler",
    "GravelerObjectSensor": "graveler_airflow.sensors.graveler",
    "GravelerCommitTrigger": "graveler_airflow.triggers.graveler",
    "GravelerDiffTrigger": "graveler_airflow.triggers.graveler",
    "GravelerObjectTrigger": "graveler_airflow.triggers.graveler",
    "GravelerCommitEventTrigger": "graveler_airflow.triggers.events",
    "GravelerRunBranch": "graveler_airflow.run_branch",
    "run_branch_name": "graveler_airflow.naming",
    "graveler_asset": "graveler_airflow.assets.graveler",
}

__all__ = [
    "GravelerCommitEventTrigger",
    "GravelerCommitOperator",
    "GravelerCommitSensor",
    "GravelerCommitTrigger",
    "GravelerCreateBranchOperator",
    "GravelerDeleteBranchOperator",
    "GravelerDiffSensor",
    "GravelerDiffTrigger",
    "GravelerGetObjectOperator",
    "GravelerHook",
    "GravelerMergeOperator",
    "GravelerObjectSensor",
    "GravelerObjectTrigger",
    "GravelerPruneBranchesOperator",
    "GravelerRevertOperator",
    "GravelerRunBranch",
    "GravelerTagOperator",
    "GravelerUploadOperator",
    "graveler_asset",
    "run_branch_name",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'graveler_airflow' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
