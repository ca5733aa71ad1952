"""Printing tables and drawing plots for the harness (matplotlib is imported only to plot)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    cells = [[str(h) for h in header]] + [[_fmt(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    print(f"\n{title}")
    for j, row in enumerate(cells):
        print(
            "  "
            + "  ".join(
                c.rjust(w) if i else c.ljust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if j == 0:
            print("  " + "  ".join("-" * w for w in widths))


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        if v >= 1000:
            return f"{v:,.0f}"
        if v >= 10:
            return f"{v:.1f}"
        return f"{v:.3g}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


@contextmanager
def _figure(path: Path, title: str, xlabel: str, ylabel: str) -> Iterator[Any]:
    """An Agg figure whose axes the caller fills; saved to ``path`` on exit."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    yield ax
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def loglog(
    path: Path, title: str, xs: Sequence[int], series: dict[str, Sequence[float]], ylabel: str
) -> None:
    with _figure(path, title, "objects in the repository (N)", ylabel) as ax:
        for label, ys in series.items():
            ax.plot(xs, ys, marker="o", label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")


def lines(
    path: Path, title: str, series: dict[str, Sequence[float]], xlabel: str, ylabel: str
) -> None:
    with _figure(path, title, xlabel, ylabel) as ax:
        for label, ys in series.items():
            ax.plot(range(1, len(ys) + 1), ys, label=label)


def bars(
    path: Path, title: str, labels: Sequence[str], series: dict[str, Sequence[float]], ylabel: str
) -> None:
    with _figure(path, title, "", ylabel) as ax:
        width = 0.8 / max(1, len(series))
        for k, (name, ys) in enumerate(series.items()):
            ax.bar([i + k * width for i in range(len(labels))], ys, width, label=name)
        ax.set_xticks([i + width * (len(series) - 1) / 2 for i in range(len(labels))], labels)
        ax.set_yscale("log")
