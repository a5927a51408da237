"""The pipeline's report: JSON for programs, markdown for people, and two plots.

``report.json`` holds the run's parameters and everything measured (per
query: versions, result sizes, rows changed per version, both sides' seconds
per version, the initial load's time, the break-even version, every
difference, the partitioned runs) and ends with ``"complete": true``;
``report.md`` the same as tables, with the plots: ``latency.png``, each
query's time per version, incremental against from scratch, on a log scale
(``plot_latency`` draws it, for a notebook too); and ``partitions.png``, each
partitioned run's time as partitions grow.

The four files are written aside and moved in together, ``report.json``
last (``outputs.replace_files``): a report is never half old and half new,
and a file the run does not make again (``partitions.png`` after a run
without partitions) is removed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .equality import TOLERANCE
from .outputs import replace_files, sql_text
from .pipeline import Difference, PipelineRun, QueryRun

if TYPE_CHECKING:
    from matplotlib.figure import Figure

LISTED_DIFFERENCES = 20
"""Differences listed per query in the markdown (the JSON has all of them)."""


REPORT_FILES = ("report.json", "report.md", "latency.png", "partitions.png")
"""Every file a report may hold; ``report.json`` is written last and marks the report complete."""


def write_report(run: PipelineRun, out: str, parameters: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Write ``report.json``, ``report.md``, ``latency.png`` and ``partitions.png`` under ``out``; their paths.

    ``parameters`` (the command line's arguments) go into ``report.json``.
    The files replace the previous report's all at once, and only when all
    are written: if writing any of them raises, ``out`` keeps the previous
    report unchanged.
    """
    made = {}

    def write(folder: str) -> None:
        paths = {name: os.path.join(folder, name) for name in REPORT_FILES}
        _plot_latency(run, paths["latency.png"])
        if not _plot_partitions(run, paths["partitions.png"]):
            del paths["partitions.png"]
        with open(paths["report.md"], "w") as file:
            file.write(markdown(run, {name: os.path.basename(path) for name, path in paths.items()}))
        with open(paths["report.json"], "w") as file:
            json.dump(as_json(run, parameters), file, indent=1)
        made.update({name: os.path.join(out, name) for name in paths})

    replace_files(out, REPORT_FILES, write, marker="report.json")
    return {name: made[name] for name in REPORT_FILES if name in made}


def as_json(run: PipelineRun, parameters: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The run as plain JSON values; rows are lists, with NULL as null and decimals and times as strings.

    ``"complete": true`` comes last: a reader that finds it has the whole report.
    """
    return {
        "parameters": dict(parameters if parameters is not None else run.settings),
        "settings": run.settings,
        "versions_checked": run.versions_checked,
        "differences": run.differences,
        "queries": [
            {
                "dataset": query.dataset, "query": query.query, "sql": query.sql, "source": query.source,
                "agrees": query.agrees, "versions": query.versions, "rows": query.rows,
                "incremental_ms": [round(seconds * 1e3, 3) for seconds in query.incremental_seconds],
                "scratch_ms": [round(seconds * 1e3, 3) for seconds in query.scratch_seconds],
                "speedup_after_load": round(query.speedup, 1),
                "load_ms": round(query.load_seconds * 1e3, 3),
                "rows_changed": query.rows_changed,
                "break_even_version": query.break_even_version,
                "differences": [_difference(found) for found in query.differences],
                "tolerated": query.tolerated,
                "partitioned": [
                    {
                        "partitions": part.partitions, "seconds": round(part.seconds, 3),
                        "slowest_task_seconds": round(part.slowest_task_seconds, 3),
                        "differences": [_difference(found) for found in part.differences],
                        "final_imported_from": part.final_from,
                    }
                    for part in query.partitioned
                ],
            }
            for query in run.queries
        ],
        "complete": True,
    }


def _difference(found: Difference) -> dict[str, Any]:
    return {"version": found.version, "row": [_plain(value) for value in found.row],
            "expected": found.expected, "actual": found.actual}


def _plain(value: Any) -> Any:
    return value if value is None or isinstance(value, (bool, int, float, str)) else str(value)


def markdown(run: PipelineRun, files: dict[str, str]) -> str:
    """The report as markdown, linking the plots named in ``files``."""
    settings = ", ".join(f"{key} {value}" for key, value in run.settings.items() if value is not None)
    lines = [
        "# Spark pipeline: final/ against Spark SQL from scratch",
        "",
        f"Settings: {settings}. **{run.versions_checked} versions checked, {run.differences} differences.**",
        "",
        "Each version, `final/` applies that version's changes to its dataflow and Spark SQL recomputes the "
        "query from scratch on the accumulated tables; the two results are compared as multisets of rows. "
        "Times are medians over the versions after the initial load (version 0), measured in this run.",
        "",
        "The initial load is `final/`'s time at version 0, building the result from nothing; the break-even "
        "version is the first at which `final/`'s total time so far, load included, is at most Spark SQL's "
        "total from scratch (none: not within this run).",
        "",
        "| data set | query | versions | differences | final/ per version | Spark SQL per version | speed-up "
        "| initial load in final/ | break-even version |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for query in run.queries:
        even = query.break_even_version
        lines.append(
            f"| {query.dataset} | {query.query} | {len(query.versions)} | {len(query.differences)} | "
            f"{query.incremental_median * 1e3:.1f} ms | {query.scratch_median * 1e3:.0f} ms | {query.speedup:.0f}x | "
            f"{query.load_seconds * 1e3:.0f} ms | {'none' if even is None else even} |"
        )
    tolerated = [query for query in run.queries if query.tolerated]
    if tolerated:
        lines += ["", f"Equal only within {TOLERANCE:g} (a DOUBLE SUM, AVG or spread, whose last bits depend on "
                      f"the order Spark adds in; `final/` adds exactly and rounds once): "
                  + ", ".join(f"{query.query} {query.tolerated} rows" for query in tolerated) + "."]
    lines += ["", f"![time per version]({files['latency.png']})", ""]
    partitioned = [query for query in run.queries if query.partitioned]
    if partitioned:
        lines += [
            "## Partitioned on Spark",
            "",
            "Each input's change log is repartitioned by the query's key (small tables are copied to every "
            "partition) and each task runs its own `final/` engine over all versions in order. Wall time is the "
            "whole Spark job; the single-process figure is `final/`'s own time over all versions on the driver.",
            "",
            "| query | partitions | wall time | slowest task in final/ | single process in final/ | differences |",
            "|---|---|---|---|---|---|",
        ]
        for query in partitioned:
            single = sum(query.incremental_seconds)
            for part in query.partitioned:
                lines.append(
                    f"| {query.query} | {part.partitions} | {part.seconds:.2f} s | "
                    f"{part.slowest_task_seconds:.2f} s | {single:.2f} s | {len(part.differences)} |"
                )
        imported = sorted({where for query in partitioned for part in query.partitioned for where in part.final_from})
        lines += ["", "Tasks imported `final` from: " + ", ".join(f"`{where}`" for where in imported) + "."]
        if "partitions.png" in files:
            lines += ["", f"![partitioned runs]({files['partitions.png']})"]
        lines.append("")
    lines += ["## Queries", ""]
    for query in run.queries:
        lines += [f"### {query.dataset}/{query.query}", "", f"Source: {query.source}.", "", "```sql", query.sql,
                  "```", "", "Rows changed per version (version: rows): " + ", ".join(
                      f"{version}: {changed}" for version, changed in zip(query.versions, query.rows_changed,
                                                                          strict=True)) + ".", ""]
        listed = query.differences + [found for part in query.partitioned for found in part.differences]
        if listed:
            lines += ["| version | row | Spark SQL | final/ |", "|---|---|---|---|"]
            lines += [f"| {found.version} | `{sql_text(found.row)}` | {found.expected} | {found.actual} |"
                      for found in listed[:LISTED_DIFFERENCES]]
            if len(listed) > LISTED_DIFFERENCES:
                lines.append(f"\n({len(listed) - LISTED_DIFFERENCES} more in report.json)")
            lines.append("")
    return "\n".join(lines)


def plot_latency(queries: Sequence[QueryRun]) -> Figure:
    """One panel per query: milliseconds per version, Spark SQL from scratch against final/ incrementally, log scale."""
    from matplotlib import pyplot
    from matplotlib.ticker import MaxNLocator

    figure, axes = pyplot.subplots(1, len(queries), figsize=(4 * len(queries), 3.4), squeeze=False)
    for axis, query in zip(axes[0], queries, strict=True):
        axis.plot(query.versions, [s * 1e3 for s in query.scratch_seconds], "o-", label="Spark SQL, from scratch")
        axis.plot(query.versions, [s * 1e3 for s in query.incremental_seconds], "s-", label="final/, incremental")
        axis.set_yscale("log")
        axis.set_title(f"{query.dataset}/{query.query}\n{query.speedup:.0f}x after the load", fontsize=9)
        axis.set_xlabel("version")
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
        axis.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("milliseconds")
    axes[0][0].legend(fontsize=8)
    figure.tight_layout()
    return figure


def _plot_latency(run: PipelineRun, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure = plot_latency(run.queries)
    figure.savefig(path, dpi=110)
    pyplot.close(figure)


def _plot_partitions(run: PipelineRun, path: str) -> bool:
    """Bars of wall time per partition count for each partitioned query; False if there were none."""
    queries = [query for query in run.queries if query.partitioned]
    if not queries:
        return False
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(1, len(queries), figsize=(3.6 * len(queries), 3.2), squeeze=False)
    for axis, query in zip(axes[0], queries, strict=True):
        labels = [str(part.partitions) for part in query.partitioned]
        axis.bar(labels, [part.seconds for part in query.partitioned], label="Spark job (wall)")
        axis.bar(labels, [part.slowest_task_seconds for part in query.partitioned], width=0.4,
                 label="slowest task in final/")
        axis.axhline(sum(query.incremental_seconds), color="black", linestyle="--", label="one process, final/")
        axis.set_title(f"{query.dataset}/{query.query}", fontsize=9)
        axis.set_xlabel("partitions")
    axes[0][0].set_ylabel("seconds")
    axes[0][0].legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
    return True

