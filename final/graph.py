"""The runtime: edges between operators, scopes, the graph and its builder, and the passes run on it.

The computation is built once, as a graph, and then fed: difference
collections are written to inputs, ``graph.step()`` runs every operator
once, and results come out at the far end. Source: document 002, "v2:
Constructing dataflow graphs" (the graph), "v3: Versions and frontiers"
(every message carries a version), "v4: Multidimensional versions" (an
``iterate`` nests a scope whose versions carry one more coordinate).

What final changes in how it runs:

- **Progress is tracked once per graph** (``final.progress``): edges carry
  data only, and the frontier anywhere is worked out from pointstamps, the
  messages queued and the capabilities held, instead of frontier messages
  passed from operator to operator as v3..v5 do. ``step`` counts the work
  it did: messages handled, and changes to the pointstamps.
- **Fusion** (000, "Fusing logic"): when the graph is finalized, a linear
  operator joins the operator next to it, so a chain of them costs one
  operator, or none (see ``GraphBuilder.finalize``).
- ``step(budget)`` bounds each operator's work; a failure breaks the graph
  (``Status``), which then refuses to run or take input.

The stream API, the methods a program chains, is ``final.stream``; each
operator family is a module of ``final.operators``. Rust DD builds on timely
dataflow's graphs; a stream here is its ``Collection`` of a scope.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from . import viz
from .collection import Collection
from .errors import BrokenGraphError, FrontierError, GraphError, RecordError, VersionError
from .operators.base import Logic, Operator, apply_logic, followed_by, plain
from .operators.linear import LinearUnaryOperator
from .order import Antichain, Version, checked_frontier, checked_version
from .progress import ProgressTracker
from .sessions import InputSession, Output
from .stream import DifferenceStreamBuilder

MAX_STEPS = 1_000_000
"""Default bound on the steps of one ``graph.run()``: a loop of ``MAX_ITERATIONS``
iterations takes a few steps per iteration, far fewer; a graph that is not
quiet after this many steps is reported rather than run forever."""


class DataMessage:
    """A difference collection at a version. Never mutated once sent: readers share it."""

    __slots__ = ("collection", "version")

    def __init__(self, version: Version, collection: Collection) -> None:
        self.version = version
        self.collection = collection

    def __repr__(self) -> str:
        return f"DataMessage({self.version!r}, {self.collection!r})"


class FrontierMessage:
    """A reader's frontier moved: it lost the versions ``removed`` and gained ``added`` (002's API).

    Operators never see these (they ask the progress tracker); a reader the
    user connected gets one when it drains, after the data, if its frontier
    moved since its last drain. Frontiers travel as changes (002's closing
    list: a frontier moving from ``[(1, 10), (2, 8), ...]`` to ``[(1, 10),
    (2, 9), ...]`` is sent as 'replace (2, 8) with (2, 9)'): a reader applies
    each change, in order, to the frontier it last knew,
    ``frontier.apply(message)``. The message also carries the two antichains,
    ``before`` and ``after``, so a reader that knew ``before`` takes ``after``
    as it is; ``removed`` and ``added`` are worked out when first read.
    """

    __slots__ = ("_changes", "after", "before")

    def __init__(self, before: Antichain, after: Antichain) -> None:
        self.before = before
        self.after = after
        self._changes: tuple[tuple[Version, ...], tuple[Version, ...]] | None = None

    @property
    def removed(self) -> tuple[Version, ...]:
        """The elements of the old frontier that the new one lacks."""
        return self._change()[0]

    @property
    def added(self) -> tuple[Version, ...]:
        """The elements of the new frontier that the old one lacked."""
        return self._change()[1]

    def _change(self) -> tuple[tuple[Version, ...], tuple[Version, ...]]:
        if self._changes is None:
            self._changes = self.before.changes_to(self.after)
        return self._changes

    def __repr__(self) -> str:
        return f"FrontierMessage({plain(self.before)} -> {plain(self.after)})"


class Status:
    """Whether a graph can still run: shared by the graph, its inputs' writers and sessions, and its outputs.

    Invariant: ``failure`` is None until an error breaks the graph, then says which error, where.
    """

    __slots__ = ("_watchers", "failure")

    def __init__(self) -> None:
        self.failure: str | None = None
        self._watchers: list[Callable[[], None]] = []

    def check(self, what: str, input_name: str | None = None) -> None:
        """Raise ``BrokenGraphError`` if the graph has failed: ``what`` (to the input ``input_name``, if given)
        cannot be done any more."""
        if self.failure is not None:
            if input_name is not None:
                what = f"{what} input {input_name!r}"
            raise BrokenGraphError(
                f"cannot {what}: this graph failed earlier ({self.failure}), so its operators may hold part of "
                f"that work. Build the graph again; its outputs still answer for the versions they finished"
            )

    def watch(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when the graph fails (a session forgets the version it was filling)."""
        self._watchers.append(callback)

    def fail(self, failure: str) -> None:
        self.failure = failure
        for callback in self._watchers:
            callback()


class DifferenceStreamReader:
    """The receiving end of an edge: a queue of messages from one writer, at a location of the tracker.

    An operator's input takes messages from ``queue`` (the internal protocol,
    ``final.operators.base``); each counts as a pointstamp at ``location``
    until it has been handled (``counted``). The user's end of a stream (an
    ``Output``, or a reader from ``connect_reader``) is counted by no one:
    nothing downstream of it waits.

    Invariant: ``queue`` holds the messages not taken yet, in the order the
    writer sent them; ``fused`` names the linear operators whose logic
    ``logic`` applies to each message before its operator sees it.
    """

    __slots__ = ("_seen", "counted", "fused", "location", "logic", "owner", "progress", "queue", "status", "writer")

    def __init__(self, writer: DifferenceStreamWriter, counted: bool) -> None:
        self.writer = writer
        self.queue: deque[DataMessage] = deque()
        self.counted = counted
        self.progress = writer.progress
        self.status = writer.status
        self.location = self.progress.add_location(writer.dimension, "reader")
        self.owner: Any = None
        """The operator or ``Output`` reading it, or None for a reader the user connected."""
        self.logic: Logic | None = None
        self.fused: tuple[str, ...] = ()
        self._seen = writer.initial

    @property
    def frontier(self) -> Antichain:
        """The versions data may still arrive at: every version it does not allow is finished here."""
        return self.progress.frontier(self.location)

    def probe_frontier_less_than(self, frontier: Antichain | Version) -> bool:
        """Whether this edge's frontier is still before ``frontier`` (a Version stands for its antichain).

        While it is, data may still arrive at some version that ``frontier``
        has passed: step the graph until this is False. Then every such
        version is finished and all its data has been sent (it may still be
        queued, unread).
        """
        return self.frontier.less_than(checked_frontier(frontier, "the probed frontier", self.writer.dimension))

    def drain(self) -> Iterator[DataMessage | FrontierMessage]:
        """Pop and yield the queued data messages, oldest first, then a ``FrontierMessage`` if the frontier
        moved since the last drain (002's API; operators take from ``queue`` instead).

        Each message leaves the queue only when its turn comes. Once the
        graph has failed the frontier stays where it was: the version being
        worked on never finishes.
        """
        queue = self.queue
        while queue:
            yield queue.popleft()
        if self.status.failure is None:
            frontier = self.progress.frontier(self.location)
            if frontier is not self._seen:
                before, self._seen = self._seen, frontier
                if before.elements != frontier.elements:
                    yield FrontierMessage(before, frontier)

    def is_empty(self) -> bool:
        """Whether ``drain`` would yield nothing: no data queued, and the frontier where the last drain left it."""
        return not self.queue and self.frontier.elements == self._seen.elements

    def fuse(self, linear: LinearUnaryOperator) -> None:
        """Take in ``linear``, which this reader's operator alone reads, with what was fused into it: apply
        its logic to every message before this reader's own (the internal protocol)."""
        logic = linear.logic if linear.output.logic is None else followed_by(linear.logic, linear.output.logic)
        self.logic = logic if self.logic is None else followed_by(logic, self.logic)
        self.fused = (linear.name, *linear.output.fused, *self.fused)


class DifferenceStreamWriter:
    """The sending end of a stream (an input, or an operator's output), at a location of the tracker.

    Every message goes to every reader. An input's frontier is its
    pointstamps: it promises no data at versions the frontier has passed.
    An operator's output sends through ``send_trusted`` (the internal
    protocol), under the capabilities its operator holds.

    Invariant: a message is never mutated after it is sent (readers share
    it); an input's ``frontier`` only moves forward, and no data is sent at a
    version it has passed; ``logic``, if any, is the fused linear operators'
    (``fused`` names them), applied to everything sent before it goes out.
    """

    def __init__(
        self, progress: ProgressTracker, initial: Antichain, status: Status, name: str = "",
        owner: Operator | None = None,
    ) -> None:
        self.progress = progress
        self.initial = initial
        """The frontier every edge of its scope starts at."""
        self.dimension = len(initial.elements[0])
        """How many coordinates the versions of this stream have."""
        self.status = status
        self.name = name
        """An input's name (empty for the edges operators write)."""
        self.owner = owner
        """The operator whose output this is, or None for an input."""
        self.readers: list[DifferenceStreamReader] = []
        self.logic: Logic | None = None
        self.fused: tuple[str, ...] = ()
        self.location = progress.add_location(
            self.dimension, f"input {name}" if owner is None else "output", name if owner is None else None)
        self._targets: list[tuple[deque, int | None]] = []
        if owner is None:  # an input: its frontier is its pointstamps
            for version in initial.elements:
                progress.update(self.location, version, 1)
        self._frontier = initial

    @property
    def frontier(self) -> Antichain:
        """The versions this stream may still carry data at: an input's promise, or an operator's worked out by
        the tracker from what it and everything before it still hold."""
        if self.owner is None:
            return self._frontier
        return self.progress.frontier(self.location)

    @property
    def label(self) -> str:
        """How messages name where this stream comes from: its operator's label, or its input's name."""
        return self.owner.label if self.owner is not None else f"input {self.name}"

    def send_data(self, version: Version, collection: Collection) -> None:
        """Send a difference collection at ``version`` (an input's writer; 002's API).

        Raises:
            VersionError: ``version`` is not a Version, or the frontier has
                passed it; nothing is sent.
            RecordError: ``collection`` is not a Collection; nothing is sent.
            BrokenGraphError: the graph failed earlier.
        """
        self.status.check("send data to", self.name)
        checked_version(version, VersionError, "the version of sent data", self.dimension)
        if not self._frontier.less_equal_version(version):
            raise VersionError(
                f"data sent at {version}, but the frontier is already {self._frontier}: that version is "
                f"finished. Send it at a version the frontier allows, e.g. {self._frontier}"
            )
        if not isinstance(collection, Collection):
            raise RecordError(
                f"send_data takes a Collection, not {type(collection).__name__}: {collection!r}; "
                f"wrap it: Collection([(record, multiplicity), ...])"
            )
        self.send_trusted(version, collection)

    def send_frontier(self, frontier: Antichain | Version) -> None:
        """Promise that no more data will be sent at versions ``frontier`` has passed (an input's writer).

        A Version stands for the antichain of just itself.

        Raises:
            FrontierError: ``frontier`` is not an Antichain or a Version, mixes
                dimensions, or is behind the current frontier; nothing changes.
            BrokenGraphError: the graph failed earlier.
        """
        self.status.check("move the frontier of", self.name)
        frontier = checked_frontier(frontier, "a frontier", self.dimension)
        if not self._frontier.less_equal(frontier):
            raise FrontierError(
                f"the frontier cannot move backwards from {self._frontier} to {frontier}; "
                f"send a frontier at or after {self._frontier}"
            )
        self.send_frontier_trusted(frontier)

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

    def send_frontier_trusted(self, frontier: Antichain) -> None:
        """Move an input's frontier to ``frontier``, which is at or after it, without checks (the internal
        protocol: for input sessions, which check versions themselves)."""
        before, self._frontier = self._frontier, frontier
        self.progress.move(self.location, before.elements, frontier.elements)

    def new_reader(self, counted: bool = True) -> DifferenceStreamReader:
        """A new reader of every message sent from now on; ``counted`` if an operator reads it."""
        reader = DifferenceStreamReader(self, counted)
        self._attach(reader)
        return reader

    def _attach(self, reader: DifferenceStreamReader) -> None:
        reader.writer = self
        self.readers.append(reader)
        self._targets.append((reader.queue, reader.location if reader.counted else None))
        self.progress.connect(self.location, reader.location)

    def _detach(self, reader: DifferenceStreamReader) -> None:
        self.readers.remove(reader)
        self._targets = [(r.queue, r.location if r.counted else None) for r in self.readers]
        self.progress.disconnect(self.location, reader.location)

    def fuse(self, linear: LinearUnaryOperator) -> None:
        """Take over ``linear``, a linear operator that alone reads this stream: apply its logic to
        everything sent here, and send to its readers (the fusion pass, ``GraphBuilder.finalize``)."""
        (reader,) = self.readers
        self._detach(reader)
        self.logic = linear.logic if self.logic is None else followed_by(self.logic, linear.logic)
        self.fused = (*self.fused, linear.name)
        moved = linear.output
        self.progress.disconnect(reader.location, moved.location)
        for target in list(moved.readers):
            moved._detach(target)
            self._attach(target)


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


class Graph:
    """A finished dataflow graph. ``step()`` runs each operator once; ``run()`` steps until it is quiet.

    ``operators``, ``inputs``, ``outputs``, ``edges()`` and ``scope_of()``
    show its shape, read-only, for diagrams (``final.viz``) and tests;
    ``progress`` is its progress tracker.

    Invariant: ``operators`` is in the order they were built, which is a
    topological order once feedback edges are left out (an operator is built
    after the ones it reads from), so one step carries data from the inputs
    all the way to the outputs; each operator's ``number`` is its position.
    """

    def __init__(
        self, operators: list[Operator], scopes: dict[int, Scope], inputs: list[DifferenceStreamWriter],
        sessions: list[InputSession], outputs: list[Output], status: Status, progress: ProgressTracker,
    ) -> None:
        self._operators = operators
        self._scopes = scopes
        self._inputs = inputs
        self._sessions = sessions
        self._outputs = outputs
        self._status = status
        self.progress = progress
        """The graph's progress tracker (``final.progress``): pointstamps and frontiers at every location."""
        self._loops = any(scope.depth for scope in scopes.values())
        for number, operator in enumerate(operators):
            operator.number = number
            reached = progress.reach(operator.output.location)
            operator.in_cycle = any(reader.location in reached for reader in operator.inputs)
            progress.rename(operator.output.location, operator.label)
            for side, reader in enumerate(operator.inputs):
                port = f" {side}" if len(operator.inputs) > 1 else ""
                progress.rename(reader.location, f"{operator.label} input{port}")
        for writer in inputs:
            progress.rename(writer.location, writer.label)
        for output in outputs:
            progress.rename(output.reader.location, f"output {output.name}")

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
        sources = [*((writer, writer) for writer in self._inputs),
                   *((operator.output, operator) for operator in self._operators)]
        return [
            (source, reader.owner if reader.owner is not None else reader)
            for writer, source in sources
            for reader in writer.readers
        ]

    def step(self, budget: int | None = None) -> int:
        """Run every operator once, in topological order; return how much happened.

        That is the messages the operators handled, plus the times a version
        appeared at or left a location while they ran (``progress.changes``):
        a step that returns 0 changed nothing, so the graph is quiet. With a
        ``budget``, each operator handles at most that many messages this step
        and leaves the rest queued: bounded work per step.

        Raises:
            GraphError: ``budget`` is not None or an int of at least 1.
            RecordError: an operator got a record it cannot take, such as a
                non-pair at a join; the graph is broken.
            FunctionError: a function you gave an operator raised; the graph is broken.
            IterationError: a loop did not converge; the graph is broken.
            BrokenGraphError: the graph failed earlier.
        """
        self._status.check("step")
        if budget is not None and (type(budget) is not int or budget < 1):
            raise GraphError(
                f"step takes a budget of at least 1 message per operator, or None for no limit, not {budget!r}"
            )
        progress = self.progress
        changes = progress.changes
        handled = 0
        operator = None
        try:
            for operator in self._operators:
                handled += operator.run(budget)
        except BaseException as error:  # even an interrupt leaves the operator half way through a message
            self._status.fail(f"{type(error).__name__} in {operator.label if operator else 'the graph'}")
            error.add_note("The graph is broken now: it refuses to run or take input. Build it again.")
            raise
        for output in self._outputs:
            output.read()
        return handled + progress.changes - changes

    def run(self, max_steps: int = MAX_STEPS) -> int:
        """Send what the input sessions hold, then step until the graph is quiet; return the steps taken.

        Quiet means a step changed nothing: every message has been handled
        and every version that can finish has. A version an input has not
        moved its frontier past stays open (``Output.at`` says which input
        holds it).

        Raises:
            GraphError: the graph is not quiet after ``max_steps`` steps.
            BrokenGraphError: the graph failed earlier.
            and whatever ``step`` raises.
        """
        self._status.check("run")
        for session in self._sessions:
            session.flush()
        if not self._loops:  # every change an operator makes reaches only operators after it: one step will do
            return 1 if self.step() else 0
        for steps in range(max_steps):
            if not self.step():
                return steps
        busy = [operator.label for operator in self._operators if any(reader.queue for reader in operator.inputs)]
        raise GraphError(
            f"the graph is not quiet after {max_steps} steps; still busy: {', '.join(busy[:5]) or 'nothing'}. "
            f"Raise max_steps, or check for a loop that never ends"
        )

    def frontiers(self) -> list[tuple[str, Antichain]]:
        """Progress: each input's, operator's (in topological order) and output's name and frontier.

        An operator's frontier is its output's: the versions it may still
        send at, given what it and everything before it hold.
        """
        return [
            *((writer.label, writer.frontier) for writer in self._inputs),
            *((operator.label, operator.output.frontier) for operator in self._operators),
            *((f"output {output.name}", output.frontier) for output in self._outputs),
        ]

    def state_sizes(self) -> list[tuple[str, int]]:
        """Each operator's label and ``state_size()``: what it keeps, for watching memory."""
        return [(operator.label, operator.state_size()) for operator in self._operators]

    def to_dot(self, pointstamps: bool = False) -> str:
        """The graph in graphviz's dot language: operators by name, loops as nested boxes, and with
        ``pointstamps`` the progress tracker's counts (see ``final.viz``)."""
        return viz.to_dot(self, pointstamps)


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
        self.root = Scope(None, initial_frontier)
        """The top-level scope."""
        self.progress = ProgressTracker()
        self.status = Status()
        self._operators: list[Operator] = []
        self._names: list[str] = []
        self._finalized = False
        self._scopes: dict[int, Scope] = {}
        self._inputs: list[DifferenceStreamWriter] = []
        self._sessions: list[InputSession] = []
        self._outputs: list[Output] = []

    def new_input(self, name: str | None = None) -> tuple[DifferenceStreamBuilder, DifferenceStreamWriter]:
        """A new input edge: a stream to build on and the writer that feeds it (002's API).

        ``name`` (by default ``input0``, ``input1``, ...) is what
        ``graph.frontiers()``, diagrams and error messages call it.

        Raises:
            GraphError: the graph is already finalized, or the name is taken.
        """
        self.check_building("new_input")
        name = self.checked_name(name, f"input{len(self._inputs)}", "input")
        writer = DifferenceStreamWriter(self.progress, self.root.initial_frontier, self.status, name)
        self._inputs.append(writer)
        return DifferenceStreamBuilder(self, writer, self.root), writer

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
        """Finish building, fuse linear operators, and return the graph to run.

        Fusion (000, "Fusing logic"): a linear operator that alone reads an
        operator's output joins it, its logic applied to what the operator
        sends (a map after a join becomes part of the join); a chain of them
        that only one operator reads joins that operator's input, its logic
        applied to what arrives (a map between an input and a count becomes
        part of the count). Same results, one operator and one edge fewer
        per linear operator, no intermediate collection built.

        Raises:
            GraphError: the graph is already finalized.
        """
        self.check_building("finalize")
        self._finalized = True
        operators = _fused(self._operators)
        return Graph(operators, self._scopes, self._inputs, self._sessions, self._outputs, self.status, self.progress)

    def check_building(self, what: str) -> None:
        """Raise a GraphError if ``what`` comes after ``finalize()``."""
        if self._finalized:
            raise GraphError(
                f"{what} after finalize(): this graph is finished and running. "
                f"Build the whole graph first, or start a new GraphBuilder"
            )

    def checked_name(self, name: str | None, default: str, what: str) -> str:
        """``name``, or ``default`` when it is None, once it is checked to be a new, non-empty string."""
        if name is None:
            return default
        if not isinstance(name, str) or not name:
            raise GraphError(f"an {what}'s name is a non-empty string, not {name!r}")
        if name in self._names:
            raise GraphError(f"the name {name!r} is taken already; give each input and output its own name")
        self._names.append(name)
        return name

    def new_scope(self, parent: Scope) -> Scope:
        """A loop's scope, nested in ``parent``: its versions have one more coordinate, the iteration."""
        return Scope(parent, parent.initial_frontier.extend())

    def new_writer(self, scope: Scope) -> DifferenceStreamWriter:
        """The output edge of an operator not built yet, in ``scope`` (a loop's feedback edge is made before
        its body, the feedback operator after it)."""
        return DifferenceStreamWriter(self.progress, scope.initial_frontier, self.status, owner=_UNBUILT)

    def add_operator(
        self, make: Callable[[list[DifferenceStreamReader], DifferenceStreamWriter], Operator],
        readers: list[DifferenceStreamReader], scope: Scope, name: str, output: DifferenceStreamWriter | None = None,
    ) -> DifferenceStreamWriter:
        """Wire a new operator called ``name`` that takes from ``readers``, in ``scope``; its output.

        The tracker learns the operator's paths: from each input to its
        output, doing the operator's ``summary`` to versions.
        """
        self.check_building("adding an operator")
        if output is None:
            output = self.new_writer(scope)
        operator = make(readers, output)
        operator.name = name
        output.owner = operator
        for reader in readers:
            reader.owner = operator
            self.progress.connect(reader.location, output.location, operator.summary)
        self._operators.append(operator)
        self._scopes[id(operator)] = scope
        return output

    def add_output(self, output: Output) -> None:
        self._outputs.append(output)

    @property
    def outputs(self) -> tuple[Output, ...]:
        return tuple(self._outputs)


_UNBUILT: Any = object()
"""The owner of an operator's output until the operator is built: a writer must know it is not an input's."""


def _fused(operators: list[Operator]) -> list[Operator]:
    """The operators left once every linear operator that can be has been fused (000, "Fusing logic").

    First, in build order, a linear operator that alone reads another
    operator's output joins it (``DifferenceStreamWriter.fuse``), so a chain
    after an operator becomes part of it. Then, from the last operator back,
    a linear operator left whose output one operator alone reads joins that
    operator's input (``DifferenceStreamReader.fuse``): a chain after an
    input, or after a stream that several read. A linear operator with data
    already queued stays as it is.
    """
    kept: list[Operator] = []
    for operator in operators:
        if isinstance(operator, LinearUnaryOperator):
            (reader,) = operator.inputs
            writer = reader.writer
            if writer.owner is not None and len(writer.readers) == 1 and not reader.queue:
                writer.fuse(operator)
                continue
        kept.append(operator)
    fused: set[int] = set()
    for operator in reversed(kept):
        if not isinstance(operator, LinearUnaryOperator):
            continue
        (reader,) = operator.inputs
        targets = operator.output.readers
        if len(targets) != 1 or not isinstance(targets[0].owner, Operator) or reader.queue:
            continue
        (target,) = targets
        target.fuse(operator)
        writer = reader.writer
        operator.output._detach(target)
        writer._detach(reader)
        writer._attach(target)
        target.owner.progress.disconnect(reader.location, operator.output.location)
        fused.add(id(operator))
    return [operator for operator in kept if id(operator) not in fused]
