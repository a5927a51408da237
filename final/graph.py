"""The runtime: scopes, the builder that records a graph and compiles it, and the scheduler that runs it.

The computation is built once, as a graph, and then fed: difference
collections are written to inputs, ``graph.step()`` runs every operator
once, and results come out at the far end. Source: document 002, "v2:
Constructing dataflow graphs" (the graph), "v3: Versions and frontiers"
(every message carries a version), "v4: Multidimensional versions" (an
``iterate`` nests a scope whose versions carry one more coordinate).

What final changes in how it is built and run:

- **Recorded, then compiled once.** ``GraphBuilder`` records the program's
  shape, a ``Topology`` of inputs, operators, outputs and the edges between
  them (``final.edges``). ``finalize`` fuses its linear operators
  (``final.fusion``), then ``Topology.compile`` builds the progress tracker
  from the fused graph, refusing a cycle that does not advance versions,
  and wires every edge at its location; nothing about the graph's shape
  changes after that, as in timely dataflow, whose
  ``reachability::Builder`` makes its ``Tracker``.
- **Progress is tracked once per graph** (``final.progress``): edges carry
  data only, and the frontier anywhere is worked out from pointstamps, the
  messages queued and the capabilities held, instead of frontier messages
  passed from operator to operator as v3..v5 do. ``step`` counts the work
  it did: messages handled, and changes to the pointstamps.
- ``step(budget)`` bounds each operator's work; a failure breaks the graph
  (``Status``), which then refuses to run or take input.

The stream API, the methods a program chains, is ``final.stream``; each
operator family is a module of ``final.operators``; the ends a user feeds
and reads are ``final.sessions``. Rust DD builds on timely dataflow's
graphs; a stream here is its ``Collection`` of a scope.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from . import collector, viz
from .collection import Record
from .edges import DifferenceStreamReader, DifferenceStreamWriter, Topology
from .errors import BrokenGraphError, FrontierError, GraphError
from .fusion import fuse
from .operators.base import Operator
from .order import Antichain, Version, checked_version
from .sessions import ConnectedReader, InputSession, InputWriter, Output
from .stream import DifferenceStreamBuilder

MAX_STEPS = 1_000_000
"""Default bound on the steps of one ``graph.run()``: a loop of ``MAX_ITERATIONS``
iterations takes a few steps per iteration, far fewer; a graph that is not
quiet after this many steps is reported rather than run forever."""


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


class Scope:
    """A nesting level of the graph: the top level, or the body of an ``iterate``.

    Invariant: every stream of a scope carries versions of ``dimension``
    coordinates, one more than its parent's; every edge of a scope starts at
    ``initial_frontier``. A loop's scope is ``closed`` once ``iterate`` has
    built it: nothing more may read its streams.
    """

    def __init__(self, parent: Scope | None, initial_frontier: Antichain) -> None:
        self.parent = parent
        self.depth = parent.depth + 1 if parent else 0
        self.initial_frontier = initial_frontier
        self.dimension = len(initial_frontier.elements[0])
        self.closed = False

    def encloses(self, other: Scope) -> bool:
        """Whether ``other`` is this scope or nested, at any depth, inside it."""
        while other is not None and other is not self:
            other = other.parent
        return other is self


class Graph:
    """A compiled dataflow graph. ``step()`` runs each operator once; ``run()`` steps until it is quiet.

    ``topology`` is its shape after fusion, read-only; ``operators``,
    ``inputs``, ``outputs``, ``edges()`` and ``scope_of()`` show it, for
    diagrams (``final.viz``) and tests; ``progress`` is its progress tracker.

    Invariant: ``operators`` is in the order they were built, which is a
    topological order once feedback edges are left out (an operator is built
    after the ones it reads from), so one step carries data from the inputs
    all the way to the outputs; each operator's ``number`` is its position.
    """

    def __init__(self, topology: Topology, sessions: list[InputSession], status: Status) -> None:
        self.topology = topology
        """The graph's inputs, operators, outputs and edges, as compiled."""
        self._operators = topology.operators
        self._sessions = sessions
        self._status = status
        self._loops = any(operator.output.scope.depth for operator in topology.operators)
        self.progress = topology.compile()
        """The graph's progress tracker (``final.progress``): pointstamps and frontiers at every location."""

    @property
    def failure(self) -> str | None:
        """None while the graph is sound; after an error broke it, which error, in which operator."""
        return self._status.failure

    @property
    def operators(self) -> tuple[Operator, ...]:
        """The operators, in topological order (linear operators fused into others are not among them)."""
        return tuple(self._operators)

    @property
    def inputs(self) -> tuple[InputWriter, ...]:
        """The writers of the graph's inputs, in the order they were made; each has a ``name`` and ``frontier``."""
        return tuple(self.topology.inputs)

    @property
    def outputs(self) -> tuple[Output, ...]:
        """The ``Output`` handles made with ``stream.output()``."""
        return tuple(self.topology.outputs)

    def scope_of(self, operator: Operator) -> Scope:
        """The scope ``operator`` runs in: the top level (``depth`` 0) or a loop body, with its ``parent``."""
        return operator.output.scope

    def edges(self) -> list[tuple[Any, Any]]:
        """Every edge as ``(source, target)``, from each input and each operator in order.

        A source is an input's writer or an operator; a target is an
        operator, an ``Output``, or a reader the user connected.
        """
        vertex = self.topology.vertices()
        return [(vertex.get(writer, writer), vertex.get(reader, reader)) for writer, reader in self.topology.edges]

    def step(self, budget: int | None = None) -> int:
        """Run every operator once, in topological order; return how much happened.

        That is the messages the operators handled, plus the times a version
        appeared at or left a location while they ran (``progress.changes``):
        a step that returns 0 changed nothing, so the graph is quiet. With a
        ``budget``, each operator handles at most that many messages this step
        and leaves the rest queued: bounded work per step. CPython's cyclic
        collector is paused while it works (``final.collector``).

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
        with collector.paused():
            try:
                for operator in self._operators:
                    handled += operator.run(budget)
            except BaseException as error:  # even an interrupt leaves the operator half way through a message
                self._status.fail(f"{type(error).__name__} in {operator.label if operator else 'the graph'}")
                error.add_note("The graph is broken now: it refuses to run or take input. Build it again.")
                raise
            for output in self.topology.outputs:
                output.read()
        return handled + progress.changes - changes

    def run(self, max_steps: int = MAX_STEPS) -> int:
        """Send what the input sessions hold, then step until the graph is quiet; return the steps taken.

        Quiet means a step changed nothing: every message has been handled
        and every version that can finish has. A version an input has not
        moved its frontier past stays open (``Output.at`` says which input
        holds it). CPython's cyclic collector is paused while it works
        (``final.collector``).

        Raises:
            GraphError: the graph is not quiet after ``max_steps`` steps.
            BrokenGraphError: the graph failed earlier.
            and whatever ``step`` raises.
        """
        self._status.check("run")
        with collector.paused():  # a step within pauses it again: a no-op
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
            *((writer.label, writer.frontier) for writer in self.topology.inputs),
            *((operator.label, operator.output.frontier) for operator in self._operators),
            *((f"output {output.name}", output.frontier) for output in self.topology.outputs),
        ]

    def state_sizes(self) -> list[tuple[str, int]]:
        """Each operator's label and ``state_size()``: what it keeps, for watching memory."""
        return [(operator.label, operator.state_size()) for operator in self._operators]

    def to_dot(self, pointstamps: bool = False) -> str:
        """The graph in graphviz's dot language: operators by name, loops as nested boxes, and with
        ``pointstamps`` the progress tracker's counts (see ``final.viz``)."""
        return viz.to_dot(self, pointstamps)


class GraphBuilder:
    """Records a dataflow graph as it is built: inputs first, then operators, then ``finalize`` to compile it.

    Every edge of the top level starts at ``initial_frontier``: no data
    before it, ever. It may be a Version, an Antichain, or a plain int or
    tuple of ints (``GraphBuilder(0)``, ``GraphBuilder((0, 0))``).

    Invariant: ``_edges`` holds every reader made, with the writer it reads
    from; ``_operators`` every operator, in the order built.
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
        self.status = Status()
        self._inputs: list[InputWriter] = []
        self._operators: list[Operator] = []
        self._outputs: list[Output] = []
        self._edges: list[tuple[DifferenceStreamWriter, DifferenceStreamReader]] = []
        self._sessions: list[InputSession] = []
        self._constants: list[InputSession] = []
        self._labels: list[str] = []
        self._names: list[str] = []
        self._finalized = False

    def new_input(self, name: str | None = None) -> tuple[DifferenceStreamBuilder, InputWriter]:
        """A new input edge: a stream to build on and the writer that feeds it (002's API).

        ``name`` (by default ``input0``, ``input1``, ...) is what
        ``graph.frontiers()``, diagrams and error messages call it.

        Raises:
            GraphError: the graph is already finalized, or the name is taken.
        """
        self.check_building("new_input")
        name = self.checked_name(name, f"input{len(self._inputs)}", "input")
        writer = InputWriter(self.root, self.status, name)
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

    def constant(self, records: Iterable[Record], name: str | None = None) -> DifferenceStreamBuilder:
        """An input that holds ``records`` (each once) at the first version and never changes.

        Its session is closed when the graph is finalized: every version of
        this input is finished from the start, so it never holds back a
        frontier. SQL needs it where a result exists without any input row: a
        global aggregate's one row over an empty table.

        Raises:
            GraphError: the graph is already finalized, or the name is taken.
        """
        stream, session = self.new_session(name)
        for record in records:
            session.insert(record)
        self._constants.append(session)
        return stream

    def finalize(self) -> Graph:
        """Finish building and compile the graph: fuse its linear operators, then build its progress tracker.

        Fusion (000, "Fusing logic"; ``final.fusion``) folds each linear
        operator it can into the operator next to it. The tracker is built
        from the fused graph, once, and is not changed after.

        Raises:
            GraphError: the graph is already finalized, or it has a cycle that
                does not advance versions (one not through a loop's feedback).
        """
        self.check_building("finalize")
        self._finalized = True
        recorded = Topology(self._inputs, self._operators, self._outputs, self._edges)
        graph = Graph(fuse(recorded), self._sessions, self.status)
        for session in self._constants:
            session.close()
        return graph

    @contextmanager
    def labelled(self, label: str) -> Iterator[None]:
        """Operators added inside this block carry ``label`` in their name, so diagrams and error messages show
        it: ``filter (WHERE fare > 0)``. A compiler labels each operator with the clause it comes from; the
        innermost block's label wins."""
        self._labels.append(label)
        try:
            yield
        finally:
            self._labels.pop()

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
        return DifferenceStreamWriter(scope)

    def new_reader(self, writer: DifferenceStreamWriter) -> DifferenceStreamReader:
        """A new edge from ``writer``, for an operator about to be built to read."""
        reader = DifferenceStreamReader(writer.scope)
        self._edges.append((writer, reader))
        return reader

    def connect_reader(self, writer: DifferenceStreamWriter) -> ConnectedReader:
        """A new edge from ``writer`` to a reader for the user (``stream.connect_reader``, ``stream.output``)."""
        reader = ConnectedReader(writer.scope, self.status)
        self._edges.append((writer, reader))
        return reader

    def add_operator(
        self, make: Callable[[list[DifferenceStreamReader], DifferenceStreamWriter], Operator],
        readers: list[DifferenceStreamReader], scope: Scope, name: str, output: DifferenceStreamWriter | None = None,
    ) -> DifferenceStreamWriter:
        """Record a new operator called ``name`` that takes from ``readers``, in ``scope``; its output."""
        self.check_building("adding an operator")
        if output is None:
            output = self.new_writer(scope)
        operator = make(readers, output)
        operator.name = f"{name} ({self._labels[-1]})" if self._labels else name
        output.owner = operator
        self._operators.append(operator)
        return output

    def add_output(self, output: Output) -> None:
        self._outputs.append(output)

    @property
    def outputs(self) -> tuple[Output, ...]:
        return tuple(self._outputs)
