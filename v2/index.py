"""An index: records grouped by key, so join and reduce can go straight to a key.

``join`` needs every value of a key on the other side, and ``reduce`` needs all
values of a key; scanning a flat list for them would cost time proportional to
the whole collection. An index maps key -> list of ``(value, multiplicity)`` so
both cost time proportional to the keys a difference touches.
Source: document 002, "v1: Sequences of difference
collections". Rust DD's nearest relative is an arrangement.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from .collection import Collection, Key, Multiplicity, Update, Value, Values, hashable, key_value


class Index:
    """key -> list of ``(value, multiplicity)``.

    Invariant: every key in ``_values`` has a non-empty list. Keys not in
    ``_dirty`` hold consolidated lists (one entry per value, none zero);
    ``compact`` restores that for the dirty ones.
    """

    def __init__(self) -> None:
        self._values: defaultdict[Key, Values] = defaultdict(list)
        self._dirty: set[Key] = set()

    @classmethod
    def from_collection(cls, collection: Collection, operator: str) -> Index:
        """Index a difference collection of ``(key, value)`` records.

        Raises:
            RecordError: a record is not a ``(key, value)`` pair with a hashable
                key and value; nothing is indexed then.
        """
        index = cls()
        for record, multiplicity in collection:
            key, value = key_value(record, operator)
            index.add_value(key, (hashable(value, operator), multiplicity))
        return index

    def __len__(self) -> int:
        """The number of keys."""
        return len(self._values)

    def keys(self) -> Iterable[Key]:
        return self._values.keys()

    def add_value(self, key: Key, value: tuple[Value, Multiplicity]) -> None:
        """Add one ``(value, multiplicity)`` under ``key``."""
        self._values[key].append(value)
        self._dirty.add(key)

    def append(self, other: Index) -> None:
        """Add every value of ``other`` (a difference) to this index."""
        for key, values in other._values.items():
            self._values[key].extend(values)
            self._dirty.add(key)

    def get(self, key: Key) -> Values:
        """The values of ``key`` (empty if it has none)."""
        return self._values.get(key, [])

    def join(self, other: Index) -> list[Update]:
        """``((key, (a, b)), m_a * m_b)`` for every ``a`` here and ``b`` in ``other`` under one key.

        Walks the keys of the smaller index and looks them up in the larger,
        so joining a small difference against a large index costs time
        proportional to the difference.
        """
        smaller, larger = (self, other) if len(self) <= len(other) else (other, self)
        result = []
        for key in smaller._values:
            if key not in larger._values:
                continue
            for value, multiplicity in self._values[key]:
                for other_value, other_multiplicity in other._values[key]:
                    result.append(((key, (value, other_value)), multiplicity * other_multiplicity))
        return result

    def compact(self) -> None:
        """Consolidate the values of every key changed since the last compaction."""
        for key in self._dirty:
            totals: defaultdict[Value, Multiplicity] = defaultdict(int)
            for value, multiplicity in self._values[key]:
                totals[value] += multiplicity
            values = [(value, total) for value, total in totals.items() if total != 0]
            if values:
                self._values[key] = values
            else:
                del self._values[key]
        self._dirty.clear()
