"""The ladder's stages, v0 to v5, as engines for the conformance oracle (``final.conformance``).

Each stage is judged through the oracle's Python plug-in, as an outside
engine written in Python would be: ``--engine ladder:v3`` names this module
and a factory in it (``--engine v3`` is short for it, from a clone). The
factory gives a ``StageEngine``, which runs a case's program with the
operators of document 002 (the catalog's ``portable`` implementation) through
the oracle's one driver, ``final.conformance.drive``. This module lives at the
root of the repository, beside the stages, because ``final`` imports no stage.

A stage lacking a concept the case needs answers ``unsupported`` with the
reason, which is not a failure: iterate before v4, partially ordered
versions and loops inside loops before v5, document 000's operators before
final, and iterate with retractions on v4 (document 002 shows v4's
lexicographic versions get that wrong).
"""

from __future__ import annotations

import importlib
from functools import partial

from final.conformance.cases import Case
from final.conformance.catalog import program_named
from final.conformance.drive import Run, drive, unsupported

STAGES = ("v0", "v1", "v2", "v3", "v4", "v5")


def missing_concept(stage: str, case: Case) -> str | None:
    """Why ``stage`` cannot run ``case`` (the concept it lacks), or None when it can."""
    program = program_named(case.program)
    if "final" in program.concepts():
        return f"{case.program} needs operators only final has (from {program.source}); {stage} lacks them"
    if "iterate" in program.concepts() and stage in ("v1", "v2", "v3"):
        return f"{case.program} iterates; iterate needs versions with an iteration coordinate, which arrive in v4"
    if program.nested and stage == "v4":
        return (
            f"{case.program} has a loop inside a loop, which v4 does not finish (its graph runs past the "
            "driver's step budget); loops in loops are tested from v5 on"
        )
    if case.dimensions > 1 and stage in ("v1", "v2", "v3", "v4"):
        return (
            f"{stage} takes its input one version after another (v1 and v2 as a sequence, v3 and v4 in "
            "version order); partially ordered (tuple) versions arrive in v5"
        )
    retracts = any(multiplicity < 0 for history in case.histories() for _, _, multiplicity in history)
    if stage == "v4" and "iterate" in program.concepts() and retracts:
        return (
            "v4's iterate is right only for inputs that only grow: with versions in lexicographic order, a "
            "retraction leaves what earlier iterations derived (document 002, v4), which v5 fixes"
        )
    return None


class StageEngine:
    """One stage of the ladder, run in the process that made it."""

    def __init__(self, stage: str) -> None:
        if stage not in STAGES:
            raise ValueError(f"unknown stage {stage!r}: expected one of {', '.join(STAGES)}")
        self.name = stage

    def run(self, case: Case) -> Run:
        reason = missing_concept(self.name, case)
        if reason is not None:
            return unsupported(reason)
        return drive(importlib.import_module(self.name), program_named(case.program).portable, case)

    def close(self) -> None:
        pass


v0 = partial(StageEngine, "v0")
v1 = partial(StageEngine, "v1")
v2 = partial(StageEngine, "v2")
v3 = partial(StageEngine, "v3")
v4 = partial(StageEngine, "v4")
v5 = partial(StageEngine, "v5")
