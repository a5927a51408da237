"""Driving a graph: the ends of it a user holds, to feed it and to read it.

Document 002's API is the one to learn from: a writer sends difference
collections and frontiers into an input (``InputWriter``, 002's
``DifferenceStreamWriter``), and a reader connected to a stream drains its
messages, data and then how its frontier moved (``ConnectedReader``, 002's
``DifferenceStreamReader``, and ``FrontierMessage``). A program that just
wants answers needs less ceremony, so final adds what Rust DD and d2ts give
their users:

- ``InputSession`` (Rust DD's ``InputSession``): ``insert``, ``remove`` and
  ``update`` records at the session's current version, ``advance_to`` a later
  version (which finishes the earlier ones), ``flush`` to send. Changes are
  buffered and consolidated, so a thousand changes at one version travel as
  one collection, not a thousand. Versions may be plain ints, or tuples of
  ints for partially ordered versions.
- ``Output`` (a probe and a sink in one): the output's consolidated change at
  each finished version (``changes``), the accumulated collection at any
  finished version (``at``), the collection as of everything finished
  (``snapshot``), and a callback per finished version. A version the output's
  frontier has not passed may still change, so reading it is refused with a
  ``VersionError`` that names the input holding it open.

``GraphBuilder.new_input()`` and ``new_session()``, and ``stream.connect_reader()``
and ``stream.output()`` make them; ``graph.run()`` flushes every session and
steps until the graph is quiet. They are made while the graph is recorded,
and feed or read it once it is compiled: each is a handle, which compiling
the graph binds, once, to its end there (``InputEnd``, ``ReaderEnd``, ends of
``final.edges``); until then it reaches an ``Unbuilt`` end, which refuses
data and frontier reads.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from .collection import Collection, Record, hashable
from .edges import DataMessage, DifferenceStreamReader, DifferenceStreamWriter
from .errors import FrontierError, FunctionError, GraphError, RecordError, VersionError
from .operators.base import plain
from .order import Antichain, Version, as_version, checked_frontier, checked_version
from .topology import Source, Target
from .trace import add_multiplicity

if TYPE_CHECKING:
    from .errors import Status
    from .progress import ProgressTracker
    from .topology import Scope


class Unbuilt:
    """What a handle reaches before its graph is compiled: no tracker, no location, and nothing wired to it.

    So nothing can be sent through it and no frontier read from it (both
    refused, saying to call ``finalize()``), nothing ever arrives in its
    ``queue``, and an input's frontier may move (the compiled graph counts
    it as it is then).
    """

    __slots__ = ("queue", "what")

    def __init__(self, what: str) -> None:
        self.what = what
        """What the handle is, as messages name it: ``input 'prices'``, ``a stream``."""
        self.queue: deque[DataMessage] = deque()

    def check_built(self, doing: str) -> None:
        """Refuse ``doing`` (``send data to``, ...): the graph is not built."""
        raise self._refusal(doing)

    def send_trusted(self, version: Version, collection: Collection) -> None:
        raise self._refusal("send data to")

    @property
    def frontier(self) -> Antichain:
        raise self._refusal("read the frontier of")

    def _refusal(self, doing: str) -> GraphError:
        return GraphError(
            f"cannot {doing} {self.what} before finalize(): the graph is not built yet, so nothing reads it and "
            f"nothing has run. Build the whole graph, call builder.finalize(), then use it"
        )

    def frontier_since(self, seen: Antichain) -> Antichain:
        """Nothing has run, so the frontier is where the reader last saw it."""
        return seen

    def move(self, before: tuple[Version, ...], after: tuple[Version, ...]) -> None:
        """Nothing counts an input's frontier yet: the compiled graph starts from where it is then."""


class InputEnd(DifferenceStreamWriter):
    """An input's writer in the compiled graph, whose pointstamps are the input's frontier.

    Invariant: the tracker counts one pointstamp at ``location`` per element
    of the input's frontier, from when it is built (it is given the
    frontier then) on.
    """

    def __init__(self, scope: Scope, label: str, progress: ProgressTracker, location: int,
                 readers: list[DifferenceStreamReader], frontier: Antichain) -> None:
        super().__init__(scope, label, progress, location, readers)
        for version in frontier.elements:
            progress.update(location, version, 1)

    def check_built(self, doing: str) -> None:
        """Nothing to refuse: the graph is built."""

    def move(self, before: tuple[Version, ...], after: tuple[Version, ...]) -> None:
        """The input's frontier moved from ``before`` to ``after``: its pointstamps move with it."""
        self.progress.move(self.location, before, after)


class ReaderEnd(DifferenceStreamReader):
    """The end a reader the user holds reads in the compiled graph: counted by no one, as nothing
    downstream of it waits."""

    __slots__ = ()

    def __init__(self, scope: Scope, progress: ProgressTracker, location: int) -> None:
        super().__init__(scope, progress, location, counted=False)

    def frontier_since(self, seen: Antichain) -> Antichain:
        """The frontier now (``seen`` is where the reader last saw it: the tracker knows better)."""
        return self.progress.frontier(self.location)


class InputWriter:
    """An input of the graph, as its user feeds it: ``send_data`` and ``send_frontier`` (002's writer).

    An input's frontier is its promise: no data at versions it has passed.
    ``GraphBuilder.new_input`` makes one, recorded as ``source``; compiling
    the graph binds it to its ``end`` there. Its frontier may move before
    that, but data is sent only after (nothing reads the input until then).

    Invariant: ``frontier`` only moves forward, and no data is sent at a
    version it has passed; ``end`` is ``Unbuilt`` until the graph is
    compiled, then the input's writer there, which the tracker counts the
    frontier at.
    """

    def __init__(self, scope: Scope, status: Status, name: str) -> None:
        self.scope = scope
        self.dimension = scope.dimension
        """How many coordinates the versions of this input have."""
        self.status = status
        self.name = name
        """What ``graph.frontiers()``, diagrams and messages call the input."""
        self.source = Source(scope)
        """Where the recorded graph's edges from this input start."""
        self.end: InputEnd | Unbuilt = Unbuilt(f"input {name!r}")
        self._frontier = scope.initial_frontier

    @property
    def frontier(self) -> Antichain:
        """The versions this input may still send data at: the user's promise."""
        return self._frontier

    @property
    def label(self) -> str:
        return f"input {self.name}"

    def bind(self, end: InputEnd) -> None:
        """Send through ``end``, this input's writer in the compiled graph, from now on (``final.compile``,
        once)."""
        self.end = end

    def send_data(self, version: Version, collection: Collection) -> None:
        """Send a difference collection at ``version`` (002's API).

        Raises:
            VersionError: ``version`` is not a Version, or the frontier has
                passed it; nothing is sent.
            RecordError: ``collection`` is not a Collection; nothing is sent.
            GraphError: the graph is not finalized yet.
            BrokenGraphError: the graph failed earlier.
        """
        self.status.check("send data to", self.name)
        self.end.check_built("send data to")
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
        self.end.send_trusted(version, collection)

    def send_frontier(self, frontier: Antichain | Version) -> None:
        """Promise that no more data will be sent at versions ``frontier`` has passed.

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

    def send_frontier_trusted(self, frontier: Antichain) -> None:
        """Move the frontier to ``frontier``, which is at or after it, without checks (the internal protocol:
        for input sessions, which check versions themselves)."""
        before, self._frontier = self._frontier, frontier
        self.end.move(before.elements, frontier.elements)


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


class ConnectedReader:
    """A reader of a stream, for its user: ``drain`` and ``probe_frontier_less_than`` (002's reader).

    ``stream.connect_reader()`` makes one, recorded as ``target``; an
    ``Output`` reads through one. Compiling the graph binds it to its
    ``end`` there, which is counted by no one: nothing downstream of it
    waits, so what is queued there holds back no frontier.

    Invariant: ``_seen`` is the frontier the last ``drain`` ended with (the
    scope's initial frontier before the first); ``end`` is ``Unbuilt`` until
    the graph is compiled.
    """

    def __init__(self, scope: Scope, status: Status) -> None:
        self.scope = scope
        self.status = status
        self.target = Target(scope)
        """Where the recorded graph's edge to this reader ends."""
        self.end: ReaderEnd | Unbuilt = Unbuilt("a stream")
        self._seen = scope.initial_frontier

    def bind(self, end: ReaderEnd) -> None:
        """Read from ``end``, this reader's end in the compiled graph, from now on (``final.compile``, once)."""
        self.end = end

    @property
    def queue(self) -> deque[DataMessage]:
        """The messages not drained yet, oldest first."""
        return self.end.queue

    @property
    def frontier(self) -> Antichain:
        """The versions data may still arrive at: every version it does not allow is finished here.

        Raises:
            GraphError: the graph is not finalized yet, so nothing has run.
        """
        return self.end.frontier

    def probe_frontier_less_than(self, frontier: Antichain | Version) -> bool:
        """Whether this stream's frontier is still before ``frontier`` (a Version stands for its antichain).

        While it is, data may still arrive at some version that ``frontier``
        has passed: step the graph until this is False. Then every such
        version is finished and all its data has been sent (it may still be
        queued, unread).
        """
        return self.frontier.less_than(checked_frontier(frontier, "the probed frontier", self.scope.dimension))

    def drain(self) -> Iterator[DataMessage | FrontierMessage]:
        """Pop and yield the queued data messages, oldest first, then a ``FrontierMessage`` if the frontier
        moved since the last drain (002's API; operators take from ``queue`` instead).

        Each message leaves the queue only when its turn comes. Before the
        graph is finalized nothing has run, so nothing comes; once it has
        failed the frontier stays where it was: the version being worked on
        never finishes.
        """
        queue = self.end.queue
        while queue:
            yield queue.popleft()
        if self.status.failure is None:
            frontier = self.end.frontier_since(self._seen)
            if frontier is not self._seen:
                before, self._seen = self._seen, frontier
                if before.elements != frontier.elements:
                    yield FrontierMessage(before, frontier)

    def is_empty(self) -> bool:
        """Whether ``drain`` would yield nothing: no data queued, and the frontier where the last drain left it."""
        return not self.end.queue and self.end.frontier_since(self._seen).elements == self._seen.elements


class InputSession:
    """Changes to one input, buffered per version and sent as one collection each.

    ``version`` is where ``insert``, ``remove`` and ``update`` put changes;
    ``update_at`` may put them at any later version. ``advance_to`` sends what
    is buffered and moves the input's frontier, promising no more changes
    before the new version; ``close`` promises none at all.

    Invariant: ``_buffer`` maps versions the input's frontier allows to the
    consolidated changes not sent yet (no zero multiplicities); the current
    version's dict is ``_current``; ``version`` is the frontier's only
    element, or None once closed.
    """

    def __init__(self, writer: InputWriter) -> None:
        self._writer = writer
        elements = writer.frontier.elements
        self.version: Version | None = elements[0] if len(elements) == 1 else None
        self._buffer: dict[Version, dict[Record, int]] = {}
        self._current: dict[Record, int] | None = None
        writer.status.watch(self._forget_current)

    def _forget_current(self) -> None:
        """The graph failed: the next change looks at the status, and is refused."""
        self._current = None

    @property
    def name(self) -> str:
        return self._writer.name

    @property
    def frontier(self) -> Antichain:
        """The input's frontier: changes may still come at the versions it allows."""
        return self._writer.frontier

    def __repr__(self) -> str:
        return f"InputSession({self.name!r}, version={self.version!r}, buffered={sum(map(len, self._buffer.values()))})"

    def insert(self, record: Record, n: int = 1) -> None:
        """Add ``n`` copies of ``record`` at the current version."""
        self.update(record, n)

    def remove(self, record: Record, n: int = 1) -> None:
        """Take ``n`` copies of ``record`` away at the current version."""
        self.update(record, -n)

    def update(self, record: Record, diff: int) -> None:
        """Change ``record``'s multiplicity by ``diff`` at the current version.

        Raises:
            RecordError: ``diff`` is not an int, or ``record`` is not hashable.
            FrontierError: the session is closed.
            BrokenGraphError: the graph failed earlier.
        """
        current = self._current
        if current is None:
            current = self._at(self.version)
        _add(current, record, diff, self)

    def update_at(self, record: Record, version: Version | int | tuple[int, ...], diff: int) -> None:
        """Change ``record``'s multiplicity by ``diff`` at ``version``, which the frontier must allow.

        Raises:
            VersionError: ``version`` is malformed, or the input's frontier has passed it.
            RecordError: ``diff`` is not an int, or ``record`` is not hashable.
        """
        version = as_version(version, self._writer.dimension, "the version of a change")
        if not self.frontier.less_equal_version(version):
            raise VersionError(
                f"a change to input {self.name!r} at {version}, but its frontier is already {self.frontier}: "
                f"that version is finished. Change it at a version the frontier allows"
            )
        _add(self._at(version), record, diff, self)

    def flush(self) -> None:
        """Send every buffered change, one collection per version; the frontier stays where it is.

        Raises:
            GraphError: there are changes to send, and the graph is not finalized yet.
            BrokenGraphError: the graph failed earlier.
        """
        writer = self._writer
        writer.status.check("flush", writer.name)
        if not self._buffer:
            return
        end = writer.end
        if any(self._buffer.values()):
            end.check_built("send changes to")
        buffer, self._buffer, self._current = self._buffer, {}, None
        versions = buffer.items() if len(buffer) == 1 else sorted(buffer.items(), key=lambda item: tuple(item[0]))
        for version, changes in versions:
            if not changes:
                continue
            collection = Collection.trusted(list(changes.items()))
            # Versions were checked when buffered; the frontier is checked again, as the input's writer
            # (graph.inputs) may have moved it since. send_data says why a version is refused.
            if writer.frontier.less_equal_version(version):
                end.send_trusted(version, collection)
            else:
                writer.send_data(version, collection)

    def advance_to(self, version: Version | int | tuple[int, ...]) -> None:
        """Send the buffered changes and move to ``version``: every version before it is finished.

        Raises:
            VersionError: ``version`` is malformed.
            FrontierError: ``version`` is behind the current version.
            GraphError: changes are buffered, and the graph is not finalized yet.
            BrokenGraphError: the graph failed earlier.
        """
        self._writer.status.check("advance", self._writer.name)
        version = as_version(version, self._writer.dimension, "the version to advance to")
        frontier = self.frontier
        if not frontier.less_equal_version(version):
            raise FrontierError(
                f"input {self.name!r} cannot go back from {frontier} to {version}; advance to a later version"
            )
        self.flush()
        if frontier.elements != (version,):
            self._writer.send_frontier_trusted(Antichain.trusted((version,)))  # send_frontier's checks, made above
        self.version = version

    def close(self) -> None:
        """Send the buffered changes and promise no more, ever: every version of this input is finished.

        Raises:
            GraphError: changes are buffered, and the graph is not finalized yet.
            BrokenGraphError: the graph failed earlier.
        """
        self.flush()
        self._writer.send_frontier(Antichain.trusted(()))
        self.version = None

    def _at(self, version: Version | None) -> dict[Record, int]:
        if version is None:
            raise FrontierError(
                f"input {self.name!r} has no current version: it is closed, or its frontier {self.frontier} has "
                f"several elements; use update_at(record, version, diff)"
            )
        self._writer.status.check("change", self._writer.name)
        changes = self._buffer.get(version)
        if changes is None:
            changes = self._buffer[version] = {}
        if version == self.version:
            self._current = changes
        return changes


def _add(changes: dict[Record, int], record: Record, diff: int, session: InputSession) -> None:
    """Add ``diff`` to ``record``'s change buffered in ``session``, dropping it at zero.

    Raises:
        RecordError: ``diff`` is not an int, or ``record`` is not hashable; nothing changes.
    """
    if type(diff) is not int:
        raise RecordError(f"the change to {record!r} must be an int multiplicity, not {diff!r}; e.g. insert(r, 2)")
    try:
        total = changes.get(record, 0) + diff
    except TypeError:
        hashable(record, f"input {session.name!r}")
        raise
    if total:
        changes[record] = total
    else:
        changes.pop(record, None)


class Output:
    """One stream's result, consolidated, read version by version as its frontier passes them.

    With ``history=False`` it keeps only the snapshot: each finished
    version's change is folded into it at once (and handed to the callbacks),
    so its memory follows the live result, not the number of versions;
    ``changes`` and ``at`` are then refused.

    Reading runs no code of the user's: ``frontier``, ``finished``,
    ``versions``, ``changes``, ``at`` and ``snapshot`` take in what has
    arrived and answer (``_take``), and never raise what a callback raises.
    The callbacks run when the graph delivers the finished versions
    (``deliver``, at the end of every ``Graph.step``, and so of ``run``).

    Invariant: ``_changes`` maps every finished version at which the output
    changed (with ``history=False``: whose callbacks have not run yet) to its
    consolidated change (``{record: multiplicity}``, no zeros); ``_snapshot``
    is the sum of every such change but those in ``_unfolded`` (added when
    ``snapshot()`` asks, so a program that never asks does not pay for it
    per record); ``_open`` maps each version not finished yet at which
    something arrived to what arrived, consolidated; ``_unannounced`` holds
    the finished versions whose callbacks have not run yet, in order.
    """

    def __init__(
        self, reader: ConnectedReader, name: str,
        on_version: Callable[[Version, dict[Record, int]], None] | None = None, history: bool = True,
    ) -> None:
        self.reader = reader
        """Its end of the stream it reads (the graph names its location after the output)."""
        self.name = name
        self.history = history
        """Whether it keeps every finished version's change, to answer ``changes`` and ``at`` for any."""
        self._frontier = reader.scope.initial_frontier
        self._dimension = reader.scope.dimension
        self._open: dict[Version, dict[Record, int]] = {}
        self._changes: dict[Version, dict[Record, int]] = {}
        self._snapshot: dict[Record, int] = {}
        self._unfolded: list[Version] = []
        self._callbacks: list[Callable[[Version, dict[Record, int]], None]] = []
        self._unannounced: list[Version] = []
        if on_version is not None:
            self.on_version(on_version)

    def __repr__(self) -> str:
        return f"Output({self.name!r}, frontier={self._frontier}, versions={len(self._changes)})"

    @property
    def frontier(self) -> Antichain:
        """The versions this output may still change at: every version it does not allow is finished.

        A read: it takes in what has arrived, and runs no callback.
        """
        self._take()
        return self._frontier

    def on_version(self, callback: Callable[[Version, dict[Record, int]], None]) -> None:
        """Call ``callback(version, changes)`` for every version at which the output changes, once finished.

        Versions come in order (each after every version less than it),
        from the next one to finish on: register it before running the graph
        to see them all. The graph calls it as it delivers them
        (``deliver``), in ``step`` and ``run``, which raise what it raises.

        Raises:
            GraphError: ``callback`` is not a function.
        """
        if not callable(callback):
            raise GraphError(f"on_version takes a function of (version, changes), not {callback!r}")
        self._callbacks.append(callback)

    def finished(self, version: Version | int | tuple[int, ...]) -> bool:
        """Whether ``version`` is finished: the output's frontier has passed it, so it will not change."""
        return not self.frontier.less_equal_version(as_version(version, self._dimension, "the version read"))

    def versions(self) -> list[Version]:
        """The finished versions at which the output changed, in order."""
        self._check_history()
        self._take()
        return sorted(self._changes, key=tuple)

    def changes(self, version: Version | int | tuple[int, ...]) -> dict[Record, int]:
        """The output's consolidated change at ``version``: ``{record: multiplicity}``, no zeros.

        Raises:
            VersionError: ``version`` is not finished yet (the message says which input holds it open).
        """
        version = self._finished(version)
        return dict(self._changes.get(version, {}))

    def at(self, version: Version | int | tuple[int, ...]) -> dict[Record, int]:
        """The output collection at ``version``: the sum of its changes at every version ``<=`` it.

        Raises:
            VersionError: ``version`` is not finished yet (the message says which input holds it open).
        """
        version = self._finished(version)
        total: dict[Record, int] = {}
        for other, changes in self._changes.items():
            if other.less_equal(version):
                for record, multiplicity in changes.items():
                    add_multiplicity(total, record, multiplicity)
        return total

    def snapshot(self) -> dict[Record, int]:
        """The sum of the changes at every finished version: with one coordinate, the collection as of the
        last finished version."""
        self._take()
        self._fold()
        return dict(self._snapshot)

    def _fold(self) -> None:
        """Add the changes not in the snapshot yet to it."""
        snapshot = self._snapshot
        for version in self._unfolded:
            for record, multiplicity in self._changes[version].items():
                add_multiplicity(snapshot, record, multiplicity)
        self._unfolded = []

    def _check_history(self) -> None:
        if not self.history:
            raise GraphError(
                f"output {self.name!r} keeps no history (it was made with history=False): read snapshot(), "
                f"or take each version's changes in an on_version callback"
            )

    def _finished(self, version: Any) -> Version:
        self._check_history()
        version = as_version(version, self._dimension, "the version read")
        self._take()
        if self._frontier.less_equal_version(version):
            raise VersionError(
                f"output {self.name!r} has not finished version {version} (its frontier is {self._frontier}), "
                f"so it may still change: {self._holding(version)}"
            )
        return version

    def _holding(self, version: Version) -> str:
        """What to do so that ``version`` finishes here: advance the inputs upstream of this output that hold
        it open, or run the graph, or (failed) nothing."""
        failure = self.reader.status.failure
        if failure is not None:
            return f"the graph failed earlier ({failure}), so it never will; build the graph again"
        end = self.reader.end
        progress = end.progress
        inputs = [
            f"input {progress.input_name(location)!r} (frontier {held})"
            for location, held in progress.holding(end.location, version)
            if progress.input_name(location) is not None
        ]
        if inputs:
            return f"{', '.join(inputs)} still allows it: advance it past {version}, then graph.run()"
        return "run the graph (graph.run()) until it is"

    def deliver(self) -> None:
        """Take in what has arrived, finish the versions the frontier has passed, and run the callbacks for
        each finished version not announced yet, in order: the graph calls it at the end of every step.

        Every callback runs for every such version, even after one has raised, so no version waits for a
        later step to be announced.

        Raises:
            FunctionError: a callback raised (the first that did, the others in its notes); the output is as
                it was, and the graph is not broken.
        """
        self._take()
        if not self._unannounced:
            return
        failures = []
        while self._unannounced:
            version = self._unannounced[0]
            for callback in self._callbacks:
                try:
                    callback(version, dict(self._changes[version]))
                except Exception as error:
                    failures.append((version, error))
            self._announced()
        if failures:
            (version, error), later = failures[0], failures[1:]
            failure = FunctionError(
                f"output {self.name!r}'s callback raised {type(error).__name__}: {error} at version {version}; "
                f"the output is as it was, and every other callback ran"
            )
            for at, other in later:
                failure.add_note(f"output {self.name!r}'s callback also raised {type(other).__name__}: {other} "
                                 f"at version {at}")
            raise failure from error

    def _take(self) -> None:
        """Take in the queued changes, by version, and finish the versions the frontier has passed; no callback
        runs here. Once the graph has failed the frontier stays where it was: the version being worked on never
        finishes."""
        end, open_versions = self.reader.end, self._open
        queue = end.queue
        while queue:
            message = queue.popleft()
            changes = open_versions.get(message.version)
            if changes is None:
                changes = open_versions[message.version] = {}
            get = changes.get
            for record, multiplicity in message.collection.updates:
                total = get(record, 0) + multiplicity  # add_multiplicity, inlined: once per record
                if total:
                    changes[record] = total
                else:
                    changes.pop(record, None)
        if self.reader.status.failure is None:
            frontier = end.frontier
            if frontier is not self._frontier:
                self._frontier = frontier
                finished = sorted((version for version in open_versions if not frontier.less_equal_version(version)),
                                  key=tuple)
                for version in finished:
                    changes = open_versions.pop(version)
                    if changes:
                        self._changes[version] = changes
                        self._unfolded.append(version)
                        if self._callbacks:
                            self._unannounced.append(version)
                if not self.history:
                    self._fold()
                    announcing = set(self._unannounced)
                    self._changes = {version: self._changes[version] for version in self._changes
                                     if version in announcing}

    def _announced(self) -> None:
        """The first unannounced version has been handed to the callbacks: without history, it is dropped."""
        version = self._unannounced.pop(0)
        if not self.history:
            del self._changes[version]


def deliver(outputs: Iterable[Output]) -> None:
    """Deliver every output's finished versions (``Output.deliver``), each output's even after another's
    callback has raised: what ``Graph.step`` does last.

    Raises:
        FunctionError: a callback raised: the first output's failure, the others' in its notes.
    """
    failure = None
    for output in outputs:
        try:
            output.deliver()
        except FunctionError as error:
            if failure is None:
                failure = error
            else:
                failure.add_note(str(error))
    if failure is not None:
        raise failure
