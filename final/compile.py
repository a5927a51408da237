"""Compiling a graph: the recorded topology, rewritten by passes, built once into the graph that runs.

A program is recorded first (``final.topology``: nodes and edges, nothing
that runs), and ``GraphBuilder.finalize`` hands the recording to
``compile``, which works in three stages, each leaving the one before it as
it was:

1. **Passes.** ``PASSES`` rewrite the topology in turn, each returning a new
   one and what it changed: the strategy pass chooses each reduction's
   rendering (``final.strategies``), then fusion folds the linear operators
   into their neighbours (``final.fusion``). A new pass is one more entry.
2. **The tracker.** Every end of every edge of the last topology becomes a
   location of a ``TrackerBuilder``, and every edge and every way through an
   operator a path; ``build`` works out the summaries once, refusing a cycle
   that does not advance versions (``final.progress``).
3. **The wiring.** Each end is built, whole, at its location (readers, then
   the writers that send to them, ``final.edges``), each operator is made in
   its ``Place`` (``final.operators.base``), and the handles the user holds
   are bound to their ends (``final.sessions``).

What comes out, a ``Compiled``, keeps every stage, for diagrams
(``final.viz``) and for reading what each pass did. Timely dataflow works in
the same order: its ``progress/graph_pass.rs`` runs passes over a
subgraph's topology, in registration order, before the reachability tracker
is built (in place, where a pass here makes a new topology), and its
``reachability::Builder::build`` consumes the recorded graph and returns
the ``Tracker``; sqlglot's optimizer is such a list of rules too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .edges import DifferenceStreamReader, DifferenceStreamWriter
from .fusion import fuse
from .operators.base import Operator, Place
from .progress import ProgressTracker, TrackerBuilder
from .sessions import InputEnd, ReaderEnd
from .strategies import choose_strategies
from .topology import Node, Source, Target, Topology

Pass = Callable[[Topology], tuple[Topology, list[str]]]
"""A compile pass: from a topology, a new one and what it changed (one line per change); the one it is given
stays as it was."""

PASSES: tuple[Pass, ...] = (choose_strategies, fuse)
"""The passes, in the order they run: reductions' renderings first, as the general ones hold linear operators
that fusion then folds."""


@dataclass(frozen=True)
class Stage:
    """What one pass did: its name, the topology it made, and what it changed, one line each."""

    name: str
    topology: Topology
    changes: tuple[str, ...]


@dataclass(frozen=True)
class Compiled:
    """A compiled graph: the recording, what each pass made of it, and the parts that run, built from the last.

    Invariant: ``operators[i]`` was made from ``topology.nodes[i]``, and is
    numbered ``i``; ``edges`` are ``topology.edges``, end for end, built
    (``ends`` maps each recorded end to its built one); nothing here changes
    once made but the counts of ``progress`` and the state of the operators.
    """

    recorded: Topology
    """The graph as the builder recorded it."""
    stages: tuple[Stage, ...]
    """Each pass's work, in the order they ran."""
    progress: ProgressTracker
    """The tracker: pointstamps and frontiers at every location."""
    operators: tuple[Operator, ...]
    """The operators that run, in topological order."""
    ends: dict[Source | Target, DifferenceStreamWriter | DifferenceStreamReader]
    """The built end of each recorded end of the last topology."""

    @property
    def topology(self) -> Topology:
        """The topology the graph was built from: the last pass's."""
        return self.stages[-1].topology if self.stages else self.recorded

    @property
    def edges(self) -> list[tuple[DifferenceStreamWriter, DifferenceStreamReader]]:
        """Every edge of the built graph as ``(writer, reader)``."""
        return [(self.ends[source], self.ends[target]) for source, target in self.topology.edges]

    def vertices(self) -> dict[DifferenceStreamWriter | DifferenceStreamReader, Any]:
        """The vertex at each built end: an operator at its output and inputs, the input's writer at its writer,
        an ``Output`` or the reader the user connected at its reader."""
        made = dict(zip(self.topology.nodes, self.operators, strict=True))
        return {self.ends[end]: made.get(vertex, vertex) for end, vertex in self.topology.vertices().items()}


def compile(recorded: Topology) -> Compiled:
    """The graph ``recorded`` describes, compiled: passed through ``PASSES``, its tracker built, its ends and
    operators built and wired; the handles the user holds (inputs' writers, connected readers) are bound.

    Raises:
        GraphError: a cycle of the graph does not advance versions.
    """
    stages = []
    topology = recorded
    for rewrite in PASSES:
        topology, changes = rewrite(topology)
        stages.append(Stage(rewrite.__name__, topology, tuple(changes)))
    labels = [_label(number, node, topology) for number, node in enumerate(topology.nodes)]
    tracker, location, watched = _locate(topology, labels)
    progress = tracker.build()
    ends = _wire(topology, labels, progress, location)
    operators = []
    for number, node in enumerate(topology.nodes):
        reached = progress.reach(location[node.output])
        place = Place(
            tuple(ends[target] for target in node.inputs), ends[node.output], node.name, number, labels[number],
            progress, watched[node], any(location[target] in reached for target in node.inputs),
        )
        operators.append(node.operator(place, *node.arguments))
    for writer in topology.inputs:
        writer.bind(ends[writer.source])
    for reader in topology.readers:
        reader.bind(ends[reader.target])
    return Compiled(recorded, tuple(stages), progress, tuple(operators), ends)


def _label(number: int, node: Node, topology: Topology) -> str:
    """How messages and diagrams name the operator made from ``node``: its name and number, with the linear
    operators fused in front of its inputs and after its output, in the order data meets them."""
    before, after = topology.fused(node)
    return " + ".join([*before, node.name, *after]) + f" #{number}"


def _locate(
    topology: Topology, labels: list[str],
) -> tuple[TrackerBuilder, dict[Source | Target, int], dict[Node, int]]:
    """A tracker builder with a location for every end of every edge, and a path for every edge and every way
    through an operator (doing its ``summary``); each end's location; each node's watched location (its input's,
    or one of its own that every input leads to: its frontier is their meet)."""
    tracker = TrackerBuilder()
    location: dict[Source | Target, int] = {}
    for writer in topology.inputs:
        location[writer.source] = tracker.add_location(writer.dimension, writer.label, writer.name)
    watched: dict[Node, int] = {}
    for node, label in zip(topology.nodes, labels, strict=True):
        inputs = node.inputs
        output = location[node.output] = tracker.add_location(node.output.dimension, label)
        for side, target in enumerate(inputs):
            port = f" {side}" if len(inputs) > 1 else ""
            location[target] = tracker.add_location(target.scope.dimension, f"{label} input{port}")
            tracker.add_path(location[target], output, node.operator.summary)
        if len(inputs) == 1:
            watched[node] = location[inputs[0]]
        else:
            watched[node] = tracker.add_location(inputs[0].scope.dimension, f"{label} inputs")
            for target in inputs:
                tracker.add_path(location[target], watched[node])
    names = {output.reader.target: f"output {output.name}" for output in topology.outputs}
    for source, target in topology.edges:
        if target not in location:
            location[target] = tracker.add_location(target.scope.dimension, names.get(target, "reader"))
        tracker.add_path(location[source], location[target])
    return tracker, location, watched


def _wire(topology: Topology, labels: list[str], progress: ProgressTracker,
          location: dict[Source | Target, int]) -> dict[Source | Target, Any]:
    """Every end of ``topology``'s edges, built at its location with the logic fused into it: the readers first,
    then each writer with the readers it sends to."""
    chains = topology.chains
    users = {reader.target for reader in topology.readers}
    ends: dict[Source | Target, Any] = {}
    readers: dict[Source, list[DifferenceStreamReader]] = {}
    for source, target in topology.edges:
        if target in users:
            end = ReaderEnd(target.scope, progress, location[target])
        elif target in chains:
            end = DifferenceStreamReader(target.scope, progress, location[target], chains[target].logic,
                                         chains[target].names)
        else:
            end = DifferenceStreamReader(target.scope, progress, location[target])
        ends[target] = end
        readers.setdefault(source, []).append(end)
    for writer in topology.inputs:
        source = writer.source
        ends[source] = InputEnd(source.scope, writer.label, progress, location[source], readers.get(source, []),
                                writer.frontier)
    for node, label in zip(topology.nodes, labels, strict=True):
        source, chain = node.output, chains.get(node.output)
        ends[source] = DifferenceStreamWriter(source.scope, label, progress, location[source], readers.get(source, []),
                                              *((chain.logic, chain.names) if chain else ()))
    return ends
