"""Checkers for the exercises of ``v4_iteration_lexicographic.ipynb``: lexicographic versions and v4's ``iterate``.

The grid, the input history and the program an exercise is about are defined
here (``GRID_VERSIONS``, ``GRID_ROUNDS``, ``PREDICT_HISTORY``,
``geometric_series``), so the notebook shows the very data the checker
judges. Expected answers are computed by the stages themselves: v4 for what
v4 does, v0 (every version from scratch, through ``tests.harness``) for what
is right. The ``Version.join`` a learner builds is judged inside v4
against v0 from scratch (``workshop.build``).
"""

from __future__ import annotations

from collections.abc import Hashable
from itertools import pairwise
from typing import Any

from workshop import Wrong, check_piece, equals_from_scratch, exercise

from tests.examples import BY_NAME
from tests.harness import run, run_messages
from tests.strategies import growing_graph
from v4 import Version

geometric_series = BY_NAME["geometric_series"].program
"""Document 002's loop: ``numbers.iterate(body)``, the body doubling every number while it is <= 50."""

GRID_VERSIONS, GRID_ROUNDS = 3, 5
"""The grid of ``lexicographic_past``: input versions 0..2, rounds 0..4."""

POINT = (1, 2)
"""Round 2 of input version 1: the pair whose past the learner predicts."""

PREDICT_HISTORY = [(5, 0, 1), (3, 1, 1), (5, 2, -1)]
"""``wrong_answer_at_version_2``'s input: version 0 adds 5, version 1 adds 3, version 2 retracts 5."""


def _pairs(answer: Any) -> set[tuple[int, int]]:
    """A set of ``(version, round)`` pairs of the grid, or ``Wrong`` saying what the answer is instead."""
    try:
        pairs = set(answer)
    except TypeError:
        raise Wrong(f"give a set of (version, round) pairs, like {{(0, 0), (0, 1)}}, not {answer!r}") from None
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2 and all(type(c) is int for c in pair)):
            raise Wrong(f"{pair!r} is not a (version, round) pair of two ints, like (0, 3)")
        if not (0 <= pair[0] < GRID_VERSIONS and 0 <= pair[1] < GRID_ROUNDS):
            raise Wrong(
                f"{pair} is off the grid: versions run 0..{GRID_VERSIONS - 1} and rounds 0..{GRID_ROUNDS - 1}"
            )
    return pairs


@exercise
def lexicographic_past(answer: Any) -> None:
    """The pairs of the grid that v4 counts at or before ``POINT``: ``Version(pair).less_equal(Version(POINT))``."""
    got = _pairs(answer)
    expected = {
        (v, r) for v in range(GRID_VERSIONS) for r in range(GRID_ROUNDS)
        if Version((v, r)).less_equal(Version(POINT))
    }
    if got == expected:
        return
    missing, extra = sorted(expected - got), sorted(got - expected)
    late_rounds = [pair for pair in missing if pair[0] < POINT[0]]
    if late_rounds:
        raise Wrong(
            f"you left out {late_rounds}: in lexicographic order the first coordinate decides, so every round "
            f"of version 0, however late, is before {POINT} (0 < 1 settles it; the rounds are never compared). "
            f"Leaving them out is the product order, which v5 uses and v4 does not"
        )
    if missing:
        raise Wrong(f"you left out {missing}: a pair is in its own past, and earlier rounds of the same version count")
    later_version = [pair for pair in extra if pair[0] > POINT[0]]
    if later_version:
        raise Wrong(f"{later_version} come after {POINT}: their version, {later_version[0][0]}, is later than 1")
    raise Wrong(f"{extra} come after {POINT}: same version 1, but a later round than 2")


def _numbers(answer: Any, what: str) -> dict[Hashable, int]:
    """A prediction given as a set of numbers (each once) or as ``{number: multiplicity}``, zeros dropped."""
    if isinstance(answer, dict):
        return {record: m for record, m in answer.items() if m != 0}
    try:
        records = list(answer)
    except TypeError:
        raise Wrong(f"give {what} as a set of numbers, like {{1, 2}}, not {answer!r}") from None
    if len(set(records)) != len(records):
        raise Wrong(f"{records} lists a number twice; the loop's output is a set here, list each number once")
    return dict.fromkeys(records, 1)


@exercise
def wrong_answer_at_version_2(answer: Any) -> None:
    """The learner's prediction of what v4's loop holds at version 2 on ``PREDICT_HISTORY``."""
    got = _numbers(answer, "v4's output at version 2")
    expected = run("v4", geometric_series, [PREDICT_HISTORY])[2]
    from_scratch = run("v0", geometric_series, [PREDICT_HISTORY])[2]
    if got == expected:
        return
    if got == from_scratch:
        raise Wrong(
            f"{sorted(got)} is the right answer, from scratch (only 3 and its doubles are left); but v4 is wrong "
            f"here, and the question is what v4 holds. Hint: after version 0, how many times does distinct's "
            f"input hold 10? Retracting 5 takes away one of them"
        )
    missing, extra = sorted(set(expected) - set(got)), sorted(set(got) - set(expected))
    hints = []
    if missing:
        hints.append(
            f"v4 still holds {missing}: retracting 5 sends distinct (5, -1) and (10, -1), but 10 was held twice "
            f"(as 5's double at (0, 0) and as itself at (0, 1)), so 10 stays, and 20 and 40 with it"
        )
    if extra:
        hints.append(
            f"v4 does not hold {extra}: 5 itself is retracted (distinct held it once), and nothing but 5's "
            f"doubles and 3's chain (3, 6, 12, 24, 48) was ever in the output"
        )
    raise Wrong(f"you predicted {sorted(got)}; " + "; ".join(hints))


def _history(answer: Any) -> list[tuple[int, int, int]]:
    """The learner's history as ``(number, version, multiplicity)`` triples, or ``Wrong`` saying what is off."""
    try:
        updates = list(answer)
    except TypeError:
        raise Wrong(f"give a list of (number, version, multiplicity) triples, not {answer!r}") from None
    for update in updates:
        if not (isinstance(update, tuple) and len(update) == 3 and all(type(c) is int for c in update)):
            raise Wrong(f"{update!r} is not a (number, version, multiplicity) triple of ints, like (3, 1, -1)")
        number, version, multiplicity = update
        if not 1 <= number <= 50:
            raise Wrong(f"{update}: use numbers 1..50 (the loop drops anything above 50, and 0 doubles to itself)")
        if not 0 <= version <= 9:
            raise Wrong(f"{update}: use versions 0..9")
        if multiplicity == 0:
            raise Wrong(f"{update}: a multiplicity of 0 changes nothing; use +1 to add and -1 to retract")
    return updates


def _accumulated(updates: list[tuple[int, int, int]], version: int) -> dict[int, int]:
    totals: dict[int, int] = {}
    for number, at, multiplicity in updates:
        if at <= version:
            totals[number] = totals.get(number, 0) + multiplicity
    return {number: total for number, total in totals.items() if total}


@exercise
def input_v4_gets_right(answer: Any) -> None:
    """An input history for 002's geometric series, with a retraction, on which v4 agrees with from-scratch.

    Not a trivial one: at least two versions, a number present at one version
    and retracted at a later one, and a loop that runs more than one round.
    """
    updates = _history(answer)
    versions = sorted({version for _, version, _ in updates})
    if len(versions) < 2:
        raise Wrong(f"your history has updates at {len(versions)} version(s); use at least two, so v4 has to update")
    for version in versions:
        negative = {n: m for n, m in _accumulated(updates, version).items() if m < 0}
        if negative:
            raise Wrong(
                f"at version {version} the input holds {negative}: a retraction must take away something "
                f"that is there; add a number before you retract it"
            )
    retracted = [
        (number, later) for earlier, later in pairwise(versions)
        for number, m in _accumulated(updates, earlier).items()
        if _accumulated(updates, later).get(number, 0) < m
    ]
    if not retracted:
        raise Wrong(
            "nothing present at one version is retracted at a later one, and on inputs that only grow v4 is "
            "always right; the exercise is to find a retraction v4 gets right"
        )
    rounds: dict[int, int] = {}
    for version, _ in run_messages("v4", geometric_series, [updates]):
        rounds[version] = rounds.get(version, 0) + 1
    if max(rounds.values(), default=0) < 2:
        raise Wrong(
            f"the loop changes its output in at most one round at every version ({rounds or 'no output at all'}); "
            f"give it a number whose doubles it has to find, like 1, so some version takes several rounds"
        )
    v4_result = run("v4", geometric_series, [updates])
    from_scratch = run("v0", geometric_series, [updates])
    for version in versions:
        ours, right = v4_result.get(version, {}), from_scratch.get(version, {})
        for number in sorted(set(ours) | set(right)):
            if ours.get(number, 0) != right.get(number, 0):
                raise Wrong(
                    f"at version {version}, v4 holds {number} with multiplicity {ours.get(number, 0)}, but from "
                    f"scratch it is {right.get(number, 0)} (v4 holds {sorted(ours)}, from scratch {sorted(right)}). "
                    f"The retraction of {retracted[0][0]} at version {retracted[0][1]} leaves a double behind in "
                    f"distinct's index; retract a number whose doubles should stay anyway, or whose double is over 50"
                )


@exercise
def build_join(answer: Any) -> None:
    """The learner's ``Version.join(self, other)``, run inside v4: reachability equals v0 on graphs that only grow.

    Those are the inputs the suite checks v4's loops on (``growing_graph``):
    v4 is right for them, so any difference is the learner's join's.
    """
    check_piece("v4", "order.Version.join", answer, [equals_from_scratch("v4", "reachability", growing_graph())])
