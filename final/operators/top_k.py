"""Top-k: the values of each key that rank in a window of its sorted values, kept up to date.

SQL's ``ORDER BY ... LIMIT n OFFSET m`` keeps the rows ranked ``m`` to
``m + n - 1`` in an order; d2ts's ``topK`` is the same reduction of a key's
values. ``top_k(limit, offset, order)`` on a stream of ``(key, value)``
pairs sorts each key's values by ``order(value)`` (a value of multiplicity
``c`` is ``c`` copies, side by side) and keeps the copies ranked in the
window, as ``(key, value)`` with the number of its copies there.

The caller gives ``order`` as a total order consistent with the values:
two different values never have equal order keys (the SQL layer puts the
whole row last in its key), so the window is determined and the output does
not depend on the order in which updates came.

Outside loops a key's values are kept sorted, and a version's changes to a
key move only the values at the window's edges: inserting a value above the
cut pushes one copy out at the bottom (``TopKInPlace``). Inside loops,
where versions are partially ordered, the general ``reduce`` computes the
window of each changed key (002, "v5/vFinal"); the strategy pass chooses
which, when the graph is compiled (``final.strategies``).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable, Iterable
from typing import Any

from ..collection import Entry, Multiplicity, Values
from ..errors import GraphError, RecordError
from .base import Place, StreamMethods, checked_function
from .reduce import InPlace


def _itself(value: Any) -> Any:
    return value


def window(values: Values, limit: int | None, offset: int, order: Callable[[Any], Any]) -> list[tuple[Any, int]]:
    """The ``(value, copies)`` ranked ``offset`` to ``offset + limit - 1`` among ``values`` sorted by ``order``.

    Raises:
        RecordError: a value's multiplicity is negative (a window of a negative number of rows has no meaning).
    """
    ranked = sorted(values, key=lambda pair: order(pair[0]))
    return _cut([(value, multiplicity) for value, multiplicity in ranked], limit, offset)


def _cut(ranked: Iterable[tuple[Any, Multiplicity]], limit: int | None, offset: int) -> list[tuple[Any, int]]:
    """The window of ``ranked`` (values in order, with multiplicities), read only as far as its end."""
    end = None if limit is None else offset + limit
    kept, rank = [], 0
    for value, multiplicity in ranked:
        if multiplicity < 0:
            raise RecordError(f"top_k ranks rows, but the value {value!r} has multiplicity {multiplicity}; "
                              f"feed it collections whose multiplicities are not negative")
        if end is not None and rank >= end:
            break
        first, last = max(rank, offset), rank + multiplicity if end is None else min(rank + multiplicity, end)
        if last > first:
            kept.append((value, last - first))
        rank += multiplicity
    return kept


class TopKInPlace(InPlace):
    """``top_k`` over totally ordered versions: each key's values kept sorted, the window read off at its edges.

    Invariant: ``_orders[key]`` is the sorted list of ``(order(value), value)`` of the key's values whose
    multiplicity is not 0, and ``_counts[key]`` maps each to its multiplicity, at the last finished version;
    a key with no values has neither. A change to a key costs a binary search and a list insertion
    (``O(log n)`` comparisons, one ``memmove`` of up to ``n`` pointers) and a walk of the window,
    ``O(offset + limit)`` values, in a key of ``n`` values.
    """

    def __init__(self, place: Place, limit: int | None, offset: int, order: Callable[[Any], Any]) -> None:
        super().__init__(place)
        self.limit, self.offset, self.order = limit, offset, order
        self._orders: dict[Any, list[tuple[Any, Any]]] = {}
        self._counts: dict[Any, dict[Any, Multiplicity]] = {}

    def state_size(self) -> int:
        return sum(map(len, self._counts.values())) + self.pending.size()

    def _window(self, key: Any) -> list[tuple[Any, int]]:
        counts = self._counts.get(key)
        if not counts:
            return []
        return _cut(((value, counts[value]) for _, value in self._orders[key]), self.limit, self.offset)

    def apply(self, batches: list[list[Entry]]) -> list[Entry]:
        before: dict[Any, list[tuple[Any, int]]] = {}
        negative = []
        for updates in batches:
            for (key, value), multiplicity in updates:
                if not multiplicity:
                    continue
                if key not in before:
                    before[key] = self._window(key)
                counts = self._counts.setdefault(key, {})
                orders = self._orders.setdefault(key, [])
                old = counts.get(value, 0)
                total = old + multiplicity
                if not old:
                    insort(orders, (self.order(value), value), key=_first)
                if total:
                    counts[value] = total
                    if total < 0:
                        negative.append((key, value))
                else:
                    del counts[value]
                    rank = self.order(value)
                    position = bisect_left(orders, rank, key=_first)
                    del orders[position]
        for key, value in negative:
            if self._counts.get(key, {}).get(value, 0) < 0:
                raise RecordError(f"top_k ranks rows, but at key {key!r} the value {value!r} has multiplicity "
                                  f"{self._counts[key][value]}; feed it collections whose multiplicities are not "
                                  f"negative")
        changes: list[Entry] = []
        for key, old_window in before.items():
            new_window = self._window(key)
            if not self._counts.get(key):
                self._counts.pop(key, None)
                self._orders.pop(key, None)
            difference: dict[Any, int] = {}
            for value, copies in new_window:
                difference[value] = difference.get(value, 0) + copies
            for value, copies in old_window:
                difference[value] = difference.get(value, 0) - copies
            changes.extend(((key, value), copies) for value, copies in difference.items() if copies)
        return changes


def _first(pair: tuple[Any, Any]) -> Any:
    return pair[0]


class TopKMethods(StreamMethods):
    """The stream method that builds ``top_k``."""

    def top_k(self, limit: int | None, offset: int = 0, order: Callable[[Any], Any] | None = None) -> Any:
        """``(key, value)`` for the values of each key ranked ``offset`` to ``offset + limit - 1`` by ``order``.

        ``limit`` None keeps every value from ``offset`` on. ``order(value)``
        must be a total order of the values (two different values never
        tie), so that the window is determined; ``None`` orders the values
        themselves. The output's multiplicity is the number of a value's
        copies in the window.

        Raises:
            GraphError: ``limit`` or ``offset`` is not a non-negative int, or ``order`` cannot be called.
            RecordError: (while stepping) a value's multiplicity is negative.
        """
        for name, number in (("limit", limit), ("offset", offset)):
            if number is None and name == "limit":
                continue
            if type(number) is not int or number < 0:
                raise GraphError(f"top_k's {name} is a non-negative int, not {number!r}; e.g. top_k(10, offset=0)")
        order = _itself if order is None else order
        checked_function(order, "top_k order")
        return self.add_operator(
            TopKInPlace, "top_k", arguments=(limit, offset, order),
            general=lambda stream: stream.reduction(lambda values: window(values, limit, offset, order), "top_k"))
