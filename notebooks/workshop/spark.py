"""The Spark pipeline notebook's helpers: small change logs written by hand, tables of rows, and the timing plot.

``write_log`` writes a change log given as Python tuples in Delta Lake's
change data feed convention, the way a Delta table's ``readChangeFeed``
would hand it over, so the notebook can feed the pipeline a log small
enough to read. ``show_table`` displays rows with NULL spelled as SQL does.
``plot_times`` draws each query's time per version, Spark SQL from scratch
against ``final/`` incrementally, from the pipeline's ``QueryRun`` records.
Only the pipeline's public functions and records are used.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

import matplotlib.pyplot as plt
from IPython.display import Markdown, display
from matplotlib.ticker import MaxNLocator

from final.spark import changelog
from final.spark.catalog import TABLES


def write_log(spark: Any, folder: str, table: str, changes: Iterable[tuple[tuple, str, int]]) -> str:
    """Write ``changes``, ``(record, _change_type, _commit_version)`` tuples of ``table``, as a Parquet change log
    under ``folder/table`` (sorted by version, as ``changelog.write`` writes); its path."""
    columns = ", ".join(f"`{name}` {kind}" for name, kind in TABLES[table].columns)
    schema = f"{columns}, {changelog.CHANGE_TYPE} STRING, {changelog.VERSION} BIGINT"
    rows = [(*record, change, version) for record, change, version in changes]
    path = os.path.join(folder, table)
    changelog.write(spark.createDataFrame(rows, schema), path)
    return path


def _cell(value: Any) -> str:
    return "NULL" if value is None else str(value)


def show_table(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """Display ``rows`` as a markdown table under ``columns``, ``None`` shown as NULL."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(value) for value in row) + " |" for row in rows]
    display(Markdown("\n".join(lines)))


def plot_times(runs: Sequence[Any]) -> plt.Figure:
    """One panel per checked query: milliseconds per version for Spark SQL from scratch and ``final/``, log scale."""
    figure, axes = plt.subplots(1, len(runs), figsize=(4.6 * len(runs), 3.4), squeeze=False, sharey=True)
    for axis, run in zip(axes[0], runs, strict=True):
        axis.plot(run.versions, [s * 1e3 for s in run.scratch_seconds], "o-", label="Spark SQL, from scratch")
        axis.plot(run.versions, [s * 1e3 for s in run.incremental_seconds], "s-", label="final/, incremental")
        axis.set_yscale("log")
        axis.set_title(f"{run.query}: {run.speedup:.0f}x after the load", fontsize=10)
        axis.set_xlabel("version (0 is the initial load)")
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
        axis.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("milliseconds per version")
    axes[0][0].legend(fontsize=8)
    figure.tight_layout()
    return figure
