"""``graveler_definitions``: the resources and sensors that add graveler to a Dagster project.

.. code-block:: python

    import dagster as dg
    from graveler_dagster import GravelerResource, graveler_definitions

    defs = dg.Definitions(
        assets=[raw_orders, clean_orders],
        **graveler_definitions(GravelerResource(repository="lake")),
    )

Every asset then writes to its run's branch, and successful runs are merged into ``main``
exactly once. The merge and failure sensors default to RUNNING, tick at most every
``sensor_interval_seconds`` (the daemon checks about every 5 s) and watch runs of every code
location, including runs launched with ``dagster asset materialize`` against the instance.
To combine with other resources or sensors, build ``dg.Definitions(**pieces)`` and use
``dg.Definitions.merge``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict

from dagster import DefaultSensorStatus, SensorDefinition

from graveler_dagster.io_manager import GravelerIOManager
from graveler_dagster.resource import GravelerResource
from graveler_dagster.sensors import (
    DEFAULT_INTERVAL_SECONDS,
    RESOURCE_KEY,
    build_graveler_failure_sensor,
    build_graveler_merge_sensor,
)


class DefinitionsPieces(TypedDict):
    """Keyword arguments for ``dagster.Definitions``."""

    resources: dict[str, Any]
    sensors: list[SensorDefinition]


def graveler_definitions(
    resource: GravelerResource,
    *,
    io_manager_key: str = "io_manager",
    merge_strategy: str | None = "source-wins",
    table_merge_strategy: str | None = None,
    delete_failed_branches: bool = False,
    sensor_status: DefaultSensorStatus = DefaultSensorStatus.RUNNING,
    sensor_interval_seconds: int = DEFAULT_INTERVAL_SECONDS,
    monitor_all_code_locations: bool = True,
    extra_sensors: Sequence[SensorDefinition] = (),
    pickle_secret: str | None = None,
) -> DefinitionsPieces:
    """Resources (``"graveler"`` and the IO manager under ``io_manager_key``) and sensors (merge
    on success, keep or delete on failure, plus ``extra_sensors`` such as diff sensors).
    ``merge_strategy`` is used by the merge sensor and by the IO manager when an input needs
    an upstream run that the sensor has not published yet; ``table_merge_strategy`` settles
    a table (Delta Lake) whose format refuses the merge (default None: the merge fails, as
    Delta fails the later of two conflicting transactions). ``pickle_secret`` signs the IO
    manager's pickles (see :mod:`graveler_dagster.formats`)."""
    watch = {
        "default_status": sensor_status,
        "minimum_interval_seconds": sensor_interval_seconds,
        "monitor_all_code_locations": monitor_all_code_locations,
    }
    return {
        "resources": {
            RESOURCE_KEY: resource,
            io_manager_key: GravelerIOManager(
                graveler=resource, merge_strategy=merge_strategy, pickle_secret=pickle_secret
            ),
        },
        "sensors": [
            build_graveler_merge_sensor(
                strategy=merge_strategy,
                table_strategy=table_merge_strategy,
                **watch,  # type: ignore[arg-type]
            ),
            build_graveler_failure_sensor(delete_branch=delete_failed_branches, **watch),  # type: ignore[arg-type]
            *extra_sensors,
        ],
    }
