"""TPC-H (final/spark/tpch.py): the refresh functions as the benchmark defines them, and all 22 queries, as the
benchmark's text gives them, followed through a load and two refreshes with 0 differences against DuckDB from
scratch at every version. No Spark here: test_spark_tpch.py runs the same tables through ``run``."""

from __future__ import annotations

import os
import random
from collections import Counter
from decimal import Decimal

import pyarrow
import pytest
from deltalake import DeltaTable

from final.spark import tpch
from final.spark.executors.lowering import check_placement
from final.spark.sql import compile_sql
from tests.sparkless import follows_the_dataflow

SCALE = 0.01
REFRESHES = 2


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("tpch"))
    return folder, tpch.generate(folder, SCALE, REFRESHES)


def rows(folder: str, table: str, version: int | None = None) -> list[dict]:
    return pyarrow.table(DeltaTable(os.path.join(folder, table), version=version).to_pyarrow_table()).to_pylist()


def test_each_refresh_inserts_and_deletes_scale_times_1500_orders_with_their_lineitems(tables):
    folder, refreshes = tables
    count = round(SCALE * tpch.RF_ORDERS)
    orders = {row["o_orderkey"] for row in rows(folder, "orders")}
    lineitems = Counter(row["l_orderkey"] for row in rows(folder, "lineitem"))
    first = {row["o_orderkey"] for row in rows(folder, "orders", 0)}
    for refresh in refreshes:
        assert len(refresh.inserted) == len(refresh.deleted) == count
        assert not set(refresh.deleted) & orders and not set(refresh.deleted) & set(lineitems)  # RF2: gone
        assert set(refresh.inserted) <= orders and all(1 <= lineitems[key] <= 7 for key in refresh.inserted)
        assert not set(refresh.inserted) & first  # RF1: new keys
    assert len(orders) == len(first)


def test_a_refresh_updates_customers_and_parts_as_one_commit_each_with_pre_and_post_images(tables):
    folder, refreshes = tables
    table = DeltaTable(os.path.join(folder, "customer"))
    assert table.version() == REFRESHES
    feed = pyarrow.table(table.load_cdf(starting_version=1, ending_version=1).read_all()).to_pylist()
    kinds = Counter(row["_change_type"] for row in feed)
    assert kinds == {"update_preimage": len(refreshes[0].customers), "update_postimage": len(refreshes[0].customers)}
    before = {row["c_custkey"]: row["c_acctbal"] for row in feed if row["_change_type"] == "update_preimage"}
    after = {row["c_custkey"]: row["c_acctbal"] for row in feed if row["_change_type"] == "update_postimage"}
    assert before.keys() == after.keys() == set(refreshes[0].customers)
    assert all(before[key] != after[key] and abs(before[key] - after[key]) <= Decimal("5.00") for key in before)


def test_the_same_seed_writes_the_same_tables(tables, tmp_path):
    folder, refreshes = tables
    assert tpch.generate(str(tmp_path), SCALE, REFRESHES) == refreshes
    assert Counter(map(str, rows(str(tmp_path), "lineitem"))) == Counter(map(str, rows(folder, "lineitem")))


def test_all_22_queries_as_the_benchmark_gives_them_equal_duckdb_at_every_version(tables):
    folder, _ = tables
    results = tpch.check(folder)
    assert [result.number for result in results] == list(range(1, 23))
    for result in results:
        assert result.refused is None, result.refused
        assert result.versions == len(tpch.TABLES) + 4 * REFRESHES
        assert result.differences == [], f"Q{result.number}: {result.differences}"


def test_all_22_queries_on_the_executors_steps_follow_final_s_dataflow_at_every_version(tables):
    """Every TPC-H query kept with its state on the executors (tests/sparkless.py: the executors' code, Spark's
    shuffle and state store stood in for): the load as one micro-batch, then each refresh's commits as one, equal
    to ``final/``'s dataflow (which the test above holds to DuckDB) at every version."""
    folder, _ = tables
    texts = tpch.queries()
    with tpch.followed(folder) as (provider, commits, changes):
        versions = [[(change.table, change.record, change.multiplicity) for change in found] for found in changes]
        batches = [len(tpch.TABLES)] + [4] * REFRESHES
        assert sum(batches) == len(commits)
        for number in range(1, 23):
            query = compile_sql(tpch.spark_text(texts[number], number), provider, f"q{number:02d}")
            check_placement(query)
            assert follows_the_dataflow(query, versions, random.Random(number), f"Q{number}", batches) is not None


def test_one_equality_rule_against_duckdb():
    """DuckDB's DOUBLE (its AVG of a DECIMAL) against Spark's DECIMAL rounded to 6 places; all else exactly."""
    ours = Counter({("A", Decimal("25.522006"), 3): 1})
    assert tpch.same_rows(ours, [("A", 25.52200567, 3)], [False, True, False])
    assert not tpch.same_rows(ours, [("A", 25.5220, 3)], [False, True, False])
    assert not tpch.same_rows(ours, [("A", 25.522006, 4)], [False, True, False])
    assert tpch.same_rows(Counter({(Decimal("1.10"),): 2}), [(Decimal("1.1"),), (Decimal("1.1"),)], [False])


@pytest.mark.parametrize(("text", "message"), [("0", "numbered 1 to 22"), ("3-1", "numbered 1 to 22"),
                                               ("x", "numbers and ranges"), ("", "names no query")])
def test_a_query_list_that_is_not_tpch_numbers_is_refused(text, message):
    with pytest.raises(tpch.TpchError, match=message):
        tpch.numbers(text)
