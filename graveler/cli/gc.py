"""``graveler gc graveler://REPO [--dry-run] [--spark]``: garbage collection from the CLI.

Retention comes from ``--rules FILE`` (lakeFS JSON shape) or ``--retention-days`` plus
``--branch-retention BRANCH=DAYS``; ``--grace-hours`` protects recent objects. ``--spark`` runs
the Spark implementation from the ``graveler_spark`` provider, reached through importlib
only (the engine never imports Spark), on ``--master`` (else Spark's own ``spark.master``, as
set by ``spark-submit``, else ``local[*]``). Store settings are those of every other command
(``GRAVELER_S3_ENDPOINT_URL``, ``AWS_*``), over which Spark's S3A keys
(``spark.hadoop.fs.s3a.*``) win; the executors get them with the job.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from graveler.cli.output import Output
from graveler.core.errors import InvalidArgument
from graveler.maintenance.gc import GCReport, RetentionRules, collect_garbage
from graveler.maintenance.gc.plan import Progress as ProgressCallback
from graveler.maintenance.gc.plan import no_progress

if TYPE_CHECKING:
    from graveler.repository import Repository

SPARK_MODULE = "graveler_spark.gc"
PHASES = {
    "mark-metaranges": "Reading metaranges",
    "mark-ranges": "Reading ranges",
    "list": "Listing the namespace",
    "sweep": "Deleting",
}


def run(repo: Repository, a: argparse.Namespace, out: Output, interactive: bool) -> int:
    rules = rules_from_args(a)
    if a.grace_hours < 0:
        raise InvalidArgument(f"--grace-hours must be >= 0, got {a.grace_hours}")
    grace = timedelta(hours=a.grace_hours)
    if a.master and not a.spark:
        raise InvalidArgument("--master needs --spark")
    with _progress(out, interactive) as progress:
        if a.spark:
            result: GCReport = _spark_module().collect_garbage_cli(
                repo.name,
                rules,
                home=a.home,
                database_url=a.database_url,
                master=a.master,
                grace=grace,
                dry_run=a.dry_run,
                progress=progress,
            )
        else:
            result = collect_garbage(repo, rules, grace=grace, dry_run=a.dry_run, progress=progress)
    _print(out, result)
    return 0


def rules_from_args(a: argparse.Namespace) -> RetentionRules:
    """Rules from ``--rules`` (file) overridden by ``--retention-days`` / ``--branch-retention``."""
    base = RetentionRules.load(a.rules) if a.rules else RetentionRules()
    branches = dict(base.branch_days)
    for item in a.branch_retention:
        name, _, days = item.partition("=")
        try:
            branches[name] = float(days)
        except ValueError:
            name = ""
        if not name:
            raise InvalidArgument(f"--branch-retention expects BRANCH=DAYS, got {item!r}")
    default = base.default_days if a.retention_days is None else a.retention_days
    return RetentionRules(default, branches)


def _spark_module() -> Any:
    try:
        return importlib.import_module(SPARK_MODULE)
    except ImportError as exc:
        raise InvalidArgument(
            f"--spark needs the graveler_spark provider and pyspark ({exc}); install "
            "'graveler[spark]' or run without --spark"
        ) from exc


@contextmanager
def _progress(out: Output, interactive: bool) -> Iterator[ProgressCallback]:
    """Bars on a terminal; otherwise one line on stderr per finished phase (none for --json)."""
    if out.as_json:
        yield no_progress
        return
    if not interactive:

        def line(phase: str, done: int, total: int) -> None:
            if done == total:
                out.err.print(f"{PHASES.get(phase, phase)}: {total}")

        yield line
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=out.err, transient=True) as bars:
        tasks: dict[str, Any] = {}

        def bar(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bars.add_task(PHASES.get(phase, phase), total=total or None)
            bars.update(tasks[phase], completed=done, total=total or None)

        yield bar


def _print(out: Output, r: GCReport) -> None:
    if out.as_json:
        out.json(r.to_dict())
        return
    verb = "Would delete" if r.dry_run else "Deleted"
    for o in r.selected:
        out.message(f"{'would delete' if r.dry_run else 'deleted'}  {o.key}  ({o.size} bytes)")
    out.message(
        f"{verb} {len(r.selected)} object(s), {r.selected_bytes} bytes. Retained "
        f"{r.commits_retained} of {r.commits_total} commits; marked {r.objects_marked} objects "
        f"from {r.ranges_read} ranges; scanned {r.scanned}, {r.in_grace} inside the grace period."
    )
