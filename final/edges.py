"""Edges: how difference collections travel from the operator that sends them to the operators that read them.

An edge runs from a writer, its sending end (``DifferenceStreamWriter``: an
operator's output, or an input's), to one reader, a receiving end
(``DifferenceStreamReader``): every message a writer sends is queued at each
of its readers, in the order sent, until taken. A message is a
``DataMessage``, a difference collection at a version. Edges carry data
only: each end is a location of the progress tracker (``final.progress``),
which counts a message queued at an operator's input until the operator has
handled it.

These are the running ends of a compiled graph, each built whole, once, by
``final.compile`` from the ends the builder recorded (``final.topology``):
its tracker, its location, the logic of the linear operators fused into it
(``final.fusion``), and, for a writer, the readers it sends to. The handles a
user holds, an input's writer and a reader connected to read a stream, are
in ``final.sessions``. Source: document 002, "v2: Constructing dataflow
graphs"; an edge is a timely dataflow channel, here a queue per reader.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from .collection import Collection
from .logic import Logic, apply_logic
from .order import Antichain, Version

if TYPE_CHECKING:
    from .progress import ProgressTracker
    from .topology import Scope


class DataMessage:
    """A difference collection at a version. Never mutated once sent: readers share it."""

    __slots__ = ("collection", "version")

    def __init__(self, version: Version, collection: Collection) -> None:
        self.version = version
        self.collection = collection

    def __repr__(self) -> str:
        return f"DataMessage({self.version!r}, {self.collection!r})"


class DifferenceStreamReader:
    """The receiving end of an edge, in the writer's scope: a queue of messages, at a location of the tracker.

    An operator's input takes messages from ``queue`` (``Operator.run``,
    the internal protocol); each counts as a pointstamp at ``location``
    until it has been handled (``counted``). A reader the user holds
    (``sessions.ConnectedReader``) reads an end counted by no one: nothing
    downstream of it waits.

    Invariant: ``queue`` holds the messages not taken yet, in the order the
    writer sent them; ``logic``, if any, applies the linear operators named
    ``fused`` to each message before its operator sees it.
    """

    __slots__ = ("counted", "fused", "location", "logic", "progress", "queue", "scope")

    def __init__(self, scope: Scope, progress: ProgressTracker, location: int, logic: Logic | None = None,
                 fused: tuple[str, ...] = (), counted: bool = True) -> None:
        self.scope = scope
        self.progress = progress
        self.location = location
        self.logic = logic
        self.fused = fused
        self.counted = counted
        """Whether the tracker counts a pointstamp for each message queued here: an operator will handle it."""
        self.queue: deque[DataMessage] = deque()

    @property
    def frontier(self) -> Antichain:
        """The versions data may still arrive at: every version it does not allow is finished here."""
        return self.progress.frontier(self.location)


class DifferenceStreamWriter:
    """The sending end of a stream, in a scope: an operator's output, or an input's (``sessions.InputWriter``
    sends through one).

    Every message goes to every reader. An operator sends through
    ``send_trusted`` (the internal protocol), under the capabilities it holds.

    Invariant: a message is never mutated after it is sent (readers share
    it); ``logic``, if any, applies the linear operators named ``fused`` to
    everything sent before it goes out; ``label`` names the operator (or the
    input) it sends for.
    """

    def __init__(
        self, scope: Scope, label: str, progress: ProgressTracker, location: int,
        readers: list[DifferenceStreamReader], logic: Logic | None = None, fused: tuple[str, ...] = (),
    ) -> None:
        self.scope = scope
        self.dimension = scope.dimension
        """How many coordinates the versions of this stream have."""
        self.label = label
        """How messages name where this stream comes from: its operator's label, or its input's."""
        self.progress = progress
        self.location = location
        self.logic = logic
        self.fused = fused
        self._targets = [(reader.queue, reader.location if reader.counted else None) for reader in readers]

    @property
    def frontier(self) -> Antichain:
        """The versions this stream may still carry data at, worked out by the tracker from what its operator
        and everything before it still hold."""
        return self.progress.frontier(self.location)

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
