"""final's joins beyond ``join`` (003) against from-scratch: Python for semi/antijoins, sqlite3 for LEFT JOINs.

Source: shared/seeds/003_8a1a68ac9bab78a7.txt. NULL is ``None``: a NULL key
never matches, and a left record without a match comes out padded with ``None``.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.catalog import enrich, enrich_reference
from tests.harness import run
from tests.sql import accumulated, sqlite_rows
from tests.strategies import table

keys = st.one_of(st.none(), st.integers(0, 3))


def all_versions(*histories: list) -> list:
    return sorted({version for history in histories for _, version, _ in history})


@pytest.mark.since("final")
@given(left=table(st.tuples(st.integers(0, 3), st.integers(0, 3))), right=table(st.integers(0, 3)))
def test_semijoin_and_antijoin(stage: str, left: list, right: list) -> None:
    """semijoin keeps records whose key is present (times its multiplicity); antijoin keeps the rest."""
    versions_ = all_versions(left, right)
    semi, anti = {}, {}
    for version in versions_:
        records, present = accumulated(left, version), accumulated(right, version)
        semi[version] = {r: m * present[r[0]] for r, m in records.items() if present[r[0]]}
        distinct_present = {key for key, m in present.items() if m > 0}
        anti[version] = {r: m for r, m in records.items() if r[0] not in distinct_present}
    assert run(stage, lambda a, b: a.semijoin(b), [left, right], versions_) == semi
    assert run(stage, lambda a, b: a.antijoin(b.distinct_keys()), [left, right], versions_) == anti


@pytest.mark.since("final")
@given(left=table(st.tuples(keys, st.integers(0, 2))), right=table(st.tuples(keys, st.integers(5, 7))))
def test_left_join_equals_sql(stage: str, left: list, right: list) -> None:
    versions_ = all_versions(left, right)
    expected = {}
    for version in versions_:
        rows = sqlite_rows(
            {"l": (["k", "v"], accumulated(left, version)), "r": (["k", "w"], accumulated(right, version))},
            "SELECT l.k, l.v, r.w FROM l LEFT JOIN r ON l.k = r.k",
        )
        expected[version] = {(k, (v, w)): count for (k, v, w), count in rows.items()}
    assert run(stage, lambda a, b: a.left_join(b), [left, right], versions_) == expected


@pytest.mark.since("final")
@given(
    facts=table(st.tuples(st.integers(0, 5), keys)),
    users=table(st.tuples(st.integers(0, 3), keys)),
    addrs=table(st.tuples(st.integers(0, 3), st.one_of(st.none(), st.sampled_from("xyz")))),
    agent=table(st.tuples(st.sampled_from("xyz"), st.sampled_from(["ann", "bob"]))),
)
def test_multiway_left_join_equals_sql(stage: str, facts: list, users: list, addrs: list, agent: list) -> None:
    """003's enrichment as a multi-way LEFT JOIN, with missing keys and NULL keys, equals SQL at every version."""
    histories = [facts, users, addrs, agent]
    versions_ = all_versions(*histories)
    assert run(stage, enrich, histories, versions_) == enrich_reference(histories, versions_)
