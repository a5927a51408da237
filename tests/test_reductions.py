"""final's reductions (004) against from-scratch: v0 where it has the operator, sqlite3 for SQL shapes.

Source: document 004. Hierarchical ``min``/``max``
must equal the naive ones on any data (the shared property suite already runs
``final`` through every operator; these add large groups, where the
hierarchy has several levels). The in-place totals equal v0's reductions on
collections whose multiplicities are not negative, which is every SQL table.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.harness import run
from tests.sql import group_by_reference
from tests.strategies import table

pairs = st.tuples(st.integers(0, 2), st.integers(-50, 50))


@pytest.mark.since("final")
@pytest.mark.parametrize("reduction", ["min", "max"])
@given(history=table(st.tuples(st.just("group"), st.integers(-10_000, 10_000)), max_size=60))
def test_hierarchical_equals_naive_on_large_groups(stage: str, reduction: str, history: list) -> None:
    program = lambda c: getattr(c, reduction)()  # noqa: E731
    assert run(stage, program, [history]) == run("v5", program, [history])


@pytest.mark.since("final")
@given(history=table(pairs))
def test_count_total_equals_count(stage: str, history: list) -> None:
    assert run(stage, lambda c: c.count_total(), [history]) == run("v0", lambda c: c.count(), [history])


@pytest.mark.since("final")
@given(history=table(pairs))
def test_count_distinct_equals_distinct_then_count(stage: str, history: list) -> None:
    expected = run("v0", lambda c: c.distinct().count(), [history])
    assert run(stage, lambda c: c.count_distinct(), [history]) == expected


@pytest.mark.since("final")
@given(history=table(st.tuples(st.integers(0, 2), st.one_of(st.none(), st.integers(-5, 5)))))
def test_sum_total_is_sql_sum(stage: str, history: list) -> None:
    """No rows: no output; only NULLs: None; else the sum (004, 'In-place aggregations')."""
    reference = group_by_reference(["k", "v"], "k", {"total": ("sum", "v")})([history], None)
    expected = {
        version: {(key, dict(aggregates)["total"]): 1 for key, aggregates in groups}
        for version, groups in reference.items()
    }
    assert run(stage, lambda c: c.sum_total(), [history]) == expected


EXACT_VALUES = {
    "decimal": st.one_of(*(st.decimals(-100, 100, places=places) for places in (0, 1, 2)), st.integers(-9, 9)),
    "fraction": st.one_of(st.fractions(-10, 10, max_denominator=12), st.integers(-9, 9)),
}


@pytest.mark.since("final")
@pytest.mark.parametrize("kind", EXACT_VALUES)
@given(data=st.data())
def test_sum_total_adds_decimals_and_fractions_exactly(stage: str, kind: str, data: st.DataObject) -> None:
    """Money is Decimal: sums of values with different exponents (or denominators) cancel exactly on retraction."""
    history = data.draw(table(st.tuples(st.integers(0, 2), st.one_of(st.none(), EXACT_VALUES[kind]))))
    expected = {}
    for version, rows in run("v0", lambda c: c, [history]).items():
        groups: dict = {}
        for (key, value), multiplicity in rows.items():
            groups.setdefault(key, []).extend([value] * multiplicity)
        expected[version] = {
            (key, sum(v for v in values if v is not None) if any(v is not None for v in values) else None): 1
            for key, values in groups.items()
        }
    assert run(stage, lambda c: c.sum_total(), [history]) == expected


@pytest.mark.since("final")
@given(history=table(pairs))
def test_threshold(stage: str, history: list) -> None:
    """Each record with multiplicity f(m): here, records present at least twice, doubled."""
    f = lambda m: 2 * m if m >= 2 else 0  # noqa: E731
    expected = {
        version: {record: f(m) for record, m in totals.items() if f(m)}
        for version, totals in run("v0", lambda c: c, [history]).items()
    }
    assert run(stage, lambda c: c.threshold(f), [history]) == expected


trips = st.tuples(
    st.one_of(st.none(), st.integers(0, 3)),
    st.one_of(st.none(), st.integers(-20, 60)),
    st.one_of(st.none(), st.integers(0, 4)),
)
NAMED = {
    "min_fare": ("min", 1), "max_fare": ("max", 1), "distinct_distances": ("count_distinct", 2),
    "fares": ("count", 1), "fare_sum": ("sum", 1),
}


@pytest.mark.since("final")
@given(history=table(trips))
def test_aggregate_equals_sqlite(stage: str, history: list) -> None:
    """004's factored aggregates, NULL keys and NULL values included, equal SQL's GROUP BY at every version."""
    columns = ["passengers", "fare", "distance"]
    reference = group_by_reference(
        columns, "passengers", {name: (kind, columns[index]) for name, (kind, index) in NAMED.items()}
    )
    named = {name: (kind, lambda trip, index=index: trip[index]) for name, (kind, index) in NAMED.items()}
    assert run(stage, lambda c: c.aggregate(lambda trip: trip[0], named), [history]) == reference([history], None)


def at_pairs(history: list) -> list:
    """``history`` with each version ``v`` at ``(v, 0)``: the same data, in a graph of 2-D versions."""
    return [(record, (version, 0), multiplicity) for record, version, multiplicity in history]


def from_pairs(result: dict) -> dict:
    return {version[0]: records for version, records in result.items()}


ROWS_ANY_SIGN = st.lists(st.tuples(trips, st.integers(0, 4), st.integers(-2, 3)), max_size=14)
"""Rows at any multiplicity, negative totals included: beyond SQL, where the two renderings must still agree."""


@pytest.mark.since("final")
@pytest.mark.parametrize("program", ["aggregate", "min", "max"])
@given(history=st.one_of(ROWS_ANY_SIGN, table(trips)))
def test_in_place_equals_rounds(stage: str, program: str, history: list) -> None:
    """Outside loops ``aggregate``, ``min`` and ``max`` keep each key's state in place, its hierarchy as deep as
    its values need; with 2-D versions they are 004's dataflow of reductions, 16 rounds. Same answers."""
    named = {name: (kind, lambda trip, index=index: trip[index]) for name, (kind, index) in NAMED.items()}
    programs = {
        "aggregate": lambda c: c.aggregate(lambda trip: trip[0], named),
        "min": lambda c: c.map(lambda trip: (trip[0], trip[1])).filter(lambda pair: pair[1] is not None).min(),
        "max": lambda c: c.map(lambda trip: (trip[0], trip[2])).filter(lambda pair: pair[1] is not None).max(),
    }
    in_place = run(stage, programs[program], [history])
    assert from_pairs(run(stage, programs[program], [at_pairs(history)])) == in_place


@pytest.mark.since("final")
@pytest.mark.parametrize("shift", [0, 4, 30])
def test_hierarchy_depth_follows_the_group(stage: str, shift: int) -> None:
    """A key's ``Hierarchy`` is one bucket while its values fit, and grows a round per 16-fold more values,
    whatever bits the values' hashes share (``shift``: values ``i << shift``, whose hashes are themselves,
    agree on their low bits). Each retraction of the minimum still finds the next one."""
    from final.operators.aggregate import FANOUT, Hierarchy, min_values

    hierarchy = Hierarchy(min_values)
    hierarchy.add({3 << shift: 1, 5 << shift: 2})
    hierarchy.settle()
    assert (hierarchy.result, hierarchy.depth()) == (3 << shift, 1)
    values = [value << shift for value in range(FANOUT**2 + 1)]
    hierarchy.add({value: 1 for value in values})
    hierarchy.settle()
    assert 3 <= hierarchy.depth() <= 4  # 257 values: 16 buckets of 16 hold 256; a hash may crowd one bucket
    for smallest in values[:40]:
        hierarchy.add({smallest: -1 - (smallest in (3 << shift, 5 << shift)) * (1 + (smallest == 5 << shift))})
        hierarchy.settle()
        rest = [value for value in values if value > smallest]
        assert hierarchy.result == min(rest)
    hierarchy.add({value: -1 for value in values[40:]})
    hierarchy.settle()
    assert hierarchy.empty and hierarchy.result is not None


@pytest.mark.since("final")
@given(batches=st.lists(st.dictionaries(
    st.tuples(st.integers(0, 400), st.one_of(st.none(), st.integers(-9, 9))), st.integers(-2, 3), max_size=60,
), max_size=12))
def test_hierarchy_equals_from_scratch_after_every_batch(stage: str, batches: list) -> None:
    """Batches of changes, retractions below zero included, to one key's ``Hierarchy`` of ``(min, max)``
    pairs: after each ``settle`` its result is the extremes of the values whose multiplicity is positive,
    however the buckets split, gained and lost on the way."""
    from final.operators.aggregate import NOTHING, Hierarchy, extremes_of

    hierarchy, totals = Hierarchy(extremes_of(("min", "max"))), {}
    for changes in batches:
        hierarchy.add(changes)
        hierarchy.settle()
        for value, multiplicity in changes.items():
            totals[value] = totals.get(value, 0) + multiplicity
        present = [value for value, total in totals.items() if total > 0]
        lows = [low for low, _ in present]
        highs = [high for _, high in present if high is not None]
        expected = (min(lows), max(highs) if highs else None) if present else NOTHING
        assert hierarchy.result == expected
        assert hierarchy.empty == (not any(totals.values()))
