"""Edges: how difference collections travel from the operator that sends them to the operators that read them.

An edge runs from a writer, its sending end (``DifferenceStreamWriter``: an
operator's output, or an input), to one reader, a receiving end
(``DifferenceStreamReader``): every message a writer sends is queued at each
of its readers, in the order sent, until taken. A message is a
``DataMessage``, a difference collection at a version. Edges carry data
only: each end is a location of the progress tracker (``final.progress``),
which counts a message queued at an operator's input until the operator has
handled it.

A graph's edges, with its inputs, operators and outputs, make its
``Topology``: the builder records one as the program is built, and
``GraphBuilder.finalize`` compiles it: linear operators fused
(``final.fusion``), then the progress tracker built from what is left, with
every end wired once, at its location (``Topology.compile``). The ends a
user holds, an input's writer and a reader connected to read a stream, are
in ``final.sessions``. Source: document 002, "v2: Constructing dataflow
graphs"; an edge is a timely dataflow channel, here a queue per reader.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from .collection import Collection
from .errors import GraphError
from .operators.base import Logic, apply_logic
from .order import Antichain, Version
from .progress import TrackerBuilder

if TYPE_CHECKING:
    from .fusion import Chain
    from .graph import Scope
    from .operators.base import Operator
    from .progress import ProgressTracker
    from .sessions import InputWriter, Output


class DataMessage:
    """A difference collection at a version. Never mutated once sent: readers share it."""

    __slots__ = ("collection", "version")

    def __init__(self, version: Version, collection: Collection) -> None:
        self.version = version
        self.collection = collection

    def __repr__(self) -> str:
        return f"DataMessage({self.version!r}, {self.collection!r})"


class DifferenceStreamWriter:
    """The sending end of a stream, in a scope: an operator's output (an input's is ``sessions.InputWriter``).

    Every message goes to every reader. An operator sends through
    ``send_trusted`` (the internal protocol), under the capabilities it holds.

    Invariant: a message is never mutated after it is sent (readers share
    it); ``logic``, if any, is the fused linear operators' (``fused`` names
    them, both set by ``finalize`` from the compiled topology), applied to
    everything sent before it goes out; until ``wire`` it has no location
    and sends to no one.
    """

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.dimension = scope.dimension
        """How many coordinates the versions of this stream have."""
        self.owner: Operator | None = None
        """The operator whose output this is, set by the builder when it builds the operator."""
        self.progress: ProgressTracker | None = None
        self.location = -1
        self.logic: Logic | None = None
        self.fused: tuple[str, ...] = ()
        self._targets: list[tuple[deque, int | None]] = []

    @property
    def frontier(self) -> Antichain:
        """The versions this stream may still carry data at, worked out by the tracker from what its operator
        and everything before it still hold."""
        return self.progress.frontier(self.location)

    @property
    def label(self) -> str:
        """How messages name where this stream comes from: its operator's label."""
        return self.owner.label

    def send_trusted(self, version: Version, collection: Collection) -> None:
        """Send ``collection`` at ``version`` through the fused logic, without checks (the internal protocol).

        For operators, whose versions and collections are right by
        construction and covered by a pointstamp of theirs, and for input
        sessions, which check what they buffer. The fused logic runs on the
        whole collection before anything is sent.
        """
        if self.logic is None:
            self._deliver(version, collection)
            return
        for output_version, updates in apply_logic(self.logic, version, collection.updates, self):
            if updates:
                self._deliver(output_version, Collection.trusted(updates))

    def _deliver(self, version: Version, collection: Collection) -> None:
        message = DataMessage(version, collection)
        update = self.progress.update
        for queue, location in self._targets:
            queue.append(message)
            if location is not None:
                update(location, version, 1)

    def wire(self, progress: ProgressTracker, location: int, readers: list[DifferenceStreamReader]) -> None:
        """Send to ``readers`` from now on, from ``location`` of ``progress`` (``GraphBuilder.finalize``, once)."""
        self.progress = progress
        self.location = location
        self._targets = [(reader.queue, reader.location if reader.counted else None) for reader in readers]


class DifferenceStreamReader:
    """The receiving end of an edge, in the writer's scope: a queue of messages, at a location of the tracker.

    An operator's input takes messages from ``queue`` (``Operator.run``,
    the internal protocol); each counts as a pointstamp at ``location``
    until it has been handled (``counted``). The user's end of a stream,
    ``sessions.ConnectedReader``, is counted by no one: nothing downstream
    of it waits.

    Invariant: ``queue`` holds the messages not taken yet, in the order the
    writer sent them; ``fused`` names the linear operators whose logic
    ``logic`` applies to each message before its operator sees it (both set
    by ``finalize`` from the compiled topology).
    """

    __slots__ = ("fused", "location", "logic", "progress", "queue", "scope")

    counted = True
    """Whether the tracker counts a pointstamp for each message queued here: an operator will handle it."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.queue: deque[DataMessage] = deque()
        self.progress: ProgressTracker | None = None
        self.location = -1
        self.logic: Logic | None = None
        self.fused: tuple[str, ...] = ()

    @property
    def frontier(self) -> Antichain:
        """The versions data may still arrive at: every version it does not allow is finished here.

        Raises:
            GraphError: the graph is not finalized yet, so nothing has run.
        """
        progress = self.progress
        if progress is None:
            raise GraphError(
                "a stream is read before finalize(): the graph is not built yet, so nothing has run. "
                "Call builder.finalize() first"
            )
        return progress.frontier(self.location)

    def wire(self, progress: ProgressTracker, location: int) -> None:
        """Receive at ``location`` of ``progress`` from now on (``GraphBuilder.finalize``, once)."""
        self.progress = progress
        self.location = location


class Topology:
    """The shape of a dataflow graph: its inputs, operators and outputs, and the edges between them.

    The builder records one as a program is built; ``GraphBuilder.finalize``
    fuses it (``final.fusion``) into one with fewer operators, whose edge
    ends apply the logic of those fused into them (``chains``), and
    ``compile``s that one, once: the graph runs it, wired as it says.

    Invariant: ``operators`` are in the order they were built, a topological
    order once a loop's feedback edges are left out (an operator is built
    after those whose output it reads); ``edges`` holds every reader once,
    as ``(writer, reader)``, beside the writer it reads from; ``chains``
    maps an end of an edge to the ``fusion.Chain`` it applies.
    """

    def __init__(
        self, inputs: list[InputWriter], operators: list[Operator], outputs: list[Output],
        edges: list[tuple[DifferenceStreamWriter, DifferenceStreamReader]],
        chains: dict[DifferenceStreamWriter | DifferenceStreamReader, Chain] | None = None,
    ) -> None:
        self.inputs = inputs
        self.operators = operators
        self.outputs = outputs
        self.edges = edges
        self.chains = {} if chains is None else chains

    def vertices(self) -> dict[DifferenceStreamWriter | DifferenceStreamReader, Any]:
        """The vertex at each end of an edge that is not its own: an operator at its output and its inputs,
        an ``Output`` at its reader. An input's writer, and a reader the user connected, are vertices
        themselves."""
        vertex: dict[DifferenceStreamWriter | DifferenceStreamReader, Any] = {}
        for operator in self.operators:
            vertex[operator.output] = operator
            for reader in operator.inputs:
                vertex[reader] = operator
        for output in self.outputs:
            vertex[output.reader] = output
        return vertex

    def compile(self) -> ProgressTracker:
        """Wire this topology for running, once; return its progress tracker.

        Each end of an edge takes the logic fused into it, and each operator
        its number, which name them; then every end gets a location of a
        tracker built from them and the paths between them (an edge, or a way
        through an operator, doing its ``summary``), and the operators start.

        Raises:
            GraphError: a cycle of the graph does not advance versions.
        """
        for end, chain in self.chains.items():
            end.logic, end.fused = chain.logic, chain.names
        for number, operator in enumerate(self.operators):
            operator.number = number
        tracker = TrackerBuilder()
        location: dict[DifferenceStreamWriter | DifferenceStreamReader, int] = {}
        for writer in self.inputs:
            location[writer] = tracker.add_location(writer.dimension, writer.label, writer.name)
        watched: dict[Operator, int] = {}
        for operator in self.operators:
            label, inputs = operator.label, operator.inputs
            output = location[operator.output] = tracker.add_location(operator.output.dimension, label)
            for side, reader in enumerate(inputs):
                port = f" {side}" if len(inputs) > 1 else ""
                location[reader] = tracker.add_location(reader.scope.dimension, f"{label} input{port}")
                tracker.add_path(location[reader], output, operator.summary)
            if len(inputs) == 1:
                watched[operator] = location[inputs[0]]
            else:  # a location of its own that every input leads to: its frontier is their meet
                watched[operator] = tracker.add_location(inputs[0].scope.dimension, f"{label} inputs")
                for reader in inputs:
                    tracker.add_path(location[reader], watched[operator])
        ends = {output.reader: f"output {output.name}" for output in self.outputs}
        readers: dict[DifferenceStreamWriter, list[DifferenceStreamReader]] = {}
        for writer, reader in self.edges:
            if reader not in location:
                location[reader] = tracker.add_location(reader.scope.dimension, ends.get(reader, "reader"))
            tracker.add_path(location[writer], location[reader])
            readers.setdefault(writer, []).append(reader)
        progress = tracker.build()
        for _, reader in self.edges:
            reader.wire(progress, location[reader])
        for writer in [*self.inputs, *(operator.output for operator in self.operators)]:
            writer.wire(progress, location[writer], readers.get(writer, []))
        for operator in self.operators:
            reached = progress.reach(location[operator.output])
            operator.start(progress, watched[operator], any(location[reader] in reached for reader in operator.inputs))
        return progress
