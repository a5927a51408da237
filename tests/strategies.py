"""Hypothesis strategies for histories: few keys, values and versions, so updates collide and cancel."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.harness import less_equal

keys = st.integers(0, 2)
values = st.integers(0, 3)
records = st.tuples(keys, values)
multiplicities = st.integers(-2, 3)
"""Insertions, retractions, zeros (an update that changes nothing) and negative totals."""
versions = st.integers(0, 4)

updates = st.tuples(records, versions, multiplicities)
histories = st.lists(updates, max_size=12)
"""Updates in any order: versions arrive out of order on stages that allow it."""


@st.composite
def insert_then_retract(
    draw: st.DrawFn, records: st.SearchStrategy = records, versions: st.SearchStrategy = versions
) -> list:
    """Records inserted at one version and some retracted at the same or a later one, in any order.

    Unlike ``histories``, accumulated multiplicities stay non-negative: the
    shape of real data, where a retraction removes something that was there.
    ``versions`` may draw ints or tuples: a retraction's version is drawn from
    it and kept where the harness's ``less_equal`` puts it at or after the insertion.
    """
    history = []
    for record, version in draw(st.lists(st.tuples(records, versions), max_size=10)):
        history.append((record, version, 1))
        later = draw(st.one_of(st.none(), versions))
        if later is not None and less_equal(version, later):
            history.append((record, later, -1))
    return draw(st.permutations(history))


any_history = st.one_of(histories, insert_then_retract())


@st.composite
def table(draw: st.DrawFn, rows: st.SearchStrategy, max_size: int = 8) -> list:
    """A table's history: rows inserted, some retracted at a later version, in any order.

    Multiplicities never go negative, as in SQL, so results can be compared with sqlite3.
    """
    history = []
    for row, version in draw(st.lists(st.tuples(rows, st.integers(0, 3)), max_size=max_size)):
        history.append((row, version, 1))
        later = draw(st.one_of(st.none(), st.integers(version + 1, 4)))
        if later is not None:
            history.append((row, later, -1))
    return draw(st.permutations(history))


nodes = st.integers(0, 5)
int_versions = st.integers(0, 3)
tuple_versions = st.tuples(st.integers(0, 2), st.integers(0, 2))
"""Loops' inputs: graphs on a few nodes, at int versions or at pairs (partially ordered)."""

edges_over = {
    "int": insert_then_retract(st.tuples(nodes, nodes), int_versions),
    "tuple": insert_then_retract(st.tuples(nodes, nodes), tuple_versions),
}


@st.composite
def roots_over(draw: st.DrawFn, versions: st.SearchStrategy) -> list:
    """Node 0 is a root from the start and may be removed later, plus other roots inserted and retracted."""
    zero = draw(versions)
    history = [(0, zero, 1)]
    removed = draw(st.one_of(st.none(), versions))
    if removed is not None and less_equal(zero, removed) and removed != zero:
        history.append((0, removed, -1))
    return history + draw(insert_then_retract(nodes, versions))


@st.composite
def growing_graph(draw: st.DrawFn) -> list:
    """``[roots, edges]`` that are only ever added to (node 0 a root from version 0): what v4's loops get right."""
    edges = st.lists(st.tuples(st.tuples(nodes, nodes), int_versions, st.just(1)), max_size=8)
    roots = st.lists(st.tuples(nodes, int_versions, st.just(1)), max_size=3)
    return [[(0, 0, 1), *draw(roots)], draw(edges)]
