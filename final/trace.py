"""A multiversion index: records grouped by key, then by version.

``join`` needs every value of a key on the other side, and ``reduce`` needs all
values of a key; an index maps key -> version -> ``{value: multiplicity}`` so
both cost time proportional to the keys a difference touches. Versions are
kept apart because data can arrive at versions that are not finished yet, and
must not blur into versions that are. Once the frontier
passes a version, ``compact`` moves it forward as far as no future version can
tell (``advance_by``) and merges versions that land together: the index stays
as small as the live data, yet with partially ordered versions it never merges
two that a future version must tell apart.
Source: document 002, "v3: Versions and frontiers"
and "v5/vFinal: Partially ordered versions" (compaction).
Rust DD's nearest relative is an arrangement (a trace).
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import le

from .collection import Collection, Entry, Key, Multiplicity, Value, Values, checked_pairs
from .order import Antichain, Version


class Index:
    """key -> version -> ``{value: multiplicity}``.

    Each version's values are a dict, so adding a difference to it, and
    merging two versions when compaction moves them together, cost time in
    proportion to the smaller side, not to the whole group.

    Invariant: every key has at least one version and no dict is empty or
    holds a zero multiplicity (a value, version or key whose total reaches
    zero is deleted at once). ``_dirty`` holds every key that gained a
    version since the last compaction; the others, if they have several
    versions, have them advanced by the frontier of their last compaction.
    """

    __slots__ = ("_dirty", "_values")

    def __init__(self) -> None:
        self._values: dict[Key, dict[Version, dict[Value, Multiplicity]]] = {}
        self._dirty: set[Key] = set()

    @classmethod
    def from_collection(cls, version: Version, collection: Collection, operator: str) -> Index:
        """Index a difference collection of ``(key, value)`` records at ``version``.

        Raises:
            RecordError: a record is not a ``(key, value)`` pair with a hashable
                key and value; nothing is indexed then.
        """
        index = cls()
        index.add_collection(version, collection, operator)
        return index

    @classmethod
    def trusted(cls, version: Version, updates: list[Entry]) -> Index:
        """Index ``((key, value), multiplicity)`` updates already checked to be pairs (``checked_pairs``), built
        without checks."""
        index = cls()
        index._add_all(version, updates)
        return index

    def __len__(self) -> int:
        """The number of keys."""
        return len(self._values)

    def __contains__(self, key: Key) -> bool:
        """Whether ``key`` has any value at any version."""
        return key in self._values

    def keys(self) -> Iterable[Key]:
        return self._values.keys()

    def versions(self, key: Key) -> dict[Version, dict[Value, Multiplicity]]:
        """A copy of ``key``'s entries: version -> ``{value: multiplicity}`` (empty if it has none)."""
        return {version: dict(values) for version, values in self._values.get(key, {}).items()}

    def entries(self, key: Key) -> dict[Version, dict[Value, Multiplicity]]:
        """``key``'s entries themselves, not a copy (empty if it has none): for operators to read, never change."""
        return self._values.get(key, _NO_ENTRIES)

    def size(self) -> int:
        """How many ``(key, version, value)`` entries it holds: a measure of its memory."""
        return sum(len(values) for versions in self._values.values() for values in versions.values())

    def add_collection(self, version: Version, collection: Collection, operator: str) -> None:
        """Add every ``((key, value), multiplicity)`` of ``collection`` at ``version``.

        Raises:
            RecordError: a record is not a ``(key, value)`` pair with a hashable
                key and value; nothing is added then.
        """
        checked_pairs(collection.updates, operator)
        self._add_all(version, collection.updates)

    def add_trusted(self, version: Version, updates: list[Entry]) -> None:
        """``add_collection`` for updates already checked to be pairs of hashables (``checked_pairs``), without
        checks."""
        self._add_all(version, updates)

    def add_value(self, key: Key, version: Version, value: tuple[Value, Multiplicity]) -> None:
        """Add one ``(value, multiplicity)`` under ``key`` at ``version``."""
        self._add_all(version, [((key, value[0]), value[1])])

    def _add_all(self, version: Version, updates: list[Entry]) -> None:
        """Add ``((key, value), multiplicity)`` updates, known to be well formed, at ``version``."""
        values, mark = self._values, self._dirty.add
        at_version: dict[Key, dict[Value, Multiplicity]] = {}  # a key's dict at ``version``, once found
        for (key, value), multiplicity in updates:
            at = at_version.get(key)
            if at is None:
                versions = values.get(key)
                if versions is None:
                    if multiplicity:
                        at_version[key] = at = {value: multiplicity}
                        values[key] = {version: at}
                    continue
                at = versions.get(version)
                if at is None:
                    if multiplicity:
                        at_version[key] = versions[version] = {value: multiplicity}
                        mark(key)
                    continue
                at_version[key] = at
            total = at.get(value, 0) + multiplicity
            if total:
                at[value] = total
            elif value in at:  # (not there: a zero multiplicity for a value it does not hold)
                _drop(values, key, values[key], version, at, value)
                if not at:  # dropped from the index: a later update of the key starts afresh
                    del at_version[key]

    def append(self, other: Index) -> None:
        """Add every value of ``other`` (a difference) to this index, which takes over its dicts.

        ``other`` must not be changed afterwards (a delta built for this, or a
        batch every reader has passed), so its dicts are kept, not copied.
        """
        values, mark = self._values, self._dirty.add
        for key, other_versions in other._values.items():
            versions = values.get(key)
            if versions is None:
                values[key] = other_versions
                if len(other_versions) > 1:
                    mark(key)
                continue
            for version, entries in other_versions.items():
                at = versions.get(version)
                if at is None:
                    versions[version] = entries
                    mark(key)
                    continue
                for value, multiplicity in entries.items():
                    add_multiplicity(at, value, multiplicity)
                if not at:
                    del versions[version]
            if not versions:
                del values[key]

    def reconstruct_at(self, key: Key, version: Version) -> Values:
        """The consolidated values of ``key`` at ``version``: the sum over versions ``<= version``."""
        totals = None
        for other_version, entries in self._values.get(key, {}).items():
            if all(map(le, other_version, version)):
                if totals is None:
                    totals = dict(entries)
                else:
                    for value, multiplicity in entries.items():
                        add_multiplicity(totals, value, multiplicity)
        return list(totals.items()) if totals else []

    def join(self, other: Index) -> dict[Version, list[Entry]]:
        """``((key, (a, b)), m_a * m_b)`` for every ``a`` here and ``b`` in ``other`` under one key.

        Each result lands at the join of its two versions: the first version
        at which both records are present. Walks the keys of the smaller
        index, so joining a small difference against a large index costs time
        proportional to the difference.
        """
        mine, theirs = self._values, other._values
        smaller, larger = (mine, theirs) if len(mine) <= len(theirs) else (theirs, mine)
        result: dict[Version, list[Entry]] = {}
        joins: dict[tuple[Version, Version], Version] = {}  # few distinct pairs, met once per key
        for key in smaller:
            if key not in larger:
                continue
            for version, entries in mine[key].items():
                for other_version, other_entries in theirs[key].items():
                    joined = joins.get((version, other_version))
                    if joined is None:
                        joined = joins[version, other_version] = version.join(other_version)
                    output = result.get(joined)
                    if output is None:
                        output = result[joined] = []
                    # Plain loops, not a comprehension: keys often hold one value, and a comprehension
                    # per key would cost more than the pairs it builds.
                    for value, multiplicity in entries.items():
                        for other_value, other_multiplicity in other_entries.items():
                            output.append(((key, (value, other_value)), multiplicity * other_multiplicity))
        return result

    def meet(self, version: Version, updates: list[Entry], left: bool = True) -> dict[Version, list[Entry]]:
        """A difference at ``version`` joined with this index: ``((key, (a, b)), m_a * m_b)`` for each update
        ``((key, a), m_a)`` and each ``(b, m_b)`` here under ``key`` (``(b, a)`` if not ``left``), at the join
        of the two versions.

        ``join`` for a difference not indexed yet: it costs time in proportion to the updates and what they
        meet, with nothing built for them.
        """
        values = self._values
        result: dict[Version, list[Entry]] = {}
        joins: dict[Version, Version] = {}  # few distinct versions, met once per update
        for (key, value), multiplicity in updates:
            versions = values.get(key)
            if versions is None or not multiplicity:
                continue
            for other_version, entries in versions.items():
                joined = joins.get(other_version)
                if joined is None:
                    joined = joins[other_version] = version.join(other_version)
                output = result.get(joined)
                if output is None:
                    output = result[joined] = []
                if left:
                    for other, other_multiplicity in entries.items():
                        output.append(((key, (value, other)), multiplicity * other_multiplicity))
                else:
                    for other, other_multiplicity in entries.items():
                        output.append(((key, (other, value)), other_multiplicity * multiplicity))
        return result

    def compact(self, frontier: Antichain) -> list[Key]:
        """Advance the versions of every key that gained one since the last compaction by ``frontier``, and merge.

        Returns the keys whose entries all cancelled out, which the index no longer holds.

        A key with one version has nothing to merge, and advancing that
        version would change no comparison with a version the frontier
        allows, nor any join with one, so it is left as it is.

        Simplification: a key is compacted when it changes, not again later.
        With partially ordered versions a key may keep several versions that no
        frontier will merge for a long time (one per iteration of a loop, say);
        revisiting all of them at every frontier would cost time proportional
        to the data. Versions that only a later frontier could merge wait for
        the key's next change (Rust DD merges its traces' batches in the background).
        """
        if not self._dirty:
            return []
        values = self._values
        advance = frontier.advance
        # With one coordinate advancing is a max: inlined, as it runs for every version of every changed key.
        least = frontier.elements[0] if len(frontier.elements) == 1 and len(frontier.elements[0]) == 1 else None
        emptied = []
        for key in self._dirty:
            versions = values.get(key)
            if versions is None or len(versions) == 1:
                continue
            compacted: dict[Version, dict[Value, Multiplicity]] = {}
            for version, entries in versions.items():
                if least is None:
                    advanced = advance(version)
                else:
                    advanced = version if version[0] >= least[0] else least
                into = compacted.get(advanced)
                if into is None:
                    compacted[advanced] = entries
                    continue
                if len(into) < len(entries):  # merge the smaller dict into the larger
                    compacted[advanced], into, entries = entries, entries, into
                for value, multiplicity in entries.items():
                    add_multiplicity(into, value, multiplicity)
            compacted = {version: entries for version, entries in compacted.items() if entries}
            if compacted:
                values[key] = compacted
            else:
                del values[key]
                emptied.append(key)
        # A fresh set, not clear(): the old one's table is sized for every key ever dirty at once.
        self._dirty = set()
        return emptied


_NO_ENTRIES: dict = {}
"""What ``entries`` returns for a key the index does not hold; nothing ever adds to it."""


def _drop(values: dict, key: Key, versions: dict, version: Version, at: dict, value: Value) -> None:
    """Delete ``value`` from ``at`` (its total is zero), and ``at`` and ``key`` if they are left empty."""
    del at[value]
    if not at:
        del versions[version]
        if not versions:
            del values[key]


def add_multiplicity(totals: dict[Value, Multiplicity], value: Value, multiplicity: Multiplicity) -> None:
    """Add ``multiplicity`` to ``totals[value]``, deleting the value if it reaches zero."""
    total = totals.get(value, 0) + multiplicity
    if total:
        totals[value] = total
    else:
        totals.pop(value, None)


def add_presence(totals: dict[Value, Multiplicity], value: Value, multiplicity: Multiplicity) -> int:
    """``add_multiplicity``, and how the value's presence moved: 1 if its total became positive, -1 if it
    stopped being positive, else 0 (what ``distinct`` and ``min``/``max`` see of a value)."""
    old = totals.get(value, 0)
    total = old + multiplicity
    if total:
        totals[value] = total
    else:
        totals.pop(value, None)
    return (total > 0) - (old > 0)


class Arrangement:
    """A shared arrangement: one collection's differences, indexed by key, read by many operators.

    Rust DD's arrangement (document 003, 'Shared
    Arrangements'): ``stream.arrange()`` builds one, and every ``join`` that
    reads the arranged stream looks into it instead of indexing the stream
    again. The differences are kept as batches in the order they arrived.
    Each reader has a position, how many batches it has taken in, and sees
    exactly those: a join must not meet a record before the message carrying
    it, or it would count a pair twice. Batches every reader has passed are
    merged into one index and compacted by the meet of the readers'
    frontiers, so no reader loses a distinction it still needs.

    Invariant: ``_merged`` holds the first ``_merged_count`` batches;
    ``_batches[i - _merged_count]`` is batch ``i``; every reader's position is
    at least ``_merged_count``.
    """

    def __init__(self) -> None:
        self._merged = Index()
        self._merged_count = 0
        self._batches: list[Index] = []
        self._positions: list[int] = []
        self._frontiers: list[Antichain | None] = []

    def new_reader(self) -> int:
        """Register a reader, at the start; returns its id."""
        self._positions.append(self._merged_count)
        self._frontiers.append(None)
        return len(self._positions) - 1

    def append(self, batch: Index) -> None:
        self._batches.append(batch)

    def batch(self, reader: int) -> Index:
        """The next batch for ``reader``, which then moves past it."""
        batch = self._batches[self._positions[reader] - self._merged_count]
        self._positions[reader] += 1
        return batch

    def parts(self, reader: int) -> list[Index]:
        """The indexes that together hold exactly what ``reader`` has taken in."""
        return [self._merged, *self._batches[: self._positions[reader] - self._merged_count]]

    def allow_compaction(self, reader: int, frontier: Antichain) -> None:
        """``reader`` will look up nothing at versions ``frontier`` has passed; merge and compact what all allow."""
        self._frontiers[reader] = frontier
        passed = min(self._positions, default=self._merged_count + len(self._batches))
        for batch in self._batches[: passed - self._merged_count]:
            self._merged.append(batch)
        self._batches = self._batches[passed - self._merged_count:]
        self._merged_count = passed
        if all(frontier is not None for frontier in self._frontiers) and self._frontiers:
            meet = self._frontiers[0]
            for other in self._frontiers[1:]:
                meet = meet.meet(other)
            self._merged.compact(meet)

    def size(self) -> int:
        """How many ``(key, version, value)`` entries it holds: a measure of its memory."""
        return sum(index.size() for index in (self._merged, *self._batches))
