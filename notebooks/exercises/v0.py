"""Checkers for the exercises of ``v0_collections.ipynb``: ``count``, ``distinct`` and ``join`` with negatives.

The collections a prediction is about are defined here (``COUNT_PUZZLE``,
``JOIN_LEFT``, ``JOIN_RIGHT``), so the notebook shows the very data the
checker judges. Expected answers are computed by stage v0 itself.
"""

from __future__ import annotations

from typing import Any

from workshop import Wrong, as_multiset, exercise

from v0 import Collection

COUNT_PUZZLE = Collection([
    (("ann", "x"), 2),
    (("ann", "y"), -1),
    (("bo", "x"), -2),
    (("cy", "z"), 1),
    (("cy", "z"), -1),
])
"""Three keys: ``ann`` with a positive and a negative value, ``bo`` with only a
negative one, ``cy`` whose value is added and removed."""

JOIN_LEFT = Collection([(("k", "a"), -1), (("k", "b"), 2), (("m", "c"), 3)])
JOIN_RIGHT = Collection([(("k", "x"), -3), (("n", "y"), 1)])



@exercise
def count_with_negatives(answer: Any) -> None:
    """The learner's prediction of ``COUNT_PUZZLE.count()``, as ``{(key, count): multiplicity}``."""
    expected = COUNT_PUZZLE.count().as_dict()
    got = as_multiset(answer, "your prediction of COUNT_PUZZLE.count()")
    if got == expected:
        return
    keys = {record[0] for record in got if isinstance(record, tuple) and len(record) == 2}
    if "cy" in keys:
        raise Wrong(
            f"you predicted {got}, with an output for cy; but cy's value 'z' is added once and removed once, "
            f"so cy has no values left and reduce never calls the count function for it: an emptied group "
            f"has no count at all, not a count of 0"
        )
    if not {record for record in got if isinstance(record, tuple) and record[:1] == ("bo",)}:
        raise Wrong(
            f"you predicted {got}, with nothing for bo; bo's only value 'x' has multiplicity -2, which is "
            f"not zero, so bo is a group and count runs on it: count adds up multiplicities, negatives included"
        )
    for key in ("ann", "bo"):
        want = next(record for record in expected if record[0] == key)
        have = [record for record in got if isinstance(record, tuple) and record[:1] == (key,)]
        if have != [want] or got[want] != 1:
            raise Wrong(
                f"you predicted {got}; for {key} count gives {want} with multiplicity 1: the count is the sum "
                f"of {key}'s multiplicities ({', '.join(str(m) for (k, _), m in COUNT_PUZZLE if k == key)}), "
                f"and nothing clips it at zero, so a count can be negative"
            )
    raise Wrong(f"you predicted {got}; COUNT_PUZZLE.count() is {expected}")


CASES = [
    Collection([(("a", 1), 1), (("a", 1), 2), (("a", 2), 1), (("b", 3), 4)]),
    Collection([(("a", 1), 2), (("a", 2), -1), (("b", 3), -2), (("c", 4), 1)]),
    Collection([(("a", 1), 1), (("a", 1), -1), (("a", 2), 1), (("b", 5), 3), (("b", 5), -4)]),
    Collection(),
]
"""Collections with repeats, negative multiplicities, values that cancel and keys that empty."""


class _NoDistinct(Collection):
    """A collection whose ``distinct`` says to use ``reduce`` instead."""

    __slots__ = ()

    def distinct(self) -> Collection:
        raise Wrong("your function called collection.distinct(); build it from collection.reduce(...) instead")

    def __repr__(self) -> str:
        return f"Collection({list(self)!r})"


@exercise
def distinct_via_reduce(answer: Any) -> None:
    """The learner's ``distinct(collection)`` built with ``reduce``, tried on collections with repeats and negatives."""
    if not callable(answer):
        raise Wrong(f"give a function distinct(collection), not {type(answer).__name__}: {answer!r}")
    for case in CASES:
        collection = _NoDistinct(list(case))
        got = answer(collection)
        if not isinstance(got, Collection):
            raise Wrong(f"on {collection} your function returned {type(got).__name__}; return a Collection "
                        f"(collection.reduce(...) returns one)")
        expected = case.distinct().as_dict()
        if got == case.distinct():
            continue
        got_dict = got.as_dict()
        totals = case.as_dict()
        for record in sorted(set(got_dict) | set(expected), key=repr):
            if got_dict.get(record, 0) == expected.get(record, 0):
                continue
            total = totals.get(record, 0)
            if total > 0:
                why = (f"{record} has multiplicity {total} in the input, which is positive, so distinct "
                       f"keeps it exactly once (multiplicity 1)")
            elif total == 0:
                why = f"{record} cancels out in the input (multiplicity 0), so it is not there to keep"
            else:
                why = (f"{record} has multiplicity {total} in the input: it is not present, so distinct drops it "
                       f"(keep only the values whose multiplicity is positive)")
            raise Wrong(f"on {collection} you gave {got_dict}; distinct gives {expected}: {why}")


@exercise
def join_with_negatives(answer: Any) -> None:
    """The learner's prediction of ``JOIN_LEFT.join(JOIN_RIGHT)``, as ``{(key, (a, b)): multiplicity}``."""
    expected = JOIN_LEFT.join(JOIN_RIGHT).as_dict()
    got = as_multiset(answer, "your prediction of JOIN_LEFT.join(JOIN_RIGHT)")
    if got == expected:
        return
    for record, multiplicity in got.items():
        if record not in expected:
            key = record[0] if isinstance(record, tuple) and record else record
            raise Wrong(
                f"you predicted {record} with multiplicity {multiplicity}, but the join has no such record: "
                f"a result needs the key {key!r} on both sides, and it pairs (key, (left value, right value))"
            )
    for record, multiplicity in expected.items():
        if record not in got:
            raise Wrong(f"you left out {record}; both sides have key {record[0]!r}, so they pair up")
        if got[record] != multiplicity:
            key, (left, right) = record
            left_m = JOIN_LEFT.as_dict()[(key, left)]
            right_m = JOIN_RIGHT.as_dict()[(key, right)]
            raise Wrong(
                f"you gave {record} multiplicity {got[record]}; it is ({left_m}) * ({right_m}) = {multiplicity}: "
                f"a joined record's multiplicity is the product of its two inputs', signs included"
            )
