"""Engines with planted faults, for testing that the conformance checker catches them.

Each wraps final's adapter and spoils its output in one way a real engine
might: dropping a retraction, emitting at the wrong version, counting twice.
Run as a program (``python -m tests.conformance_faults drop_retraction``) it
speaks the protocol, so the checker's subprocess path is tested too.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from final.conformance.cases import Case
from final.conformance.drive import FinalEngine, Run
from final.conformance.engines import serve

Updates = list[tuple]


def drop_retraction(updates: Updates) -> Updates:
    """Loses the first retraction (negative multiplicity) the output has."""
    first = next((i for i, (_, _, m) in enumerate(updates) if m < 0), None)
    return updates if first is None else updates[:first] + updates[first + 1:]


def later(version: int | tuple) -> int | tuple:
    return version + 1 if isinstance(version, int) else (version[0] + 1, *version[1:])


def wrong_version(updates: Updates) -> Updates:
    """Emits the output's first update one version late (an int plus one, a tuple's first coordinate plus one)."""
    if not updates:
        return updates
    record, version, multiplicity = updates[0]
    return [(record, later(version), multiplicity), *updates[1:]]


def double_count(updates: Updates) -> Updates:
    """Emits every update twice."""
    return [update for update in updates for _ in range(2)]


def no_frontiers(updates: Updates) -> Updates:
    """Emits the right updates and no output frontier: an engine that ignores frontiers."""
    return updates


FAULTS: dict[str, Callable[[Updates], Updates]] = {
    "no_frontiers": no_frontiers,
    "drop_retraction": drop_retraction,
    "wrong_version": wrong_version,
    "double_count": double_count,
}


class FaultyEngine:
    """final, with its output passed through one of ``FAULTS``: all of it, then the closing frontier ``[]``
    (which ``no_frontiers`` leaves out too)."""

    def __init__(self, fault: str) -> None:
        self.name = f"final+{fault}"
        self.fault = FAULTS[fault]
        self.final = FinalEngine()

    def run(self, case: Case) -> Run:
        run = self.final.run(case)
        if run.status != "done":
            return run
        faulty = Run()
        for output in case.outputs or (None,):  # each output of a case with several, alike
            faulty.add("data", self.fault(run.updates(output)), output)
            if self.fault is not no_frontiers:
                faulty.add("frontier", [], output)
        return faulty

    def close(self) -> None:
        pass


if __name__ == "__main__":
    serve(FaultyEngine(sys.argv[1]))
