"""Helpers only the v4 notebook uses: the lexicographic past on a grid, and printouts side by side.

``plot_past`` draws a small grid of ``(version, round)`` pairs, numbers them
in the order a comparison puts them, and shades the past of one pair: the
pairs the comparison says are at or before it. ``side_by_side`` shows a
document's printed lines next to the lines a stage printed, marking each row
as the same or different, so a notebook can claim "matches the document" and
show it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cmp_to_key
from itertools import zip_longest

import matplotlib.pyplot as plt
from IPython.display import Markdown, display

Pair = tuple[int, int]


def past(point: Pair, versions: int, rounds: int, less_equal: Callable[[Pair, Pair], bool]) -> set[Pair]:
    """The pairs of the ``versions`` x ``rounds`` grid that ``less_equal`` puts at or before ``point``."""
    return {(v, r) for v in range(versions) for r in range(rounds) if less_equal((v, r), point)}


def plot_past(
    point: Pair, less_equal: Callable[[Pair, Pair], bool], versions: int = 3, rounds: int = 5, title: str = "",
) -> set[Pair]:
    """Draw the grid, each pair numbered by its place in ``less_equal``'s order, the past of ``point`` shaded.

    The order must be total (v4's is): the numbers and the thin path through
    them follow it. Returns the past, so the caller can assert on it.
    """
    grid = [(v, r) for v in range(versions) for r in range(rounds)]
    in_order = sorted(grid, key=cmp_to_key(lambda a, b: 0 if a == b else (-1 if less_equal(a, b) else 1)))
    shaded = past(point, versions, rounds, less_equal)
    fig, ax = plt.subplots(figsize=(1.1 * rounds + 1.5, 1.0 * versions + 1.2))
    xs, ys = [r for _, r in in_order], [v for v, _ in in_order]
    ax.plot(xs, ys, color="#bbbbbb", linewidth=1, zorder=1)
    for rank, (v, r) in enumerate(in_order):
        if (v, r) == point:
            face, edge = "#d93025", "#d93025"
        elif (v, r) in shaded:
            face, edge = "#8ab4f8", "#1a73e8"
        else:
            face, edge = "white", "#9aa0a6"
        ax.scatter([r], [v], s=520, c=face, edgecolors=edge, linewidths=1.5, zorder=2)
        ax.annotate(str(rank), (r, v), ha="center", va="center", fontsize=9, zorder=3,
                    color="white" if (v, r) == point else "black")
    ax.set_xticks(range(rounds))
    ax.set_yticks(range(versions))
    ax.set_xlabel("round (iteration)")
    ax.set_ylabel("input version")
    ax.set_xlim(-0.6, rounds - 0.4)
    ax.set_ylim(-0.6, versions - 0.4)
    ax.set_title(title or f"the past of {point} (shaded); numbers: the order of the versions")
    fig.tight_layout()
    plt.show()
    return shaded


def side_by_side(document: Sequence[str], ours: Sequence[str], source: str, label: str = "v4 here") -> bool:
    """Show ``document``'s printed lines beside ``ours`` as a table, one row per line; return whether all match.

    A row is marked ``=`` when the two lines are the same text, ``≠`` when
    they differ, and a missing line is shown as an empty cell.
    """
    rows = []
    for number, (theirs, mine) in enumerate(zip_longest(document, ours), start=1):
        mark = "=" if theirs == mine else "≠"
        rows.append(f"| {number} | {_cell(theirs)} | {mark} | {_cell(mine)} |")
    header = f"| | {source} | | {label} |\n|---|---|:-:|---|"
    display(Markdown(header + "\n" + "\n".join(rows)))
    return list(document) == list(ours)


def _cell(line: str | None) -> str:
    return f"`{line}`" if line else ""
