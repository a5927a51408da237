"""Driving a graph: input sessions that buffer changes, and outputs that keep the consolidated result.

Document 002's API is the one to learn from: a writer sends difference
collections and frontiers, and a reader drains messages. A program that just
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

``GraphBuilder.new_session()`` and ``stream.output()`` make them;
``graph.run()`` flushes every session and steps until the graph is quiet.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .collection import Collection, Record, hashable
from .errors import FrontierError, FunctionError, GraphError, RecordError, VersionError
from .operators.base import Pending
from .order import Antichain, Version, as_version
from .trace import add_multiplicity

if TYPE_CHECKING:
    from .graph import DifferenceStreamReader, DifferenceStreamWriter


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

    def __init__(self, writer: DifferenceStreamWriter) -> None:
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
            BrokenGraphError: the graph failed earlier.
        """
        writer = self._writer
        writer.status.check("flush", writer.name)
        if not self._buffer:
            return
        buffer, self._buffer, self._current = self._buffer, {}, None
        versions = buffer.items() if len(buffer) == 1 else sorted(buffer.items(), key=lambda item: tuple(item[0]))
        for version, changes in versions:
            if not changes:
                continue
            collection = Collection.trusted(list(changes.items()))
            # Versions were checked when buffered; the frontier is checked again, as the input's writer
            # (graph.inputs) may have moved it since. send_data says why a version is refused.
            if writer.frontier.less_equal_version(version):
                writer.send_trusted(version, collection)
            else:
                writer.send_data(version, collection)

    def advance_to(self, version: Version | int | tuple[int, ...]) -> None:
        """Send the buffered changes and move to ``version``: every version before it is finished.

        Raises:
            VersionError: ``version`` is malformed.
            FrontierError: ``version`` is behind the current version.
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
        """Send the buffered changes and promise no more, ever: every version of this input is finished."""
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

    Invariant: ``_changes`` maps every finished version at which the output
    changed (with ``history=False``: whose callbacks have not run yet) to its
    consolidated change (``{record: multiplicity}``, no zeros); ``_snapshot``
    is the sum of every such change but those in ``_unfolded`` (added when
    ``snapshot()`` asks, so a program that never asks does not pay for it
    per record); ``_open`` holds what arrived at
    versions not finished yet; ``_unannounced`` the finished versions whose
    callbacks have not run yet, in order.
    """

    def __init__(
        self, reader: DifferenceStreamReader, name: str,
        on_version: Callable[[Version, dict[Record, int]], None] | None = None, history: bool = True,
    ) -> None:
        self.reader = reader
        """Its end of the stream it reads (the graph names its location after the output)."""
        self.name = name
        self.history = history
        """Whether it keeps every finished version's change, to answer ``changes`` and ``at`` for any."""
        self._frontier = reader.writer.initial
        self._dimension = reader.writer.dimension
        self._open = Pending(None, dict, self._dimension)
        self._changes: dict[Version, dict[Record, int]] = {}
        self._snapshot: dict[Record, int] = {}
        self._unfolded: list[Version] = []
        self._callbacks: list[Callable[[Version, dict[Record, int]], None]] = []
        self._unannounced: list[Version] = []
        if on_version is not None:
            self.on_version(on_version)

    def __repr__(self) -> str:
        return f"Output({self.name!r}, frontier={self.frontier}, versions={len(self._changes)})"

    @property
    def frontier(self) -> Antichain:
        """The versions this output may still change at: every version it does not allow is finished."""
        self.read()
        return self._frontier

    def on_version(self, callback: Callable[[Version, dict[Record, int]], None]) -> None:
        """Call ``callback(version, changes)`` for every version at which the output changes, once finished.

        Versions come in order (each after every version less than it),
        from the next one to finish on: register it before running the graph
        to see them all.

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
        self.read()
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
        self.read()
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
        self.read()
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
        progress = self.reader.progress
        inputs = [
            f"input {progress.input_name(location)!r} (frontier {held})"
            for location, held in progress.holding(self.reader.location, version)
            if progress.input_name(location) is not None
        ]
        if inputs:
            return f"{', '.join(inputs)} still allows it: advance it past {version}, then graph.run()"
        return "run the graph (graph.run()) until it is"

    def read(self) -> None:
        """Take in the queued changes, by version, and finish the versions the frontier has passed (the graph
        calls it after every step). Once the graph has failed the frontier stays where it was: the version
        being worked on never finishes."""
        queue = self.reader.queue
        while queue:
            message = queue.popleft()
            changes = self._open.at(message.version)
            get = changes.get
            for record, multiplicity in message.collection.updates:
                total = get(record, 0) + multiplicity  # add_multiplicity, inlined: once per record
                if total:
                    changes[record] = total
                else:
                    changes.pop(record, None)
        if self.reader.status.failure is None:
            frontier = self.reader.frontier
            if frontier is not self._frontier:
                self._frontier = frontier
                for version, changes in self._open.pop_finished(frontier):
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
        self._announce()

    def _announce(self) -> None:
        """Run the callbacks for the finished versions not announced yet; one that raises stops the rest
        until the next read."""
        while self._unannounced:
            version = self._unannounced[0]
            for callback in self._callbacks:
                try:
                    callback(version, dict(self._changes[version]))
                except Exception as error:
                    self._announced()
                    raise FunctionError(
                        f"output {self.name!r}'s callback raised {type(error).__name__}: {error} at version "
                        f"{version}; the output is as it was, and later versions are announced at the next read"
                    ) from error
            self._announced()

    def _announced(self) -> None:
        """The first unannounced version has been handed to the callbacks: without history, it is dropped."""
        version = self._unannounced.pop(0)
        if not self.history:
            del self._changes[version]
