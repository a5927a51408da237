"""Seeing it: dataflow graphs as graphviz diagrams, and the product order as matplotlib plots.

``to_dot(graph)`` draws a finished graph like document 002's diagrams:
named inputs and outputs, every operator labelled by its name and number
(with the linear operators fused into it), readers the user connected, each
``iterate`` scope as a box nested in its enclosing one, and each loop's
feedback edge dashed; left to right, or top to bottom when it has a loop.
``to_dot(graph, pointstamps=True)`` adds the graph's progress, the
pointstamps the tracker counts at every location. Compiling a graph has
three stages, and each can be drawn: ``to_dot`` also takes a ``Topology``,
the graph as recorded (``graph.compiled.recorded``) or as a pass left it
(``graph.compiled.stages``), whose operators have names but no numbers yet;
``compilation(graph)`` says in words what each pass changed. ``render``
turns a drawing into SVG or PNG with graphviz's ``dot``.
``plot_product_order`` draws a 2-D grid of versions, an antichain and the
upper set it allows, and frontiers advancing, as in 002's figures for
"v5/vFinal: Partially ordered versions".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .topology import Node, Topology

if TYPE_CHECKING:
    from .graph import Graph
    from .topology import Scope

SCOPE_COLORS = ("white", "#f2f2f2", "#e0e0e0", "#cfcfcf")
"""Fill of a scope box by nesting depth: deeper loops are darker, as 002 shades the loop body."""

MAX_WIDTH_INCHES = 9
"""Widest drawing, in inches (648 pt, 864 px): dot scales a larger one down, so it fits a 1,280 px page.
A graph with a loop is laid out top to bottom, which keeps its feedback edge and ``egress`` in view."""


def _label(node: Node, topology: Topology, number: int | None) -> str:
    """A node's name (and number, once compiled), with the linear operators fused into it one per line (dot's
    ``\\n``): those fused in front of its inputs above it (``map +``), those after its output below (``+ map``)."""
    before, after = topology.fused(node)
    lines = [
        *(f"{name} +" for name in before),
        node.name if number is None else f"{node.name} #{number}",
        *(f"+ {name}" for name in after),
    ]
    return "\\n".join(_quoted(line) for line in lines)


def _quoted(text: str) -> str:
    """``text`` escaped for a double-quoted dot string."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def to_dot(shown: Graph | Topology, pointstamps: bool = False) -> str:
    """The dot source of ``shown``: one node per input, operator, output and reader the user connected.

    A ``Graph`` is drawn from the topology it was compiled from
    (``graph.compiled``), its operators numbered; a ``Topology`` (recorded,
    or as a pass left it) with its operators' names alone. The feedback edge
    of a loop, the one edge that runs against the topological order, is drawn
    dashed, going back to the loop's head. With ``pointstamps`` (a graph's
    only) it also shows the graph's progress as the tracker counts it
    (``final.progress``): the versions an input's frontier holds, those an
    operator holds back (its capabilities), the messages queued on each
    edge, by version, and each output's frontier, which follows from all
    of them.
    """
    compiled = None if isinstance(shown, Topology) else shown.compiled
    topology = shown if compiled is None else compiled.topology
    shown_counts = pointstamps and compiled is not None

    def held(what: str, end: Any) -> list[str]:
        """The pointstamps at the built end of ``end``, if they are shown."""
        if not shown_counts:
            return []
        return _held(what, compiled.progress.pointstamps(compiled.ends[end].location))

    node: dict[int, str] = {}
    lines = ["digraph dataflow {", '  node [shape=box, style="rounded,filled", fillcolor=white];']
    for number, writer in enumerate(topology.inputs):
        node[id(writer)] = f"input{number}"
        label = _lines(writer.name, *held("holds", writer.source))
        lines.append(f'  input{number} [label="{label}", shape=ellipse, fillcolor="#e8f0fe"];')
    for number, output in enumerate(topology.outputs):
        node[id(output)] = f"output{number}"
        frontier = [f"frontier {_plain_versions(output.frontier.elements)}"] if shown_counts else []
        label = _lines(output.name, *frontier)
        lines.append(f'  output{number} [label="{label}", shape=ellipse, fillcolor="#e6f4ea"];')

    clusters: dict[int, list[str]] = {}
    scopes: dict[int, Scope] = {}
    numbers: dict[int, int] = {}
    for number, vertex in enumerate(topology.nodes):
        node[id(vertex)] = f"op{number}"
        numbers[id(vertex)] = number
        scope = vertex.output.scope
        key = id(scope) if scope.parent is not None else 0
        scopes[key] = scope
        holds = held("holds", vertex.output)
        label = _label(vertex, topology, None if compiled is None else number) + (
            "\\n" + _lines(*holds) if holds else "")
        clusters.setdefault(key, []).append(f'op{number} [label="{label}"];')
    lines += _nested_clusters(clusters, scopes)
    loops = any(key != 0 for key in clusters)
    lines.insert(1, f'  rankdir={"TB" if loops else "LR"}; size="{MAX_WIDTH_INCHES},100";')

    readers = 0
    vertices = topology.vertices()
    for source_end, target_end in topology.edges:
        source, target = vertices[source_end], vertices[target_end]
        if id(target) not in node:  # a reader the user connected
            node[id(target)] = f"reader{readers}"
            lines.append(f'  reader{readers} [label="reader", shape=note];')
            readers += 1
        back = id(source) in numbers and numbers.get(id(target), len(numbers)) <= numbers[id(source)]
        attributes = ["style=dashed", "constraint=false"] if back else []
        queued = held("queued", target_end)
        if queued:
            attributes.append(f'label="{_lines(*queued)}"')
        style = f" [{', '.join(attributes)}]" if attributes else ""
        lines.append(f"  {node[id(source)]} -> {node[id(target)]}{style};")
    lines.append("}")
    return "\n".join(lines)


def compilation(graph: Graph) -> str:
    """How ``graph`` was compiled, in words: how many operators were recorded, what each pass changed (one
    line per change), and how many operators and tracker locations the compiled graph has."""
    compiled = graph.compiled
    lines = [f"recorded: {_operators(compiled.recorded)}"]
    for stage in compiled.stages:
        lines.append(f"{stage.name}: {_operators(stage.topology)}")
        lines += [f"  {change}" for change in stage.changes] or ["  (nothing to change)"]
    lines.append(f"compiled: {_count(len(graph.operators), 'operator')}, "
                 f"{_count(compiled.progress.locations, 'tracker location')}")
    return "\n".join(lines)


def _operators(topology: Topology) -> str:
    """How many operators ``topology`` has, and their names in order, each with the linear operators fused
    into it."""
    names = []
    for node in topology.nodes:
        before, after = topology.fused(node)
        names.append(" + ".join([*before, node.name, *after]))
    return f"{_count(len(names), 'operator')} ({', '.join(names)})"


def _count(number: int, thing: str) -> str:
    """``1 operator``, ``3 operators``."""
    return f"{number:,} {thing}{'' if number == 1 else 's'}"


def _held(what: str, counts: dict) -> list[str]:
    """``what`` and the pointstamps ``counts`` (version -> how many) as one line, if there are any."""
    if not counts:
        return []
    versions = sorted(counts, key=tuple)
    shown_counts = (_plain_versions((version,)) + (f" x{counts[version]}" if counts[version] > 1 else "")
                    for version in versions)
    return [f"{what} " + ", ".join(shown_counts)]


def _plain_versions(versions: tuple) -> str:
    """Versions as a reader writes them: ``3``, ``(1, 2)``; ``{...}`` around several, or none."""
    plain = [str(v[0]) if len(v) == 1 else str(tuple(v)) for v in versions]
    return plain[0] if len(plain) == 1 else "{" + ", ".join(plain) + "}"


def _lines(*lines: str) -> str:
    """Lines of a dot label, quoted and joined by dot's ``\\n``."""
    return "\\n".join(_quoted(line) for line in lines)


def _nested_clusters(clusters: dict[int, list[str]], scopes: dict[int, Any]) -> list[str]:
    """Nodes grouped in ``subgraph cluster_...`` blocks, one per loop scope, nested as the scopes are."""
    known = dict(scopes)
    for scope in scopes.values():
        while scope is not None and scope.parent is not None:  # every enclosing loop gets a box too
            known[id(scope.parent)] = scope = scope.parent
    children: dict[int, list[int]] = {}
    for key, scope in known.items():
        if scope is not None and scope.parent is not None:
            children.setdefault(id(scope.parent), []).append(key)

    numbers: dict[int, int] = {}  # each loop's box numbered in the order it is drawn, so the source repeats

    def emit(key: int, depth: int) -> list[str]:
        indent = "  " * (depth + 1)
        body = [indent + node for node in clusters.get(key, [])]
        for child in children.get(key, []):
            color = SCOPE_COLORS[min(depth + 1, len(SCOPE_COLORS) - 1)]
            number = numbers.setdefault(child, len(numbers))
            body.append(f'{indent}subgraph cluster_{number} {{ label="iterate"; style=filled; fillcolor="{color}";')
            body += emit(child, depth + 1)
            body.append(indent + "}")
        return body

    roots = [key for key, scope in known.items() if scope is None or scope.parent is None]
    return [line for root in roots for line in emit(root, 0)]


def render(shown: Graph | Topology, format: str = "svg", pointstamps: bool = False) -> bytes:
    """A graph, or a topology, drawn by graphviz's ``dot``, as ``format`` bytes (``svg`` or ``png``); as for
    ``to_dot``."""
    import graphviz

    return graphviz.Source(to_dot(shown, pointstamps)).pipe(format=format)


def plot_product_order(
    size: int = 6,
    antichain: Sequence[tuple[int, int]] = (),
    frontiers: Sequence[Sequence[tuple[int, int]]] = (),
    versions: Sequence[tuple[int, int]] = (),
    ax: Any = None,
) -> Any:
    """Plot a ``size`` x ``size`` grid of 2-D versions under the product order.

    ``antichain``'s elements are marked and the versions it allows (its upper
    set) shaded; each of ``frontiers`` is drawn as the staircase bounding its
    upper set, later ones darker, to show a frontier advancing; ``versions``
    are marked as points of data. Returns the matplotlib Axes.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 5), layout="constrained")
    points = [(x, y) for x in range(size) for y in range(size)]
    ax.scatter([x for x, _ in points], [y for _, y in points], s=12, color="#bbbbbb", zorder=1)
    allowed = [(x, y) for x, y in points if any(a <= x and b <= y for a, b in antichain)]
    if allowed:
        ax.scatter([x for x, _ in allowed], [y for _, y in allowed], s=60, color="#b7e4b7", zorder=2,
                   label="allowed by the antichain")
    if antichain:
        ax.scatter([a for a, _ in antichain], [b for _, b in antichain], s=90, color="#2a7f2a", zorder=3,
                   label="antichain")
    colors = plt.get_cmap("Blues")
    for number, frontier in enumerate(frontiers):
        ax.step(*_staircase(frontier, size), where="post", linewidth=2, zorder=4,
                color=colors(0.35 + 0.6 * (number + 1) / len(frontiers)),
                label=f"frontier {number}" if len(frontiers) <= 4 else None)
    if versions:
        ax.scatter([a for a, _ in versions], [b for _, b in versions], marker="x", s=70, color="black", zorder=5,
                   label="data")
    ax.set_xlim(-0.5, size - 0.5)
    ax.set_ylim(-0.5, size - 0.5)
    ax.set_xlabel("first coordinate (input version)")
    ax.set_ylabel("second coordinate (iteration)")
    ax.set_aspect("equal")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), fontsize="small")
    return ax


def _staircase(frontier: Sequence[tuple[int, int]], size: int) -> tuple[list[float], list[float]]:
    """The lower-left boundary of an antichain's upper set, as x and y lists for ``Axes.step``."""
    corners = sorted(frontier)
    xs, ys = ([corners[0][0] - 0.5], [size - 0.5]) if corners else ([], [])
    for x, y in corners:
        xs.append(x - 0.5)
        ys.append(y - 0.5)
    if corners:
        xs.append(size - 0.5)
        ys.append(ys[-1])
    return xs, ys
