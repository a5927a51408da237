"""Operators: the vertices of a dataflow graph, and the messages on its edges.

An operator reads messages from its input edges and writes to its one output
edge, keeping whatever state it needs (``join`` and ``reduce`` keep indexes)
between calls. A message is a difference collection at a version, or a
frontier: the sender's promise that versions before it are finished. The base
class owns reading, dispatching and frontiers (an operator's output frontier is
the meet of its input frontiers); a leaf operator says only what data becomes,
and what to do when versions finish.
Source: document 002, "v2: Constructing dataflow
graphs" and "v3: Versions and frontiers". Rust DD's operators are timely
dataflow operators; a frontier message stands in for timely's progress tracking.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .collection import Collection, Multiplicity, Update, Values
from .index import Index
from .order import Version

if TYPE_CHECKING:
    from .graph import DifferenceStreamReader, DifferenceStreamWriter


@dataclass(frozen=True)
class DataMessage:
    """A difference collection at a version."""

    version: Version
    collection: Collection


@dataclass(frozen=True)
class FrontierMessage:
    """The sender will send no more data at versions before ``frontier``."""

    frontier: Version


class Operator:
    """A vertex with input readers and one output writer.

    Invariant: the output frontier is the meet of the input frontiers, and
    data at a version is sent before the output frontier passes that version.

    ``name`` is what built it (``map``, ``count``, ``debug out``...), set by
    the graph builder, so a picture of the graph can label the vertex.
    """

    name: str

    def __init__(self, inputs: list[DifferenceStreamReader], output: DifferenceStreamWriter) -> None:
        self.inputs = inputs
        self.output = output
        # Every edge of a graph starts at the builder's initial frontier.
        self._input_frontiers = [output.frontier] * len(inputs)

    def run(self) -> None:
        """Consume what is queued on the inputs and send the resulting outputs."""
        for side, reader in enumerate(self.inputs):
            for message in reader.drain():
                if isinstance(message, DataMessage):
                    self.on_data(side, message.version, message.collection)
                else:
                    self._on_input_frontier(side, message.frontier)

    def _on_input_frontier(self, side: int, frontier: Version) -> None:
        self._input_frontiers[side] = frontier
        output_frontier = self._input_frontiers[0]
        for input_frontier in self._input_frontiers[1:]:
            output_frontier = output_frontier.meet(input_frontier)
        if output_frontier != self.output.frontier:
            self.on_frontier(output_frontier)
            self.output.send_frontier(output_frontier)

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        """Handle a difference collection arriving on input ``side`` at ``version``."""
        raise NotImplementedError

    def on_frontier(self, frontier: Version) -> None:
        """The input frontiers have advanced to ``frontier``: versions before it are finished."""

    def send(self, version: Version, updates: list[Update]) -> None:
        """Send ``updates`` at ``version`` unless there are none."""
        if updates:
            self.output.send_data(version, Collection._trusted(updates))


class UnaryOperator(Operator):
    """An operator with one input."""


class BinaryOperator(Operator):
    """An operator with two inputs.

    With versions, a difference no longer waits for its partner from the other
    input: each is handled as it arrives, labelled with its version.
    """


class LinearUnaryOperator(UnaryOperator):
    """Applies ``f`` to each difference; right for any ``f`` with ``f(a + b) == f(a) + f(b)``."""

    def __init__(self, inputs: list, output: DifferenceStreamWriter, f: Callable[[Collection], Collection]) -> None:
        super().__init__(inputs, output)
        self._f = f

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self.send(version, list(self._f(collection)))


class Debug(UnaryOperator):
    """Passes messages through unchanged, describing each to ``sink``."""

    def __init__(self, inputs: list, output: DifferenceStreamWriter, name: str, sink: Callable[[str], None]) -> None:
        super().__init__(inputs, output)
        self._name = name
        self._sink = sink

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self._sink(f"debug {self._name} data: version: {version} collection: {collection}")
        self.output.send_data(version, collection)

    def on_frontier(self, frontier: Version) -> None:
        self._sink(f"debug {self._name} notification: frontier {frontier}")


class Concat(BinaryOperator):
    """The sum of two streams: every difference is forwarded at its version."""

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self.output.send_data(version, collection)


class Join(BinaryOperator):
    """``(key, (a, b))`` for matching keys, each at the join of the two versions.

    A difference arriving on one side is joined with everything the other
    side has indexed, then indexed itself, so each pair of records meets
    exactly once, whatever order the differences arrive in.
    Invariant: ``_indexes[side]`` holds every difference received on that side.
    """

    def __init__(self, inputs: list, output: DifferenceStreamWriter) -> None:
        super().__init__(inputs, output)
        self._indexes = (Index(), Index())

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        delta = Index.from_collection(version, collection, "join")
        mine, theirs = self._indexes[side], self._indexes[1 - side]
        output = delta.join(theirs) if side == 0 else theirs.join(delta)
        for output_version, updates in output.items():
            self.send(output_version, updates)
        mine.append(delta)

    def on_frontier(self, frontier: Version) -> None:
        for index in self._indexes:
            index.compact(frontier)


class Reduce(UnaryOperator):
    """``(key, output)`` for ``output`` in ``f(values of key)``, one finished version at a time.

    ``f`` needs all of a key's values at a version, so nothing is sent at a
    version until the frontier has passed it; then the versions that finished
    are computed in version order, each on the keys that changed at it.
    Invariant: ``_inputs`` holds every difference received and ``_outputs``
    every difference sent; ``_pending`` maps each unfinished version to the
    keys that changed at it.
    """

    def __init__(
        self, inputs: list, output: DifferenceStreamWriter,
        f: Callable[[Values], Iterable[tuple[Any, Multiplicity]]],
    ) -> None:
        super().__init__(inputs, output)
        self._f = f
        self._inputs = Index()
        self._outputs = Index()
        self._pending: defaultdict[Version, set] = defaultdict(set)

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        delta = Index.from_collection(version, collection, "reduce")
        self._inputs.append(delta)
        self._pending[version].update(delta.keys())

    def on_frontier(self, frontier: Version) -> None:
        finished = sorted((v for v in self._pending if not frontier.less_equal(v)), key=Version.sort_key)
        for version in finished:
            changes = Index()
            for key in self._pending.pop(version):
                values = self._inputs.reconstruct_at(key, version)
                for value, multiplicity in self._f(values) if values else ():
                    changes.add_value(key, version, (value, multiplicity))
                for value, multiplicity in self._outputs.reconstruct_at(key, version):
                    changes.add_value(key, version, (value, -multiplicity))
            changes.compact(version)
            self._outputs.append(changes)
            self.send(version, [((key, value), multiplicity) for key in changes.keys()
                                for value, multiplicity in changes.reconstruct_at(key, version)])
        self._inputs.compact(frontier)
        self._outputs.compact(frontier)


class Consolidate(UnaryOperator):
    """One consolidated difference per finished version, in version order.

    Invariant: ``_pending`` maps each unfinished version to what arrived at it.
    """

    def __init__(self, inputs: list, output: DifferenceStreamWriter) -> None:
        super().__init__(inputs, output)
        self._pending: defaultdict[Version, list[Update]] = defaultdict(list)

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self._pending[version].extend(collection)

    def on_frontier(self, frontier: Version) -> None:
        finished = sorted((v for v in self._pending if not frontier.less_equal(v)), key=Version.sort_key)
        for version in finished:
            self.send(version, list(Collection._trusted(self._pending.pop(version)).consolidate()))
