"""Pictures for the v0 notebook: a collection's multiplicities as bars, negative ones below the axis.

A collection is a list of ``(record, multiplicity)`` pairs that may repeat a
record; ``plot_multiplicities`` draws one bar per pair, in list order, so the
same collection before and after ``consolidate`` shows what consolidating does
(repeats summed, zeros dropped).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt

POSITIVE, NEGATIVE = "#4c78a8", "#e45756"
"""Bar colours: blue for records present, red for records removed (negative multiplicity)."""


def plot_multiplicities(panels: Mapping[str, Any], height: float = 2.6) -> Any:
    """One panel per ``title: collection``, a bar per stored ``(record, multiplicity)`` pair; return the figure.

    The panels share the vertical axis so their bars compare; each bar is
    labelled with its record and its multiplicity.
    """
    figure, axes = plt.subplots(
        1, len(panels), figsize=(4.2 * len(panels), height), sharey=True, squeeze=False,
        gridspec_kw={"width_ratios": [max(len(list(collection)), 1) for collection in panels.values()]},
    )
    for axis, (title, collection) in zip(axes[0], panels.items(), strict=True):
        pairs = list(collection)
        heights = [multiplicity for _, multiplicity in pairs]
        colours = [POSITIVE if multiplicity >= 0 else NEGATIVE for multiplicity in heights]
        bars = axis.bar(range(len(pairs)), heights, color=colours)
        axis.bar_label(bars, labels=[f"{multiplicity:+d}" for multiplicity in heights], fontsize=8)
        axis.set_xticks(range(len(pairs)), [str(record) for record, _ in pairs], rotation=30, ha="right")
        axis.axhline(0, color="black", linewidth=0.8)
        axis.set_title(f"{title}: {len(pairs)} pairs", fontsize=10)
        axis.margins(y=0.2)
    axes[0][0].set_ylabel("multiplicity")
    figure.tight_layout()
    return figure
