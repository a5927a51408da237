"""Collections: multisets of records whose multiplicities may be negative.

A collection is a list of ``(record, multiplicity)`` pairs. Physically different
lists can be the same collection: ``[('cat', 4), ('dog', 2)]`` and
``[('dog', 2), ('cat', 1), ('cat', 3), ('eel', 0)]`` hold the same records, so
they compare equal. Negative multiplicities make the difference of any two
collections a collection, which is what every later stage is built on.
Source: document 002, "v0: Intro / What are we trying
to compute?". Rust DD calls a multiplicity a *diff*.

Records handed to ``join`` and ``reduce`` (and the reductions built on it) must
be ``(key, value)`` pairs. A reduction runs only on keys whose consolidated
values are not empty, so a group that empties produces no output.

>>> Collection([('cat', 4), ('dog', 2)]) == Collection([('dog', 2), ('cat', 1), ('cat', 3), ('eel', 0)])
True
>>> a = Collection([('apple', 3), ('banana', 2), ('coconut', 7)])
>>> b = Collection([('apple', 1), ('banana', 4), ('coconut', 7)])
>>> a.concat(b.negate()).consolidate()
Collection([('apple', 2), ('banana', -2)])
>>> Collection([(('fruit', 'fig'), 2), (('fruit', 'kiwi'), 1)]).count()
Collection([(('fruit', 3), 1)])
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator
from operator import itemgetter
from typing import Any

from .errors import IterationError, RecordError

Record = Hashable
Key = Hashable
Value = Hashable
Multiplicity = int
Entry = tuple[Record, Multiplicity]
"""One entry of a collection: a record and its multiplicity. In a message the version is beside the list of
entries, not in each (``final.operators.base``); with it, an entry is what DD calls an update."""
Values = list[tuple[Value, Multiplicity]]
"""The input of a reduction function: a key's consolidated ``(value, multiplicity)`` pairs."""

FEW = 8
"""Up to this many updates, checking them one by one is quicker than the bulk checks' fixed cost."""

MAX_ITERATIONS = 10_000
"""Default bound on ``iterate``: far more rounds than any example needs, small
enough that a body which never converges fails in seconds rather than hanging."""


class Collection:
    """An immutable multiset of records with signed multiplicities.

    Invariant: ``updates`` is a list of ``(record, int)`` pairs that nothing
    mutates after construction; it may hold repeats and zeros (``consolidate``
    removes them). It is the list itself, not a copy: operators read messages
    through it (the internal protocol, ``final.operators.base``); read it,
    never change it, or iterate the collection instead.
    """

    __slots__ = ("updates",)

    def __init__(self, updates: Iterable[Entry] = ()) -> None:
        """Copy and check ``updates``, a list of ``(record, multiplicity)`` pairs.

        Raises:
            RecordError: ``updates`` cannot be iterated, an update is not a
                pair, its multiplicity is not an int, or its record is not hashable.
        """
        try:
            updates = list(updates)
        except TypeError:
            raise RecordError(
                f"a collection is built from a list of (record, multiplicity) pairs, not {updates!r}; "
                f"write Collection([(record, 1), ...])"
            ) from None
        if not _well_formed(updates):
            updates = [_checked_update(update) for update in updates]  # finds the first bad one and says why
        self.updates: list[Entry] = updates

    @classmethod
    def trusted(cls, updates: list[Entry]) -> Collection:
        """Wrap a list the engine built itself, built without checks and without copying it.

        For operators (the internal protocol, ``final.operators.base``): the
        list must hold ``(hashable record, int)`` pairs, and nothing may change
        it afterwards.
        """
        collection = cls.__new__(cls)
        collection.updates = updates
        return collection


    def __iter__(self) -> Iterator[Entry]:
        return iter(self.updates)

    def __len__(self) -> int:
        """The number of physical updates, repeats and zeros included."""
        return len(self.updates)

    def __eq__(self, other: object) -> bool:
        """Logical equality: both consolidate to the same multiset."""
        if not isinstance(other, Collection):
            return NotImplemented
        return self.as_dict() == other.as_dict()

    __hash__ = None  # equal collections may differ physically; they are not dict keys

    def __repr__(self) -> str:
        return f"Collection({self.updates!r})"

    def as_dict(self) -> dict[Record, Multiplicity]:
        """The consolidated collection as ``{record: multiplicity}``, zeros dropped."""
        return dict(self.consolidate().updates)

    # -- linear operators: f(a + b) == f(a) + f(b) ----------------------------

    def concat(self, other: Collection) -> Collection:
        """The multiset sum of two collections (SQL's ``UNION ALL``)."""
        return Collection.trusted(self.updates + _checked_collection(other, "concat").updates)

    def negate(self) -> Collection:
        """Every multiplicity times -1, so ``a.concat(b.negate())`` is ``a - b``."""
        return Collection.trusted([(record, -multiplicity) for record, multiplicity in self.updates])

    def map(self, f: Callable[[Record], Record]) -> Collection:
        """``f(record)`` for every record, multiplicities unchanged."""
        return Collection.trusted([(f(record), multiplicity) for record, multiplicity in self.updates])

    def filter(self, predicate: Callable[[Record], bool]) -> Collection:
        """The records for which ``predicate(record)`` is true."""
        return Collection.trusted([update for update in self.updates if predicate(update[0])])

    def flat_map(self, f: Callable[[Record], Iterable[Record]]) -> Collection:
        """Every record ``f(record)`` yields, each with the input's multiplicity."""
        return Collection.trusted(
            [(output, multiplicity) for record, multiplicity in self.updates for output in f(record)]
        )

    # -- operators that look at the whole collection --------------------------

    def consolidate(self) -> Collection:
        """One update per record, zeros removed, in first-seen order.

        Raises:
            RecordError: a record is not hashable.
        """
        totals: defaultdict[Record, Multiplicity] = defaultdict(int)
        for record, multiplicity in self.updates:
            totals[hashable(record, "consolidate")] += multiplicity
        return Collection.trusted([(record, total) for record, total in totals.items() if total != 0])

    def join(self, other: Collection) -> Collection:
        """``(key, (a, b))`` for every ``(key, a)`` here and ``(key, b)`` in ``other``.

        The multiplicity of a result is the product of its two inputs'.

        Raises:
            RecordError: a record is not a ``(key, value)`` pair with a hashable key.
        """
        index: defaultdict[Key, Values] = defaultdict(list)
        for record, multiplicity in _checked_collection(other, "join").updates:
            key, value = key_value(record, "join")
            index[key].append((value, multiplicity))
        result = []
        for record, multiplicity in self.updates:
            key, value = key_value(record, "join")
            for other_value, other_multiplicity in index.get(key, ()):
                result.append(((key, (value, other_value)), multiplicity * other_multiplicity))
        return Collection.trusted(result)

    def reduce(self, f: Callable[[Values], Iterable[tuple[Any, Multiplicity]]]) -> Collection:
        """``(key, output)`` for each ``(output, multiplicity)`` in ``f(values of key)``.

        ``f`` receives a key's consolidated, non-empty ``(value, multiplicity)``
        list; keys whose values cancel out entirely are not passed to ``f``.

        Raises:
            RecordError: a record is not a ``(key, value)`` pair, or a value is
                not hashable.
        """
        groups: defaultdict[Key, defaultdict[Value, Multiplicity]] = defaultdict(lambda: defaultdict(int))
        for record, multiplicity in self.updates:
            key, value = key_value(record, "reduce")
            groups[key][hashable(value, "reduce")] += multiplicity
        result = []
        for key, totals in groups.items():
            values = [(value, total) for value, total in totals.items() if total != 0]
            if values:
                result.extend(((key, output), multiplicity) for output, multiplicity in f(values))
        return Collection.trusted(result)

    def count(self) -> Collection:
        """``(key, number of values)``, counting multiplicities (``COUNT(*) GROUP BY key``)."""
        return self.reduce(count_values)

    def sum(self) -> Collection:
        """``(key, sum of value * multiplicity)`` (``SUM(value) GROUP BY key``)."""
        return self.reduce(sum_values)

    def min(self) -> Collection:
        """``(key, least value)`` over the values with positive multiplicity."""
        return self.reduce(min_values)

    def max(self) -> Collection:
        """``(key, greatest value)`` over the values with positive multiplicity."""
        return self.reduce(max_values)

    def distinct(self) -> Collection:
        """Each ``(key, value)`` with positive multiplicity, once."""
        return self.reduce(distinct_values)

    def iterate(self, f: Callable[[Collection], Collection], max_iterations: int = MAX_ITERATIONS) -> Collection:
        """Apply ``f`` from this collection until the result stops changing.

        Returns the fixed point ``f(x) == x`` reached from ``x = self``. ``f`` may
        use other collections it closes over.

        Raises:
            IterationError: no fixed point within ``max_iterations`` rounds.
        """
        current = self.consolidate()
        for _ in range(max_iterations):
            result = f(current).consolidate()
            if result == current:
                return result
            current = result
        raise IterationError(
            f"iterate did not reach a fixed point in {max_iterations} iterations; the last result "
            f"had {len(current)} records. Check that the body converges (a distinct or a filter "
            f"usually bounds it), or pass a larger max_iterations."
        )


# -- reduction functions: a key's consolidated values -> output values --------


def count_values(values: Values) -> Values:
    """The number of values, counting multiplicities."""
    return [(sum(map(itemgetter(1), values)), 1)]


def sum_values(values: Values) -> Values:
    """The sum of each value times its multiplicity.

    Raises:
        RecordError: a value is not a number (None, SQL's NULL, included).
    """
    try:
        return [(sum(value * multiplicity for value, multiplicity in values), 1)]
    except TypeError:
        shown = _sample([value for value, _ in values])
        raise _wrong_type(f"sum adds numbers, but the values {shown} do not add up", "sum_total()") from None


def min_values(values: Values) -> Values:
    """The least value with positive multiplicity, if there is one.

    Raises:
        RecordError: two values do not compare (None, SQL's NULL, and a number, say).
    """
    return _extreme(min, values, "min")


def max_values(values: Values) -> Values:
    """The greatest value with positive multiplicity, if there is one.

    Raises:
        RecordError: two values do not compare (None, SQL's NULL, and a number, say).
    """
    return _extreme(max, values, "max")


def _extreme(pick: Callable[[list], Value], values: Values, operator: str) -> Values:
    """``pick`` (``min`` or ``max``) of the values with positive multiplicity, if there are any."""
    present = [value for value, multiplicity in values if multiplicity > 0]
    if not present:
        return []
    try:
        return [(pick(present), 1)]
    except TypeError:
        raise incomparable(operator, present) from None


def incomparable(operator: str, values: list) -> RecordError:
    """The error for ``values`` that ``operator`` (``min`` or ``max``) finds do not compare."""
    problem = f"{operator} compares a key's values, but {_sample(values)} do not compare with each other"
    return _wrong_type(problem, "aggregate()")


def _wrong_type(problem: str, instead: str) -> RecordError:
    """The error for values a reduction cannot combine: ``problem``, and ``instead``, which skips NULLs."""
    return RecordError(
        f"{problem}; filter out None (SQL's NULL) first, or use {instead}, which skips NULLs as SQL does"
    )


def _sample(values: list) -> str:
    """A few of ``values``, for a message: the first of each type."""
    by_type: dict[type, Any] = {}
    for value in values:
        by_type.setdefault(type(value), value)
    return ", ".join(repr(value) for value in list(by_type.values())[:4])


def distinct_values(values: Values) -> Values:
    """Each value with positive multiplicity, once."""
    return [(value, 1) for value, multiplicity in values if multiplicity > 0]


# -- checks at the boundary ---------------------------------------------------


def hashable(record: Any, operator: str) -> Record:
    """Return ``record`` if it can be hashed, else raise a RecordError naming ``operator``."""
    try:
        hash(record)
    except TypeError:
        raise RecordError(
            f"{operator} got the unhashable record {record!r}; records must be hashable: "
            f"use tuples and frozensets instead of lists, sets and dicts"
        ) from None
    return record


def key_value(record: Any, operator: str) -> tuple[Key, Value]:
    """Split a ``(key, value)`` record, or raise a RecordError naming ``operator``."""
    if type(record) is not tuple or len(record) != 2:
        raise RecordError(
            f"{operator} needs (key, value) pairs, but got the record {record!r}; "
            f"map each record to a pair first, e.g. .map(lambda x: (x, ()))"
        )
    hashable(record[0], operator)
    return record


def checked_pairs(updates: list[Entry], operator: str) -> None:
    """Check that every record of ``updates`` is a ``(key, value)`` pair of hashables, in bulk.

    Raises:
        RecordError: naming ``operator`` and the first record that is not.
    """
    try:
        if len(updates) <= FEW:
            for record, _ in updates:
                if type(record) is not tuple or len(record) != 2:
                    break
                hash(record)
            else:
                return
        else:
            records = tuple(map(itemgetter(0), updates))
            if set(map(type, records)) <= {tuple} and set(map(len, records)) <= {2}:
                hash(records)
                return
    except TypeError:
        pass
    for record, _ in updates:
        hashable(key_value(record, operator)[1], operator)


def _well_formed(updates: list) -> bool:
    """Whether every update is a ``(hashable record, int)`` pair, checked in bulk.

    Each check is one pass in C over the list (``map``, ``set``, ``hash``), a
    few times faster than checking update by update, which matters for a
    collection of a million records. ``_checked_update`` says what is wrong.
    """
    try:
        if len(updates) <= FEW:
            for update in updates:
                if type(update) is not tuple or len(update) != 2 or type(update[1]) is not int:
                    return False
                hash(update[0])
            return True
        if not set(map(type, updates)) <= {tuple} or not set(map(len, updates)) <= {2}:
            return False
        if not set(map(type, map(itemgetter(1), updates))) <= {int}:
            return False
        hash(tuple(map(itemgetter(0), updates)))
    except TypeError:
        return False
    return True


def _checked_update(update: Any) -> Entry:
    if type(update) is not tuple or len(update) != 2:
        raise RecordError(
            f"a collection is built from (record, multiplicity) pairs, but got {update!r}; "
            f"write Collection([(record, 1), ...])"
        )
    record, multiplicity = update
    if type(multiplicity) is not int:
        raise RecordError(
            f"the multiplicity of {record!r} must be an int, not {multiplicity!r}; "
            f"write Collection([(record, 1), ...])"
        )
    return (hashable(record, "Collection"), multiplicity)


def _checked_collection(other: Any, operator: str) -> Collection:
    if not isinstance(other, Collection):
        raise RecordError(f"{operator} takes a Collection, not {type(other).__name__}: {other!r}")
    return other
