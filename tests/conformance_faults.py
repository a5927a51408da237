"""Engines with planted faults, for testing that the conformance checker catches them.

Each wraps final's adapter and spoils its output in one way a real engine
might: dropping a retraction, emitting at the wrong version, counting twice, keeping zero entries;
``MergingEngine`` spoils its input instead, the way an engine that reads
JSON's booleans as Python's bool does. Run as a program (``python -m tests.conformance_faults drop_retraction``) it
speaks the protocol, so the checker's subprocess path is tested too.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Hashable

from final.conformance.cases import Case
from final.conformance.drive import FinalEngine, Run
from final.conformance.encoding import Boolean
from final.conformance.engines import serve
from final.conformance.versions import consolidate

Updates = list[tuple]


def drop_retraction(updates: Updates) -> Updates:
    """Loses one retraction (negative multiplicity) of the output: the first in the order of its record and
    version as ``repr`` writes them, so the same one in every run (final's order of a version's updates
    follows string hashing, which differs from process to process)."""
    retractions = [i for i, (_, _, m) in enumerate(updates) if m < 0]
    if not retractions:
        return updates
    first = min(retractions, key=lambda i: repr(updates[i][:2]))
    return updates[:first] + updates[first + 1:]


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


def keep_zeros(updates: Updates) -> Updates:
    """Emits each update, then its record at its version with multiplicity 0: what an engine sends whose
    consolidation keeps the entries it summed to 0."""
    return [kept for record, version, multiplicity in updates
            for kept in ((record, version, multiplicity), (record, version, 0))]


FAULTS: dict[str, Callable[[Updates], Updates]] = {
    "no_frontiers": no_frontiers,
    "drop_retraction": drop_retraction,
    "wrong_version": wrong_version,
    "double_count": double_count,
    "keep_zeros": keep_zeros,
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


def as_bool(merged: tuple[Boolean, ...], record: Hashable) -> Hashable:
    """``record`` with the booleans of ``merged`` (``TRUE``, ``FALSE``), at any depth of tuples, as Python's
    bool."""
    if isinstance(record, tuple):
        return tuple(as_bool(merged, item) for item in record)
    return record.value if isinstance(record, Boolean) and record in merged else record


def as_boolean(record: Hashable) -> Hashable:
    """``record`` with Python's bools, at any depth of tuples, written back as ``TRUE`` and ``FALSE``."""
    if isinstance(record, tuple):
        return tuple(as_boolean(item) for item in record)
    return Boolean(record) if isinstance(record, bool) else record


class MergingEngine:
    """final fed JSON's booleans (those of ``merged``) as Python's bool, which Python's dicts take for its
    integer (``True`` for ``1``, ``False`` for ``0``: they are equal and hash alike, and a dict keeps
    whichever came first).

    So final merges the two wherever it files records or keys by value, as
    an engine does that reads JSON's ``true`` as a bool of a language in
    which it equals ``1`` (pydbsp's Z-sets, its REPORT's D1). Its output is
    consolidated at each version in such a dict too, as such an engine's
    collections are (concat, difference and explode file nothing in final,
    so there the merge shows only in the output), and the bools in it are
    written back as ``TRUE`` and ``FALSE``. With ``merged`` empty nothing is
    merged, and the engine is as right as final.
    """

    def __init__(self, merged: tuple[Boolean, ...]) -> None:
        self.name = "final merging " + (" and ".join(map(repr, merged)) or "nothing")
        self.merged = merged
        self.final = FinalEngine()

    def run(self, case: Case) -> Run:
        messages = tuple(message if message.data is None else dataclasses.replace(
            message, data=tuple((as_bool(self.merged, record), version, m) for record, version, m in message.data),
        ) for message in case.messages)
        run = self.final.run(dataclasses.replace(case, messages=messages))
        if run.status != "done":
            return run
        merging = Run()
        for output in case.outputs or (None,):
            by_version = consolidate(run.updates(output))  # a dict per version, keyed by Python's values
            merging.add("data", [(as_boolean(record), version, multiplicity) for version, difference in
                                 by_version.items() for record, multiplicity in difference.items()], output)
            merging.add("frontier", [], output)
        return merging

    def close(self) -> None:
        pass


if __name__ == "__main__":
    serve(FaultyEngine(sys.argv[1]))
