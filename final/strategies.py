"""The strategy pass: each reduction rendered in place where it can be, and as the general dataflow elsewhere.

A reduction has two renderings. Where versions are totally ordered (one
coordinate: outside loops) a version finishes after every version before
it, so a reduction can keep each key's state as of the last finished
version and change it in place (004, "In-place aggregations"): ``count``,
``sum``, ``distinct``, ``threshold``, ``min``, ``max``, ``top_k`` and
``aggregate`` are then one operator each (``InPlace``). With partially
ordered versions (inside loops) it must correct keys at joins of versions:
the general ``Reduce``, or 004's dataflow of reductions (``min`` and ``max``
in 16 rounds, ``aggregate`` a reduction per part). A reduction of a stream
with a shared arrangement takes the general rendering too.

The stream methods record the in-place rendering, with the general one
beside it (``Node.general``); ``choose_strategies``, one of
``final.compile``'s passes, keeps the first where it can run and records the
second in its place elsewhere, through the same stream API, reading the
stream the node read and read by what read the node. The choice is made on
the recorded graph, not while the program is built, as Materialize picks
each reduction's plan when it lowers a dataflow, not when it reads the query.
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace

from .operators.join import Arrange
from .stream import DifferenceStreamBuilder
from .topology import Node, Recorder, Target, Topology


def choose_strategies(topology: Topology) -> tuple[Topology, list[str]]:
    """The topology with every reduction's rendering chosen, and the choice for each, one line per reduction.

    In place if it reads versions of one coordinate and no shared arrangement;
    otherwise its general dataflow, recorded where the node was (after the
    nodes before it, before those after it), so the order stays topological.
    A general dataflow may hold reductions of its own (``aggregate``'s
    ``count_distinct``); they are chosen in their turn.
    """
    source = topology.sources()
    producer = {node.output: node for node in topology.nodes}
    edges = list(topology.edges)
    nodes: list[Node] = []
    changes = []
    waiting = deque(topology.nodes)
    while waiting:
        node = waiting.popleft()
        if node.general is None:
            nodes.append(node)
            continue
        (reader,) = node.inputs
        read = source[reader]
        why = _why_general(reader, producer.get(read))
        if why is None:
            nodes.append(replace(node, general=None))
            changes.append(f"{node.name}: in place ({node.operator.__name__})")
            continue
        splice = Recorder([node.label] if node.label else [])
        result = node.general(DifferenceStreamBuilder(splice, read, reader.scope)).writer
        count = len(splice.nodes)
        changes.append(f"{node.name}: general, {count} operator{'s' * (count != 1)} in its place ({why})")
        waiting.extendleft(reversed(splice.nodes))
        for spliced in splice.nodes:
            producer[spliced.output] = spliced
        at = edges.index((read, reader))
        edges[at:at + 1] = splice.edges
        edges = [(result if writer is node.output else writer, target) for writer, target in edges]
        source = {target: writer for writer, target in edges}
    return topology.replaced(nodes, edges), changes


def _why_general(reader: Target, producer: Node | None) -> str | None:
    """Why a reduction reading at ``reader``, from ``producer``'s output (None: an input), cannot change its
    state in place; None if it can."""
    if reader.scope.dimension != 1:
        return f"versions of {reader.scope.dimension} coordinates"
    if producer is not None and producer.operator is Arrange:
        return "it reads a shared arrangement"
    return None

