"""Dataflow graphs: operators as vertices, queues of difference collections as edges.

The computation is built once, as a graph, and then fed: a user writes
difference collections to input edges, calls ``graph.step()``, and reads what
comes out. ``GraphBuilder`` and ``DifferenceStreamBuilder`` let the graph be
written like the method chains of the earlier stages. Source: document 002,
"v2: Constructing dataflow graphs", and "v3: Versions and frontiers": every
message carries a version, and frontier messages say which versions are
finished; "v4: Multidimensional versions": ``iterate`` nests a scope whose
versions carry one more coordinate, the iteration; "v5/vFinal": frontiers
are antichains. Rust DD builds on timely dataflow's graphs; a stream here is
its ``Collection`` of a scope.

What final adds around that: ``finalize`` fuses linear operators into the
operator they read (000); ``step(budget)`` bounds each operator's work;
frontiers travel as changes; ``arrange()`` shares one index among joins
(003). For people driving a graph rather than teaching it,
``new_session()`` gives an input session that buffers changes and sends a
version's worth at once, ``output()`` an ``Output`` that keeps the
consolidated result, and ``graph.run()`` steps until the graph is quiet
(``final.sessions``). ``graph.operators``, ``inputs``, ``outputs``,
``edges()`` and ``scope_of()`` are a read-only view of the graph's shape.

Failures: a difference an operator cannot take is refused before it changes
anything, and the graph stays usable; any other error while stepping (a
user's function raised, a loop did not converge) breaks the graph, which
then refuses to run or take input (``BrokenGraphError``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from operator import itemgetter
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
from .errors import BrokenGraphError, FrontierError, GraphError, RecordError, VersionError
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
    Refusal,
)
from .order import Antichain, Version, as_version, checked_frontier, checked_version
from .sessions import InputSession, Output
from .trace import Arrangement

MAX_STEPS = 1_000_000
"""Default bound on the steps of one ``graph.run()``: a loop of ``MAX_ITERATIONS``
iterations takes a few steps per iteration, far fewer; a graph that is not
quiet after this many steps is reported rather than run forever."""


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


class _Status:
    """Whether a graph can still run: shared by the graph and the writers and sessions of its inputs.

    Invariant: ``failure`` is None until an error breaks the graph, then says which error, where.
    """

    __slots__ = ("failure",)

    def __init__(self) -> None:
        self.failure: str | None = None

    def check(self, what: str) -> None:
        """Raise ``BrokenGraphError`` if the graph has failed: ``what`` cannot be done any more."""
        if self.failure is not None:
            raise BrokenGraphError(
                f"cannot {what}: this graph failed earlier ({self.failure}), so its operators may hold part of "
                f"that work. Build the graph again; its outputs still answer for the versions they finished"
            )


class DifferenceStreamWriter:
    """The writing end of an edge; every message goes to every reader.

    Invariant: a message is never mutated after it is sent (readers share
    it); ``frontier`` only moves forward, and no data is sent at a version it
    has passed.
    """

    def __init__(self, frontier: Antichain, name: str = "", status: _Status | None = None) -> None:
        self._queues: list[deque] = []
        self._readers: list[DifferenceStreamReader] = []
        self.frontier = frontier
        self.like = frontier.elements[0]
        """A version of this edge's dimension, to check others against."""
        self.name = name
        """An input's name (empty for the edges operators write)."""
        self._status = status or _Status()

    def send_data(self, version: Version, collection: Collection) -> None:
        """Send a difference collection at ``version``.

        Raises:
            VersionError: ``version`` is not a Version, or the frontier has
                passed it; nothing is sent.
            RecordError: ``collection`` is not a Collection; nothing is sent.
            BrokenGraphError: the graph failed earlier.
        """
        self._status.check(f"send data to input {self.name!r}")
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
            BrokenGraphError: the graph failed earlier.
        """
        self._status.check(f"move the frontier of input {self.name!r}")
        frontier = checked_frontier(frontier, "a frontier", self.like)
        if not self.frontier.less_equal(frontier):
            raise FrontierError(
                f"the frontier cannot move backwards from {self.frontier} to {frontier}; "
                f"send a frontier at or after {self.frontier}"
            )
        self._advance(frontier)

    def _send(self, version: Version, collection: Collection) -> None:
        """``send_data`` for operators, whose versions and collections are right by construction, and for input
        sessions, which check them as they buffer and flush."""
        assert self.frontier.less_equal_version(version), f"an operator sent data at {version} behind {self.frontier}"
        message = DataMessage(version, collection)
        for queue in self._queues:
            queue.append(message)

    def _advance(self, frontier: Antichain) -> None:
        """``send_frontier`` for operators, and for input sessions once ``advance_to`` has checked the version:
        send the change to ``frontier``, if there is one."""
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
        reader = DifferenceStreamReader(queue, self)
        self._readers.append(reader)
        return reader


class Graph:
    """A finished dataflow graph. ``step()`` runs each operator once; ``run()`` steps until it is quiet.

    ``operators``, ``inputs``, ``outputs``, ``edges()`` and ``scope_of()``
    show its shape, read-only, for diagrams (``final.viz``) and tests.

    Invariant: ``operators`` is in the order they were built, which is a
    topological order (an operator is built after the ones it reads from), so
    one step carries data from the inputs all the way to the outputs; each
    operator's ``number`` is its position.
    """

    def __init__(
        self, operators: list[Operator], scopes: dict[int, Scope], inputs: list[DifferenceStreamWriter],
        sessions: list[InputSession], outputs: list[Output], status: _Status,
    ) -> None:
        self._operators = operators
        self._scopes = scopes
        self._inputs = inputs
        self._sessions = sessions
        self._outputs = outputs
        self._status = status
        for number, operator in enumerate(operators):
            operator.number = number
        for output in outputs:
            output._graph = self

    @property
    def failure(self) -> str | None:
        """None while the graph is sound; after an error broke it, which error, in which operator."""
        return self._status.failure

    @property
    def operators(self) -> tuple[Operator, ...]:
        """The operators, in topological order (linear operators fused into others are not among them)."""
        return tuple(self._operators)

    @property
    def inputs(self) -> tuple[DifferenceStreamWriter, ...]:
        """The writers of the graph's inputs, in the order they were made; each has a ``name`` and ``frontier``."""
        return tuple(self._inputs)

    @property
    def outputs(self) -> tuple[Output, ...]:
        """The ``Output`` handles made with ``stream.output()``."""
        return tuple(self._outputs)

    def scope_of(self, operator: Operator) -> Scope:
        """The scope ``operator`` runs in: the top level (``depth`` 0) or a loop body, with its ``parent``."""
        return self._scopes[id(operator)]

    def edges(self) -> list[tuple[Any, Any]]:
        """Every edge as ``(source, target)``.

        A source is an input's writer or an operator; a target is an
        operator, an ``Output``, or a reader the user connected.
        """
        sources: dict[int, Any] = {id(writer): writer for writer in self._inputs}
        sources.update((id(operator.output), operator) for operator in self._operators)
        targets: dict[int, Any] = {id(output._reader): output for output in self._outputs}
        for operator in self._operators:
            targets.update((id(reader), operator) for reader in operator.inputs)
        return [
            (source, targets.get(id(reader), reader))
            for source in sources.values()
            for reader in (source._readers if isinstance(source, DifferenceStreamWriter) else source.output._readers)
        ]

    def step(self, budget: int | None = None) -> int:
        """Run every operator once, in topological order; return how many messages they handled.

        With a ``budget``, each operator handles at most that many messages
        this step and leaves the rest queued: bounded work per step. A step
        that handled nothing means the graph is quiet.

        Raises:
            GraphError: ``budget`` is not None or an int of at least 1.
            RecordError: an operator refused a difference (it had no effect; the graph stays usable).
            FunctionError: a function you gave an operator raised; the graph is broken.
            IterationError: a loop did not converge; the graph is broken.
            BrokenGraphError: the graph failed earlier.
        """
        self._status.check("step")
        if budget is not None and (type(budget) is not int or budget < 1):
            raise GraphError(
                f"step takes a budget of at least 1 message per operator, or None for no limit, not {budget!r}"
            )
        handled = 0
        operator = None
        try:
            for operator in self._operators:
                handled += operator.run(budget)
        except Refusal as refusal:
            raise refusal.error from None
        except BaseException as error:  # even an interrupt leaves the operator half way through a message
            self._status.failure = f"{type(error).__name__} in {operator.label if operator else 'the graph'}"
            for session in self._sessions:
                session._current = None  # its next change looks at the status, and is refused
            error.add_note("The graph is broken now: it refuses to run or take input. Build it again.")
            raise
        for output in self._outputs:
            output._read()
        return handled

    def run(self, max_steps: int = MAX_STEPS) -> int:
        """Send what the input sessions hold, then step until the graph is quiet; return the steps taken.

        Quiet means every message has been handled: every output has caught
        up with every input's frontier. A version an input has not moved its
        frontier past stays open (``Output.at`` says which input holds it).

        Raises:
            GraphError: the graph is not quiet after ``max_steps`` steps.
            BrokenGraphError: the graph failed earlier.
            and whatever ``step`` raises.
        """
        self._status.check("run")
        for session in self._sessions:
            session.flush()
        for steps in range(max_steps):
            if not self.step():
                return steps
        busy = [operator.label for operator in self._operators if any(operator._queues)]
        raise GraphError(
            f"the graph is not quiet after {max_steps} steps; still busy: {', '.join(busy[:5]) or 'nothing'}. "
            f"Raise max_steps, or check for a loop that never ends"
        )

    def frontiers(self) -> list[tuple[str, Antichain]]:
        """Progress: each input's, operator's (in topological order) and output's name and frontier."""
        return [
            *((f"input {writer.name}", writer.frontier) for writer in self._inputs),
            *((operator.label, operator.output.frontier) for operator in self._operators),
            *((f"output {output.name}", output.frontier) for output in self._outputs),
        ]

    def behind(self, version: Version) -> list[DifferenceStreamWriter]:
        """The inputs whose frontier still allows ``version``: they hold it open."""
        return [writer for writer in self._inputs if writer.frontier.less_equal_version(version)]

    def state_sizes(self) -> list[tuple[str, int]]:
        """Each operator's label and ``state_size()``: what it keeps, for watching memory."""
        return [(operator.label, operator.state_size()) for operator in self._operators]

    def to_dot(self) -> str:
        """The graph in graphviz's dot language: operators by name, loops as nested boxes (see ``final.viz``)."""
        from .viz import to_dot

        return to_dot(self)


class Scope:
    """A nesting level of the graph: the top level, or the body of an ``iterate``.

    Invariant: every stream of a scope carries versions with the same number
    of coordinates, one more than its parent's; every edge of a scope starts at
    ``initial_frontier``. A loop's scope is ``closed`` once ``iterate`` has
    built it: nothing more may read its streams.
    """

    def __init__(self, parent: Scope | None, initial_frontier: Antichain) -> None:
        self.parent = parent
        self.depth = parent.depth + 1 if parent else 0
        self.initial_frontier = initial_frontier
        self.closed = False

    def encloses(self, other: Scope) -> bool:
        """Whether ``other`` is this scope or nested, at any depth, inside it."""
        while other is not None and other is not self:
            other = other.parent
        return other is self


class GraphBuilder:
    """Builds a dataflow graph: inputs first, then operators, then ``finalize``.

    Every edge of the top level starts at ``initial_frontier``: no data
    before it, ever. It may be a Version, an Antichain, or a plain int or
    tuple of ints (``GraphBuilder(0)``, ``GraphBuilder((0, 0))``).
    """

    def __init__(self, initial_frontier: Antichain | Version | int | tuple[int, ...] = 0) -> None:
        if not isinstance(initial_frontier, Antichain):
            if type(initial_frontier) is not Version and isinstance(initial_frontier, (int, tuple)):
                initial_frontier = Version(initial_frontier)
            initial_frontier = Antichain([checked_version(initial_frontier, FrontierError, "the initial frontier")])
        if not initial_frontier.elements:
            raise FrontierError("the initial frontier must not be empty: write GraphBuilder(Version((0, 0)))")
        self._root = Scope(None, initial_frontier)
        self._operators: list[Operator] = []
        self._names: list[str] = []
        self._finalized = False
        self._scopes: dict[int, Scope] = {}
        self._inputs: list[DifferenceStreamWriter] = []
        self._sessions: list[InputSession] = []
        self._outputs: list[Output] = []
        self._status = _Status()

    def new_input(self, name: str | None = None) -> tuple[DifferenceStreamBuilder, DifferenceStreamWriter]:
        """A new input edge: a stream to build on and the writer that feeds it (002's API).

        ``name`` (by default ``input0``, ``input1``, ...) is what
        ``graph.frontiers()``, diagrams and error messages call it.

        Raises:
            GraphError: the graph is already finalized, or the name is taken.
        """
        self._check_building("new_input")
        name = self._checked_name(name, f"input{len(self._inputs)}", "input")
        writer = DifferenceStreamWriter(self._root.initial_frontier, name, self._status)
        self._inputs.append(writer)
        return DifferenceStreamBuilder(self, writer, self._root), writer

    def new_session(self, name: str | None = None) -> tuple[DifferenceStreamBuilder, InputSession]:
        """A new input driven by an ``InputSession``: ``insert``, ``remove``, ``advance_to``, ``flush``.

        The session buffers changes and sends each version's as one
        collection; ``graph.run()`` sends what it holds first.

        Raises:
            GraphError: the graph is already finalized, or the name is taken.
        """
        stream, writer = self.new_input(name)
        session = InputSession(writer)
        self._sessions.append(session)
        return stream, session

    def finalize(self) -> Graph:
        """Finish building and return the graph to run.

        Raises:
            GraphError: the graph is already finalized.
        """
        self._check_building("finalize")
        self._finalized = True
        operators = _fused(self._operators)
        _watch_loops(operators, self._scopes)
        return Graph(operators, self._scopes, self._inputs, self._sessions, self._outputs, self._status)

    def _check_building(self, what: str) -> None:
        if self._finalized:
            raise GraphError(
                f"{what} after finalize(): this graph is finished and running. "
                f"Build the whole graph first, or start a new GraphBuilder"
            )

    def _checked_name(self, name: str | None, default: str, what: str) -> str:
        if name is None:
            return default
        if not isinstance(name, str) or not name:
            raise GraphError(f"an {what}'s name is a non-empty string, not {name!r}")
        if name in self._names:
            raise GraphError(f"the name {name!r} is taken already; give each input and output its own name")
        self._names.append(name)
        return name

    def _add_operator(
        self, make: Callable[[list[DifferenceStreamReader], DifferenceStreamWriter], Operator],
        inputs: list[DifferenceStreamBuilder], name: str, scope: Scope | None = None,
        output: DifferenceStreamWriter | None = None,
    ) -> DifferenceStreamBuilder:
        """Wire a new operator called ``name`` that reads ``inputs``; return its output stream.

        The output is in ``scope`` (by default the inputs' scope); streams from
        enclosing scopes are entered into the innermost one first.

        Raises:
            GraphError: the graph is finalized, an input comes from another
                builder, or from a loop that was already built.
        """
        self._check_building("adding an operator")
        for stream in inputs:
            if stream._builder is not self:
                raise GraphError(
                    "an operator's inputs come from different GraphBuilders; build every "
                    "stream of one computation from one builder"
                )
        inner = max((stream._scope for stream in inputs), key=lambda scope: scope.depth)
        for stream in inputs:
            stream._check_enters(inner)
        for stream in inputs:
            stream._check_open(name)
        inputs = [stream._enter(inner) for stream in inputs]
        scope = scope or inner
        output = output or DifferenceStreamWriter(scope.initial_frontier)
        operator = make([stream._writer.new_reader() for stream in inputs], output)
        operator.name = name
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
        self._check_enters(scope)
        if scope not in self._entered:
            outer = self._enter(scope.parent)
            self._entered[scope] = self._builder._add_operator(Enter, [outer], "enter", scope=scope)
        return self._entered[scope]

    def _check_enters(self, scope: Scope) -> None:
        """Raise a GraphError unless this stream can be brought into ``scope``: it is this stream's, or nested in it."""
        if not self._scope.encloses(scope):
            raise GraphError(
                "a stream built inside one iterate body is combined with a stream of another loop "
                "it is not nested in; only the stream iterate returns leaves its loop"
            )

    def _check_open(self, what: str) -> None:
        """Raise a GraphError if this stream is inside a loop that ``iterate`` has finished building."""
        scope = self._scope
        while scope is not None:
            if scope.closed:
                raise GraphError(
                    f"{what} reads a stream built inside an iterate body, after the loop was built; its versions "
                    f"count iterations. Use the stream iterate returns, or build this inside the body"
                )
            scope = scope.parent

    def connect_reader(self) -> DifferenceStreamReader:
        """A new reader of this stream, for the user to read outputs from.

        Raises:
            GraphError: the graph is already finalized, or this stream is inside a finished loop.
        """
        self._builder._check_building("connect_reader")
        self._check_open("connect_reader")
        return self._writer.new_reader()

    def output(
        self, name: str | None = None, on_version: Callable[[Version, dict[Record, int]], None] | None = None,
        history: bool = True,
    ) -> Output:
        """An ``Output`` handle that keeps this stream's consolidated result, version by version.

        ``name`` (by default ``output0``, ...) is what diagrams and messages
        call it; ``on_version(version, changes)`` is called for every version
        at which the result changed, once the version is finished, in order.
        With ``history=False`` only the current snapshot is kept, for
        programs that run for many versions.

        Raises:
            GraphError: the graph is already finalized, the name is taken, or
                this stream is inside a loop (read the stream ``iterate`` returns).
        """
        builder = self._builder
        builder._check_building("output")
        if self._scope.depth:
            self._check_open("output")
            raise GraphError(
                "output reads a stream inside an iterate body, whose versions count iterations; "
                "take the output of the stream iterate returns"
            )
        name = builder._checked_name(name, f"output{len(builder._outputs)}", "output")
        output = Output(self._writer.new_reader(), name, on_version, history)
        builder._outputs.append(output)
        return output

    def _linear(self, logic: Logic, name: str) -> DifferenceStreamBuilder:
        return self._builder._add_operator(
            lambda inputs, output: LinearUnaryOperator(inputs, output, logic), [self], name
        )

    def _per_collection(self, f: Callable[[Collection], Collection], name: str) -> DifferenceStreamBuilder:
        """A linear operator that keeps each difference at its version: ``f`` maps the collection."""
        return self._linear(lambda version, updates: [(version, f(Collection._trusted(updates))._updates)], name)

    def _binary(self, kind: type[Operator], other: Any, name: str) -> DifferenceStreamBuilder:
        return self._builder._add_operator(kind, [self, _checked_stream(other, name)], name)

    def map(self, f: Callable[[Record], Record]) -> DifferenceStreamBuilder:
        _checked_function(f, "map")
        return self._per_collection(lambda collection: collection.map(f), "map")

    def filter(self, predicate: Callable[[Record], bool]) -> DifferenceStreamBuilder:
        _checked_function(predicate, "filter")
        return self._per_collection(lambda collection: collection.filter(predicate), "filter")

    def flat_map(self, f: Callable[[Record], Iterable[Record]]) -> DifferenceStreamBuilder:
        _checked_function(f, "flat_map")
        return self._per_collection(lambda collection: collection.flat_map(f), "flat_map")

    def negate(self) -> DifferenceStreamBuilder:
        return self._per_collection(Collection.negate, "negate")

    def explode(self, f: Callable[[Record], Iterable[tuple[Record, Multiplicity]]]) -> DifferenceStreamBuilder:
        """Each record becomes the ``(value, multiplicity)`` updates ``f`` yields, multiplicities multiplied.

        000's ``explode``: ``f`` may produce negative multiplicities; an input
        with multiplicity ``m`` contributes ``m * d`` of each ``(value, d)``.

        Raises:
            RecordError: (while stepping) ``f`` yields something else than
                ``(value, int multiplicity)`` pairs.
        """
        _checked_function(f, "explode")

        def logic(version: Version, updates: list) -> list:
            exploded = [(value, m * d) for record, m in updates for value, d in _pairs(f(record), record)]
            if exploded and not set(map(type, map(itemgetter(1), exploded))) <= {int}:
                bad = next(m for _, m in exploded if type(m) is not int)
                raise RecordError(
                    f"explode's function must yield int multiplicities, but one came out as {bad!r}; "
                    f"a multiplicity counts copies of a record"
                )
            return [(version, exploded)]

        return self._linear(logic, "explode")

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
        _checked_function(f, "join_function")
        like = self._scope.initial_frontier.elements[0]

        def logic(version: Version, updates: list) -> list:
            by_version: dict[Version, list] = {}
            for record, m in updates:
                for value, at, d in f(record):
                    if type(d) is not int:
                        raise RecordError(
                            f"join_function's function must yield (value, version, int multiplicity), but yielded "
                            f"the multiplicity {d!r} for the record {record!r}"
                        )
                    joined = version.join(as_version(at, like))
                    by_version.setdefault(joined, []).append((value, m * d))
            return list(by_version.items())

        return self._linear(logic, "join_function")

    def temporal_filter(
        self, lower: Callable[[Record], Any], upper: Callable[[Record], Any] | None = None
    ) -> DifferenceStreamBuilder:
        """Each record present only from version ``lower(record)`` until ``upper(record)`` (if given).

        Materialize's temporal filter, as 000 writes it: ``join_function``
        with ``(record, lower(record), +1)`` and ``(record, upper(record), -1)``.
        """
        _checked_function(lower, "temporal_filter")
        if upper is None:
            return self.join_function(lambda record: [(record, lower(record), 1)])
        return self.join_function(lambda record: [(record, lower(record), 1), (record, upper(record), -1)])

    def consolidate(self) -> DifferenceStreamBuilder:
        return self._builder._add_operator(Consolidate, [self], "consolidate")

    def concat(self, other: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
        return self._binary(Concat, other, "concat")

    def join(self, other: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
        """``(key, (a, b))`` for matching keys; an arranged input is read through its shared arrangement."""
        _checked_stream(other, "join")
        inner = max((self._scope, other._scope), key=lambda scope: scope.depth)
        arrangements = tuple(
            stream.arrangement if isinstance(stream, ArrangedStream) and stream._scope is inner else None
            for stream in (self, other)
        )
        return self._builder._add_operator(
            lambda inputs, output: Join(inputs, output, arrangements), [self, other], "join"
        )

    def half_join(self, other: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
        """Each difference here joined with ``other`` as it stands at that difference's version (003).

        Changes to ``other`` alone produce no output: see ``operators.join.HalfJoin``.
        """
        _checked_stream(other, "half_join")
        inner = max((self._scope, other._scope), key=lambda scope: scope.depth)
        arrangement = other.arrangement if isinstance(other, ArrangedStream) and other._scope is inner else None
        return self._builder._add_operator(
            lambda inputs, output: HalfJoin(inputs, output, arrangement), [self, other], "half_join"
        )

    def arrange(self) -> ArrangedStream:
        """This stream, indexed once by key in a shared ``Arrangement`` that every join reading it uses.

        003's 'Shared Arrangements': joining ``query`` three times with an
        arranged ``links`` indexes ``links`` once, not three times.
        """
        arrangement = Arrangement()
        stream = self._builder._add_operator(
            lambda inputs, output: Arrange(inputs, output, arrangement), [self], "arrange"
        )
        return ArrangedStream(stream._builder, stream._writer, stream._scope, arrangement)

    def reduce(self, f: Callable[[Values], Iterable[tuple[Any, Multiplicity]]]) -> DifferenceStreamBuilder:
        """``(key, output)`` for each ``(output, multiplicity)`` in ``f(values of key)``, kept up to date.

        ``f`` gets a key's consolidated, non-empty ``(value, multiplicity)``
        list and returns ``(output, multiplicity)`` pairs, int multiplicities.
        """
        return self._reduce(f, "reduce")

    def _reduce(self, f: Callable[[Values], Iterable[tuple[Any, Multiplicity]]], name: str) -> DifferenceStreamBuilder:
        _checked_function(f, name)
        return self._builder._add_operator(lambda inputs, output: Reduce(inputs, output, f), [self], name)

    def count(self) -> DifferenceStreamBuilder:
        return self._reduce(count_values, "count")

    def sum(self) -> DifferenceStreamBuilder:
        return self._reduce(sum_values, "sum")

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
        streams = [self, *(_checked_stream(stream, "join_many") for stream in others)]
        constraints = _checked_constraints(constraints, len(streams))
        return self._builder._add_operator(
            lambda inputs, output: DeltaJoin(inputs, output, constraints), streams, "join_many"
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
        return self._reduce(distinct_values, "distinct")

    def debug(self, name: str, sink: Callable[[str], None] = print) -> DifferenceStreamBuilder:
        """Pass the stream through unchanged, describing each message to ``sink``."""
        _checked_function(sink, "debug's sink")
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
            GraphError: ``f`` is not a function, ``max_iterations`` is not a
                positive int, or ``f`` does not return a stream.
            IterationError: (while stepping) a version needs more than
                ``max_iterations`` iterations.
        """
        _checked_function(f, "iterate")
        if type(max_iterations) is not int or max_iterations < 1:
            raise GraphError(f"max_iterations is a positive int, not {max_iterations!r}; e.g. max_iterations=100")
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
        egress = builder._add_operator(Egress, [result], "egress", scope=self._scope)
        scope.closed = True
        return egress


class ArrangedStream(DifferenceStreamBuilder):
    """A stream with a shared ``Arrangement`` of its contents, made by ``arrange()``."""

    def __init__(
        self, builder: GraphBuilder, writer: DifferenceStreamWriter, scope: Scope, arrangement: Arrangement
    ) -> None:
        super().__init__(builder, writer, scope)
        self.arrangement = arrangement


def _checked_stream(stream: Any, operator: str) -> DifferenceStreamBuilder:
    """``stream`` if it is a stream, else a GraphError saying ``operator`` takes one."""
    if not isinstance(stream, DifferenceStreamBuilder):
        raise GraphError(f"{operator} takes a stream, not {type(stream).__name__}: {stream!r}")
    return stream


def _checked_function(f: Any, operator: str) -> None:
    """Raise a GraphError unless ``f`` can be called."""
    if not callable(f):
        raise GraphError(f"{operator} takes a function, not {f!r}; e.g. {operator.split()[0]}(lambda record: ...)")


def _checked_constraints(constraints: Any, inputs: int) -> list[Constraint]:
    """``join_many``'s constraints as a list, each ``(i, key_i, j, key_j)`` with inputs in range and callables.

    Raises:
        GraphError: naming the first constraint that is not.
    """
    if not isinstance(constraints, (list, tuple)):
        raise GraphError(f"join_many takes a list of constraints (i, key_i, j, key_j), not {constraints!r}")
    for constraint in constraints:
        if (
            not isinstance(constraint, tuple) or len(constraint) != 4
            or any(type(i) is not int or not 0 <= i < inputs for i in constraint[::2])
            or not all(callable(key) for key in constraint[1::2])
        ):
            raise GraphError(
                f"a join_many constraint is (i, key_i, j, key_j) with inputs i, j in 0..{inputs - 1} and key "
                f"functions, not {constraint!r}; e.g. (0, lambda r: r[0], 1, lambda r: r[0])"
            )
    return list(constraints)


def _pairs(produced: Iterable, record: Any) -> Iterable[tuple[Any, Any]]:
    """What explode's function yielded for ``record``, checked to be ``(value, multiplicity)`` pairs."""
    pairs = produced if type(produced) is list else list(produced)
    for pair in pairs:
        if type(pair) is not tuple or len(pair) != 2:
            raise RecordError(
                f"explode's function must yield (value, multiplicity) pairs, but yielded {pair!r} for the "
                f"record {record!r}; e.g. lambda record: [(record, 2)]"
            )
    return pairs
