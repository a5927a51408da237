"""Dataflow graphs: operators as vertices, queues of difference collections as edges.

The computation is built once, as a graph, and then fed: a user writes
difference collections to input edges, calls ``graph.step()``, and reads what
comes out. ``GraphBuilder`` and ``DifferenceStreamBuilder`` let the graph be
written like the method chains of the earlier stages.
Source: document 002, "v2: Constructing dataflow
graphs", and "v3: Versions and frontiers": every message now carries a
version, and frontier messages say which versions are finished; "v4:
Multidimensional versions": ``iterate`` nests a scope whose versions carry one
more coordinate, the iteration; "v5/vFinal": frontiers are antichains. Rust DD builds on timely dataflow's graphs; a
stream here is its ``Collection`` of a scope.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from . import aggregates, joins
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
    Arrange,
    Concat,
    Consolidate,
    Constraint,
    DataMessage,
    Debug,
    DeltaJoin,
    Egress,
    Enter,
    Feedback,
    FrontierMessage,
    HalfJoin,
    Ingress,
    Join,
    LinearUnaryOperator,
    Logic,
    Operator,
    Reduce,
)
from .order import Antichain, Version, as_version, checked_frontier, checked_version
from .trace import Arrangement


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
    def frontier(self) -> Antichain:
        """The latest frontier sent on this edge (it may still be queued, unread)."""
        return self._writer.frontier

    def probe_frontier_less_than(self, frontier: Antichain | Version) -> bool:
        """Whether this edge's frontier is still before ``frontier`` (a Version stands for its antichain).

        While it is, data may still arrive at some version that ``frontier``
        has passed: step the graph until this is False. Then every such
        version is finished and all its data has been sent (it may still be
        queued, unread).
        """
        return self.frontier.less_than(checked_frontier(frontier, "the probed frontier", self._writer.like))


class DifferenceStreamWriter:
    """The writing end of an edge; every message goes to every reader.

    Invariant: a message is never mutated after it is sent (readers share
    it); ``frontier`` only moves forward, and no data is sent at a version it
    has passed.
    """

    def __init__(self, frontier: Antichain) -> None:
        self._queues: list[deque] = []
        self.frontier = frontier
        self.like = frontier.elements[0]
        """A version of this edge's dimension, to check others against."""

    def send_data(self, version: Version, collection: Collection) -> None:
        """Send a difference collection at ``version``.

        Raises:
            VersionError: ``version`` is not a Version, or the frontier has
                passed it; nothing is sent.
            RecordError: ``collection`` is not a Collection; nothing is sent.
        """
        checked_version(version, VersionError, "the version of sent data", self.like)
        if not self.frontier.less_equal_version(version):
            raise VersionError(
                f"data sent at {version}, but the frontier is already {self.frontier}: that version is "
                f"finished. Send it at a version the frontier allows, e.g. {self.frontier}"
            )
        if not isinstance(collection, Collection):
            raise RecordError(
                f"send_data takes a Collection, not {type(collection).__name__}: {collection!r}; "
                f"wrap it: Collection([(record, multiplicity), ...])"
            )
        self._send(version, collection)

    def send_frontier(self, frontier: Antichain | Version) -> None:
        """Promise that no more data will be sent at versions ``frontier`` has passed.

        A Version stands for the antichain of just itself.

        Raises:
            FrontierError: ``frontier`` is not an Antichain or a Version, mixes
                dimensions, or is behind the current frontier; nothing is sent.
        """
        frontier = checked_frontier(frontier, "a frontier", self.like)
        if not self.frontier.less_equal(frontier):
            raise FrontierError(
                f"the frontier cannot move backwards from {self.frontier} to {frontier}; "
                f"send a frontier at or after {self.frontier}"
            )
        self._advance(frontier)

    def _send(self, version: Version, collection: Collection) -> None:
        """``send_data`` for operators, whose versions and collections are right by construction."""
        assert self.frontier.less_equal_version(version), f"an operator sent data at {version} behind {self.frontier}"
        message = DataMessage(version, collection)
        for queue in self._queues:
            queue.append(message)

    def _advance(self, frontier: Antichain) -> None:
        """``send_frontier`` for operators: send the change to ``frontier``, if there is one."""
        assert self.frontier.less_equal(frontier), f"an operator moved its frontier back: {self.frontier} to {frontier}"
        if frontier.elements != self.frontier.elements:
            message = FrontierMessage(self.frontier, frontier)
            self.frontier = frontier
            for queue in self._queues:
                queue.append(message)

    def _forward(self, change: FrontierMessage, frontier: Antichain) -> None:
        """``_advance`` to ``frontier`` by ``change``, a message another edge carried: messages are shared."""
        self.frontier = frontier
        for queue in self._queues:
            queue.append(change)

    def new_reader(self) -> DifferenceStreamReader:
        queue: deque = deque()
        self._queues.append(queue)
        return DifferenceStreamReader(queue, self)


class Graph:
    """A finished dataflow graph. ``step()`` runs each operator once.

    Invariant: ``_operators`` is in the order they were built, which is a
    topological order (an operator is built after the ones it reads from), so
    one step carries data from the inputs all the way to the outputs.
    """

    def __init__(
        self, operators: list[Operator], scopes: dict[int, Scope], inputs: list[DifferenceStreamWriter]
    ) -> None:
        self._operators = operators
        self._scopes = scopes
        self._inputs = inputs

    def step(self, budget: int | None = None) -> int:
        """Run every operator once, in topological order; return how many messages they handled.

        With a ``budget``, each operator handles at most that many messages
        this step and leaves the rest queued: bounded work per step. A step
        that handled nothing means the graph is quiet.
        """
        handled = 0
        for operator in self._operators:
            handled += operator.run(budget)
        return handled

    def frontiers(self) -> list[tuple[str, Antichain]]:
        """Progress: each operator's kind and output frontier, in topological order."""
        return [(type(operator).__name__, operator.output.frontier) for operator in self._operators]

    def to_dot(self) -> str:
        """The graph in graphviz's dot language: operators by kind, loops as nested boxes (see ``final.viz``)."""
        from .viz import to_dot

        return to_dot(self)


class Scope:
    """A nesting level of the graph: the top level, or the body of an ``iterate``.

    Invariant: every stream of a scope carries versions with the same number
    of coordinates, one more than its parent's; every edge of a scope starts at
    ``initial_frontier``.
    """

    def __init__(self, parent: Scope | None, initial_frontier: Antichain) -> None:
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

    def __init__(self, initial_frontier: Antichain | Version) -> None:
        if isinstance(initial_frontier, Version) or not isinstance(initial_frontier, Antichain):
            initial_frontier = Antichain([checked_version(initial_frontier, FrontierError, "the initial frontier")])
        if not initial_frontier.elements:
            raise FrontierError("the initial frontier must not be empty: write GraphBuilder(Version((0, 0)))")
        self._root = Scope(None, initial_frontier)
        self._operators: list[Operator] = []
        self._finalized = False
        self._scopes: dict[int, Scope] = {}
        self._inputs: list[DifferenceStreamWriter] = []

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
        operators = _fused(self._operators)
        _watch_loops(operators, self._scopes)
        return Graph(operators, self._scopes, self._inputs)

    def _check_building(self, what: str) -> None:
        if self._finalized:
            raise GraphError(
                f"{what} after finalize(): this graph is finished and running. "
                f"Build the whole graph first, or start a new GraphBuilder"
            )

    def _add_operator(
        self, make: Callable[[list[DifferenceStreamReader], DifferenceStreamWriter], Operator],
        inputs: list[DifferenceStreamBuilder], scope: Scope | None = None,
        output: DifferenceStreamWriter | None = None,
    ) -> DifferenceStreamBuilder:
        """Wire a new operator that reads ``inputs``; return its output stream.

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
        self._operators.append(operator)
        self._scopes[id(operator)] = scope
        return DifferenceStreamBuilder(self, output, scope)


def _fused(operators: list[Operator]) -> list[Operator]:
    """The operators, with every linear operator fused into the operator it reads (000, "Fusing logic").

    A linear operator whose input is the output of another operator, read by
    nothing else, is absorbed into it (``Operator.absorb``): same results, one
    operator and one edge fewer, and no intermediate collection built. A
    chain of linear operators becomes one, and a map after a join or a
    reduction becomes part of it.
    """
    kept: list[Operator] = []
    producers: dict[int, Operator] = {}
    for operator in operators:
        if isinstance(operator, LinearUnaryOperator):
            writer = operator.inputs[0]._writer
            upstream = producers.get(id(writer))
            if upstream is not None and len(writer._queues) == 1:
                upstream.absorb(operator)
                producers[id(upstream.output)] = upstream
                continue
        producers[id(operator.output)] = operator
        kept.append(operator)
    return kept


def _watch_loops(operators: list[Operator], scopes: dict[int, Scope]) -> None:
    """Show each loop's ``Feedback`` what it must watch to know when the loop is done.

    That is every operator of the loop's scope (or of a scope nested in it)
    from which data can reach the feedback edge, with their input queues, and
    the operators that bring data into the scope from outside it
    (``Ingress``, ``Enter``). Run after fusion, on the operators that remain.
    """
    producers = {id(operator.output): operator for operator in operators}
    for feedback in operators:
        if not isinstance(feedback, Feedback):
            continue
        scope = scopes[id(feedback)]
        inside: list[Operator] = []
        entries: list[Operator] = []
        seen = {id(feedback)}
        stack = [feedback]
        while stack:
            operator = stack.pop()
            if not scope.encloses(scopes[id(operator)]):
                continue
            reads_outside = any(
                id(reader._writer) not in producers or not scope.encloses(scopes[id(producers[id(reader._writer)])])
                for reader in operator.inputs
            )
            (entries if reads_outside else inside).append(operator)
            for reader in operator.inputs:
                producer = producers.get(id(reader._writer))
                if producer is not None and id(producer) not in seen:
                    seen.add(id(producer))
                    stack.append(producer)
        feedback.watch(inside, entries)


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
            self._entered[scope] = self._builder._add_operator(Enter, [outer], scope=scope)
        return self._entered[scope]

    def connect_reader(self) -> DifferenceStreamReader:
        """A new reader of this stream, for the user to read outputs from.

        Raises:
            GraphError: the graph is already finalized.
        """
        self._builder._check_building("connect_reader")
        return self._writer.new_reader()

    def _linear(self, logic: Logic) -> DifferenceStreamBuilder:
        return self._builder._add_operator(lambda inputs, output: LinearUnaryOperator(inputs, output, logic), [self])

    def _per_collection(self, f: Callable[[Collection], Collection]) -> DifferenceStreamBuilder:
        """A linear operator that keeps each difference at its version: ``f`` maps the collection."""
        return self._linear(lambda version, updates: [(version, f(Collection._trusted(updates))._updates)])

    def _binary(self, kind: type[Operator], other: Any) -> DifferenceStreamBuilder:
        if not isinstance(other, DifferenceStreamBuilder):
            raise GraphError(f"{kind.__name__.lower()} takes a stream, not {type(other).__name__}: {other!r}")
        return self._builder._add_operator(kind, [self, other])

    def map(self, f: Callable[[Record], Record]) -> DifferenceStreamBuilder:
        return self._per_collection(lambda collection: collection.map(f))

    def filter(self, predicate: Callable[[Record], bool]) -> DifferenceStreamBuilder:
        return self._per_collection(lambda collection: collection.filter(predicate))

    def flat_map(self, f: Callable[[Record], Iterable[Record]]) -> DifferenceStreamBuilder:
        return self._per_collection(lambda collection: collection.flat_map(f))

    def negate(self) -> DifferenceStreamBuilder:
        return self._per_collection(Collection.negate)

    def explode(self, f: Callable[[Record], Iterable[tuple[Record, Multiplicity]]]) -> DifferenceStreamBuilder:
        """Each record becomes the ``(value, multiplicity)`` updates ``f`` yields, multiplicities multiplied.

        000's ``explode``: ``f`` may produce negative multiplicities; an input
        with multiplicity ``m`` contributes ``m * d`` of each ``(value, d)``.
        """

        def logic(version: Version, updates: list) -> list:
            return [(version, [(value, m * d) for record, m in updates for value, d in f(record)])]

        return self._linear(logic)

    def join_function(
        self, f: Callable[[Record], Iterable[tuple[Record, Any, Multiplicity]]]
    ) -> DifferenceStreamBuilder:
        """The most general linear operator: each record joined with the collection ``f(record)`` describes.

        ``f(record)`` yields ``(value, version, multiplicity)`` updates; each
        output update is ``value`` at the lattice join of the input's version
        and ``version``, with the product of the multiplicities (000, "All of
        the linear operators"). ``version`` may be a Version, an int or a tuple.

        Raises:
            VersionError: (while stepping) ``f`` yields a version of another dimension.
        """
        like = self._scope.initial_frontier.elements[0]

        def logic(version: Version, updates: list) -> list:
            by_version: dict[Version, list] = {}
            for record, m in updates:
                for value, at, d in f(record):
                    joined = version.join(as_version(at, like))
                    by_version.setdefault(joined, []).append((value, m * d))
            return list(by_version.items())

        return self._linear(logic)

    def temporal_filter(
        self, lower: Callable[[Record], Any], upper: Callable[[Record], Any] | None = None
    ) -> DifferenceStreamBuilder:
        """Each record present only from version ``lower(record)`` until ``upper(record)`` (if given).

        Materialize's temporal filter, as 000 writes it: ``join_function``
        with ``(record, lower(record), +1)`` and ``(record, upper(record), -1)``.
        """
        if upper is None:
            return self.join_function(lambda record: [(record, lower(record), 1)])
        return self.join_function(lambda record: [(record, lower(record), 1), (record, upper(record), -1)])

    def consolidate(self) -> DifferenceStreamBuilder:
        return self._builder._add_operator(Consolidate, [self])

    def concat(self, other: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
        return self._binary(Concat, other)

    def join(self, other: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
        """``(key, (a, b))`` for matching keys; an arranged input is read through its shared arrangement."""
        if not isinstance(other, DifferenceStreamBuilder):
            raise GraphError(f"join takes a stream, not {type(other).__name__}: {other!r}")
        inner = max((self._scope, other._scope), key=lambda scope: scope.depth)
        arrangements = tuple(
            stream.arrangement if isinstance(stream, ArrangedStream) and stream._scope is inner else None
            for stream in (self, other)
        )
        return self._builder._add_operator(lambda inputs, output: Join(inputs, output, arrangements), [self, other])

    def half_join(self, other: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
        """Each difference here joined with ``other`` as it stands at that difference's version (003).

        Changes to ``other`` alone produce no output: see ``operators.join.HalfJoin``.
        """
        if not isinstance(other, DifferenceStreamBuilder):
            raise GraphError(f"half_join takes a stream, not {type(other).__name__}: {other!r}")
        inner = max((self._scope, other._scope), key=lambda scope: scope.depth)
        arrangement = other.arrangement if isinstance(other, ArrangedStream) and other._scope is inner else None
        return self._builder._add_operator(
            lambda inputs, output: HalfJoin(inputs, output, arrangement), [self, other]
        )

    def arrange(self) -> ArrangedStream:
        """This stream, indexed once by key in a shared ``Arrangement`` that every join reading it uses.

        003's 'Shared Arrangements': joining ``query`` three times with an
        arranged ``links`` indexes ``links`` once, not three times.
        """
        arrangement = Arrangement()
        stream = self._builder._add_operator(lambda inputs, output: Arrange(inputs, output, arrangement), [self])
        return ArrangedStream(stream._builder, stream._writer, stream._scope, arrangement)

    def reduce(self, f: Callable[[Values], Iterable[tuple[Any, Multiplicity]]]) -> DifferenceStreamBuilder:
        return self._builder._add_operator(lambda inputs, output: Reduce(inputs, output, f), [self])

    def count(self) -> DifferenceStreamBuilder:
        return self.reduce(count_values)

    def sum(self) -> DifferenceStreamBuilder:
        return self.reduce(sum_values)

    def min(self) -> DifferenceStreamBuilder:
        """``(key, least value)``, by hierarchical reduction: an update touches O(log n) records (004)."""
        return aggregates.hierarchical(self, min_values, "min")

    def max(self) -> DifferenceStreamBuilder:
        """``(key, greatest value)``, by hierarchical reduction: an update touches O(log n) records (004)."""
        return aggregates.hierarchical(self, max_values, "max")

    def join_many(
        self, others: list[DifferenceStreamBuilder], constraints: list[Constraint]
    ) -> DifferenceStreamBuilder:
        """A multi-way equijoin of this stream (input 0) and ``others`` (inputs 1, 2, ...), as a delta join.

        ``constraints`` are ``(i, key_i, j, key_j)``: a combination needs
        ``key_i(r_i) == key_j(r_j)`` (``None`` never matches). The output holds
        ``(r_0, r_1, ...)`` tuples. No intermediate result is arranged (003);
        see ``operators.join.DeltaJoin``.

        Raises:
            GraphError: some input is not connected to the others by constraints.
        """
        streams = [self, *others]
        for stream in others:
            if not isinstance(stream, DifferenceStreamBuilder):
                raise GraphError(f"join_many takes streams, not {type(stream).__name__}: {stream!r}")
        return self._builder._add_operator(
            lambda inputs, output: DeltaJoin(inputs, output, list(constraints)), streams
        )

    def distinct_keys(self) -> DifferenceStreamBuilder:
        """Each record once if its multiplicity is positive: ``distinct`` for records that are not pairs."""
        return aggregates.threshold(self, lambda multiplicity: 1 if multiplicity > 0 else 0)

    def semijoin(self, keys: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
        """The ``(key, value)`` records whose key is in the collection ``keys`` (003)."""
        return joins.semijoin(self, keys)

    def antijoin(self, keys: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
        """The ``(key, value)`` records whose key is not in the collection ``keys`` (003)."""
        return joins.antijoin(self, keys)

    def left_join(self, other: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
        """SQL's LEFT JOIN on the key, ``None`` as NULL, as a sum of three inner terms (003)."""
        return joins.left_join(self, other)

    def left_join_chain(
        self, steps: list[tuple[DifferenceStreamBuilder, Callable[[Any], Any]]]
    ) -> DifferenceStreamBuilder:
        """A multi-way LEFT JOIN, one step at a time (003): see ``joins.left_join_chain``."""
        return joins.left_join_chain(self, steps)

    def threshold(self, f: Callable[[int], int]) -> DifferenceStreamBuilder:
        """Each record with multiplicity ``f(m)`` for its accumulated multiplicity ``m``."""
        return aggregates.threshold(self, f)

    def count_total(self) -> DifferenceStreamBuilder:
        """``(key, rows)``, kept in place (004): see ``aggregates.count_total``."""
        return aggregates.count_total(self)

    def sum_total(self) -> DifferenceStreamBuilder:
        """``(key, SUM(value))``, in place and NULL-aware (004): see ``aggregates.sum_total``."""
        return aggregates.sum_total(self)

    def count_distinct(self) -> DifferenceStreamBuilder:
        """``(key, COUNT(DISTINCT value))``: a distinct in front of an in-place count (004)."""
        return aggregates.count_distinct(self)

    def aggregate(
        self, key: Callable[[Record], Any], named: dict[str, tuple[str, Callable[[Record], Any]]]
    ) -> DifferenceStreamBuilder:
        """One ``(key, ((name, value), ...))`` per key, each aggregate its own reduction (004): see
        ``aggregates.aggregate``."""
        return aggregates.aggregate(self, key, named)

    def distinct(self) -> DifferenceStreamBuilder:
        return self.reduce(distinct_values)

    def debug(self, name: str, sink: Callable[[str], None] = print) -> DifferenceStreamBuilder:
        """Pass the stream through unchanged, describing each message to ``sink``."""
        return self._builder._add_operator(lambda inputs, output: Debug(inputs, output, name, sink), [self])

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
        entered = builder._add_operator(Ingress, [self], scope=scope)
        # The feedback edge starts one iteration ahead: it only ever sends at iteration 1 or later.
        feedback = DifferenceStreamBuilder(builder, DifferenceStreamWriter(scope.initial_frontier.increment()), scope)
        result = f(entered.concat(feedback))
        if not isinstance(result, DifferenceStreamBuilder):
            raise GraphError(f"the body of iterate must return a stream, not {type(result).__name__}: {result!r}")
        result = result._enter(scope)
        builder._add_operator(
            lambda inputs, output: Feedback(inputs, output, max_iterations), [result], output=feedback._writer
        )
        return builder._add_operator(Egress, [result], scope=self._scope)


class ArrangedStream(DifferenceStreamBuilder):
    """A stream with a shared ``Arrangement`` of its contents, made by ``arrange()``."""

    def __init__(
        self, builder: GraphBuilder, writer: DifferenceStreamWriter, scope: Scope, arrangement: Arrangement
    ) -> None:
        super().__init__(builder, writer, scope)
        self.arrangement = arrangement
