"""Pictures and tables for the v5 notebook: (version, round) grids, pasts, frontier staircases.

A loop's versions are pairs ``(version, round)``; every picture here puts the
input version on the x axis and the round on the y axis, round 0 at the
bottom, so the tables read like document 002's table in "v5/vFinal:
Partially ordered versions". These functions only draw what they are given:
which versions are in a past, or allowed by a frontier, is decided in the
notebook by the stages' own ``less_equal``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence

from IPython.display import Markdown, display

Cell = tuple[int, int]
"""A ``(version, round)`` pair, as plain ints."""

Table = Mapping[Cell, Mapping[Hashable, int]]
"""The difference at each ``(version, round)``: record -> multiplicity."""

ADDED, REMOVED, MIXED = "#c8e6c9", "#ffcdd2", "#ffe0b2"
"""Cell fills: only additions (green), only retractions (red), both (amber)."""


def _in_order(record: Hashable) -> tuple:
    """A sort key that puts numbers in numeric order and strings in alphabetical order."""
    return (type(record).__name__, record)


def signed(difference: Mapping[Hashable, int]) -> str:
    """``+3 +16`` for ``{3: 1, 16: 1}``; a multiplicity other than +-1 is written ``+2x6``."""
    return " ".join(
        f"{'+' if m > 0 else '-'}{r}" if abs(m) == 1 else f"{m:+d}x{r}"
        for r, m in sorted(difference.items(), key=lambda item: _in_order(item[0]))
        if m
    )


def text_table(table: Table, versions: Sequence[int], rounds: int, width: int = 16) -> list[str]:
    """The table as text lines, a column per version and a row per round, the last round on top."""
    lines = [f"{'':>9}" + "".join(f"{'version ' + str(v):<{width}}" for v in versions)]
    for i in range(rounds, -1, -1):
        lines.append(f"round {i:<3}" + "".join(f"{signed(table.get((v, i), {})) or '.':<{width}}" for v in versions))
    return lines


def beside(left: list[str], right: list[str], gap: int = 4) -> str:
    """Two blocks of text lines side by side."""
    width = max(len(line) for line in left) + gap
    rows = max(len(left), len(right))
    left, right = left + [""] * (rows - len(left)), right + [""] * (rows - len(right))
    return "\n".join(f"{a:<{width}}{b}".rstrip() for a, b in zip(left, right, strict=True))


def signed_grid(ax, table: Table, versions: Sequence[int], rounds: int, title: str, outline: int | None = None) -> None:
    """The table as a grid of cells, coloured by the sign of their multiplicities, records written in.

    ``outline`` draws a frame around one version's column.
    """
    from matplotlib.patches import Rectangle

    for v in versions:
        for i in range(rounds + 1):
            difference = {r: m for r, m in table.get((v, i), {}).items() if m}
            signs = {m > 0 for m in difference.values()}
            fill = "white" if not signs else ADDED if signs == {True} else REMOVED if signs == {False} else MIXED
            ax.add_patch(Rectangle((v - 0.5, i - 0.5), 1, 1, facecolor=fill, edgecolor="0.8"))
            if difference:
                ax.text(v, i, signed(difference).replace(" ", "\n"), ha="center", va="center", fontsize=8)
    if outline is not None:
        ax.add_patch(Rectangle((outline - 0.5, -0.5), 1, rounds + 1, fill=False, edgecolor="black", linewidth=2))
    _axes(ax, versions, rounds, title)


def past_grid(ax, point: Cell, past: Iterable[Cell], versions: Sequence[int], rounds: int, title: str) -> None:
    """Every ``(version, round)`` of the grid as a dot; those in ``past`` shaded, ``point`` marked."""
    from matplotlib.patches import Rectangle

    past = set(past)
    for v in versions:
        for i in range(rounds + 1):
            if (v, i) in past:
                ax.add_patch(Rectangle((v - 0.5, i - 0.5), 1, 1, facecolor="#bbdefb", edgecolor="white"))
            ax.plot(v, i, "o", color="tab:blue" if (v, i) in past else "0.7", markersize=4)
    ax.plot(*point, "*", color="black", markersize=14)
    ax.annotate(f"{point}", point, xytext=(8, 6), textcoords="offset points")
    _axes(ax, versions, rounds, title)


def staircase(elements: Iterable[Cell], right: float, top: float) -> list[tuple[float, float]]:
    """Corners of the region above and to the right of the elements (an antichain), closed at ``right``, ``top``."""
    elements = sorted(elements)
    if not elements:
        return []
    corners = [(elements[0][0], top)]
    for element, following in zip(elements, [*elements[1:], None], strict=True):
        x, y = element
        corners += [(x, y), (following[0] if following else right, y)]
    return [*corners, (right, top)]


def frontier_panel(
    ax, frontier: Iterable[Cell], arrived: Iterable[Cell], versions: Sequence[int], rounds: int, title: str,
) -> None:
    """One step of a run: the frontier's upper set as a shaded staircase, its elements, and where data arrived.

    The staircase's corners are the frontier's elements: every version still
    to come is up and to the right of one. ``arrived`` (squares) are the
    versions at which data reached the loop head in this step.
    """
    frontier = list(frontier)
    corners = staircase(frontier, right=max(versions) + 0.5, top=rounds + 0.5)
    if corners:
        ax.fill(*zip(*corners, strict=True), color="tab:green", alpha=0.18, linewidth=0)
        ax.plot(*zip(*corners[:-1], strict=True), color="tab:green", linewidth=1.5)
    for v in versions:
        for i in range(rounds + 1):
            ax.plot(v, i, ".", color="0.75", markersize=3)
    for cell in arrived:
        ax.plot(*cell, "s", color="tab:orange", markersize=6)
    for element in frontier:
        ax.plot(*element, "o", color="tab:green", markersize=6)
    _axes(ax, versions, rounds, title, labels=False)


def _axes(ax, versions: Sequence[int], rounds: int, title: str, labels: bool = True) -> None:
    ax.set_xlim(min(versions) - 0.5, max(versions) + 0.5)
    ax.set_ylim(-0.5, rounds + 0.5)
    ax.set_xticks(list(versions))
    ax.set_yticks(range(rounds + 1))
    ax.set_aspect("equal")
    ax.set_title(title, fontsize=10)
    if labels:
        ax.set_xlabel("input version")
        ax.set_ylabel("round")


def result_table(results: Mapping[str, Mapping[int, Mapping[Hashable, int]]], reference: str) -> str:
    """A markdown table, a row per version and a column per engine, each cell the records at that version.

    A cell that differs from the ``reference`` column says what it has too
    many (``+``) and too few (``-``) of.
    """
    engines = list(results)
    versions = sorted({version for result in results.values() for version in result})
    rows = ["| version | " + " | ".join(engines) + " |", "|---" * (len(engines) + 1) + "|"]
    for version in versions:
        expected = results[reference].get(version, {})
        cells = []
        for engine in engines:
            got = results[engine].get(version, {})
            text = ", ".join(str(record) for record in sorted(got, key=_in_order)) or "(empty)"
            if got != expected:
                extra = sorted(set(got) - set(expected), key=_in_order)
                missing = sorted(set(expected) - set(got), key=_in_order)
                wrong = [*(f"+{r}" for r in extra), *(f"-{r}" for r in missing)]
                text += f" **wrong: {' '.join(wrong) or 'multiplicities'}**"
            cells.append(text)
        rows.append(f"| {version} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def show_results(title: str, results: Mapping[str, Mapping[int, Mapping[Hashable, int]]], reference: str) -> None:
    """Display ``result_table`` under a bold title."""
    display(Markdown(f"**{title}**\n\n" + result_table(results, reference)))
