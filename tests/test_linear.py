"""final's generalised linear operators (000) against from-scratch references, and their fusion.

Source: document 000. ``join_function(logic)`` is the
join of the input with the collection ``logic`` describes: at version ``t`` it
holds ``value`` with multiplicity ``m * d`` for every input update ``(record,
s, m)`` and ``(value, s2, d)`` in ``logic(record)`` with ``s <= t`` and
``s2 <= t``. ``explode`` and temporal filters are special cases; a chain of
linear operators fuses into one operator with the same results.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.examples import updates_reference
from tests.harness import build_graph, join_closure, run, stage_module
from tests.strategies import multiplicities, records

int_histories = st.lists(st.tuples(records, st.integers(0, 4), multiplicities), max_size=10)
tuple_histories = st.lists(st.tuples(records, st.tuples(st.integers(0, 2), st.integers(0, 2)), multiplicities),
                           max_size=10)


def at_of(history: list, extra: set) -> list:
    return join_closure({version for _, version, _ in history} | extra)


def explode_logic(record: tuple) -> list:
    key, value = record
    return [(key, value - 1), (("neg", key), -value)]


def shift_logic(record: tuple) -> list:
    """Moves each record later by its value, and retracts it two versions after that."""
    key, value = record
    return [((key, value), value, 1), ((key, value), value + 2, -1)]


def tuple_shift_logic(record: tuple) -> list:
    key, value = record
    return [((key, value), (value % 3, key % 3), 1), (key, (0, value % 2), value)]


@pytest.mark.since("final")
@given(history=int_histories)
def test_explode_equals_from_scratch(stage: str, history: list) -> None:
    at = at_of(history, set())
    expected = updates_reference(lambda r: [(v, 0, d) for v, d in explode_logic(r)])([history], at)
    assert run(stage, lambda c: c.explode(explode_logic), [history], at) == expected


@pytest.mark.since("final")
@given(history=int_histories)
def test_join_function_equals_from_scratch(stage: str, history: list) -> None:
    at = at_of(history, {t for record, _, _ in history for _, t, _ in shift_logic(record)})
    expected = updates_reference(shift_logic)([history], at)
    assert run(stage, lambda c: c.join_function(shift_logic), [history], at) == expected


@pytest.mark.since("final")
@given(history=tuple_histories)
def test_join_function_with_partially_ordered_versions(stage: str, history: list) -> None:
    at = at_of(history, {t for record, _, _ in history for _, t, _ in tuple_shift_logic(record)})
    expected = updates_reference(tuple_shift_logic)([history], at)
    assert run(stage, lambda c: c.join_function(tuple_shift_logic), [history], at) == expected


@pytest.mark.since("final")
@given(history=int_histories)
def test_temporal_filter_equals_from_scratch(stage: str, history: list) -> None:
    def lower(record: tuple) -> int:
        return record[1]

    def upper(record: tuple) -> int:
        return record[1] + record[0] + 1

    at = at_of(history, {f(record) for record, _, _ in history for f in (lower, upper)})
    expected = updates_reference(lambda r: [(r, lower(r), 1), (r, upper(r), -1)])([history], at)
    assert run(stage, lambda c: c.temporal_filter(lower, upper), [history], at) == expected


def chain(collection):
    return (collection.map(lambda r: (r[0], r[1] + 1)).filter(lambda r: r[1] % 2 == 0)
            .flat_map(lambda r: [r, (r[0] + 10, r[1])]).negate().explode(lambda r: [(r, 2)]))


@pytest.mark.since("final")
@given(history=int_histories)
def test_fused_chain_equals_the_same_chain_on_v5(stage: str, history: list) -> None:
    """000, 'Fusing logic': the fused operator computes what the chain computes (here v5 runs it unfused)."""
    without_explode = lambda c: chain_without_explode(c).concat(chain_without_explode(c))  # noqa: E731
    assert run(stage, chain, [history]) == run("v5", without_explode, [history])


def chain_without_explode(collection):
    return (collection.map(lambda r: (r[0], r[1] + 1)).filter(lambda r: r[1] % 2 == 0)
            .flat_map(lambda r: [r, (r[0] + 10, r[1])]).negate())


@pytest.mark.since("final")
def test_a_chain_of_linear_operators_is_one_operator(stage: str) -> None:
    module = stage_module(stage)
    _, _, fused = build_graph(module, chain, 1)
    assert len(fused.operators) == 1

    def read_in_the_middle(collection):
        middle = collection.map(lambda r: r)
        middle.connect_reader()
        return chain(middle)

    _, _, split = build_graph(module, read_in_the_middle, 1)
    # A user reads the map's output, so it stays an operator; the chain after it still fuses into one.
    assert len(split.operators) == 2
