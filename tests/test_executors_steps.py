"""The executors' keyed steps without Spark: random queries over random histories, each step's code run as the
executors run it (tests/sparkless.py), equal to ``final/``'s dataflow at every version.

The fuzzer's cases (``fuzz.generate``) give the queries and histories; the
versions are cut into micro-batches of random lengths. This is what
checks, quickly and on many shapes, that a step's key keeps apart only rows
that never meet in it (``steps.shuffle_keys``), that keys sharing a key
group keep their state apart, and that a key's state carries from one
micro-batch to the next; tests/test_spark_executors.py runs the same code
on Spark, and test_tpch.py TPC-H's 22 queries.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from final.spark.executors import changes
from final.spark.executors.lowering import PlacementError, check_placement
from final.spark.executors.steps import executors_plan
from final.spark.fuzz.queries import generate
from final.spark.sql import SqlError, compile_sql
from final.spark.sql.logical import nodes
from final.spark.sqlfloat import float_positions, sql_row
from tests.sparkless import follows_the_dataflow

CASES = 400
"""Fuzz cases tried (seed 0): about three in four compile to a plan the executors run."""


@pytest.mark.parametrize("groups", [changes.KEY_GROUPS, 3])
def test_random_queries_through_the_executors_steps_equal_final_s_dataflow_at_every_version(
        groups: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """With Spark's number of key groups, and with three, where many keys share a group's state."""
    monkeypatch.setattr(changes, "KEY_GROUPS", groups)
    rng = random.Random(43)
    checked, kinds = 0, Counter()
    for index, case in enumerate(generate(0, CASES)):
        tables = {table.name: table for table in case.dataset.tables}
        try:
            query = compile_sql(case.text, tables, name=f"case_{index}")
            check_placement(query)
        except (SqlError, PlacementError):
            continue
        floats = {name: float_positions(table.columns) for name, table in tables.items()}
        versions = [[(table, sql_row(row, floats[table]), multiplicity)
                     for table, row, multiplicity in case.dataset.updates(version)]
                    for version in range(len(case.dataset.commits))]
        executors = follows_the_dataflow(query, versions, rng, f"case {index}: {case.text}")
        if executors is not None:
            checked += 1
            kinds.update(executors.kinds)
    assert checked >= CASES // 4
    for kind in ("Join", "Aggregate", "Distinct", "SetOperation", "TopK", "Window"):
        assert kinds[kind], f"no case had a {kind}"


@pytest.mark.parametrize("text", [
    "SELECT a.k, b.w, c.z FROM a JOIN b ON a.k = b.k JOIN c ON b.w = c.z",
    "SELECT a.k, b.w, c.z FROM a JOIN c ON a.s = c.z JOIN b ON a.k = b.k",
])
def test_a_delta_join_runs_on_the_executors_as_binary_joins_with_its_columns_in_order(text: str) -> None:
    from tests.test_sql import TABLES

    query = compile_sql(text, TABLES, "three")
    plan = executors_plan(query.plan)
    assert not any(type(node).__name__ == "MultiJoin" for node in nodes(plan))
    assert [f.id for f in plan.fields] == [f.id for f in query.plan.fields]
