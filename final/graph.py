"""The runtime: the builder that records a graph and makes its scopes, and the scheduler that runs it.

The computation is built once, as a graph, and then fed: difference
collections are written to inputs, ``graph.step()`` runs every operator
once, and results come out at the far end. Source: document 002, "v2", "v3"
(every message carries a version), "v4" (``iterate`` nests a scope, whose
versions carry one more coordinate). What final changes: ``GraphBuilder``
only records (``final.topology``) and ``finalize`` compiles once
(``final.compile``: passes, the progress tracker, then every operator and
edge built whole), as timely's ``reachability::Builder`` makes its
``Tracker``; progress is tracked once per graph (``final.progress``), not by
frontier messages between operators as in v3..v5; ``step(budget)`` bounds
each operator's work, and a failure breaks the graph (``errors.Status``).
A stream (``final.stream``) is Rust DD's ``Collection`` of a timely scope.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from . import collector, viz
from .collection import Record
from .compile import Compiled, compile
from .errors import FrontierError, GraphError, Status
from .operators.base import Operator
from .order import Antichain, Version, checked_version
from .sessions import ConnectedReader, InputSession, InputWriter, Output, deliver
from .stream import DifferenceStreamBuilder
from .topology import Recorder, Scope, Source, Topology

MAX_STEPS = 1_000_000
"""Default bound on the steps of one ``graph.run()``: a loop of ``MAX_ITERATIONS`` iterations takes a few steps
per iteration, far fewer; a graph that is not quiet after this many steps is reported rather than run forever."""


class Graph:
    """A compiled dataflow graph. ``step()`` runs each operator once; ``run()`` steps until it is quiet.

    ``compiled`` is how it was compiled (``final.compile``: the recording,
    each pass's topology, the parts built), ``progress`` its tracker;
    ``operators``, ``inputs``, ``outputs``, ``edges()`` and ``scope_of()``
    show its shape, for diagrams (``final.viz``) and tests.

    Invariant: ``operators`` is in a topological order once feedback edges
    are left out, so one step carries data from the inputs all the way to
    the outputs; each operator's ``number`` is its position.
    """

    def __init__(self, compiled: Compiled, sessions: list[InputSession], status: Status) -> None:
        self.compiled = compiled
        self.progress = compiled.progress
        self._operators = compiled.operators
        self._outputs = compiled.topology.outputs
        self._sessions = sessions
        self._status = status
        self._loops = any(operator.output.scope.depth for operator in compiled.operators)

    @property
    def failure(self) -> str | None:
        """None while the graph is sound; after an error broke it, which error, in which operator."""
        return self._status.failure

    @property
    def operators(self) -> tuple[Operator, ...]:
        """The operators, in topological order (linear operators fused into others are not among them)."""
        return self._operators

    @property
    def inputs(self) -> tuple[InputWriter, ...]:
        """The writers of the graph's inputs, in the order they were made; each has a ``name`` and ``frontier``."""
        return self.compiled.topology.inputs

    @property
    def outputs(self) -> tuple[Output, ...]:
        """The ``Output`` handles made with ``stream.output()``."""
        return self._outputs

    def scope_of(self, operator: Operator) -> Scope:
        """The scope ``operator`` runs in: the top level (``depth`` 0) or a loop body, with its ``parent``."""
        return operator.output.scope

    def edges(self) -> list[tuple[Any, Any]]:
        """Every edge as ``(source, target)``, from each input and each operator in order: a source is an
        input's writer or an operator, a target an operator, an ``Output`` or a reader the user connected."""
        vertex = self.compiled.vertices()
        return [(vertex[writer], vertex[reader]) for writer, reader in self.compiled.edges]

    def step(self, budget: int | None = None) -> int:
        """Run every operator once, in topological order; return how much happened.

        That is the messages the operators handled, plus the times a version
        appeared at or left a location (``progress.changes``): 0 means quiet.
        With a ``budget``, each operator handles at most that many messages
        and leaves the rest queued. CPython's cyclic collector is paused
        while it works (``final.collector``).

        Raises:
            GraphError: ``budget`` is not None or an int of at least 1.
            RecordError: an operator got a record it cannot take, such as a
                non-pair at a join; the graph is broken.
            FunctionError: a function you gave an operator raised; the graph is broken. Or an output's
                ``on_version`` callback raised, once every callback has run; the graph is not broken.
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
            deliver(self._outputs)
        return handled + progress.changes - changes

    def run(self, max_steps: int = MAX_STEPS) -> int:
        """Send what the input sessions hold, then step until the graph is quiet; return the steps taken.

        Quiet means a step changed nothing: every message has been handled
        and every version that can finish has (one an input still allows
        stays open; ``Output.at`` says which input). CPython's cyclic
        collector is paused while it works (``final.collector``).

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
        """Progress: each input's, operator's (in topological order) and output's name and frontier; an
        operator's is its output's, the versions it may still send at, given what it and all before it hold."""
        return [
            *((writer.label, writer.frontier) for writer in self.inputs),
            *((operator.label, operator.output.frontier) for operator in self._operators),
            *((f"output {output.name}", output.frontier) for output in self._outputs),
        ]

    def state_sizes(self) -> list[tuple[str, int]]:
        """Each operator's label and ``state_size()``: what it keeps, for watching memory."""
        return [(operator.label, operator.state_size()) for operator in self._operators]

    def to_dot(self, pointstamps: bool = False) -> str:
        """The graph in graphviz's dot language, with ``pointstamps`` the tracker's counts (``final.viz``)."""
        return viz.to_dot(self, pointstamps)


class GraphBuilder(Recorder):
    """Records a dataflow graph as it is built: inputs first, then operators, then ``finalize`` to compile it.

    Every edge of the top level starts at ``initial_frontier`` (a Version,
    an Antichain, or a plain int or tuple of ints): no data before it, ever.

    Invariant: ``_inputs``, ``_outputs`` and ``_readers`` hold the handles
    made, in order; after ``finalize`` nothing more is recorded.
    """

    def __init__(self, initial_frontier: Antichain | Version | int | tuple[int, ...] = 0) -> None:
        super().__init__()
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
        self._outputs: list[Output] = []
        self._readers: list[ConnectedReader] = []
        self._sessions: list[InputSession] = []
        self._constants: list[InputSession] = []
        self._names: list[str] = []
        self._finalized = False

    def new_input(self, name: str | None = None) -> tuple[DifferenceStreamBuilder, InputWriter]:
        """A new input edge: a stream to build on and the writer that feeds it (002's API). ``name`` (by
        default ``input0``, ``input1``, ...) is what ``graph.frontiers()``, diagrams and messages call it.

        Raises:
            GraphError: the graph is already finalized, or the name is taken.
        """
        self.check_building("new_input")
        name = self.checked_name(name, f"input{len(self._inputs)}", "input")
        writer = InputWriter(self.root, self.status, name)
        self._inputs.append(writer)
        return DifferenceStreamBuilder(self, writer.source, self.root), writer

    def new_session(self, name: str | None = None) -> tuple[DifferenceStreamBuilder, InputSession]:
        """A new input driven by an ``InputSession`` (``insert``, ``remove``, ``advance_to``, ``flush``), which
        buffers changes and sends each version's as one collection; ``graph.run()`` sends what it holds first.

        Raises:
            GraphError: the graph is already finalized, or the name is taken.
        """
        stream, writer = self.new_input(name)
        session = InputSession(writer)
        self._sessions.append(session)
        return stream, session

    def constant(self, records: Iterable[Record], name: str | None = None) -> DifferenceStreamBuilder:
        """An input that holds ``records`` (each once) at the first version and never changes.

        Its session is closed when the graph is finalized, so it never holds
        back a frontier. SQL needs it where a result exists without any input
        row: a global aggregate's one row over an empty table.

        Raises:
            GraphError: the graph is already finalized, or the name is taken.
        """
        stream, session = self.new_session(name)
        for record in records:
            session.insert(record)
        self._constants.append(session)
        return stream

    def finalize(self) -> Graph:
        """Finish recording, and compile the graph once (``final.compile``): its passes choose each reduction's
        rendering and fuse linear operators (000, "Fusing logic"), then its tracker, operators and edges are built.

        Raises:
            GraphError: the graph is already finalized, or it has a cycle that
                does not advance versions (one not through a loop's feedback).
        """
        self.check_building("finalize")
        self._finalized = True
        recorded = Topology(tuple(self._inputs), tuple(self.nodes), tuple(self._outputs), tuple(self.edges),
                            tuple(self._readers))
        graph = Graph(compile(recorded), self._sessions, self.status)
        for session in self._constants:
            session.close()
        return graph

    def check_building(self, what: str) -> None:
        """Raise a GraphError if ``what`` comes after ``finalize()``."""
        if self._finalized:
            raise GraphError(
                f"{what} after finalize(): this graph is finished and running. "
                f"Build the whole graph first, or start a new GraphBuilder"
            )

    def check_open(self, scope: Scope, what: str) -> None:
        """Raise a GraphError if ``scope`` is inside a loop ``iterate`` has finished (``Scope.check_open``)."""
        scope.check_open(what)

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

    def new_connected_reader(self, source: Source) -> ConnectedReader:
        """A new edge from ``source`` to a reader for the user (``stream.connect_reader``, ``stream.output``)."""
        reader = ConnectedReader(source.scope, self.status)
        self.edges.append((source, reader.target))
        self._readers.append(reader)
        return reader

    def add_output(self, output: Output) -> None:
        self._outputs.append(output)

    @property
    def outputs(self) -> tuple[Output, ...]:
        return tuple(self._outputs)
