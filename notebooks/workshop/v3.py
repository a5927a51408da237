"""The v3 notebook's picture: a frontier advancing step by step, and outputs appearing as versions close.

``run_schedule`` feeds a v3 graph one action at a time (data at a version, or a
frontier), steps the graph after each, and records what the input had sent,
where the input and output frontiers stood, and at which versions data came
out. ``plot_frontier_run`` draws that record: steps along x, versions along y,
the closed versions (before the input frontier) shaded, inputs as dots (hollow
for a retraction) and outputs as stars, so a reader sees that a reduction's output at a version
appears only once the shading has covered that version. Only the public API
is read: ``writer.frontier``, ``reader.drain()`` and
``reader.probe_frontier_less_than``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import count
from typing import Any

import matplotlib.pyplot as plt

from v3 import Collection, DataMessage, Version


@dataclass(frozen=True)
class Moment:
    """What one step of a run did and left behind.

    ``sent`` holds the version of the data sent in this step (empty when the
    step sent a frontier) and ``sent_multiplicity`` its multiplicity (0 for a
    frontier); ``emitted`` the versions of the data messages the reader
    received in this step, in the order they came.
    """

    step: int
    label: str
    input_frontier: int
    output_frontier: int
    sent: tuple[int, ...]
    sent_multiplicity: int
    emitted: tuple[int, ...]
    outputs: tuple[tuple[int, dict], ...]
    """Each data message the reader received in this step, as ``(version, {record: multiplicity})``."""


def describe(action: tuple) -> str:
    """``data at 2: ('k', 'a') +1`` or ``frontier -> 3``: one action of a schedule, in words."""
    if action[0] == "frontier":
        return f"frontier -> {action[1]}"
    _, version, record, multiplicity = action
    return f"data at {version}: {record!r} {multiplicity:+d}"


def output_frontier(reader: Any) -> int:
    """The frontier of a reader's edge, found with the public probe: the least ``f`` not before ``f + 1``."""
    return next(version for version in count() if reader.probe_frontier_less_than(Version(version + 1)))


def run_schedule(graph: Any, writer: Any, reader: Any, schedule: Sequence[tuple]) -> list[Moment]:
    """Feed ``schedule`` to ``writer`` one action per step, stepping ``graph`` after each; record every step.

    An action is ``("data", version, record, multiplicity)`` or
    ``("frontier", version)``, versions as ints.
    """
    moments = []
    for step, action in enumerate(schedule, start=1):
        if action[0] == "frontier":
            writer.send_frontier(Version(action[1]))
            sent: tuple[int, ...] = ()
            multiplicity = 0
        else:
            _, version, record, multiplicity = action
            writer.send_data(Version(version), Collection([(record, multiplicity)]))
            sent = (version,)
        graph.step()
        data = [message for message in reader.drain() if isinstance(message, DataMessage)]
        moments.append(Moment(
            step=step, label=describe(action), input_frontier=writer.frontier.value,
            output_frontier=output_frontier(reader), sent=sent, sent_multiplicity=multiplicity,
            emitted=tuple(message.version.value for message in data),
            outputs=tuple((message.version.value, message.collection.as_dict()) for message in data),
        ))
    return moments


def plot_frontier_run(moments: Sequence[Moment], title: str = "", output_name: str = "output") -> None:
    """Steps along x, versions along y: closed versions shaded, inputs dots, outputs stars; then ``plt.show()``."""
    steps = [moment.step for moment in moments]
    top = max([moment.input_frontier for moment in moments] + [v for m in moments for v in m.sent + m.emitted]) + 1
    fig, ax = plt.subplots(figsize=(8, 3.6))
    ax.bar(steps, [moment.input_frontier for moment in moments], bottom=-0.5, width=1.0, color="0.88",
           label="closed: before the input frontier")
    edges = [step - 0.5 for step in steps] + [steps[-1] + 0.5]
    boundary = [moment.input_frontier - 0.5 for moment in moments]
    ax.step(edges, [*boundary, boundary[-1]], where="post", color="0.45", linewidth=1.5, label="input frontier")
    for positive, style in ((True, {"color": "tab:blue", "label": "input data"}),
                            (False, {"facecolors": "white", "edgecolors": "tab:red", "label": "input retraction"})):
        chosen = [m for m in moments if m.sent and (m.sent_multiplicity > 0) == positive]
        if chosen:
            ax.scatter([m.step for m in chosen], [m.sent[0] for m in chosen], zorder=3, **style)
    labelled = False
    for moment in moments:
        for order, version in enumerate(moment.emitted):
            ax.scatter(moment.step, version, marker="*", s=170, color="tab:orange", zorder=4,
                       label=None if labelled else f"{output_name} data")
            labelled = True
            if len(moment.emitted) > 1:  # several versions closed at once: number them in the order sent
                ax.annotate(str(order + 1), (moment.step, version), xytext=(7, -3), textcoords="offset points",
                            fontsize="x-small", color="tab:orange")
    ax.set_xticks(steps, [f"{moment.step}. {moment.label}" for moment in moments], rotation=30, ha="right",
                  fontsize="small")
    ax.set_yticks(range(top))
    ax.set_xlim(steps[0] - 0.5, steps[-1] + 0.5)
    ax.set_ylim(-0.5, top - 0.5)
    ax.set_ylabel("version")
    if title:
        ax.set_title(title, fontsize="medium")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    fig.tight_layout()
    plt.show()

