"""Dataflow graphs: operators as vertices, queues of difference collections as edges.

The computation is built once, as a graph, and then fed: a user writes
difference collections to input edges, calls ``graph.step()``, and reads what
comes out. ``GraphBuilder`` and ``DifferenceStreamBuilder`` let the graph be
written like the method chains of the earlier stages.
Source: document 002, "v2: Constructing dataflow
graphs", and "v3: Versions and frontiers": every message now carries a
version, and frontier messages say which versions are finished; "v4:
Multidimensional versions": ``iterate`` nests a scope whose versions carry one
more coordinate, the iteration. Rust DD builds on timely dataflow's graphs; a
stream here is its ``Collection`` of a scope.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .collection import (
    MAX_ITERATIONS,
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
    Egress,
    Enter,
    Feedback,
    FrontierMessage,
    Ingress,
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

    @property
    def frontier(self) -> Version:
        """The latest frontier sent on this edge (it may still be queued, unread)."""
        return self._writer.frontier

    def probe_frontier_less_than(self, version: Version) -> bool:
        """Whether this edge's frontier is still before ``version``.

        While it is, data may still arrive at some version before ``version``:
        step the graph until this is False. Then every such version is
        finished and all its data has been sent (it may still be queued, unread).
        """
        return self.frontier.less_than(checked_version(version, VersionError, "the probed version", self.frontier))


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
        checked_version(version, VersionError, "the version of sent data", self.frontier)
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
        checked_version(frontier, FrontierError, "a frontier", self.frontier)
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

    ``inputs``, ``operators`` and ``edges()``, with ``scope_of()``, are its public
    view, for drawing it: what is wired to what, never the data in flight.
    """

    def __init__(
        self, operators: list[Operator], inputs: list[DifferenceStreamWriter],
        readers: list[DifferenceStreamReader], scopes: dict[int, Scope],
    ) -> None:
        self._operators = operators
        self._inputs = inputs
        self._readers = readers
        self._scopes = scopes

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

    def scope_of(self, operator: Operator) -> Scope:
        """The scope ``operator`` runs in: the top level (``depth`` 0) or a loop body, with its ``parent``."""
        return self._scopes[id(operator)]

    def step(self) -> None:
        """Run every operator once, in topological order."""
        for operator in self._operators:
            operator.run()


class Scope:
    """A nesting level of the graph: the top level, or the body of an ``iterate``.

    Invariant: every stream of a scope carries versions with the same number
    of coordinates, one more than its parent's; every edge of a scope starts at
    ``initial_frontier``.
    """

    def __init__(self, parent: Scope | None, initial_frontier: Version) -> None:
        self.parent = parent
        self.depth = parent.depth + 1 if parent else 0
        self.initial_frontier = initial_frontier

    def encloses(self, other: Scope) -> bool:
        """Whether ``other`` is this scope or nested, at any depth, inside it."""
        while other is not None and other is not self:
            other = other.parent
        return other is self


class GraphBuilder:
    """Builds a dataflow graph: inputs first, then operators, then ``finalize``.

    Every edge of the top level starts at ``initial_frontier``: no data before it, ever.
    """

    def __init__(self, initial_frontier: Version) -> None:
        self._root = Scope(None, checked_version(initial_frontier, FrontierError, "the initial frontier"))
        self._operators: list[Operator] = []
        self._inputs: list[DifferenceStreamWriter] = []
        self._readers: list[DifferenceStreamReader] = []
        self._scopes: dict[int, Scope] = {}
        self._finalized = False

    def new_input(self) -> tuple[DifferenceStreamBuilder, DifferenceStreamWriter]:
        """A new input edge: a stream to build on and the writer that feeds it.

        Raises:
            GraphError: the graph is already finalized.
        """
        self._check_building("new_input")
        writer = DifferenceStreamWriter(self._root.initial_frontier)
        self._inputs.append(writer)
        return DifferenceStreamBuilder(self, writer, self._root), writer

    def finalize(self) -> Graph:
        """Finish building and return the graph to run.

        Raises:
            GraphError: the graph is already finalized.
        """
        self._check_building("finalize")
        self._finalized = True
        return Graph(list(self._operators), list(self._inputs), list(self._readers), dict(self._scopes))

    def _check_building(self, what: str) -> None:
        if self._finalized:
            raise GraphError(
                f"{what} after finalize(): this graph is finished and running. "
                f"Build the whole graph first, or start a new GraphBuilder"
            )

    def _add_operator(
        self, make: Callable[[list[DifferenceStreamReader], DifferenceStreamWriter], Operator],
        inputs: list[DifferenceStreamBuilder], name: str, scope: Scope | None = None,
        output: DifferenceStreamWriter | None = None,
    ) -> DifferenceStreamBuilder:
        """Wire a new operator, called ``name``, that reads ``inputs``; return its output stream.

        The output is in ``scope`` (by default the inputs' scope); streams from
        enclosing scopes are entered into the innermost one first.
        """
        self._check_building("adding an operator")
        for stream in inputs:
            if stream._builder is not self:
                raise GraphError(
                    "an operator's inputs come from different GraphBuilders; build every "
                    "stream of one computation from one builder"
                )
        inner = max((stream._scope for stream in inputs), key=lambda scope: scope.depth)
        inputs = [stream._enter(inner) for stream in inputs]
        scope = scope or inner
        output = output or DifferenceStreamWriter(scope.initial_frontier)
        operator = make([stream._writer.new_reader() for stream in inputs], output)
        operator.name = name
        self._operators.append(operator)
        self._scopes[id(operator)] = scope
        return DifferenceStreamBuilder(self, output, scope)


class DifferenceStreamBuilder:
    """A stream under construction: each operator method adds a vertex and returns its output."""

    def __init__(self, builder: GraphBuilder, writer: DifferenceStreamWriter, scope: Scope) -> None:
        self._builder = builder
        self._writer = writer
        self._scope = scope
        self._entered: dict[Scope, DifferenceStreamBuilder] = {}

    def _enter(self, scope: Scope) -> DifferenceStreamBuilder:
        """This stream brought into ``scope``, nested inside its own (Rust DD's ``enter``).

        Each level extends versions with iteration 0, where the stream's
        collection stays for every iteration. Made once per scope and shared.

        Raises:
            GraphError: ``scope`` is not nested inside this stream's scope.
        """
        if scope is self._scope:
            return self
        if not self._scope.encloses(scope):
            raise GraphError(
                "a stream built inside one iterate body is combined with a stream of another loop "
                "it is not nested in; only the stream iterate returns leaves its loop"
            )
        if scope not in self._entered:
            outer = self._enter(scope.parent)
            self._entered[scope] = self._builder._add_operator(Enter, [outer], "enter", scope=scope)
        return self._entered[scope]

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

    def iterate(
        self, f: Callable[[DifferenceStreamBuilder], DifferenceStreamBuilder], max_iterations: int = MAX_ITERATIONS
    ) -> DifferenceStreamBuilder:
        """The fixed point of ``f`` from this stream, kept up to date as the stream changes.

        Builds a nested scope whose versions are ``(version, iteration)``: the
        input enters at iteration 0 and is retracted at iteration 1
        (``Ingress``), joins what ``Feedback`` brings back from the body's
        previous iteration (``concat``), runs through ``f``, and leaves the
        loop with the iteration dropped (``Egress``). So the loop's collection
        at ``(v, i)`` is ``f`` applied ``i`` times to the input at ``v``. ``f``
        may use streams from outside the loop; they are entered into it.

        Raises:
            IterationError: (while stepping) a version needs more than
                ``max_iterations`` iterations.
        """
        builder = self._builder
        scope = Scope(self._scope, self._scope.initial_frontier.extend())
        entered = builder._add_operator(Ingress, [self], "ingress", scope=scope)
        # The feedback edge starts one iteration ahead: it only ever sends at iteration 1 or later.
        feedback = DifferenceStreamBuilder(builder, DifferenceStreamWriter(scope.initial_frontier.increment()), scope)
        result = f(entered.concat(feedback))
        if not isinstance(result, DifferenceStreamBuilder):
            raise GraphError(f"the body of iterate must return a stream, not {type(result).__name__}: {result!r}")
        result = result._enter(scope)
        builder._add_operator(
            lambda inputs, output: Feedback(inputs, output, max_iterations), [result], "feedback",
            output=feedback._writer,
        )
        return builder._add_operator(Egress, [result], "egress", scope=self._scope)
