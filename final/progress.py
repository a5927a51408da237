"""Progress tracking: which versions can still arrive where, worked out once for the whole graph.

Document 002 (from "v3: Versions and frontiers" to "v5/vFinal") has every
operator pass frontier messages to the next: an operator's output frontier
follows from its inputs', one message per operator per change. Timely
dataflow, under Rust DD, tracks progress instead in one place, and final
does the same:

- A **location** is a place data can be: a *source* (an input, or an
  operator's output) or a *target* (an operator's input, or the user's end
  of a stream: an ``Output`` or a reader).
- A **pointstamp** is a version at a location, counted. A message queued at
  a target counts at its version until the operator has handled it; an
  input's frontier elements count at the input; a version an operator keeps
  data back for (a reduction's unfinished versions, say) counts at its
  output as long as it does: a *capability* to send there. An operator that
  keeps nothing back (a map, a join) holds no capability and costs nothing
  when versions finish.
- A **path summary** says what a path through the graph does to a version:
  an edge leaves it as it is; inside an operator it stays too, except that
  ``iterate``'s operators *extend* it with an iteration coordinate (ingress,
  enter), *truncate* it (egress), or *increment* the iteration (feedback).
  That is the operator's ``summary``, one of ``SUMMARY_KINDS``.
- The **frontier** at a location is the least versions a pointstamp could
  still become on its way there: the minimal ``s(p)`` over every pointstamp
  ``p`` at some location ``l`` and every summary ``s`` of a path from ``l``.
  A version no element of it is ``<=`` is finished at that location.

The contract operators keep: an operator sends at a version only while a
pointstamp of its own covers it, through its summary (the message it is
handling, or a capability it holds), and an operator only ever sends at
versions ``>=`` what caused them. So whatever will still arrive at a
location is ``>=`` some element of its frontier: it is safe.

Loops need no rule of their own. Around a loop the summary adds one
iteration, so a loop's own data at ``(v, i)`` holds back its head only from
``(v, i + 1)`` on, and when nothing inside the loop is at ``(v, _)`` any more
the frontier jumps past all of ``v``'s iterations at once: the loop has
converged at ``v``. A cycle whose summary does not advance a version would
hold itself back forever, so the graph is refused when it has one.

The graph is fixed when the tracker is made. Once its passes are done,
``final.compile`` records the graph's locations and paths in a
``TrackerBuilder`` (timely's ``reachability::Builder``), whose ``build``
checks the cycles and works out once, from every location, the minimal
summaries of the paths leaving it (over simple paths: going around a cycle
once more only adds iterations). From then on only counts change. Rust DD's names: a version is
a timestamp; ``ChangeBatch`` is timely's.

Simplification: timely's ``reachability::Tracker`` pushes every change of a
count through the summaries at once, keeping each location's frontier up to
date incrementally (a ``MutableAntichain`` per location). This tracker
recomputes a frontier only when an operator asks for it, from the locations
that hold pointstamps now (few, however large the graph), and keeps it
until a count changes; a location's least versions are found again when a
version appears there or leaves it.
"""

from __future__ import annotations

from .errors import GraphError
from .order import Antichain, Version, minimal

SUMMARY_KINDS = ("identity", "extend", "truncate", "increment")
"""What an operator can do to a version on its way from an input to its output: nothing, add an iteration
coordinate 0, drop the last coordinate, add one to the last coordinate."""


class Summary:
    """What a path does to a version of ``dimension`` coordinates: keep its first ``keep`` coordinates,
    add ``add`` to the last of them, then append the coordinates ``tail``.

    Every composition of the four kinds has this form: extending appends a
    0, incrementing adds 1 to the last coordinate (in the tail, if there is
    one), and truncating drops the last coordinate (a tail's, else a kept
    one, whose added amount goes with it).

    >>> loop = Summary(1).followed_by("extend").followed_by("increment")
    >>> loop.apply(Version(3)), loop.followed_by("truncate").apply(Version(3))
    (Version((3, 1)), Version(3))
    >>> Summary(2).less_equal(Summary(2).followed_by("increment"))
    True
    >>> Summary(2).followed_by("increment").less_equal(Summary(2))
    False
    """

    __slots__ = ("add", "dimension", "identity", "keep", "tail")

    def __init__(self, dimension: int, keep: int | None = None, add: int = 0, tail: tuple[int, ...] = ()) -> None:
        self.dimension = dimension
        self.keep = dimension if keep is None else keep
        self.add = add
        self.tail = tail
        self.identity = self.keep == dimension and not add and not tail
        """Whether it leaves every version as it is: the common case, which ``apply`` need not build."""

    def followed_by(self, kind: str) -> Summary:
        """This path followed by an operator whose summary is ``kind`` (one of ``SUMMARY_KINDS``): timely's
        ``PathSummary::followed_by``, one operator at a time."""
        dimension, keep, add, tail = self.dimension, self.keep, self.add, self.tail
        if kind == "identity":
            return self
        if kind == "extend":
            return Summary(dimension, keep, add, (*tail, 0))
        if kind == "increment":
            if tail:
                return Summary(dimension, keep, add, (*tail[:-1], tail[-1] + 1))
            return Summary(dimension, keep, add + 1)
        if kind != "truncate":
            raise ValueError(f"an operator's summary is one of {SUMMARY_KINDS}, not {kind!r}")
        if tail:
            return Summary(dimension, keep, add, tail[:-1])
        return Summary(dimension, keep - 1)

    def apply(self, version: Version) -> Version:
        """The version this path turns ``version`` into."""
        if self.identity:
            return version
        coords = tuple(version[: self.keep])
        if self.add:
            coords = (*coords[:-1], coords[-1] + self.add)
        return Version.trusted(coords + self.tail)

    def _terms(self) -> list[tuple[bool, int]]:
        """Each coordinate it gives as ``(True, offset)`` (the input's coordinate there, plus the offset)
        or ``(False, constant)``."""
        kept = [(True, self.add if position == self.keep - 1 else 0) for position in range(self.keep)]
        return kept + [(False, constant) for constant in self.tail]

    def less_equal(self, other: Summary) -> bool:
        """Whether this summary gives a version ``<=`` the one ``other`` gives, for every version (both
        from and to the same dimensions)."""
        if self is other or (self.identity and other.identity):
            return True
        for (mine_kept, mine), (theirs_kept, theirs) in zip(self._terms(), other._terms(), strict=True):
            if mine_kept and not theirs_kept:  # an input coordinate can exceed any constant
                return False
            if mine > theirs:  # coordinates start at 0, so an offset or a constant is compared as it is
                return False
        return True

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Summary):
            return NotImplemented
        return (self.dimension, self.keep, self.add, self.tail) == (other.dimension, other.keep, other.add, other.tail)

    def __hash__(self) -> int:
        return hash((self.dimension, self.keep, self.add, self.tail))

    def __repr__(self) -> str:
        return f"Summary({self.dimension}, keep={self.keep}, add={self.add}, tail={self.tail})"


UNCHANGED = (Summary(1),)
"""What ``ProgressTracker.reach`` gives for a location only reached by paths that leave versions as they are
(the common case, told apart by identity so that ``frontier`` applies no summary)."""


class ChangeBatch(list):
    """Changes to the pointstamp counts of one location, not told to the tracker yet (timely's ``ChangeBatch``).

    A list of ``(version, delta)`` updates in the order made. An operator
    records here the capabilities it takes and drops while it runs;
    ``ProgressTracker.apply`` adds up each version's changes and counts the
    sum, so a version taken and dropped before then never reaches the
    tracker at all. The common case, a capability dropped right after it was
    taken, cancels as it is recorded.

    >>> batch = ChangeBatch()
    >>> batch.update(Version(1), 1); batch.update(Version(2), 1); batch.update(Version(1), -1)
    >>> batch.drain(), bool(batch)
    ([(Version(2), 1)], False)

    Invariant: the deltas at each version add up to the change not counted
    there yet; no two neighbouring updates are at one version (``update``
    merges them).
    """

    __slots__ = ()

    def update(self, version: Version, delta: int) -> None:
        """Record ``delta`` more pointstamps at ``version``."""
        if self and self[-1][0] == version:
            total = self[-1][1] + delta
            if total:
                self[-1] = (version, total)
            else:
                self.pop()
        else:
            self.append((version, delta))

    def drain(self) -> list[tuple[Version, int]]:
        """The changes consolidated (one per version, none that adds up to zero), leaving the batch empty."""
        updates = self.copy()
        self.clear()
        if len(updates) <= 1:
            return updates
        totals: dict[Version, int] = {}
        for version, delta in updates:
            totals[version] = totals.get(version, 0) + delta
        return [(version, delta) for version, delta in totals.items() if delta]


class TrackerBuilder:
    """A graph's locations and the paths between them, recorded to build its ``ProgressTracker`` once.

    Timely's ``reachability::Builder``: ``final.compile`` adds a location for
    every end of every edge of the topology its passes left, and a path for
    every edge and every way through an operator; ``build`` compiles them
    into the tracker, whose graph is fixed from then on.

    Invariant: ``_paths[l]`` lists the paths out of location ``l`` as
    ``(location, kind)``, ``kind`` the summary of the operator the path goes
    through (``identity`` for an edge).
    """

    def __init__(self) -> None:
        self._names: list[str] = []
        self._dimensions: list[int] = []
        self._paths: list[list[tuple[int, str]]] = []
        self._inputs: dict[int, str] = {}

    def add_location(self, dimension: int, name: str, input_name: str | None = None) -> int:
        """A new location, called ``name`` in messages, whose versions have ``dimension`` coordinates; returns
        its number. ``input_name`` is given for a graph's input, whose pointstamps its user moves."""
        if input_name is not None:
            self._inputs[len(self._names)] = input_name
        self._names.append(name)
        self._dimensions.append(dimension)
        self._paths.append([])
        return len(self._names) - 1

    def add_path(self, start: int, end: int, kind: str = "identity") -> None:
        """A path from ``start`` to ``end`` doing ``kind`` to versions (one of ``SUMMARY_KINDS``): an edge, or
        an operator from one of its inputs to its output."""
        self._paths[start].append((end, kind))

    def build(self) -> ProgressTracker:
        """The tracker of this graph, with no pointstamps yet.

        Raises:
            GraphError: a cycle does not advance versions (it does not pass
                through a loop's feedback), naming its locations.
        """
        reach = [self._summarize(location) for location in range(len(self._names))]
        return ProgressTracker(self._names, reach, self._inputs)

    def _summarize(self, start: int, traced: bool = False) -> dict[int, tuple[Summary, ...]]:
        """The minimal summaries of the paths from ``start`` to each location they reach: depth first,
        keeping at each location the summaries no other one found is below (``traced``: and the path to
        each, to name a cycle).

        A path around a cycle that advances versions has a summary above the
        one without the cycle, so the walk does not take it and ends.

        Raises:
            GraphError: a path from ``start`` back to it leaves versions where they were.
        """
        empty = Summary(self._dimensions[start])
        found: dict[int, list[Summary]] = {start: [empty]}
        stack = [(start, empty, (start,) if traced else ())]
        while stack:
            here, summary, path = stack.pop()
            for there, kind in self._paths[here]:
                candidate = summary.followed_by(kind)
                if there == start and candidate.less_equal(empty):
                    if not traced:  # walk again, keeping the paths, to say which cycle
                        return self._summarize(start, traced=True)
                    self._refuse_cycle((*path, start))
                known = found.get(there)
                if known is None:
                    found[there] = [candidate]
                else:
                    if any(other.less_equal(candidate) for other in known):
                        continue
                    known[:] = [other for other in known if not candidate.less_equal(other)]
                    known.append(candidate)
                stack.append((there, candidate, (*path, there) if traced else ()))
        return {
            location: UNCHANGED if len(summaries) == 1 and summaries[0].identity else tuple(summaries)
            for location, summaries in found.items()
        }

    def _refuse_cycle(self, cycle: tuple[int, ...]) -> None:
        """Raise the GraphError for ``cycle``, the locations of a cycle that does not advance versions."""
        names = " -> ".join(self._names[location] for location in cycle)
        raise GraphError(
            f"the graph has a cycle that does not advance versions: {names}. A version sent around it would "
            f"hold itself back and never finish. Versions must advance around every cycle, as a loop's "
            f"feedback makes them (one iteration more): build loops with iterate(f)"
        )


class ProgressTracker:
    """The pointstamps of one graph, counted per location, and the frontiers they imply.

    Made by ``TrackerBuilder.build``; the graph it tracks (its locations,
    their names, the summaries of the paths between them) is fixed. A
    frontier is worked out when asked for and kept until a count changes,
    where timely's ``Tracker`` pushes each change through to every frontier
    at once (the module docstring says why).

    Invariant: ``_counts[l]`` maps each version with pointstamps at location
    ``l`` to their number (positive; a version whose count reaches zero is
    removed), and ``_active`` holds exactly the locations with any.
    ``changes`` grows whenever a version appears at or leaves a location, so
    a frontier worked out when ``changes`` had its current value is still
    right. ``_reach[l]`` maps every location a path from ``l`` reaches to the
    minimal summaries of such paths.
    """

    def __init__(self, names: list[str], reach: list[dict[int, tuple[Summary, ...]]], inputs: dict[int, str]) -> None:
        self.changes = 0
        """How many times a version has appeared at or left a location: a frontier changes only with it."""
        self._names = names
        self._reach = reach
        self._inputs = inputs
        self._counts: list[dict[Version, int]] = [{} for _ in names]
        self._minimal: list[tuple[Version, ...] | None] = [() for _ in names]
        self._active: dict[int, None] = {}
        self._frontiers: list[tuple[int, Antichain] | None] = [None for _ in names]
        self._last = Antichain.trusted(())

    # -- the graph's shape ---------------------------------------------------

    def input_name(self, location: int) -> str | None:
        """The name of the input ``location`` is, or None if it is not one of the graph's inputs."""
        return self._inputs.get(location)

    @property
    def locations(self) -> int:
        """How many locations the graph has."""
        return len(self._names)

    def name(self, location: int) -> str:
        """What messages call ``location`` (``input 'trips'``, ``count #3``, ...)."""
        return self._names[location]

    def reach(self, location: int) -> dict[int, tuple[Summary, ...]]:
        """Every location a path from ``location`` reaches, with the minimal summaries of such paths (the
        empty path included: a location reaches itself), or ``UNCHANGED`` where the one minimal path leaves
        versions as they are."""
        return self._reach[location]

    def upstream(self, location: int) -> list[int]:
        """Every location from which a path reaches ``location``, in the order they were made."""
        return [source for source, reached in enumerate(self._reach) if location in reached]

    # -- counting ------------------------------------------------------------

    def update(self, location: int, version: Version, delta: int) -> None:
        """Add ``delta`` pointstamps at ``version`` to ``location``'s count."""
        counts = self._counts[location]
        total = counts.get(version, 0) + delta
        if total:
            counts[version] = total
            if total != delta:  # the version was there already: no frontier can change
                return
            self._active[location] = None
        else:
            del counts[version]
            if not counts:
                del self._active[location]
        self._minimal[location] = None
        self.changes += 1

    def apply(self, location: int, batch: ChangeBatch) -> None:
        """Count at ``location`` the changes ``batch`` holds, consolidated, and empty it."""
        if len(batch) == 1:  # the common case: one capability taken, or one dropped
            version, delta = batch.pop()
            self.update(location, version, delta)
            return
        update = self.update
        for version, delta in batch.drain():
            update(location, version, delta)

    def move(self, location: int, removed: tuple[Version, ...], added: tuple[Version, ...]) -> None:
        """Replace one pointstamp at each version of ``removed`` by one at each of ``added``, at ``location``: an
        input's frontier moving forward, in one change."""
        counts = self._counts[location]
        for version in added:
            counts[version] = counts.get(version, 0) + 1
        for version in removed:
            total = counts[version] - 1
            if total:
                counts[version] = total
            else:
                del counts[version]
        if counts:
            self._active[location] = None
        else:
            self._active.pop(location, None)
        self._minimal[location] = None
        self.changes += 1

    def held(self) -> dict[str, dict[Version, int]]:
        """Every location holding pointstamps now, by name, with its counts: all the graph's progress."""
        return {self._names[location]: dict(self._counts[location]) for location in self._active}

    def pointstamps(self, location: int) -> dict[Version, int]:
        """A copy of the counts at ``location``: version -> how many pointstamps."""
        return dict(self._counts[location])

    def _least_at(self, location: int) -> tuple[Version, ...]:
        """The minimal versions with pointstamps at ``location``."""
        least = self._minimal[location]
        if least is None:
            counts = self._counts[location]
            least = self._minimal[location] = tuple(counts) if len(counts) == 1 else minimal(counts)
        return least

    # -- frontiers -------------------------------------------------------------

    def frontier(self, location: int) -> Antichain:
        """The versions that may still arrive at ``location``: the minimal ``s(p)`` over the pointstamps ``p``
        anywhere and the summaries ``s`` of paths from there to here.

        The same Antichain object comes back for as long as the frontier is
        unchanged, so a caller can tell a change with ``is not``.
        """
        cached = self._frontiers[location]
        if cached is not None and cached[0] == self.changes:
            return cached[1]
        elements: list[Version] = []
        reach, minimal_at = self._reach, self._minimal
        for source in self._active:
            summaries = reach[source].get(location)
            if summaries is None:
                continue
            least = minimal_at[source] or self._least_at(source)
            if summaries is UNCHANGED:
                elements += least
            else:
                for summary in summaries:
                    elements += map(summary.apply, least)
        result = tuple(elements) if len(elements) <= 1 else minimal(elements)
        if cached is not None and cached[1].elements == result:
            frontier = cached[1]
        elif self._last.elements == result:  # most locations share a few frontiers: reuse the last one made
            frontier = self._last
        else:
            frontier = self._last = Antichain.trusted(result)
        self._frontiers[location] = (self.changes, frontier)
        return frontier

    def holding(self, location: int, version: Version) -> list[tuple[int, Antichain]]:
        """The locations whose pointstamps keep ``version`` from finishing at ``location``, each with the
        minimal versions it holds: those from which a path reaches here at or before ``version``."""
        holding = []
        for source in self._active:
            least = self._least_at(source)
            summaries = self._reach[source].get(location, ())
            for summary in (Summary(len(least[0])),) if summaries is UNCHANGED else summaries:
                if any(summary.apply(held).less_equal(version) for held in least):
                    holding.append((source, Antichain.trusted(least)))
                    break
        return holding
