"""Solutions to the exercises of ``final3_aggregates.ipynb``, each named after its checker in ``exercises.final3``."""

from __future__ import annotations

min_after_retractions = {
    1: {},
    2: {("g", 3): -1, ("g", 5): 1},
    3: {},
}
"""One 3 of two goes: still 3. The last 3 goes: 3 out, 5 in. The 8 goes: it was never the minimum."""


def build_min(values):
    """The least value present: a value is there when its multiplicity is positive, and a group may have none."""
    present = [value for value, multiplicity in values if multiplicity > 0]
    return [(min(present), 1)] if present else []


def _least_listed(values):
    """Takes the least value listed, whatever its multiplicity: a value retracted more often than inserted counts."""
    return [(min(value for value, _ in values), 1)]


loop_frontier = {"pointstamps": {"input roots": 5, "input edges": 3}, "reached frontier": 3}
"""Only the inputs' frontiers are counted once the loop has converged, and the output waits for the input behind."""

MISTAKES = {
    "min_after_retractions": {1: {("g", 3): -1, ("g", 5): 1}, 2: {}, 3: {}},
    "loop_frontier": {"pointstamps": {"input roots": 5, "input edges": 3}, "reached frontier": 5},
    "build_min": _least_listed,
}
"""A plausible wrong answer per exercise: a record's multiplicity of 2 overlooked, so the minimum seems to go at
once; the output's frontier taken from the input that is ahead; the least value listed taken, though a value
retracted more often than inserted (a negative multiplicity) is not there."""
