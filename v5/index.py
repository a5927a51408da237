"""A multiversion index: records grouped by key, then by version.

``join`` needs every value of a key on the other side, and ``reduce`` needs all
values of a key; an index maps key -> version -> list of ``(value,
multiplicity)`` so both cost time proportional to the keys a difference
touches. Versions are kept apart because data can arrive at versions that are
not finished yet, and must not blur into versions that are. Once the frontier
passes a version, ``compact`` moves it forward as far as no future version can
tell (``advance_by``) and merges versions that land together: the index stays
as small as the live data, yet with partially ordered versions it never merges
two that a future version must tell apart.
Source: document 002, "v3: Versions and frontiers"
and "v5/vFinal: Partially ordered versions" (compaction).
Rust DD's nearest relative is an arrangement (a trace).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from .collection import Collection, Key, Multiplicity, Update, Value, Values, hashable, key_value
from .order import Antichain, Version


class Index:
    """key -> version -> list of ``(value, multiplicity)``.

    Invariant: every key in ``_values`` has at least one version, and every
    version a non-empty list. Keys not in ``_dirty`` hold consolidated lists
    (one entry per value, none zero) at versions advanced by the frontier of
    their last compaction; ``compact`` restores that for the dirty ones.
    """

    def __init__(self) -> None:
        self._values: defaultdict[Key, defaultdict[Version, Values]] = defaultdict(lambda: defaultdict(list))
        self._dirty: set[Key] = set()

    @classmethod
    def from_collection(cls, version: Version, collection: Collection, operator: str) -> Index:
        """Index a difference collection of ``(key, value)`` records at ``version``.

        Raises:
            RecordError: a record is not a ``(key, value)`` pair with a hashable
                key and value; nothing is indexed then.
        """
        index = cls()
        for record, multiplicity in collection:
            key, value = key_value(record, operator)
            index.add_value(key, version, (hashable(value, operator), multiplicity))
        return index

    def __len__(self) -> int:
        """The number of keys."""
        return len(self._values)

    def keys(self) -> Iterable[Key]:
        return self._values.keys()

    def add_value(self, key: Key, version: Version, value: tuple[Value, Multiplicity]) -> None:
        """Add one ``(value, multiplicity)`` under ``key`` at ``version``."""
        self._values[key][version].append(value)
        self._dirty.add(key)

    def append(self, other: Index) -> None:
        """Add every value of ``other`` (a difference) to this index."""
        for key, versions in other._values.items():
            for version, values in versions.items():
                self._values[key][version].extend(values)
            self._dirty.add(key)

    def reconstruct_at(self, key: Key, version: Version) -> Values:
        """The consolidated values of ``key`` at ``version``: the sum over versions ``<= version``."""
        totals: defaultdict[Value, Multiplicity] = defaultdict(int)
        for other_version, values in self._values.get(key, {}).items():
            if other_version.less_equal(version):
                for value, multiplicity in values:
                    totals[value] += multiplicity
        return [(value, total) for value, total in totals.items() if total != 0]

    def join(self, other: Index) -> dict[Version, list[Update]]:
        """``((key, (a, b)), m_a * m_b)`` for every ``a`` here and ``b`` in ``other`` under one key.

        Each result lands at the join of its two versions: the first version
        at which both records are present. Walks the keys of the smaller
        index, so joining a small difference against a large index costs time
        proportional to the difference.
        """
        smaller, larger = (self, other) if len(self) <= len(other) else (other, self)
        result: defaultdict[Version, list[Update]] = defaultdict(list)
        for key in smaller._values:
            if key not in larger._values:
                continue
            for version, values in self._values[key].items():
                for other_version, other_values in other._values[key].items():
                    output = result[version.join(other_version)]
                    for value, multiplicity in values:
                        for other_value, other_multiplicity in other_values:
                            output.append(((key, (value, other_value)), multiplicity * other_multiplicity))
        return result

    def compact(self, frontier: Antichain) -> None:
        """Advance the versions of every key changed since the last compaction by ``frontier``, and merge.

        Simplification: a key is compacted when it changes, not again later.
        With partially ordered versions a key may keep several versions that no
        frontier will merge for a long time (one per iteration of a loop, say);
        revisiting all of them at every frontier would cost time proportional
        to the data. Versions that only a later frontier could merge wait for
        the key's next change (Rust DD merges its traces' batches in the background).
        """
        for key in self._dirty:
            merged: defaultdict[Version, defaultdict[Value, Multiplicity]] = defaultdict(lambda: defaultdict(int))
            for version, values in self._values[key].items():
                totals = merged[version.advance_by(frontier)]
                for value, multiplicity in values:
                    totals[value] += multiplicity
            versions = self._values[key] = defaultdict(list)
            for version, totals in merged.items():
                values = [(value, total) for value, total in totals.items() if total != 0]
                if values:
                    versions[version] = values
            if not versions:
                del self._values[key]
        # A fresh set, not clear(): the old one's table is sized for every key ever dirty at once.
        self._dirty = set()
