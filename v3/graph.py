"""Dataflow graphs: operators as vertices, queues of difference collections as edges.

The computation is built once, as a graph, and then fed: a user writes
difference collections to input edges, calls ``graph.step()``, and reads what
comes out. ``GraphBuilder`` and ``DifferenceStreamBuilder`` let the graph be
written like the method chains of the earlier stages.
Source: document 002, "v2: Constructing dataflow
graphs", and "v3: Versions and frontiers": every message now carries a
version, and frontier messages say which versions are finished. Rust DD builds
on timely dataflow's graphs; a stream here is its ``Collection`` of a scope.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .collection import (
    Collection,
    Multiplicity,
    Record,
    Values,
    count_values,
    distinct_values,
    max_values,
    min_values,
    sum_values,
)
from .errors import FrontierError, GraphError, RecordError, VersionError
from .operators import (
    Concat,
    Consolidate,
    DataMessage,
    Debug,
    FrontierMessage,
    Join,
    LinearUnaryOperator,
    Operator,
    Reduce,
)
from .order import Version, checked_version


class DifferenceStreamReader:
    """The reading end of one edge: a queue of messages from one writer.

    Invariant: messages come out in the order the writer sent them.
    """

    def __init__(self, queue: deque, writer: DifferenceStreamWriter) -> None:
        self._queue = queue
        self._writer = writer

    def drain(self) -> Iterator[Any]:
        """Pop and yield the queued messages, oldest first.

        Each message leaves the queue only when its turn comes, so if handling
        one raises, the ones behind it are still queued.
        """
        while self._queue:
            yield self._queue.popleft()

    def is_empty(self) -> bool:
        return not self._queue

    def probe_frontier_less_than(self, version: Version) -> bool:
        """Whether this edge's frontier is still before ``version``.

        While it is, data may still arrive at some version before ``version``:
        step the graph until this is False. Then every such version is
        finished and all its data has been sent (it may still be queued, unread).
        """
        return self._writer.frontier.less_than(checked_version(version, VersionError, "the probed version"))


class DifferenceStreamWriter:
    """The writing end of an edge; every message goes to every reader.

    Invariant: a message is never mutated after it is sent (readers share
    it); ``frontier`` only moves forward, and no data is sent at a version it
    has passed.
    """

    def __init__(self, frontier: Version) -> None:
        self._queues: list[deque] = []
        self.frontier = frontier

    def send_data(self, version: Version, collection: Collection) -> None:
        """Send a difference collection at ``version``.

        Raises:
            VersionError: ``version`` is not a Version, or the frontier has
                passed it; nothing is sent.
            RecordError: ``collection`` is not a Collection; nothing is sent.
        """
        checked_version(version, VersionError, "the version of sent data")
        if not self.frontier.less_equal(version):
            raise VersionError(
                f"data sent at {version}, but the frontier is already {self.frontier}: that version is "
                f"finished. Send it at a version the frontier allows, e.g. {self.frontier}"
            )
        if not isinstance(collection, Collection):
            raise RecordError(
                f"send_data takes a Collection, not {type(collection).__name__}: {collection!r}; "
                f"wrap it: Collection([(record, multiplicity), ...])"
            )
        message = DataMessage(version, collection)
        for queue in self._queues:
            queue.append(message)

    def send_frontier(self, frontier: Version) -> None:
        """Promise that no more data will be sent at versions before ``frontier``.

        Raises:
            FrontierError: ``frontier`` is not a Version, or is behind the
                current frontier; nothing is sent.
        """
        checked_version(frontier, FrontierError, "a frontier")
        if not self.frontier.less_equal(frontier):
            raise FrontierError(
                f"the frontier cannot move backwards from {self.frontier} to {frontier}; "
                f"send a frontier at or after {self.frontier}"
            )
        self.frontier = frontier
        message = FrontierMessage(frontier)
        for queue in self._queues:
            queue.append(message)

    def new_reader(self) -> DifferenceStreamReader:
        queue: deque = deque()
        self._queues.append(queue)
        return DifferenceStreamReader(queue, self)


class Graph:
    """A finished dataflow graph. ``step()`` runs each operator once.

    Invariant: ``_operators`` is in the order they were built, which is a
    topological order (an operator is built after the ones it reads from), so
    one step carries data from the inputs all the way to the outputs.

    ``inputs``, ``operators`` and ``edges()`` are its public
    view, for drawing it: what is wired to what, never the data in flight.
    """

    def __init__(
        self, operators: list[Operator], inputs: list[DifferenceStreamWriter],
        readers: list[DifferenceStreamReader],
    ) -> None:
        self._operators = operators
        self._inputs = inputs
        self._readers = readers

    @property
    def operators(self) -> tuple[Operator, ...]:
        """The operators in topological order; each has the ``name`` of the method that built it."""
        return tuple(self._operators)

    @property
    def inputs(self) -> tuple[DifferenceStreamWriter, ...]:
        """The writers ``new_input()`` returned, in the order they were made."""
        return tuple(self._inputs)

    def edges(self) -> list[tuple[DifferenceStreamWriter | Operator, Operator | DifferenceStreamReader]]:
        """Every edge as ``(source, target)``.

        A source is an input's writer or an operator; a target is an operator
        or a reader the user got from ``connect_reader()``.
        """
        target_of: dict[int, Operator | DifferenceStreamReader] = {
            id(reader._queue): operator for operator in self._operators for reader in operator.inputs
        }
        target_of.update((id(reader._queue), reader) for reader in self._readers)
        writers = [(writer, writer) for writer in self._inputs]
        writers += [(operator, operator.output) for operator in self._operators]
        return [(source, target_of[id(queue)]) for source, writer in writers for queue in writer._queues]

    def step(self) -> None:
        """Run every operator once, in topological order."""
        for operator in self._operators:
            operator.run()


class GraphBuilder:
    """Builds a dataflow graph: inputs first, then operators, then ``finalize``.

    Every edge starts at ``initial_frontier``: no data before it, ever.
    """

    def __init__(self, initial_frontier: Version) -> None:
        self._initial_frontier = checked_version(initial_frontier, FrontierError, "the initial frontier")
        self._operators: list[Operator] = []
        self._inputs: list[DifferenceStreamWriter] = []
        self._readers: list[DifferenceStreamReader] = []
        self._finalized = False

    def new_input(self) -> tuple[DifferenceStreamBuilder, DifferenceStreamWriter]:
        """A new input edge: a stream to build on and the writer that feeds it.

        Raises:
            GraphError: the graph is already finalized.
        """
        self._check_building("new_input")
        writer = DifferenceStreamWriter(self._initial_frontier)
        self._inputs.append(writer)
        return DifferenceStreamBuilder(self, writer), writer

    def finalize(self) -> Graph:
        """Finish building and return the graph to run.

        Raises:
            GraphError: the graph is already finalized.
        """
        self._check_building("finalize")
        self._finalized = True
        return Graph(list(self._operators), list(self._inputs), list(self._readers))

    def _check_building(self, what: str) -> None:
        if self._finalized:
            raise GraphError(
                f"{what} after finalize(): this graph is finished and running. "
                f"Build the whole graph first, or start a new GraphBuilder"
            )

    def _add_operator(
        self, make: Callable[[list[DifferenceStreamReader], DifferenceStreamWriter], Operator],
        inputs: list[DifferenceStreamBuilder], name: str,
    ) -> DifferenceStreamBuilder:
        """Wire a new operator, called ``name``, that reads ``inputs``; return its output stream."""
        self._check_building("adding an operator")
        for stream in inputs:
            if stream._builder is not self:
                raise GraphError(
                    "an operator's inputs come from different GraphBuilders; build every "
                    "stream of one computation from one builder"
                )
        output = DifferenceStreamWriter(self._initial_frontier)
        operator = make([stream._writer.new_reader() for stream in inputs], output)
        operator.name = name
        self._operators.append(operator)
        return DifferenceStreamBuilder(self, output)


class DifferenceStreamBuilder:
    """A stream under construction: each operator method adds a vertex and returns its output."""

    def __init__(self, builder: GraphBuilder, writer: DifferenceStreamWriter) -> None:
        self._builder = builder
        self._writer = writer

    def connect_reader(self) -> DifferenceStreamReader:
        """A new reader of this stream, for the user to read outputs from.

        Raises:
            GraphError: the graph is already finalized.
        """
        self._builder._check_building("connect_reader")
        reader = self._writer.new_reader()
        self._builder._readers.append(reader)
        return reader

    def _linear(self, name: str, f: Callable[[Collection], Collection]) -> DifferenceStreamBuilder:
        return self._builder._add_operator(lambda inputs, output: LinearUnaryOperator(inputs, output, f), [self], name)

    def _binary(self, kind: type[Operator], other: Any) -> DifferenceStreamBuilder:
        if not isinstance(other, DifferenceStreamBuilder):
            raise GraphError(f"{kind.__name__.lower()} takes a stream, not {type(other).__name__}: {other!r}")
        return self._builder._add_operator(kind, [self, other], kind.__name__.lower())

    def map(self, f: Callable[[Record], Record]) -> DifferenceStreamBuilder:
        return self._linear("map", lambda collection: collection.map(f))

    def filter(self, predicate: Callable[[Record], bool]) -> DifferenceStreamBuilder:
        return self._linear("filter", lambda collection: collection.filter(predicate))

    def flat_map(self, f: Callable[[Record], Iterable[Record]]) -> DifferenceStreamBuilder:
        return self._linear("flat_map", lambda collection: collection.flat_map(f))

    def negate(self) -> DifferenceStreamBuilder:
        return self._linear("negate", Collection.negate)

    def consolidate(self) -> DifferenceStreamBuilder:
        return self._builder._add_operator(Consolidate, [self], "consolidate")

    def concat(self, other: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
        return self._binary(Concat, other)

    def join(self, other: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
        return self._binary(Join, other)

    def reduce(self, f: Callable[[Values], Iterable[tuple[Any, Multiplicity]]]) -> DifferenceStreamBuilder:
        return self._reduce("reduce", f)

    def _reduce(self, name: str, f: Callable[[Values], Iterable[tuple[Any, Multiplicity]]]) -> DifferenceStreamBuilder:
        return self._builder._add_operator(lambda inputs, output: Reduce(inputs, output, f), [self], name)

    def count(self) -> DifferenceStreamBuilder:
        return self._reduce("count", count_values)

    def sum(self) -> DifferenceStreamBuilder:
        return self._reduce("sum", sum_values)

    def min(self) -> DifferenceStreamBuilder:
        return self._reduce("min", min_values)

    def max(self) -> DifferenceStreamBuilder:
        return self._reduce("max", max_values)

    def distinct(self) -> DifferenceStreamBuilder:
        return self._reduce("distinct", distinct_values)

    def debug(self, name: str, sink: Callable[[str], None] = print) -> DifferenceStreamBuilder:
        """Pass the stream through unchanged, describing each message to ``sink``."""
        return self._builder._add_operator(
            lambda inputs, output: Debug(inputs, output, name, sink), [self], f"debug {name}"
        )

    def iterate(self, f: Callable[[DifferenceStreamBuilder], DifferenceStreamBuilder]) -> DifferenceStreamBuilder:
        """Not in this stage: see the error it raises."""
        raise NotImplementedError(
            "iterate needs versions with an iteration coordinate, which arrive in stage v4 "
            "(multidimensional versions); v3's versions are single ints"
        )
