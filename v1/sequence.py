"""A changing collection, written as a sequence of difference collections.

A collection that is ``A0``, then ``A1``, then ``A2`` ... is stored as
``[A0, A1 - A0, A2 - A1, ...]``. Every operator ``f`` keeps the correctness
guarantee of document 002 ("v1: Sequences of
difference collections"):

    f(sequence)[i] == f(A_i) - f(A_{i-1})        (with A_{-1} empty)

Linear operators (``map filter flat_map negate concat``) get that for free by
applying ``f`` to each difference. ``join`` uses the expansion
``A1.join(B1) - A0.join(B0) == dA.join(B0) + A0.join(dB) + dA.join(dB)`` with
indexes, and ``reduce`` recomputes only the keys a difference touched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import zip_longest
from typing import Any

from .collection import (
    Collection,
    Multiplicity,
    Record,
    Values,
    count_values,
    distinct_values,
    max_values,
    min_values,
    sum_values,
)
from .errors import RecordError
from .index import Index

_EMPTY = Collection()


class DifferenceSequence:
    """A collection changing over time, as a list of difference collections.

    Invariant: ``_differences`` holds only ``Collection`` objects and nothing
    mutates it after construction. A shorter sequence is one that stopped
    changing: binary operators read its missing differences as empty.
    """

    __slots__ = ("_differences",)

    def __init__(self, differences: Iterable[Collection] = ()) -> None:
        """Copy a list of difference collections ``[A0, A1 - A0, ...]``.

        Raises:
            RecordError: an element is not a Collection.
        """
        self._differences = list(differences)
        for position, difference in enumerate(self._differences):
            if not isinstance(difference, Collection):
                raise RecordError(
                    f"a DifferenceSequence holds Collections, but element {position} is {difference!r}; "
                    f"wrap it: Collection([(record, multiplicity), ...])"
                )

    def __iter__(self) -> Iterator[Collection]:
        return iter(self._differences)

    def __len__(self) -> int:
        return len(self._differences)

    def __getitem__(self, position: int) -> Collection:
        return self._differences[position]

    def __eq__(self, other: object) -> bool:
        """Logical equality, difference by difference."""
        if not isinstance(other, DifferenceSequence):
            return NotImplemented
        return all(a == b for a, b in zip_longest(self, other, fillvalue=_EMPTY))

    __hash__ = None

    def __repr__(self) -> str:
        return f"DifferenceSequence({self._differences!r})"

    def accumulate(self) -> list[Collection]:
        """The collections themselves, ``[A0, A1, ...]``: running sums of the differences."""
        result, current = [], _EMPTY
        for difference in self._differences:
            current = current.concat(difference).consolidate()
            result.append(current)
        return result

    # -- linear operators: applied to each difference ----------------------

    def _each(self, f: Callable[[Collection], Collection]) -> DifferenceSequence:
        return DifferenceSequence(f(difference) for difference in self._differences)

    def concat(self, other: DifferenceSequence) -> DifferenceSequence:
        """The sum of two changing collections, difference by difference."""
        return DifferenceSequence(
            a.concat(b) for a, b in zip_longest(self, _checked(other, "concat"), fillvalue=_EMPTY)
        )

    def negate(self) -> DifferenceSequence:
        return self._each(Collection.negate)

    def map(self, f: Callable[[Record], Record]) -> DifferenceSequence:
        return self._each(lambda difference: difference.map(f))

    def filter(self, predicate: Callable[[Record], bool]) -> DifferenceSequence:
        return self._each(lambda difference: difference.filter(predicate))

    def flat_map(self, f: Callable[[Record], Iterable[Record]]) -> DifferenceSequence:
        return self._each(lambda difference: difference.flat_map(f))

    def consolidate(self) -> DifferenceSequence:
        return self._each(Collection.consolidate)

    # -- join and reduce: indexed, so work follows the keys that changed -----

    def join(self, other: DifferenceSequence) -> DifferenceSequence:
        """``(key, (a, b))`` for matching keys, as a sequence of differences.

        Step i emits ``dA.join(B) + A.join(dB) + dA.join(dB)``, where ``A`` and
        ``B`` are the indexes of everything before step i: the change in
        ``A_i.join(B_i)`` without computing it.

        Raises:
            RecordError: a record is not a ``(key, value)`` pair.
        """
        before_a, before_b = Index(), Index()
        result = []
        for difference_a, difference_b in zip_longest(self, _checked(other, "join"), fillvalue=_EMPTY):
            delta_a = Index.from_collection(difference_a, "join")
            delta_b = Index.from_collection(difference_b, "join")
            output = delta_a.join(before_b) + before_a.join(delta_b) + delta_a.join(delta_b)
            result.append(Collection._trusted(output))
            before_a.append(delta_a)
            before_b.append(delta_b)
            before_a.compact()
            before_b.compact()
        return DifferenceSequence(result)

    def reduce(self, f: Callable[[Values], Iterable[tuple[Any, Multiplicity]]]) -> DifferenceSequence:
        """``(key, output)`` for ``output`` in ``f(values of key)``, as differences.

        For each difference, only the keys it touches are recomputed: the new
        output ``f(values)`` minus the output so far, kept in a second index.

        Raises:
            RecordError: a record is not a ``(key, value)`` pair.
        """
        inputs, outputs = Index(), Index()
        result = []
        for difference in self._differences:
            delta = Index.from_collection(difference, "reduce")
            inputs.append(delta)
            inputs.compact()
            changes = Index()
            for key in delta.keys():
                values = inputs.get(key)
                for value, multiplicity in f(values) if values else ():
                    changes.add_value(key, (value, multiplicity))
                for value, multiplicity in outputs.get(key):
                    changes.add_value(key, (value, -multiplicity))
            changes.compact()
            outputs.append(changes)
            outputs.compact()
            result.append(
                Collection._trusted(
                    [((key, value), multiplicity) for key in changes.keys() for value, multiplicity in changes.get(key)]
                )
            )
        return DifferenceSequence(result)

    def count(self) -> DifferenceSequence:
        return self.reduce(count_values)

    def sum(self) -> DifferenceSequence:
        return self.reduce(sum_values)

    def min(self) -> DifferenceSequence:
        return self.reduce(min_values)

    def max(self) -> DifferenceSequence:
        return self.reduce(max_values)

    def distinct(self) -> DifferenceSequence:
        return self.reduce(distinct_values)

    def iterate(self, f: Callable[[DifferenceSequence], DifferenceSequence]) -> DifferenceSequence:
        """Not in this stage: see the error it raises."""
        raise NotImplementedError(
            "iterate needs versions with an iteration coordinate, which arrive in stage v4 "
            "(multidimensional versions); v1 has only a sequence index"
        )


def _checked(other: Any, operator: str) -> DifferenceSequence:
    if not isinstance(other, DifferenceSequence):
        raise RecordError(f"{operator} takes a DifferenceSequence, not {type(other).__name__}: {other!r}")
    return other
