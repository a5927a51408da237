"""Checkers for the exercises of ``v1_difference_sequences.ipynb``: differences, a join's change, Index.join, reduce.

The data a prediction is about is defined here (``ORDERS``, ``PRICES`` and
their changes; ``POSTS``), so the notebook shows what the checker judges.
Expected answers are computed by stage v1 itself; the ``Index.join`` a learner
builds is judged inside v1 against v0 from scratch (``workshop.build``), then by
the keys it touches (``JOIN_COST``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import ItemsView, Iterator, KeysView, Set, ValuesView
from typing import Any

from hypothesis import strategies as st
from workshop import Property, Wrong, as_multiset, check_piece, equals_from_scratch, exercise

from tests import strategies
from v1 import Collection, DifferenceSequence, Index


def _minus(x: Collection, y: Collection) -> Collection:
    return x.concat(y.negate()).consolidate()


SNAPSHOT_CASES = [
    [
        Collection([("fig", 1), ("kiwi", 2)]),
        Collection([("fig", 1), ("kiwi", 3), ("plum", 1)]),
        Collection([("kiwi", 3)]),
        Collection([("kiwi", 3), ("fig", 1)]),
    ],
    [Collection([(("north", "apple"), 2)]), Collection([(("north", "apple"), 2)])],
    [Collection([("only", 1)])],
    [],
]
"""Snapshot lists: growing, shrinking, a record that leaves and comes back, no change, one snapshot, none."""


@exercise
def differences_from_snapshots(answer: Any) -> None:
    """The learner's ``differences(snapshots)``: the DifferenceSequence ``[A0, A1 - A0, ...]`` of the snapshots."""
    if not callable(answer):
        raise Wrong(f"give a function differences(snapshots), not {type(answer).__name__}: {answer!r}")
    for snapshots in SNAPSHOT_CASES:
        got = answer(list(snapshots))
        shown = [snapshot.as_dict() for snapshot in snapshots]
        if isinstance(got, list) and all(isinstance(item, Collection) for item in got):
            got = DifferenceSequence(got)
        if not isinstance(got, DifferenceSequence):
            raise Wrong(f"on the snapshots {shown} your function returned {type(got).__name__}; "
                        f"return a DifferenceSequence (or a list of Collections)")
        if len(got) != len(snapshots):
            hint = (" The first difference is A0 itself: A0 minus the empty collection before it."
                    if len(got) == len(snapshots) - 1 else "")
            raise Wrong(f"on the snapshots {shown} you gave {len(got)} differences; there is one per snapshot, "
                        f"so {len(snapshots)}.{hint}")
        previous = Collection()
        for position, (snapshot, difference) in enumerate(zip(snapshots, got, strict=True)):
            expected = _minus(snapshot, previous)
            if difference != expected:
                if difference == _minus(previous, snapshot):
                    why = "the sign is reversed: subtract the earlier snapshot from the later one"
                elif difference == snapshot and position > 0:
                    why = "that is the snapshot itself, not what changed since the one before"
                else:
                    why = f"it is A{position} - A{position - 1}" if position else "it is A0 itself"
                raise Wrong(f"on the snapshots {shown}, difference {position} should be {expected.as_dict()}, "
                            f"you gave {difference.as_dict()}: {why}")
            previous = snapshot
        assert got.accumulate() == snapshots  # the definition above makes this so; it is what differences are for


ORDERS = Collection([(("tea", "ann"), 1), (("cake", "bo"), 1)])
"""(item, customer): the orders at step 0."""
ORDERS_CHANGE = Collection([(("tea", "cy"), 1), (("cake", "bo"), -1)])
"""Step 1: cy orders tea, bo cancels the cake."""
PRICES = Collection([(("tea", 3), 1), (("cake", 5), 1)])
"""(item, price) at step 0."""
PRICES_CHANGE = Collection([(("tea", 3), -1), (("tea", 4), 1)])
"""Step 1: tea goes from 3 to 4."""


def join_terms() -> dict[str, Collection]:
    """The three terms of the change of ``orders.join(prices)`` at step 1."""
    return {
        "dA.join(B0)": ORDERS_CHANGE.join(PRICES),
        "A0.join(dB)": ORDERS.join(PRICES_CHANGE),
        "dA.join(dB)": ORDERS_CHANGE.join(PRICES_CHANGE),
    }



@exercise
def join_change(answer: Any) -> None:
    """The learner's prediction of the join's output difference at step 1, as ``{(item, (customer, price)): m}``."""
    orders = DifferenceSequence([ORDERS, ORDERS_CHANGE])
    prices = DifferenceSequence([PRICES, PRICES_CHANGE])
    expected = orders.join(prices)[1].as_dict()
    got = as_multiset(answer, "the output difference at step 1")
    if got == expected:
        return
    terms = join_terms()
    after = ORDERS.concat(ORDERS_CHANGE).join(PRICES.concat(PRICES_CHANGE)).as_dict()
    if got == after:
        raise Wrong(f"{got} is the whole join after the change (A1.join(B1)); the output difference is what "
                    f"changed: A1.join(B1) - A0.join(B0), which the three terms give without computing A1.join(B1)")
    first_two = terms["dA.join(B0)"].concat(terms["A0.join(dB)"]).as_dict()
    if got == first_two:
        raise Wrong(f"you gave {got}, the first two terms only; you left out dA.join(dB): cy's new tea order meets "
                    f"tea's new price, so that term adds ('tea', ('cy', 4)) and removes the ('tea', ('cy', 3)) that "
                    f"dA.join(B0) produced with the old price")
    for record in sorted(set(got) | set(expected), key=repr):
        if got.get(record, 0) != expected.get(record, 0):
            parts = ", ".join(f"{name} gives {term.as_dict().get(record, 0):+d}" for name, term in terms.items())
            raise Wrong(f"you gave {record} multiplicity {got.get(record, 0)}, but it is {expected.get(record, 0)} "
                        f"({parts}; a multiplicity of 0 means the record is not in the difference)")


POSTS = DifferenceSequence([
    Collection([(("ann", "p1"), 1), (("bo", "p2"), 1), (("cy", "p3"), 1)]),
    Collection([(("ann", "p4"), 1)]),
    Collection([(("bo", "p2"), -1), (("bo", "p5"), 1)]),
    Collection([(("cy", "p3"), -1), (("di", "p6"), 1)]),
])
"""(author, post) as four differences: three authors start; ann posts again; bo replaces a post;
cy deletes her only post as di writes a first one."""


def keys_recomputed(sequence: DifferenceSequence) -> list[set[Any]]:
    """For each difference, the keys for which ``sequence.count()`` calls its reduction function."""
    calls: list[Any] = []

    def counting(values):
        calls.append(values[0][0][0])  # each value is a whole (author, post) record
        return [(sum(multiplicity for _, multiplicity in values), 1)]

    per_difference, seen = [], 0
    for length in range(1, len(sequence) + 1):
        calls.clear()
        DifferenceSequence(list(sequence)[:length]).map(lambda record: (record[0], record)).reduce(counting)
        per_difference.append(set(calls[seen:]))
        seen = len(calls)
    return per_difference


@exercise
def reduce_recomputes(answer: Any) -> None:
    """The learner's prediction, per difference of ``POSTS``, of the set of keys ``POSTS.count()`` recomputes."""
    expected = keys_recomputed(POSTS)
    if not isinstance(answer, list | tuple) or not all(isinstance(keys, set | list | tuple) for keys in answer):
        raise Wrong(f"give a list with one set of keys per difference, like [{{'ann'}}, ...], not {answer!r}")
    if len(answer) != len(POSTS):
        raise Wrong(f"POSTS has {len(POSTS)} differences, so give {len(POSTS)} sets of keys, not {len(answer)}")
    states = POSTS.accumulate()
    for position, (keys, want) in enumerate(zip(answer, expected, strict=True)):
        keys = set(keys)
        if keys == want:
            continue
        mentioned = {record[0] for record, _ in POSTS[position]}
        still_there = {record[0] for record in states[position].as_dict()}
        for key in sorted(keys - want, key=repr):
            if key in mentioned:
                why = (f"difference {position} mentions {key!r}, but after it {key!r} has no values left, so reduce "
                       f"does not call the function: it only retracts the old output of {key!r}")
            else:
                why = (f"difference {position} does not mention {key!r}, so v1 does not look at {key!r}: its output "
                       f"stays as it was")
            raise Wrong(f"for difference {position} you listed {key!r}: {why}")
        for key in sorted(want - keys, key=repr):
            assert key in mentioned and key in still_there
            raise Wrong(f"for difference {position} you left out {key!r}: the difference mentions {key!r} and "
                        f"{key!r} still has values, so the function runs for it, even when the result turns out "
                        f"the same (reduce cannot know that without calling it)")


class _Watched(defaultdict):
    """An index's ``_values`` that notes in ``touched`` every key read, looked up or walked over.

    Put in place of the ``_values`` of an index built for the check only, so
    the stage's own indexes stay plain dicts. ``keys() & keys()`` walks the
    smaller side, as a dict's does with another set, so that way of finding
    common keys is not counted as walking both.
    """

    def __init__(self, values: dict, touched: set) -> None:
        super().__init__(list, values)
        self.touched = touched

    def __getitem__(self, key: Any) -> Any:
        self.touched.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: Any) -> bool:
        self.touched.add(key)
        return super().__contains__(key)

    def get(self, key: Any, default: Any = None) -> Any:
        self.touched.add(key)
        return super().get(key, default)

    def __iter__(self) -> Iterator[Any]:
        for key in super().__iter__():
            self.touched.add(key)
            yield key

    def keys(self) -> KeysView:
        return _WatchedKeys(self)

    def items(self) -> ItemsView:
        return ItemsView(self)

    def values(self) -> ValuesView:
        return ValuesView(self)


class _WatchedKeys(KeysView):
    """The keys of a ``_Watched``: walking or testing them goes through it; an intersection walks the smaller."""

    def __and__(self, other: Any) -> set:
        other = other if isinstance(other, Set) else set(other)  # a list or a generator is walked whole
        small, large = (self, other) if len(self) <= len(other) else (other, self)
        return {key for key in small if key in large}

    __rand__ = __and__


JoinExample = tuple[list[tuple[Any, int]], list[tuple[Any, int]]]
"""``(difference, before)``: the ``((key, value), multiplicity)`` updates of a difference and of all data before it."""


def _indexes(example: JoinExample) -> dict[str, Index]:
    """``D``, the difference indexed as v1's join indexes one, and ``B``, everything before it, compacted."""
    difference, before = example
    indexes = {"D": Index.from_collection(Collection(difference), "join"),
               "B": Index.from_collection(Collection(before), "join")}
    indexes["B"].compact()
    return indexes


def _cost_of_joins(example: JoinExample) -> dict[str, dict[str, Any]]:
    """For ``D.join(B)`` and ``B.join(D)``, each on fresh indexes: the keys looked at, and what was left changed.

    Only the keys of the join's own two indexes are watched; the stage's
    indexes are not.
    """
    costs = {}
    for call, (first, second) in {"D.join(B)": ("D", "B"), "B.join(D)": ("B", "D")}.items():
        touched: set[Any] = set()
        indexes = _indexes(example)
        held = {name: {key: list(values) for key, values in index._values.items()} for name, index in indexes.items()}
        for index in indexes.values():
            index._values = _Watched(index._values, touched)
        indexes[first].join(indexes[second])
        changed = {}
        for name, index in indexes.items():
            now = dict(dict.items(index._values))  # dict's own items: reading for the check is not the join's
            keys = [key for key in held[name].keys() | now.keys() if held[name].get(key) != now.get(key)]
            if keys:
                changed[name] = sorted(keys, key=repr)
        costs[call] = {"keys looked at": len(touched), "keys left changed": changed}
    return costs


def _cost_of_walking_the_smaller(example: JoinExample) -> dict[str, dict[str, Any]]:
    """Both calls look at the keys of the index with fewer keys, once each, and leave both indexes as they were."""
    smaller = min(len(index) for index in _indexes(example).values())
    return {call: {"keys looked at": smaller, "keys left changed": {}} for call in ("D.join(B)", "B.join(D)")}


JOIN_COST = Property(
    name="the keys Index.join touches",
    examples=st.tuples(st.lists(st.tuples(strategies.records, st.integers(1, 2)), min_size=1, max_size=3),
                       st.lists(st.tuples(strategies.records, st.integers(1, 2)), min_size=1, max_size=8)),
    got=_cost_of_joins,
    expected=_cost_of_walking_the_smaller,
    example="(difference D, everything before it B), each a list of ((key, value), multiplicity)",
    reference="walking the smaller index",
    rule="v1 joins every difference with an index B of everything the other input ever held, on every update, so "
         "the cost of an update must depend on the size of the change, not of the state: walking B's 100,000 keys "
         "for a one-key difference costs 100,000 steps each time. Walk the keys of the index with fewer keys (len "
         "gives the number of keys), look each up in the other with get(key), and leave both as they were: "
         "reading a missing key through _values[key] (a defaultdict) stores an empty list under it, so the other "
         "index grows with keys that hold nothing, and every later walk of it pays for them.",
)
"""What the check of ``Index.join`` adds to its answers: the work follows the difference, and nothing is written."""


@exercise
def build_index_join(answer: Any) -> None:
    """The learner's ``Index.join(self, other)``, run inside v1: join and a self-join equal v0, then ``JOIN_COST``.

    Right answers come first: a join that pairs wrongly is shown the history
    that shows it. A right join may still walk the larger index, or write
    empty keys into the other one, which no output shows; ``JOIN_COST``
    calls the piece directly on two indexes and counts the keys it touches.
    """
    check_piece("v1", "index.Index.join", answer,
                [*(equals_from_scratch("v1", name) for name in ("join", "self_join")), JOIN_COST])
