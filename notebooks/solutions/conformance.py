"""Solutions to the exercises of ``conformance_oracle.ipynb``, and a plausible mistake for each."""

from __future__ import annotations

from final.conformance import Case
from final.conformance.drive import Run
from final.conformance.versions import join


def join_closure_of(versions: list[tuple[int, ...]]) -> set[tuple[int, ...]]:
    """The versions and every join of some of them: join pairs, again and again, until nothing new appears."""
    closure = set(versions)
    while True:
        new = {join(a, b) for a in closure for b in closure} - closure
        if not new:
            return closure
        closure |= new


fruit_counts = {
    (0, 0): {("apple", 1): 1, ("pear", 1): 1},
    (0, 1): {("apple", 2): 1},  # apple: (apple, 1) and (apple, 3); the pear's record is gone
    (1, 0): {("apple", 2): 1, ("pear", 1): 1},  # apple: (apple, 1) and (apple, 2)
    (1, 1): {("apple", 3): 1},  # both changes: three apples, no pear
}
"""``count_by_key`` of ``FRUIT_CASE`` at each version of the join closure of (0, 0), (0, 1) and (1, 0)."""


def plus_five_evens_engine(case: Case) -> Run:
    """An engine for ``plus_five_evens`` alone: each input update of n becomes one of n + 5, at the same version
    and with the same multiplicity, when n + 5 is even. A linear program needs no state, and its output
    frontier is its input's: the input's frontier messages are passed on as they are."""
    if case.program != "plus_five_evens":
        return Run(status="unsupported", reason=f"this engine runs plus_five_evens only, not {case.program}")
    run = Run()
    for message in case.messages:
        if message.data is not None:
            run.events.append(("data", [(n + 5, version, m) for n, version, m in message.data if (n + 5) % 2 == 0]))
        else:
            run.events.append(("frontier", list(message.frontier)))
    return run


def _pairwise_closure(versions: list[tuple[int, ...]]) -> set[tuple[int, ...]]:
    """One round of joins only: right for pairs, but three triples can join to something new again."""
    return set(versions) | {join(a, b) for a in versions for b in versions}


def _evens_of_the_input(case: Case) -> Run:
    """Keeps n when n is even, instead of when n + 5 is."""
    run = Run()
    for message in case.messages:
        if message.data is not None:
            run.events.append(("data", [(n + 5, version, m) for n, version, m in message.data if n % 2 == 0]))
    return run


MISTAKES = {
    "join_closure_of": _pairwise_closure,
    "fruit_counts": {version: counts for version, counts in fruit_counts.items() if version != (1, 1)},
    "plus_five_evens_engine": _evens_of_the_input,
}
