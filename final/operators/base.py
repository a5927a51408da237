"""The operator base classes and the messages on the edges between operators.

An operator reads messages from its input edges and writes to its one output
edge, keeping whatever state it needs between calls. A message is a
difference collection at a version, or a frontier: the sender's promise that
the versions it has passed are finished. ``Operator`` owns reading,
dispatching and frontiers (the output frontier follows from the meet of the
input frontiers); a leaf operator says only what data becomes, and what to do
when versions finish.
Source: document 002, "v2" to "v5/vFinal". Rust DD's
operators are timely dataflow operators; frontier messages stand in for
timely's progress tracking.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from heapq import heappop, heappush
from typing import TYPE_CHECKING, Any

from ..collection import Collection, Update, checked_pairs
from ..errors import DataflowError, FunctionError
from ..order import Antichain, Version

if TYPE_CHECKING:
    from ..graph import DifferenceStreamReader, DifferenceStreamWriter
    from .linear import LinearUnaryOperator


Logic = Callable[[Version, list[Update]], Iterable[tuple[Version, list[Update]]]]
"""A linear operator's work on one difference: the updates at a version become updates at versions.

Every linear operator is this, for some logic (000, "All of the linear
operators"): ``map``, ``filter``, ``flat_map`` and ``negate`` keep the version;
``explode`` multiplies multiplicities; ``join_function`` and temporal filters
move updates to the lattice join of their version and one the logic names.
A logic must not mutate the list it is given: other readers share it."""


class DataMessage:
    """A difference collection at a version. Never mutated once sent: readers share it."""

    __slots__ = ("collection", "version")

    def __init__(self, version: Version, collection: Collection) -> None:
        self.version = version
        self.collection = collection

    def __repr__(self) -> str:
        return f"DataMessage({self.version!r}, {self.collection!r})"


class FrontierMessage:
    """A frontier change: the sender's frontier lost the versions ``removed`` and gained ``added``.

    Frontiers travel as changes (002's closing list: a frontier moving from
    ``[(1, 10), (2, 8), ...]`` to ``[(1, 10), (2, 9), ...]`` is sent as 'replace
    (2, 8) with (2, 9)'). A reader applies each change, in order, to the
    frontier it last knew: ``frontier.apply(message)``.

    Inside one process the message also carries the two antichains, before
    and after: a reader that applied every earlier change holds the sender's
    frontier from before, so the change takes it to ``_after``, which it
    takes as it is (``Antichain.apply``) rather than working it out again;
    ``removed`` and ``added`` are worked out when they are first read.
    """

    __slots__ = ("_after", "_before", "_changes")

    def __init__(self, before: Antichain, after: Antichain) -> None:
        self._before = before
        self._after = after
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
            self._changes = self._before.changes_to(self._after)
        return self._changes

    def __repr__(self) -> str:
        return f"FrontierMessage({_plain(self._before)} -> {_plain(self._after)})"


def _plain(frontier: Antichain) -> str:
    """A frontier as a reader writes it: ``{3}``, ``{(0, 1), (1, 0)}``, or ``{}`` when everything is finished."""
    return "{" + ", ".join(str(v[0]) if len(v) == 1 else str(tuple(v)) for v in frontier.elements) + "}"


class Refusal(Exception):
    """An operator refused a difference before changing anything: ``error`` says why.

    Raised out of ``Operator.run`` so the graph can tell it from a failure:
    after a refusal it stays usable (``graph.Graph.step``).
    """

    def __init__(self, error: DataflowError) -> None:
        super().__init__(str(error))
        self.error = error


class Operator:
    """A vertex with input readers and one output writer.

    Failures. A difference an operator cannot take (``needs_pairs``: a record
    that is not a ``(key, value)`` pair of hashables) is refused before the
    operator changes anything, so the graph stays usable (``Refusal``). Any
    other exception while handling a message, from the engine or from a
    function the user gave, leaves the operator in an unknown state: it
    reaches the caller as a ``DataflowError`` naming the operator and the
    version (a user's exception chained in a ``FunctionError``), and the graph
    refuses to run again (``graph.Graph.step``).

    Invariant: the output frontier is ``output_frontier`` of the meet of the
    input frontiers, and data at a version is sent before the output frontier
    passes that version.
    """

    needs_pairs = False
    """Whether every record arriving must be a ``(key, value)`` pair of hashables (joins, reductions)."""

    def __init__(self, inputs: list[DifferenceStreamReader], output: DifferenceStreamWriter) -> None:
        self.inputs = inputs
        self.output = output
        self.name = type(self).__name__.lower()
        """What the user called to make this operator (``count``, ``join``, ...), set by the builder."""
        self.number = 0
        """Its position in the finished graph's topological order, set by ``finalize``."""
        self.fused_names: list[str] = []
        """The names of the linear operators fused into this one's output, in order."""
        self._queues: list[deque] = [reader._queue for reader in inputs]
        # The graph is not running yet: each input is at the frontier its edge starts at.
        self._input_frontiers = [reader.frontier for reader in inputs]
        self._frontier = self._meet_of_inputs()
        self._then: Logic | None = None
        """The logic of the linear operators fused into this one's output, applied to all it sends."""
        self.absorbed = 0
        """How many linear operators were fused into this one's output."""

    def run(self, budget: int | None = None) -> int:
        """Consume queued messages, at most ``budget`` of them (all, if None); return how many.

        Messages past the budget stay queued for the next run, in order, so an
        operator's work per step is bounded and no operator holds up the
        others for long (002's closing list: 'Operators are more careful to
        yield in a bounded amount of time'). A message leaves its queue just
        before it is handled, so if handling it raises, the ones behind it are
        still queued.
        """
        handled = 0
        for side, queue in enumerate(self._queues):
            while queue:
                message = queue.popleft()
                handled += 1
                if type(message) is DataMessage:
                    if self.needs_pairs:
                        self._check_pairs(message)
                    try:
                        self.on_data(side, message.version, message.collection)
                    except Exception as error:
                        self._fail(error, f"at version {message.version}")
                else:
                    # Frontier changes queued one after another make one: the operator moves once, to the last.
                    while queue and type(queue[0]) is FrontierMessage and handled != budget:
                        message = FrontierMessage(message._before, queue.popleft()._after)
                        handled += 1
                    try:
                        self._on_input_frontier(side, message)
                    except Exception as error:
                        self._fail(error, f"finishing the versions before {_plain(message._after)}")
                if handled == budget:
                    return handled
        return handled

    @property
    def kind(self) -> str:
        """The family of operator it is (``reduce`` for ``count`` and ``distinct`` too, ``join``, ...).

        The class's name in lower case; a subclass may name its family with a class attribute instead.
        """
        return type(self).__name__.lower()

    @property
    def label(self) -> str:
        """How messages and diagrams name this operator: its name and number, and what was fused into it."""
        fused = "".join(f" + {name}" for name in self.fused_names)
        return f"{self.name}{fused} #{self.number}"

    def applied(self, logic: Logic, version: Version, updates: list[Update]) -> list:
        """``logic`` on ``updates`` at ``version``, all of it, before anything is sent.

        Raises:
            FunctionError: a user's function in ``logic`` raised; the message
                names this operator and the first record it raises on.
        """
        try:
            return list(logic(version, updates))
        except DataflowError:
            raise
        except Exception as error:
            culprit = ""
            for update in updates:  # a linear logic works update by update: find the one it fails on
                try:
                    list(logic(version, [update]))
                except Exception:  # any exception marks the culprit
                    culprit = f" on the record {update[0]!r}"
                    break
            failure = FunctionError(
                f"{self.label} failed at version {version}{culprit}: your function raised "
                f"{type(error).__name__}: {error}"
            )
            failure.operator = self.label
            raise failure from error

    def _check_pairs(self, message: DataMessage) -> None:
        """Refuse ``message`` unless its records are ``(key, value)`` pairs of hashables; nothing changes."""
        try:
            checked_pairs(message.collection._updates, self.kind)
        except DataflowError as error:
            raise Refusal(type(error)(
                f"{self.label} refused the difference at {message.version}, which had no effect: {error}"
            )) from None

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

    def _meet_of_inputs(self) -> Antichain:
        frontier = self._input_frontiers[0]
        for input_frontier in self._input_frontiers[1:]:
            frontier = frontier.meet(input_frontier)
        return frontier

    def _on_input_frontier(self, side: int, change: FrontierMessage) -> None:
        frontiers = self._input_frontiers
        frontier = frontiers[side] = frontiers[side].apply(change)
        if len(frontiers) > 1:
            frontier = self._meet_of_inputs()
            if frontier.elements == self._frontier.elements:
                return
        previous, self._frontier = self._frontier, frontier
        self.on_frontier(frontier)
        output = self.output_frontier(frontier)
        if output is frontier and len(frontiers) == 1 and self.output.frontier.elements == previous.elements:
            # The output frontier was the input's and is again: the same change makes it, so pass it on.
            self.output._forward(change, frontier)
        else:
            self.output._advance(output)

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        """Handle a difference collection arriving on input ``side`` at ``version``."""
        raise NotImplementedError

    def on_frontier(self, frontier: Antichain) -> None:
        """The input frontiers have advanced to ``frontier``: versions before it are finished."""

    def output_frontier(self, frontier: Antichain) -> Antichain:
        """The output frontier when the inputs' is ``frontier``: the same, unless versions change shape."""
        return frontier

    def holds(self) -> Iterable[Version]:
        """Versions at which this operator keeps data it has not sent yet; it will send it there or later.

        Empty for operators that send as soon as data arrives. A loop's
        ``Feedback`` reads them to know when nothing inside the loop can change
        any more (``operators.iterate.Feedback``).
        """
        return ()

    def state_size(self) -> int:
        """How many entries (records at versions, kept versions) this operator holds: a measure of its memory.

        What a state test watches: it must follow the live data and the
        versions still open, not every version ever seen.
        """
        return 0

    def send(self, version: Version, updates: list[Update]) -> None:
        """Send ``updates`` at ``version`` (through the fused logic, if any) unless there are none.

        The fused logic runs on all of ``updates`` before anything is sent.
        """
        if self._then is None:
            if updates:
                self.output._send(version, Collection._trusted(updates))
            return
        for output_version, output in self.applied(self._then, version, updates):
            if output:
                self.output._send(output_version, Collection._trusted(output))

    def forward(self, version: Version, collection: Collection) -> None:
        """Send on a collection that arrived here, through the fused logic if any; without, the very same
        collection goes on (messages are shared, never copied or changed)."""
        if self._then is None:
            self.output._send(version, collection)
        else:
            self.send(version, collection._updates)

    def absorb(self, following: LinearUnaryOperator) -> None:
        """Take over ``following``, a linear operator that alone reads this one's output: same results.

        000, "Fusing logic": a linear operator's logic can be applied to what
        another operator sends, as Materialize fuses maps and filters into
        joins, so the stream between them is never built and one operator
        less handles every message and frontier. Versions only move forward
        through linear logic, so the output frontier is unchanged.
        """
        logic = following._logic
        if self._then is not None:
            logic = _followed_by(self._then, logic)
        self._then = logic
        self.output = following.output
        self.absorbed += 1 + following.absorbed
        self.fused_names += [following.name, *following.fused_names]


class Pending:
    """What an operator keeps back, by the version it waits for, and which versions the frontier has finished.

    In a total order (one coordinate) the finished versions are the least
    ones, so they come off the top of a min-heap, each in ``O(log n)``: a long
    queue of future versions (a temporal filter's retractions, say) costs
    nothing per frontier until they come due. With partially ordered versions
    every pending version is checked against the frontier.

    Invariant: ``_entries`` maps each pending version to what is kept for it;
    in a total order ``_heap`` holds ``(coordinate, version)`` for each of them.
    """

    __slots__ = ("_entries", "_heap", "_make")

    def __init__(self, like: Version, make: Callable[[], Any]) -> None:
        """Pending versions like ``like``; ``make()`` is what is kept for a new one (a list, a set)."""
        self._entries: dict[Version, Any] = {}
        self._heap: list[tuple[int, Version]] | None = [] if len(like) == 1 else None
        self._make = make

    def at(self, version: Version) -> Any:
        """What is kept for ``version``, made (and the version pending) if there is nothing yet."""
        entry = self._entries.get(version)
        if entry is None:
            entry = self._entries[version] = self._make()
            if self._heap is not None:
                heappush(self._heap, (version[0], version))
        return entry

    def versions(self) -> Iterable[Version]:
        return self._entries.keys()

    def size(self) -> int:
        """How many versions are pending, plus everything kept for them."""
        return sum(1 + len(entry) for entry in self._entries.values())

    def pop_finished(self, frontier: Antichain) -> list[tuple[Version, Any]]:
        """Remove the versions ``frontier`` has passed; return them, each after every version less than it,
        with what was kept for them."""
        if self._heap is None:
            done = sorted((v for v in self._entries if not frontier.less_equal_version(v)), key=tuple)
        else:
            heap, done = self._heap, []
            bound = frontier.elements[0][0] if frontier.elements else None  # None: everything is finished
            while heap and (bound is None or heap[0][0] < bound):
                done.append(heappop(heap)[1])
        return [(version, self._entries.pop(version)) for version in done]


class Holding:
    """For operators that keep data until versions finish (reductions, consolidation, feedback).

    Invariant: ``_pending`` holds every version at which the operator keeps
    data it has not sent, so those are its ``holds``.
    """

    _pending: Pending

    def holds(self) -> Iterable[Version]:
        return self._pending.versions()

    def state_size(self) -> int:
        return self._pending.size()


class UnaryOperator(Operator):
    """An operator with one input."""


class BinaryOperator(Operator):
    """An operator with two inputs, each difference handled as it arrives, labelled with its version.

    Its output frontier is the meet of the two input frontiers
    (``Operator._on_input_frontier``): a version is finished only when both
    inputs have finished it.
    """


def _followed_by(first: Logic, then: Logic) -> Logic:
    """The logic applying ``first``, then ``then`` to what it produced."""

    def logic(version: Version, updates: list[Update]) -> Iterable[tuple[Version, list[Update]]]:
        for middle_version, middle in first(version, updates):
            yield from then(middle_version, middle)

    return logic
