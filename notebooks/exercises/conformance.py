"""Checkers for the exercises of ``conformance_oracle.ipynb``: a join closure, a case's expected output, an engine.

The case the second exercise asks about is built here (``FRUIT_CASE``), so
the notebook shows the very messages the checker judges; its expected
output is computed the way the oracle's cases are: by ``final``, kept only
because v0, from scratch, agrees. The third exercise's engine is run on the
committed cases of ``plus_five_evens`` and judged by the oracle's own
``judge``, so its messages are the checker's report.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from workshop import Wrong, exercise

from final.conformance import CASES, Case, judge, load_all
from final.conformance.cases import Expected, Message
from final.conformance.check import compare
from final.conformance.drive import FinalEngine, Run
from final.conformance.versions import accumulate, consolidate, differences, join, join_closure, less_equal, sort_key
from ladder import StageEngine

# -- exercise 1: the join closure -------------------------------------------------------------------

CLOSURE_PUZZLES: tuple[tuple[tuple[int, ...], ...], ...] = (
    ((1, 0), (0, 1)),
    ((0, 0), (0, 2), (1, 1)),
    ((2, 0), (0, 3), (1, 1)),
    ((0, 0), (1, 1), (2, 2)),
    ((1, 0, 0), (0, 1, 0), (0, 0, 1)),
)
"""Sets of versions to close: two incomparable pairs, a chain (nothing to add), and three triples whose
pairwise joins are not yet closed (the join of all three is new again)."""


def _as_versions(answer: Any, versions: tuple) -> set[tuple[int, ...]]:
    if not isinstance(answer, Iterable) or isinstance(answer, str | bytes):
        raise Wrong(f"for {list(versions)} your function returned {answer!r}; return a set (or list) of versions")
    try:
        return {tuple(version) for version in answer}
    except TypeError:
        raise Wrong(f"for {list(versions)} your function returned {answer!r}; each version is a tuple of ints, "
                    f"like (1, 0)") from None


@exercise
def join_closure_of(answer: Any) -> None:
    """The learner's ``join_closure_of(versions)``, tried on ``CLOSURE_PUZZLES``."""
    for versions in CLOSURE_PUZZLES:
        got = _as_versions(answer(list(versions)), versions)
        expected = set(join_closure(versions))
        if got == expected:
            continue
        missing = sorted(expected - got, key=sort_key)
        if missing:
            version = missing[0]
            pair = next(((a, b) for a in versions for b in versions if join(a, b) == version), None)
            if pair is not None:
                why = f"the join (coordinate-wise max) of {pair[0]} and {pair[1]}"
            else:
                why = (f"the join of {[v for v in versions if less_equal(v, version)]}, which no two of them "
                       f"reach: joins of joins belong to the closure too, so keep joining until nothing new appears")
            raise Wrong(f"for {list(versions)} you gave {sorted(got, key=sort_key)}, without {version}: it is {why}")
        version = sorted(got - expected, key=sort_key)[0]
        below = [v for v in versions if less_equal(v, version)]
        if not below:
            why = "no given version is below it"
        else:
            least = below[0]
            for v in below[1:]:
                least = join(least, v)
            why = f"the given versions below it, {below}, join to {least}, not to {version}"
        raise Wrong(
            f"for {list(versions)} you gave {sorted(got, key=sort_key)}, with {version}, which is not a join of any "
            f"of them: {why}. The closure holds the given versions and joins of them, nothing else"
        )


# -- exercise 2: a case's expected output ---------------------------------------------------------------


def _with_expected(case: Case) -> Case:
    """``case`` with its expected output filled in as the oracle's cases are: final's answer, which v0 confirms."""
    produced = consolidate(FinalEngine().run(case).updates())
    versions = join_closure([*case.input_versions(), *produced])
    collections = {version: accumulate(produced, version) for version in versions}
    steps = differences(collections)
    full = dataclasses.replace(case, expected=tuple(Expected(v, collections[v], steps[v]) for v in versions))
    verdict = judge(full, StageEngine("v0").run(case))
    if verdict.status != "passed":
        raise RuntimeError(f"final and v0 disagree on {case.name}: {verdict.lines()}")
    return full


FRUIT_CASE = _with_expected(Case(
    name="count_by_key/fruit",
    program="count_by_key",
    inputs=("records",),
    dimensions=2,
    messages=(
        Message("records", data=((("apple", 1), (0, 0), 1), (("pear", 1), (0, 0), 1))),
        Message("records", frontier=((0, 1), (1, 0))),
        Message("records", data=((("apple", 3), (0, 1), 1), (("pear", 1), (0, 1), -1))),
        Message("records", data=((("apple", 2), (1, 0), 1),)),
        Message("records", frontier=()),
    ),
    expected=(),
    source="the conformance notebook's exercise: two changes on incomparable versions",
    tags=("retractions", "product-order"),
))
"""``count_by_key`` on fruit records ``(name, size)``: two at (0, 0), then one change at (0, 1) (an apple
added, the pear removed) and another at (1, 0) (an apple added)."""


@exercise
def fruit_counts(answer: Any) -> None:
    """The learner's expected output of ``FRUIT_CASE``: ``{version: {record: multiplicity}}`` at every version."""
    if not isinstance(answer, dict) or not all(isinstance(c, dict) for c in answer.values()):
        raise Wrong(f"give a dict {{version: {{record: multiplicity}}}}, e.g. {{(0, 0): {{('apple', 1): 1}}}}; "
                    f"you gave {answer!r}")
    expected = {entry.version: entry.collection for entry in FRUIT_CASE.expected}
    inputs = FRUIT_CASE.input_versions()
    for version in expected:
        if version not in answer:
            if version in inputs:
                raise Wrong(f"you gave no collection at {version}, where the input changes")
            below = [v for v in inputs if less_equal(v, version) and v != version]
            raise Wrong(
                f"you gave no collection at {version}. No input changes there, but it is the join of "
                f"{', '.join(map(str, below))}: the first version that sees both changes, where the output can "
                f"differ from what the differences below it add up to. The case lists the join closure of the "
                f"input versions"
            )
    extra = [version for version in answer if version not in expected]
    if extra:
        raise Wrong(f"{extra[0]!r} is not a version of this case: it lists {list(expected)}, the join closure of "
                    f"the input versions {inputs}")
    for version, collection in answer.items():
        got = {record: multiplicity for record, multiplicity in collection.items() if multiplicity != 0}
        mismatch = compare(version, expected[version], got)
        if mismatch is not None:
            accumulated = accumulate(consolidate(FRUIT_CASE.histories()[0]), version)
            raise Wrong(
                f"{mismatch.describe()}. The input accumulated at {version} (every update at a version <= it) "
                f"is {accumulated}; count_by_key outputs (key, n) with n the key's total, "
                f"and nothing for a key whose records cancel"
            )


# -- exercise 3: an engine ------------------------------------------------------------------------------


def plus_five_evens_cases() -> list[Case]:
    """The committed cases of ``plus_five_evens``."""
    return list(load_all(CASES / "plus_five_evens"))


@exercise
def plus_five_evens_engine(answer: Any) -> None:
    """The learner's engine for ``plus_five_evens`` (a function ``case -> Run``, or an object with ``run``),
    run on every committed case of the program, without their expected outputs, and judged by the oracle."""
    run_case = answer.run if hasattr(answer, "run") else answer
    for case in plus_five_evens_cases():
        run = run_case(dataclasses.replace(case, expected=()))
        if not isinstance(run, Run):
            raise Wrong(f"on {case.name} your engine returned {type(run).__name__}; return a Run "
                        f"(final.conformance.drive.Run) whose events are ('data', [(record, version, "
                        f"multiplicity), ...]) and ('frontier', [version, ...]), the last one ('frontier', [])")
        verdict = judge(case, run)
        if verdict.status == "passed":
            continue
        updates = [update for message in case.messages for update in message.data or ()]
        shown = ", ".join(map(str, updates[:6])) + (", ..." if len(updates) > 6 else "")
        raise Wrong(
            f"the oracle says {verdict.status} on {case.name}, whose input updates (n, version, multiplicity) are "
            f"{shown}: " + "; ".join(verdict.lines()) + ". plus_five_evens outputs n + 5 for each input n whose "
            "n + 5 is even, at n's version, with n's multiplicity"
        )
