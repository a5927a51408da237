"""Checkers for the exercises of ``final3_aggregates.ipynb``: ``min`` retracted, the reduction ``min`` applies,
a loop's frontier.

The prediction checkers drive ``final`` through its public API only (input
sessions, ``graph.run()``, ``Output`` handles, ``graph.progress``), and the
right answer is what final does, cross-checked against plain Python where an
answer can be computed from scratch. The data an exercise is about is
defined here (``MIN_HISTORY``, ``PATH_EDGES``), so the
notebook shows the very data the checker judges. The ``min_values`` a
learner builds is judged inside final against v0 from scratch, then against
its definition (``workshop.build``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import strategies as st
from workshop import Property, Wrong, check_piece, equals_from_scratch, exercise
from workshop.final import feed, reachability, table_at

import final
from final.operators import aggregate
from tests import strategies

# Exercise 1: min when the minimum is retracted.

MIN_HISTORY = [
    (("g", 5), 0, 1),
    (("g", 3), 0, 2),
    (("g", 8), 0, 1),
    (("g", 3), 1, -1),
    (("g", 3), 2, -1),
    (("g", 8), 3, -1),
]
"""Group g holds 5, 3 twice and 8 at version 0; one 3 goes at version 1, the other at 2, the 8 at 3."""

MIN_VERSIONS = (1, 2, 3)


def min_by_final() -> dict[int, dict[Any, int]]:
    """``min()`` on ``MIN_HISTORY`` in final: the output's consolidated change at each of ``MIN_VERSIONS``."""
    output = feed(lambda pairs: pairs.min(), [MIN_HISTORY])
    return {version: output.changes(version) for version in MIN_VERSIONS}


def min_from_scratch(version: int) -> dict[Any, int]:
    """``(key, least value)`` of each key at ``version``, in plain Python."""
    present = table_at(MIN_HISTORY, version)
    least: dict[Any, Any] = {}
    for (key, value), multiplicity in present.items():
        if multiplicity > 0:
            least[key] = min(value, least.get(key, value))
    return {(key, value): 1 for key, value in least.items()}


def _change(version: int) -> dict[Any, int]:
    """The change of the from-scratch minimum from ``version - 1`` to ``version``."""
    change = Counter(min_from_scratch(version))
    change.subtract(min_from_scratch(version - 1))
    return {record: multiplicity for record, multiplicity in change.items() if multiplicity}


@exercise
def min_after_retractions(answer: Any) -> None:
    """The learner's ``{version: output.changes(version)}`` for ``min()`` on ``MIN_HISTORY``, versions 1, 2, 3."""
    truth = min_by_final()
    assert truth == {version: _change(version) for version in MIN_VERSIONS}, "final and plain Python disagree"
    if not isinstance(answer, dict) or set(answer) != set(MIN_VERSIONS):
        raise Wrong(
            f"give a dict with the keys 1, 2 and 3, each the change {{record: multiplicity}} at that version "
            f"({{}} for no change); you gave {answer!r}"
        )
    why = {
        1: "at version 1 one of the two 3s goes, but a 3 is still there (multiplicity 2 - 1 = 1), so the "
           "minimum is still 3 and min sends nothing",
        2: "at version 2 the last 3 goes: the minimum changes from 3 to 5, which is ('g', 3) -1 and ('g', 5) +1",
        3: "at version 3 the 8 goes, but 8 was never the minimum: nothing changes",
    }
    for version in MIN_VERSIONS:
        given = answer[version]
        if not isinstance(given, dict):
            raise Wrong(f"version {version}: give the change as a dict {{record: multiplicity}}, not {given!r}")
        given = {record: multiplicity for record, multiplicity in given.items() if multiplicity}
        if given != truth[version]:
            raise Wrong(f"version {version}: you predicted {given}, but min's output changes by {truth[version]}: "
                        f"{why[version]}")


# Exercise 2: build the reduction every bucket of min's hierarchy applies.


def _least_by_definition(values: list[tuple[Any, int]]) -> list[tuple[Any, int]]:
    """``[(the least value with a positive multiplicity, 1)]``, or ``[]`` if no value has one."""
    present = [value for value, multiplicity in values if multiplicity > 0]
    return [(min(present), 1)] if present else []


GROUPS = st.dictionaries(strategies.values, strategies.multiplicities.filter(bool), min_size=1)
"""A group as a reduction is handed it, ``{value: multiplicity}``: each value once, none zero, never empty."""

MIN_VALUES_DEFINITION = Property(
    name="min_values",
    examples=GROUPS.map(lambda group: list(group.items())),
    got=lambda values: list(aggregate.min_values(values)),  # the module's name: the piece, while it is swapped in
    expected=_least_by_definition,
    example="group (a list of (value, multiplicity), each value once, none zero)",
    reference="the definition",
)
"""The piece on groups as a bucket hands them over, negative multiplicities included. Whole programs reach
a value retracted more often than inserted, below the least value present, only at times: a bucket whose
values only arrived may reduce just those (``Hierarchy``), so the definition checks what they can miss."""


@exercise
def build_min(answer: Any) -> None:
    """The learner's ``min_values(values)``, run inside final by every bucket of ``min()``: ``min`` equals v0.

    ``min()`` looks ``min_values`` up when it is called and hands it to the
    operator it builds; on the suite's histories (int versions) that is a
    ``HierarchyInPlace``, so every bucket of each key's ``Hierarchy`` runs
    the learner's function. The histories retract more than they insert,
    so a group can hold a value with a negative multiplicity, which is not
    there; ``MIN_VALUES_DEFINITION`` then checks the function on such groups
    directly.
    """
    check_piece("final", "operators.aggregate.min_values", answer,
                [equals_from_scratch("final", "min"), MIN_VALUES_DEFINITION])


# Exercise 3: where the tracker holds pointstamps once a loop has run.

PATH_EDGES = [(0, 1), (1, 2), (2, 3)]
"""Exercise 3's edges, inserted at version 0 with the root 0; then roots advance to 5 and edges to 3."""

ROOTS_TO, EDGES_TO = 5, 3
"""Where each session advances before ``graph.run()``."""


def tracker_after_run() -> dict[str, Any]:
    """Reachability over ``PATH_EDGES`` run to the end: each pointstamp's location and version, and the output's
    frontier, as ints."""
    builder = final.GraphBuilder(0)
    roots, root_session = builder.new_session("roots")
    edges, edge_session = builder.new_session("edges")
    reachability(roots, edges).output("reached")
    graph = builder.finalize()
    root_session.insert(0)
    for edge in PATH_EDGES:
        edge_session.insert(edge)
    root_session.advance_to(ROOTS_TO)
    edge_session.advance_to(EDGES_TO)
    graph.run()
    held = {}
    for location, counts in graph.progress.held().items():
        (version,) = counts  # one version per location here: an input's frontier
        held[location] = version.coords[0]
    (element,) = dict(graph.frontiers())["output reached"].elements
    return {"pointstamps": held, "reached frontier": element.coords[0]}


@exercise
def loop_frontier(answer: Any) -> None:
    """The learner's ``{"pointstamps": {location: version}, "reached frontier": version}`` after the run."""
    truth = tracker_after_run()
    if not isinstance(answer, dict) or set(answer) != set(truth):
        raise Wrong(
            "give a dict {'pointstamps': {location: version}, 'reached frontier': version}, locations named as "
            f"graph.progress.held() names them ('input roots', ...) and versions as ints; you gave {answer!r}"
        )
    pointstamps = answer["pointstamps"]
    if not isinstance(pointstamps, dict):
        raise Wrong(f"'pointstamps' is a dict {{location: version}}, not {pointstamps!r}")
    extra = sorted(set(pointstamps) - set(truth["pointstamps"]))
    if extra:
        raise Wrong(
            f"you put pointstamps at {extra}, but after graph.run() nothing in the loop is counted: every "
            f"message was handled and no operator keeps a version back once the loop has converged at the "
            f"versions the inputs allow; only {sorted(truth['pointstamps'])} hold pointstamps"
        )
    if pointstamps != truth["pointstamps"]:
        raise Wrong(
            f"'pointstamps': you gave {pointstamps}, but the tracker holds {truth['pointstamps']}: an input "
            f"counts one pointstamp at its frontier, the version the session last advanced to"
        )
    if answer["reached frontier"] != truth["reached frontier"]:
        raise Wrong(
            f"'reached frontier': you gave {answer['reached frontier']!r}, but it is {truth['reached frontier']}: "
            f"the frontier is the least version any pointstamp could become on a path to the output, so the "
            f"input that is behind (edges, at {EDGES_TO}) holds the output back"
        )
