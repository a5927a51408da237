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
