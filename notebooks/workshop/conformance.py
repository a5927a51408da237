"""Tables and pictures for the conformance oracle's notebook: a case as a reader sees it, and verdicts per engine.

``show_case`` displays a case the way its JSON file reads (records and
versions in the case format's encoding: arrays for tuples, ``null`` for
NULL): its messages in order and, unless hidden for an exercise, the
expected accumulated collection and difference at each version.
``plot_case_versions`` draws a case with pair versions on a grid: the
versions its inputs change at, the versions the join closure adds, and the
expected difference at each. ``plot_verdicts`` draws, per engine, how many
cases passed, failed and were unsupported. Everything is read through
``final.conformance``'s public API (``Case.to_json``, ``Report.counts``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
from IPython.display import Markdown, display

import final.viz


def _text(value: Any) -> str:
    return json.dumps(value)


def _records(pairs: list) -> str:
    """``[[record, multiplicity], ...]`` as ``record x m, ...`` (``-`` when empty)."""
    return ", ".join(f"`{_text(record)}` x{multiplicity}" for record, multiplicity in pairs) or "-"


def show_case(case: Any, expected: bool = True) -> None:
    """Display ``case``: its program, source and inputs, each message, and (if ``expected``) its expected output."""
    value = case.to_json()
    inputs = ", ".join(f"`{name}`" for name in value["inputs"])
    versions = "integer versions" if value["dimensions"] == 1 else f"versions of {value['dimensions']} coordinates"
    tags = f"; tags {', '.join(value['tags'])}" if value["tags"] else ""
    lines = [
        f"**{value['name']}**: program `{value['program']}` on inputs {inputs}; {versions}{tags}.",
        f"Source: {value['source']}" if value["source"] else "",
        "",
        "| # | input | message |",
        "|---|---|---|",
    ]
    for number, message in enumerate(value["messages"]):
        if "data" in message:
            body = "data " + ", ".join(f"`{_text(update)}`" for update in message["data"])
        else:
            body = f"frontier `{_text(message['frontier'])}`" + (" (closed)" if not message["frontier"] else "")
        lines.append(f"| {number} | `{message['input']}` | {body} |")
    if expected:
        lines += ["", "| version | collection | difference |", "|---|---|---|"]
        for entry in value["expected"]:
            lines.append(f"| `{_text(entry['version'])}` | {_records(entry['collection'])} | "
                         f"{_records(entry['difference'])} |")
    display(Markdown("\n".join(lines)))


def plot_case_versions(case: Any, ax: Any = None, size: int | None = None) -> Any:
    """Draw a case with pair versions on a grid under the product order; return the Axes.

    The versions its inputs change at are crosses (``final.viz.plot_product_order``
    draws the grid); the versions its expected
    output lists that no input changes at (joins of input versions, where
    the output may still change) are orange rings. Each listed version is
    labelled with its expected difference (``+couch``, ``-couch``; ``x2``
    for a multiplicity of 2), or ``(none)`` when the difference is empty.
    """
    if case.dimensions != 2:
        raise ValueError(f"{case.name} has {case.dimensions}-coordinate versions; only pairs can be drawn on a grid")
    inputs = case.input_versions()
    listed = [entry.version for entry in case.expected]
    size = size or max(max(max(version) for version in listed) + 2, 3)
    ax = final.viz.plot_product_order(size=size, versions=inputs, ax=ax)
    joins = [version for version in listed if version not in inputs]
    if joins:
        ax.scatter([a for a, _ in joins], [b for _, b in joins], s=160, facecolors="none", edgecolors="#e07b00",
                   linewidths=2, zorder=6, label="join of input versions")
    for entry in case.expected:
        changes = [f"{'+' if m > 0 else '-'}{_short(record)}{'' if abs(m) == 1 else f' x{abs(m)}'}"
                   for record, m in sorted(entry.difference.items(), key=repr)]
        label = "\n".join(changes[:4] + (["..."] if len(changes) > 4 else [])) or "(none)"
        ax.annotate(label, entry.version, xytext=(8, 6), textcoords="offset points", fontsize=8, zorder=7)
    ax.set_xticks(range(size))
    ax.set_yticks(range(size))
    ax.set_xlabel("first coordinate")
    ax.set_ylabel("second coordinate")
    ax.set_title(case.name, fontsize=10)
    handles, labels = ax.get_legend_handles_labels()
    labels = ["input changes" if label == "data" else label for label in labels]
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1), fontsize="small")
    return ax


def _short(record: Any) -> str:
    """A record in a label: a string bare, anything else as its JSON text (tuples as arrays, None as null)."""
    return record if isinstance(record, str) else _text(record)


def plot_verdicts(reports: Sequence[Any], ax: Any = None) -> Any:
    """One horizontal bar per report (engine): its cases passed, failed and unsupported, stacked; return the Axes."""
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 0.45 * len(reports) + 1.2), layout="constrained")
    names = [report.engine for report in reports]
    left = [0] * len(reports)
    for column, (label, color) in enumerate((("passed", "#4c9a4c"), ("failed", "#c0392b"),
                                             ("unsupported", "#bbbbbb"))):
        widths = [report.counts()[column] for report in reports]
        bars = ax.barh(names, widths, left=left, color=color, label=label)
        ax.bar_label(bars, labels=[str(width) if width else "" for width in widths], label_type="center",
                     fontsize=8)
        left = [start + width for start, width in zip(left, widths, strict=True)]
    ax.invert_yaxis()
    ax.set_xlabel("cases")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), fontsize="small")
    return ax
