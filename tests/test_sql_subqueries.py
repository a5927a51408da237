"""Subqueries, OR factoring and top-k against sqlite3 from scratch, on random histories (no Spark needed).

The queries read two integer tables with NULLs and duplicate rows, where
SQL's meaning is the same in sqlite3 and Spark SQL: EXISTS, NOT EXISTS, IN
and NOT IN (with NOT IN's NULL rules), scalar subqueries correlated or not
(a COUNT over no rows is 0, every other aggregate NULL), nested subqueries,
a join key in every branch of an OR, and ORDER BY ... LIMIT ... OFFSET over
every output column (so only equal rows tie, and the window is determined).
At every version of a random history of inserts and deletes, the compiled
query's accumulated result equals sqlite3's answer over the tables as of
that version, row for row and multiplicity for multiplicity.
"""

from __future__ import annotations

import sqlite3
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from final.spark.incremental import IncrementalQuery
from final.spark.query import Table
from final.spark.sql import compile_sql

TABLES = {"a": Table("a", (("k", "INT"), ("v", "INT"))), "b": Table("b", (("k", "INT"), ("w", "INT")))}

QUERIES = {
    "exists": "SELECT k, v FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k)",
    "not exists with a residual": "SELECT k, v FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND "
                                  "b.w > a.v)",
    "uncorrelated exists": "SELECT k, v FROM a WHERE EXISTS (SELECT 1 FROM b WHERE w > 2)",
    "in": "SELECT k, v FROM a WHERE v IN (SELECT w FROM b)",
    "not in": "SELECT k, v FROM a WHERE v NOT IN (SELECT w FROM b)",
    "correlated not in": "SELECT k, v FROM a WHERE v NOT IN (SELECT w FROM b WHERE b.k = a.k)",
    "correlated count": "SELECT k, v, (SELECT COUNT(*) FROM b WHERE b.k = a.k) FROM a",
    "correlated max in a comparison": "SELECT k, v FROM a WHERE v >= (SELECT MAX(w) FROM b WHERE b.k = a.k)",
    "uncorrelated scalar": "SELECT k, (SELECT MAX(w) FROM b) - v FROM a",
    "scalar in having": "SELECT k, SUM(v) FROM a GROUP BY k HAVING SUM(v) > (SELECT MIN(w) FROM b)",
    "nested": "SELECT k FROM a WHERE k IN (SELECT b.k FROM b WHERE b.w IN (SELECT a2.v FROM a AS a2 "
              "WHERE a2.k = b.k))",
    "self exists with a residual": "SELECT k, v FROM a AS a1 WHERE EXISTS (SELECT 1 FROM a AS a2 WHERE "
                                   "a2.k = a1.k AND a2.v <> a1.v)",
    "a join key in every branch of an or": "SELECT a.k, a.v, b.w FROM a, b WHERE (a.k = b.k AND a.v > 1) OR "
                                           "(a.k = b.k AND b.w < 2)",
    "order by and limit": "SELECT k, v FROM a ORDER BY v DESC, k LIMIT 3",
    "limit and offset over groups": "SELECT k, SUM(v) AS total FROM a GROUP BY k ORDER BY total DESC NULLS LAST, "
                                    "k NULLS FIRST LIMIT 2 OFFSET 1",
    "offset alone": "SELECT k, v FROM a ORDER BY k NULLS LAST, v LIMIT 100 OFFSET 2",
    "top-k of a semijoin": "SELECT k, v FROM a WHERE k IN (SELECT k FROM b) ORDER BY v, k LIMIT 2",
}

values = st.one_of(st.none(), st.integers(0, 3))
rows = st.tuples(values, values)


@st.composite
def histories(draw: st.DrawFn) -> list[list[tuple[str, tuple, int]]]:
    """Three to five versions of inserts and deletes of rows (duplicates included) into ``a`` and ``b``."""
    held: dict[str, Counter] = {"a": Counter(), "b": Counter()}
    versions = []
    for _ in range(draw(st.integers(3, 5))):
        updates = []
        for table in ("a", "b"):
            for row in draw(st.lists(rows, max_size=5)):
                updates.append((table, row, 1))
            present = sorted(held[table].elements(), key=repr)
            if present:
                for row in draw(st.lists(st.sampled_from(present), max_size=3, unique=True)):
                    updates.append((table, row, -1))
        for table, row, multiplicity in updates:
            held[table][row] += multiplicity
        versions.append(updates)
    return versions


def sqlite_answer(text: str, held: dict[str, Counter]) -> Counter:
    database = sqlite3.connect(":memory:")
    for name in TABLES:
        database.execute(f"CREATE TABLE {name} ({', '.join(column for column, _ in TABLES[name].columns)})")
        database.executemany(f"INSERT INTO {name} VALUES (?, ?)", list(held[name].elements()))
    return Counter(tuple(row) for row in database.execute(text))


@pytest.mark.parametrize("name", list(QUERIES))
@given(history=histories())
def test_each_query_equals_sqlite_from_scratch_at_every_version(name, history):
    text = QUERIES[name]
    engine = IncrementalQuery(compile_sql(text, TABLES, "q"))
    held: dict[str, Counter] = {"a": Counter(), "b": Counter()}
    for version, updates in enumerate(history):
        engine.apply(version, [update for update in updates if update[0] in engine.query.inputs])
        for table, row, multiplicity in updates:
            held[table][row] += multiplicity
        assert Counter(engine.snapshot) == sqlite_answer(text, held), f"version {version}"
