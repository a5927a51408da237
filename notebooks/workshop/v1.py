"""Pictures for the v1 notebook: a collection's history as full snapshots versus differences.

``plot_history`` draws two grids, record by version: on the left the
multiplicity of each record in each snapshot ``A_i``, on the right in each
difference ``A_i - A_{i-1}`` (blue added, red removed, blank unchanged), so
one sees the differences are mostly blank when little changes.
``plot_sizes`` draws, per version, how many ``(record, multiplicity)`` pairs
each representation stores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np


def _grid(collections: Sequence[Any], records: list[Any]) -> np.ndarray:
    """``grid[r, i]``: the multiplicity of ``records[r]`` in ``collections[i]`` (0 if absent)."""
    grid = np.zeros((len(records), len(collections)), dtype=int)
    row = {record: number for number, record in enumerate(records)}
    for column, collection in enumerate(collections):
        for record, multiplicity in collection.as_dict().items():
            grid[row[record], column] = multiplicity
    return grid


def plot_history(snapshots: Sequence[Any], differences: Sequence[Any]) -> Any:
    """Two record-by-version grids, snapshots and differences, in one signed colour scale; return the figure.

    Records are rows, in the order they first appear; each non-zero cell shows
    its multiplicity. A panel's title says how many non-zero cells (stored
    pairs) it has.
    """
    records: list[Any] = []
    for collection in [*snapshots, *differences]:
        records += [record for record in collection.as_dict() if record not in records]
    panels = {"snapshots A_i": _grid(snapshots, records), "differences A_i - A_(i-1)": _grid(differences, records)}
    limit = max(1, *(int(abs(grid).max()) for grid in panels.values() if grid.size))
    figure, axes = plt.subplots(1, 2, figsize=(9, 0.35 * len(records) + 1.4), sharey=True)
    for axis, (title, grid) in zip(axes, panels.items(), strict=True):
        axis.imshow(grid, cmap="RdBu", vmin=-limit, vmax=limit, aspect="auto")
        for (row, column), multiplicity in np.ndenumerate(grid):
            if multiplicity:
                colour = "white" if abs(multiplicity) > limit / 2 else "black"  # readable on dark cells
                axis.text(column, row, f"{multiplicity:+d}", ha="center", va="center", fontsize=8, color=colour)
        axis.set_xticks(range(grid.shape[1]), [str(version) for version in range(grid.shape[1])])
        axis.set_xlabel("version i")
        axis.set_title(f"{title}: {int(np.count_nonzero(grid))} pairs", fontsize=10)
        axis.set_xticks(np.arange(-0.5, grid.shape[1]), minor=True)
        axis.set_yticks(np.arange(-0.5, grid.shape[0]), minor=True)
        axis.grid(which="minor", color="#dddddd", linewidth=0.5)
        axis.tick_params(which="minor", length=0)
    axes[0].set_yticks(range(len(records)), [str(record) for record in records], fontsize=8)
    figure.tight_layout()
    return figure


def plot_sizes(snapshots: Sequence[Any], differences: Sequence[Any]) -> Any:
    """Pairs stored per version, as snapshots and as differences, side by side; return the figure."""
    versions = np.arange(len(snapshots))
    figure, axis = plt.subplots(figsize=(7, 2.6))
    axis.bar(versions - 0.2, [len(s.consolidate()) for s in snapshots], width=0.4, label="snapshot A_i")
    axis.bar(versions + 0.2, [len(d.consolidate()) for d in differences], width=0.4, label="difference A_i - A_(i-1)")
    axis.set_xticks(versions)
    axis.set_xlabel("version i")
    axis.set_ylabel("pairs stored")
    axis.set_ylim(0, 1.3 * max(len(s.consolidate()) for s in [*snapshots, *differences]))  # room for the legend
    axis.legend(fontsize=8, ncols=2, loc="upper right")
    figure.tight_layout()
    return figure
