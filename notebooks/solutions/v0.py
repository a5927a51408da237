"""Solutions to the exercises of ``v0_collections.ipynb``, each named after its checker in ``exercises.v0``."""

from __future__ import annotations

count_with_negatives = {("ann", 1): 1, ("bo", -2): 1}
"""ann: 2 - 1 = 1 value; bo: -2 values (nothing clips a count at zero); cy: emptied, so no output."""


def distinct_via_reduce(collection):
    """Each ``(key, value)`` whose multiplicity is positive, once: ``reduce`` with a function that keeps those."""

    def present_once(values):
        return [(value, 1) for value, multiplicity in values if multiplicity > 0]

    return collection.reduce(present_once)


join_with_negatives = {("k", ("a", "x")): 3, ("k", ("b", "x")): -6}
"""Only key k is on both sides; (-1) * (-3) = 3 and 2 * (-3) = -6."""


def _distinct_of_everything(collection):
    """Keeps every value reduce hands over, also those with negative multiplicity."""
    return collection.reduce(lambda values: [(value, 1) for value, _ in values])


MISTAKES = {
    "count_with_negatives": {("ann", 1): 1, ("bo", -2): 1, ("cy", 0): 1},
    "distinct_via_reduce": _distinct_of_everything,
    "join_with_negatives": {("k", ("a", "x")): -3, ("k", ("b", "x")): -6},
}
"""A plausible wrong answer per exercise: an emptied group counted as 0; negative values kept; a sign lost."""
