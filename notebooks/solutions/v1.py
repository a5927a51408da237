"""Solutions to the exercises of ``v1_difference_sequences.ipynb``, each named after its checker in ``exercises.v1``."""

from __future__ import annotations

from itertools import pairwise

from v1 import Collection, DifferenceSequence


def differences_from_snapshots(snapshots):
    """``[A0, A1 - A0, A2 - A1, ...]``: each snapshot minus the one before, an empty one before the first."""
    differences, previous = [], Collection()
    for snapshot in snapshots:
        differences.append(snapshot.concat(previous.negate()).consolidate())
        previous = snapshot
    return DifferenceSequence(differences)


join_change = {
    ("cake", ("bo", 5)): -1,  # dA.join(B0): bo's cancelled cake at the old price
    ("tea", ("ann", 3)): -1,  # A0.join(dB): ann's tea loses price 3 ...
    ("tea", ("ann", 4)): 1,  # ... and gains price 4
    ("tea", ("cy", 4)): 1,  # dA.join(B0) gives (cy, 3) +1 and (cy, 4) nothing; dA.join(dB) gives (cy, 3) -1, (cy, 4) +1
}

reduce_recomputes = [{"ann", "bo", "cy"}, {"ann"}, {"bo"}, {"di"}]
"""bo is recomputed although its count stays 1; cy is mentioned last but emptied, so only retracted."""


def _differences_after_the_first(snapshots):
    """Forgets that the first difference is A0 itself."""
    return DifferenceSequence(
        later.concat(earlier.negate()).consolidate() for earlier, later in pairwise(snapshots)
    )


def build_index_join(self, other):
    """Walk the smaller index's keys; pair each value here with each of ``other``'s under the key, self's first."""
    smaller, larger = (self, other) if len(self) <= len(other) else (other, self)
    result = []
    for key in smaller.keys():
        if key not in larger.keys():
            continue
        for value, multiplicity in self.get(key):
            for other_value, other_multiplicity in other.get(key):
                result.append(((key, (value, other_value)), multiplicity * other_multiplicity))
    return result


def _join_smaller_first(self, other):
    """Pairs values as (smaller index's, larger index's): swapped whenever ``self`` is the larger."""
    smaller, larger = (self, other) if len(self) <= len(other) else (other, self)
    return [((key, (value, other_value)), multiplicity * other_multiplicity)
            for key in smaller.keys() for value, multiplicity in smaller.get(key)
            for other_value, other_multiplicity in larger.get(key)]


MISTAKES = {
    "differences_from_snapshots": _differences_after_the_first,
    "join_change": {("cake", ("bo", 5)): -1, ("tea", ("ann", 3)): -1, ("tea", ("ann", 4)): 1, ("tea", ("cy", 3)): 1},
    "reduce_recomputes": [{"ann", "bo", "cy"}, {"ann"}, {"bo"}, {"cy", "di"}],
    "build_index_join": _join_smaller_first,
}
"""A plausible wrong answer per exercise: A0 dropped; the third term dA.join(dB) left out; the emptied key listed;
a join that pairs values in the order it walks the indexes."""
