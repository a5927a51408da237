"""final's ``top_k`` against a window of each key's sorted values computed from scratch (v0's ``reduce``).

SQL's ``ORDER BY ... LIMIT ... OFFSET`` is lowered onto ``top_k``; here it
is checked alone, on random histories: in place outside loops, and as the
general reduction inside ``iterate`` and on partially ordered versions.
Multiplicities above one straddle the cut, keys empty and fill again, and
the order puts ties of its first component in the value's own order.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from final import GraphBuilder
from final.errors import GraphError, RecordError
from tests.harness import run
from tests.strategies import insert_then_retract, table, tuple_versions

WINDOWS = [(None, 0), (0, 0), (1, 0), (3, 0), (2, 1), (None, 2), (1, 5)]


def by_tens(value: int) -> tuple[int, int]:
    """An order whose first part ties often (values with the same tens), the value itself breaking ties."""
    return (value // 10, -value)


def from_scratch(limit: int | None, offset: int):
    """The window as a plain reduction: every copy listed, sorted, sliced, counted."""

    def window(values: list[tuple[int, int]]) -> list[tuple[int, int]]:
        copies = sorted((value for value, multiplicity in values for _ in range(multiplicity)), key=by_tens)
        kept = copies[offset:] if limit is None else copies[offset:offset + limit]
        return list(Counter(kept).items())

    return window


def top(limit: int | None, offset: int):
    """The program on final (``top_k``) and on v0 (``reduce`` of the same window, from scratch)."""

    def program(collection):
        if hasattr(collection, "top_k"):
            return collection.top_k(limit, offset, by_tens)
        return collection.reduce(from_scratch(limit, offset))

    return program


rows = st.tuples(st.integers(0, 2), st.integers(0, 40))


@pytest.mark.parametrize(("limit", "offset"), WINDOWS)
@given(history=table(rows, max_size=14))
def test_top_k_equals_the_window_from_scratch(limit, offset, history):
    program = top(limit, offset)
    assert run("final", program, [history]) == run("v0", program, [history])


@pytest.mark.parametrize(("limit", "offset"), [(2, 0), (1, 1)])
@given(history=table(rows, max_size=10))
def test_top_k_inside_a_loop_equals_the_window_from_scratch(limit, offset, history):
    def program(collection):
        return collection.iterate(lambda inner: top(limit, offset)(inner.concat(collection)).distinct())

    assert run("final", program, [history]) == run("v0", program, [history])


@given(history=insert_then_retract(records=rows, versions=tuple_versions))
def test_top_k_on_partially_ordered_versions_equals_the_window_from_scratch(history):
    program = top(2, 1)
    assert run("final", program, [history]) == run("v5", lambda c: c.reduce(from_scratch(2, 1)), [history])


def test_a_change_above_the_cut_moves_one_row_out_at_the_bottom():
    builder = GraphBuilder(0)
    rows_in, session = builder.new_session("rows")
    window = rows_in.top_k(2).output("window")
    graph = builder.finalize()
    for value in (5, 7, 9):
        session.insert(("k", value))
    session.advance_to(1)
    session.insert(("k", 1))
    session.advance_to(2)
    graph.run()
    assert window.changes(0) == {("k", 5): 1, ("k", 7): 1}
    assert window.changes(1) == {("k", 1): 1, ("k", 7): -1}


@pytest.mark.parametrize(("limit", "offset"), [(-1, 0), (2, -1), (1.5, 0), (True, 0), (2, None)])
def test_a_window_that_is_not_a_non_negative_int_is_refused(limit, offset):
    stream, _ = GraphBuilder(0).new_session("rows")
    with pytest.raises(GraphError, match="non-negative int"):
        stream.top_k(limit, offset)


def test_a_negative_multiplicity_stops_top_k_naming_the_key():
    builder = GraphBuilder(0)
    rows_in, session = builder.new_session("rows")
    rows_in.top_k(1).output("window")
    graph = builder.finalize()
    session.update(("k", 3), -1)
    session.advance_to(1)
    with pytest.raises(RecordError, match="at key 'k' the value 3 has multiplicity -1"):
        graph.run()
