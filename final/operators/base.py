"""The operator base class, and the internal protocol every operator family keeps.

An operator takes difference collections from its inputs and sends
difference collections from its one output, keeping whatever state it needs
between calls. ``Operator.run`` owns taking messages, applying logic fused
in front, checking records, failures, and learning from the progress
tracker when versions finish; a leaf operator says only what data becomes
(``on_data``), and what to do when versions finish (``on_frontier``).
Source: document 002, "v2" to "v5/vFinal"; Rust DD's operators are timely
dataflow operators.

The internal protocol: what an operator family (a module of
``final.operators``) uses of the rest of the engine. Everything a family
touches is listed here; it reads no other attribute of the engine.

- Recording, in a family's stream methods (``final.stream``):
  ``stream.add_operator(operator, name, others=(), scope=None, output=None,
  arguments=(), general=None)`` records an operator reading this stream and
  ``others``, which the compiled graph makes as ``operator(place, *arguments)``
  (``Place``), and returns its output stream; an in-place reduction gives
  its ``general`` rendering too, a function of the stream it reads
  (``final.strategies``); ``stream.enter(scope)``; ``stream.scope`` (and
  its ``depth``), ``stream.builder``, ``stream.writer`` (and its
  ``dimension``), ``stream.arrangement`` and
  ``stream.with_arrangement(arrangement)``; ``checked_function``,
  ``checked_stream``.
- Loops (``iterate``): ``builder.new_scope(scope)`` for a loop's scope, one
  coordinate deeper; ``builder.new_writer(scope)`` for its feedback edge,
  made before the body that reads it and written by the operator
  ``add_operator(..., output=writer)`` records after the body;
  ``stream.stream_of(writer, scope)``; ``scope.closed = True`` once the loop
  is built.
- Running: an operator is made once, in its ``Place`` of the compiled
  graph: its readers and writer, its number and label, the tracker.
- Sending: ``Operator.send(version, updates)`` and ``forward(version,
  collection)``; under them ``writer.send_trusted(version, collection)``.
  Operators send only at versions ``>=`` what caused them: the message being
  handled, or a version held in ``pending``.
- Holding versions back: ``Pending`` (``self.pending``), which takes a
  capability for every version it keeps and drops those ``pop_finished``
  took; ``Operator.run`` tells the tracker once the operator has sent them.
- Reading: ``reader.queue`` (``Operator.run`` takes from it), ``collection.updates``,
  ``Collection.trusted(updates)``, ``Version.trusted``, ``Antichain.trusted``,
  ``Index.trusted`` and ``Index.add_trusted``, for what the engine built
  itself and so needs no checks ("trusted" always means that);
  ``self.input_frontier``, ``self.output.dimension``, and
  ``self.progress.frontier(reader.location)`` for another frontier than the
  one ``on_frontier`` is given.
- Failing: raise; ``Operator.run`` reports it (``_fail``), and the graph is broken.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from heapq import heappop, heappush
from typing import TYPE_CHECKING, Any

from ..collection import Collection, Entry, checked_pairs
from ..errors import DataflowError, FunctionError, GraphError
from ..logic import apply_logic
from ..order import Antichain, Version
from ..progress import ChangeBatch

if TYPE_CHECKING:
    from ..edges import DifferenceStreamReader, DifferenceStreamWriter
    from ..progress import ProgressTracker
    from ..topology import General, Source


@dataclass(frozen=True)
class Place:
    """Where an operator runs in a compiled graph: all an operator is made with, besides its own arguments.

    ``final.compile`` makes one per operator, once the tracker is built:
    ``inputs`` are the readers of its input edges and ``output`` the writer
    of its output, each at its location; ``number`` is its position in the
    graph's topological order, and ``label`` names it with the linear
    operators fused into it; ``watched`` is the location whose frontier is
    its input frontier (its input's, or one every input leads to);
    ``in_cycle`` says whether its output leads back to its inputs.
    """

    inputs: tuple[DifferenceStreamReader, ...]
    output: DifferenceStreamWriter
    name: str
    number: int
    label: str
    progress: ProgressTracker
    watched: int
    in_cycle: bool


class StreamMethods:
    """The base of every family's stream methods: what ``final.stream.DifferenceStreamBuilder`` gives them.

    A family (``LinearMethods``, ``JoinMethods``, ...) adds its operators to
    a graph through ``add_operator`` and reads the stream's ``builder``,
    ``writer``, ``scope`` and ``arrangement`` (the module docstring has the
    whole protocol).
    """

    builder: Any
    writer: Source
    scope: Any
    arrangement: Any = None
    """The shared ``Arrangement`` of the stream's contents, for a stream ``arrange()`` made; else None."""

    def add_operator(
        self, operator: type[Operator], name: str, others: Iterable[StreamMethods] = (), scope: Any = None,
        output: Source | None = None, arguments: tuple = (), general: General | None = None,
    ) -> Any:
        """Record an operator ``operator(place, *arguments)`` reading this stream and ``others``; its output stream."""
        raise NotImplementedError


def checked_stream(stream: Any, operator: str) -> Any:
    """``stream`` if it is a stream, else a GraphError saying ``operator`` takes one."""
    if not isinstance(stream, StreamMethods):
        raise GraphError(f"{operator} takes a stream, not {type(stream).__name__}: {stream!r}")
    return stream


def checked_function(f: Any, operator: str) -> None:
    """Raise a GraphError unless ``f`` can be called."""
    if not callable(f):
        raise GraphError(f"{operator} takes a function, not {f!r}; e.g. {operator.split()[0]}(lambda record: ...)")


class Operator:
    """A vertex with input readers and one output writer.

    ``summary`` is what the operator does to versions from any input to its
    output, for the progress tracker: ``identity`` (an operator sends at the
    versions, or later, of the data that caused it), or ``extend``,
    ``truncate`` and ``increment`` for a loop's operators.

    An operator is made once, when the graph is compiled, in its ``Place``:
    everything it reads of the graph is fixed from then on.

    Failures: anything raised while handling a message or finishing versions,
    from the engine or from a function the user gave, reaches the caller as
    a ``DataflowError`` naming the operator and the version (a user's
    exception chained in a ``FunctionError``), and the graph refuses to run
    again (``graph.Graph.step``): the operator may hold part of that work. A
    record of the wrong shape (``needs_pairs``) is one of these.

    Invariant: the operator sends only at versions covered by a pointstamp
    of its own (see the module docstring); ``input_frontier`` is the
    frontier of its inputs it last acted on.
    """

    needs_pairs = False
    """Whether every record arriving must be a ``(key, value)`` pair of hashables (joins, reductions)."""
    kind = ""
    """The operation that refuses a record which is not a pair, as messages name it: ``reduce`` for every
    reduction, as every stage says, or ``join``, ``half_join``, ``arrange``."""
    summary = "identity"
    """What the operator does to versions, from input to output (one of ``final.progress.SUMMARY_KINDS``)."""
    always_waits = False
    """Whether it acts on every move of its input frontier, not only while it keeps data back (``pending``):
    operators whose indexes compact as versions finish."""

    def __init__(self, place: Place) -> None:
        self.inputs = place.inputs
        self.output = place.output
        self.name = place.name
        """What the user called to make this operator (``count``, ``join``, ...)."""
        self.number = place.number
        """Its position in the compiled graph's topological order."""
        self.label = place.label
        """How messages and diagrams name this operator: its name and number, with the linear operators fused
        in front of it and after it, in the order data meets them (``map + count + map #0``)."""
        self.progress = place.progress
        """The graph's progress tracker."""
        self.watched = place.watched
        """The location whose frontier is its input frontier."""
        self.in_cycle = place.in_cycle
        """Whether a path leads from its output back to its inputs (it is inside a loop): then what it keeps
        back holds back its own input, and is counted before it reads its frontier."""
        self.pending: Pending | None = None
        """What it keeps back until versions finish, if anything (set by operators that do)."""
        # The graph is not running yet: every input is where its edges start.
        self.input_frontier = place.inputs[0].scope.initial_frontier

    def run(self, budget: int | None = None) -> int:
        """Handle queued messages, at most ``budget`` of them (all, if None), then act on the frontier; return
        how many messages it handled.

        Messages past the budget stay queued for the next run, in order, so an
        operator's work per step is bounded and no operator holds up the
        others for long (002's closing list: 'Operators are more careful to
        yield in a bounded amount of time'). A message counts at its input
        until it has been handled.
        """
        handled = 0
        update = self.progress.update
        for side, reader in enumerate(self.inputs):
            queue = reader.queue
            while queue and handled != budget:
                message = queue.popleft()
                handled += 1
                version = message.version
                if reader.logic is None:
                    taken = ((version, message.collection),)
                else:  # the linear operators fused in front of this input
                    taken = [(output_version, Collection.trusted(updates)) for output_version, updates
                             in apply_logic(reader.logic, version, message.collection.updates, self) if updates]
                for at, collection in taken:
                    if self.needs_pairs:
                        try:
                            checked_pairs(collection.updates, self.kind)
                        except DataflowError as error:
                            self._fail(error, f"at version {at}")
                    try:
                        self.on_data(side, at, collection)
                    except Exception as error:
                        self._fail(error, f"at version {at}")
                update(reader.location, version, -1)
        pending = self.pending
        if pending or self.always_waits:
            if self.in_cycle and pending is not None and pending.capabilities:
                # Around the loop, what it holds back holds back its own input: count it first.
                self.progress.apply(self.output.location, pending.capabilities)
            frontier = self.progress.frontier(self.watched)
            if frontier is not self.input_frontier:
                self.input_frontier = frontier
                try:
                    self.on_frontier(frontier)
                except Exception as error:
                    self._fail(error, f"finishing the versions before {plain(frontier)}")
        if pending is not None and pending.capabilities:
            # Told at the end of its turn, when no other operator is reading a frontier: a version that
            # arrives and finishes in one turn is never counted at all.
            self.progress.apply(self.output.location, pending.capabilities)
        return handled

    def _fail(self, error: Exception, where: str) -> None:
        """Raise ``error`` as a failure of this operator: a ``FunctionError`` if it came from a user's function.

        An engine error (a ``DataflowError``) that does not name an operator yet is raised again with
        this one and ``where`` in front of its message, as the same type.
        """
        if isinstance(error, DataflowError):
            if error.operator is not None:
                raise error
            failure = type(error)(f"{self.label}, {where}: {error}")
        else:
            failure = FunctionError(
                f"{self.label} failed {where}: your function raised {type(error).__name__}: {error}"
            )
        failure.operator = self.label
        raise failure from error

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        """Handle a difference collection arriving on input ``side`` at ``version``."""
        raise NotImplementedError

    def on_frontier(self, frontier: Antichain) -> None:
        """The input frontier has moved to ``frontier``: versions it does not allow are finished."""

    def state_size(self) -> int:
        """How many entries (records at versions, kept versions) this operator holds: a measure of its memory.

        What a state test watches: it must follow the live data and the
        versions still open, not every version ever seen.
        """
        return self.pending.size() if self.pending is not None else 0

    def send(self, version: Version, updates: list[Entry]) -> None:
        """Send ``updates`` at ``version`` unless there are none."""
        if updates:
            self.output.send_trusted(version, Collection.trusted(updates))

    def forward(self, version: Version, collection: Collection) -> None:
        """Send on a collection that arrived here: the very same one goes on (messages are shared, never
        copied or changed)."""
        self.output.send_trusted(version, collection)


def plain(frontier: Antichain) -> str:
    """A frontier as messages write it: ``{3}``, ``{(0, 1), (1, 0)}``, or ``{}`` when everything is finished."""
    return "{" + ", ".join(str(v[0]) if len(v) == 1 else str(tuple(v)) for v in frontier.elements) + "}"


class Pending(dict):
    """What an operator keeps back, by version (a dict of version -> what is kept), each version a
    capability at the operator's output.

    A version kept here is one the operator will still send at (or, for a
    loop's feedback, one iteration on: ``capability``), so it takes a
    capability there for as long as it is kept, and the tracker counts it: no
    frontier downstream passes it too early. ``pop_finished`` takes the
    versions the frontier has passed and drops their capabilities.
    ``capabilities`` collects both changes until ``Operator.run`` tells the
    tracker, after the operator has sent what the finished versions held.

    In a total order (one coordinate) the finished versions are the least
    ones, so they come off the top of a min-heap, each in ``O(log n)``: a long
    queue of future versions (a temporal filter's retractions, say) costs
    nothing per frontier until they come due. With partially ordered versions
    every pending version is checked against the frontier.

    Invariant: ``capabilities`` plus what the tracker counts at the output
    for this operator is one pointstamp (at ``capability(version)``) per
    pending version; in a total order ``_heap`` holds ``(coordinate,
    version)`` for each pending version.
    """

    __slots__ = ("_capability", "_heap", "_make", "capabilities")

    def __init__(self, holder: Operator, make: Callable[[], Any],
                 capability: Callable[[Version], Version] | None = None) -> None:
        """Pending versions of ``holder``'s inputs, for which it holds capabilities at its output; ``make()``
        is what is kept for a new one (a list, a set); ``capability(version)`` is the version it will send
        at, if not ``version`` itself."""
        super().__init__()
        self._heap: list[tuple[int, Version]] | None = [] if holder.output.dimension == 1 else None
        self._make = make
        self._capability = capability
        self.capabilities = ChangeBatch()
        """The capabilities taken and dropped since the tracker was last told."""

    def at(self, version: Version) -> Any:
        """What is kept for ``version``, made (and its capability taken) if there is nothing yet."""
        entry = self.get(version)
        if entry is None:
            entry = self[version] = self._make()
            if self._heap is not None:
                heappush(self._heap, (version[0], version))
            capability = self._capability
            self.capabilities.update(version if capability is None else capability(version), 1)
        return entry

    def size(self) -> int:
        """How many versions are pending, plus everything kept for them."""
        return sum(1 + len(entry) for entry in self.values())

    def pop_finished(self, frontier: Antichain) -> list[tuple[Version, Any]]:
        """Remove the versions ``frontier`` has passed, and drop their capabilities; return them, each after
        every version less than it, with what was kept for them."""
        if self._heap is None:
            done = sorted((v for v in self if not frontier.less_equal_version(v)), key=tuple)
        else:
            heap, done = self._heap, []
            bound = frontier.elements[0][0] if frontier.elements else None  # None: everything is finished
            while heap and (bound is None or heap[0][0] < bound):
                done.append(heappop(heap)[1])
        capability, update = self._capability, self.capabilities.update
        for version in done:
            update(version if capability is None else capability(version), -1)
        return [(version, self.pop(version)) for version in done]
