"""Checkers for the exercises of ``v1_difference_sequences.ipynb``: differences, a join's change, Index.join, reduce.

The data a prediction is about is defined here (``ORDERS``, ``PRICES`` and
their changes; ``POSTS``), so the notebook shows what the checker judges.
Expected answers are computed by stage v1 itself; the ``Index.join`` a learner
builds is judged inside v1 against v0 from scratch (``workshop.build``).
"""

from __future__ import annotations

from typing import Any

from workshop import Wrong, as_multiset, check_piece, equals_from_scratch, exercise

from v1 import Collection, DifferenceSequence


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


@exercise
def build_index_join(answer: Any) -> None:
    """The learner's ``Index.join(self, other)``, run inside v1: join and a self-join must equal v0 from scratch."""
    check_piece("v1", "index.Index.join", answer, [equals_from_scratch("v1", name) for name in ("join", "self_join")])
