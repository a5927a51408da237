"""Pictures of a stage's dataflow graph, drawn from the graph's public view.

Every stage from v2 on has ``graph.inputs``, ``graph.operators`` and
``graph.edges()``; from v4 on, ``graph.scope_of(operator)`` says which loop an
operator runs in. ``dataflow_dot`` reads only those, so the picture is the
graph the stage built, not a drawing typed to match it: inputs and readers are
ovals, operators rounded boxes labelled with the method that built them, each
``iterate`` body a shaded box nested in the one around it, and the edge from
``feedback`` back to the loop head dashed. Graphs flow left to right; a graph
with a loop flows top to bottom, which keeps it narrower than a page.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import graphviz

SCOPE_FILLS = ("white", "#eef3fb", "#dde7f6", "#ccdaf0")
"""Fill of a scope's box by nesting depth, deeper loops darker."""

MAX_WIDTH_INCHES = 9
"""Widest picture, in inches (648 pt, 864 px): dot scales a larger drawing down to fit a 1,280 px page.
A graph with a loop is also laid out top to bottom, so its feedback edge and ``egress`` stay in view."""


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def dataflow_dot(graph: Any, inputs: Sequence[str] = (), readers: Sequence[str] = ()) -> str:
    """The dot source of ``graph``; ``inputs`` and ``readers`` name them in the order they were made.

    Unnamed inputs are ``input 0``, ``input 1``...; unnamed readers (from
    ``connect_reader()``) ``reader 0``... .
    """
    operators = list(graph.operators)
    node = {id(operator): f"op{number}" for number, operator in enumerate(operators)}
    lines = ["digraph dataflow {", '  node [shape=box, style="rounded,filled", fillcolor=white];']
    for number, writer in enumerate(graph.inputs):
        node[id(writer)] = f"input{number}"
        name = inputs[number] if number < len(inputs) else f"input {number}"
        lines.append(f"  input{number} [label={_quoted(name)}, shape=ellipse, fillcolor=\"#e8f0fe\"];")
    edges = graph.edges()
    found = [target for _, target in edges if id(target) not in node]
    for number, reader in enumerate(found):
        node[id(reader)] = f"reader{number}"
        name = readers[number] if number < len(readers) else f"reader {number}"
        lines.append(f"  reader{number} [label={_quoted(name)}, shape=ellipse, fillcolor=\"#e6f4ea\"];")

    members: dict[Any, list[str]] = {}
    children: dict[Any, list[Any]] = {}
    for number, operator in enumerate(operators):
        scope = _loop(graph.scope_of(operator) if hasattr(graph, "scope_of") else None)
        members.setdefault(scope, []).append(f"op{number} [label={_quoted(f'{operator.name} #{number}')}];")
        while scope is not None and scope not in children.setdefault(_loop(scope.parent), []):
            children[_loop(scope.parent)].append(scope)
            scope = _loop(scope.parent)
    lines += _cluster(None, 0, members, children, iter(range(len(operators))))
    lines.insert(1, f"  rankdir={'TB' if children else 'LR'}; size=\"{MAX_WIDTH_INCHES},100\";")

    for source, target in edges:
        style = ' [style=dashed, color="#5f6368", label="feedback", constraint=false]' if _is_feedback(source) else ""
        lines.append(f"  {node[id(source)]} -> {node[id(target)]}{style};")
    lines.append("}")
    return "\n".join(lines)


def _loop(scope: Any) -> Any:
    """``scope`` if it is a loop body; None for the top level (and in stages without scopes)."""
    return scope if scope is not None and scope.parent is not None else None


def _is_feedback(source: Any) -> bool:
    return getattr(source, "name", None) == "feedback"


def _cluster(
    loop: Any, depth: int, members: dict[Any, list[str]], children: dict[Any, list[Any]], numbers: Iterator[int],
) -> list[str]:
    """The nodes of ``loop`` (None: the top level), and each loop inside it as a nested ``subgraph cluster``."""
    indent = "  " * (depth + 1)
    lines = [indent + line for line in members.get(loop, [])]
    for scope in children.get(loop, []):
        fill = SCOPE_FILLS[min(depth + 1, len(SCOPE_FILLS) - 1)]
        lines.append(f"{indent}subgraph cluster_{next(numbers)} {{")
        lines.append(f'{indent}  label="iterate (depth {scope.depth})"; style="rounded,filled"; fillcolor="{fill}";')
        lines += _cluster(scope, depth + 1, members, children, numbers)
        lines.append(indent + "}")
    return lines


def draw(graph: Any, inputs: Sequence[str] = (), readers: Sequence[str] = ()) -> graphviz.Source:
    """``graph`` as a picture (a ``graphviz.Source``, shown as SVG when it is a cell's value)."""
    return graphviz.Source(dataflow_dot(graph, inputs, readers))
