"""Spark SQL's NaN in ``final/``'s records (``final.spark.sqlfloat``), without Spark.

IEEE 754 NaN is unequal to itself, so a dataflow fed raw NaNs keeps each as
its own record and never retracts one. Spark SQL has one NaN, equal to
itself and above every number, and ``-0.0 = 0.0``. These check the stand-in
value and the pipeline's incremental side with it, each NaN a fresh float
object, as rows read from Parquet are; ``tests/test_spark.py`` then holds
every trips query with NaN and signed zeros to Spark SQL itself.
"""

from __future__ import annotations

import math
import pickle
from datetime import datetime
from decimal import Decimal

from final import GraphBuilder
from final.spark.incremental import IncrementalQuery
from final.spark.sqlfloat import NAN, float_positions, sql_row, sql_value
from final.spark.tables_and_queries import QUERIES


def nan() -> float:
    """A NaN that is a new object each time, as each row read back from Parquet holds."""
    return float("nan") * 1.0


def trip(trip_id: int, passengers: int | None, fare: str, distance: float | None) -> tuple:
    return (trip_id, passengers, Decimal(fare), distance, datetime(2018, 1, 1), datetime(2018, 1, 1, 0, 10))


def test_nan_is_one_value_above_every_number() -> None:
    assert sql_value(nan()) is NAN and NAN == nan() and not NAN != NAN
    assert hash(sql_value(nan())) == hash(NAN)
    assert NAN > math.inf and math.inf < NAN and not NAN < 1 and NAN >= -1 and NAN <= NAN
    assert sorted([3.0, NAN, -1, math.inf]) == [-1, 3.0, math.inf, NAN]
    assert min([NAN, 2.5, 7]) == 2.5 and max([1.0, NAN, 2]) is NAN
    assert pickle.loads(pickle.dumps(NAN)) is NAN
    assert sql_row((1, -0.0, "x")) == (1, -0.0, "x") and sql_row((nan(), None))[0] is NAN


def test_float_positions_are_the_double_columns() -> None:
    assert float_positions((("a", "BIGINT"), ("b", "DOUBLE"), ("c", "float"), ("d", "DECIMAL(8,2)"))) == (1, 2)


def test_a_nan_group_is_one_group_and_leaves_when_its_rows_do() -> None:
    query = IncrementalQuery(QUERIES["trips_by_distance"])
    query.apply(0, [("trips", trip(1, 1, "5.00", nan()), 1), ("trips", trip(2, 1, "9.00", nan()), 1),
                    ("trips", trip(3, 2, "4.00", -0.0), 1), ("trips", trip(4, 2, "6.00", 0.0), 1)])
    assert query.snapshot == {(1, NAN, 2, Decimal("5.00"), Decimal("9.00")): 1,
                              (2, 0.0, 2, Decimal("4.00"), Decimal("6.00")): 1}
    query.apply(1, [("trips", trip(1, 1, "5.00", nan()), -1), ("trips", trip(3, 2, "4.00", -0.0), -1)])
    assert query.snapshot == {(1, NAN, 1, Decimal("9.00"), Decimal("9.00")): 1,
                              (2, 0.0, 1, Decimal("6.00"), Decimal("6.00")): 1}
    query.apply(2, [("trips", trip(2, 1, "9.00", nan()), -1)])
    assert query.snapshot == {(2, 0.0, 1, Decimal("6.00"), Decimal("6.00")): 1}


def test_nan_is_the_greatest_distance_and_one_distinct_value() -> None:
    ranges = IncrementalQuery(QUERIES["distance_range"])
    distinct = IncrementalQuery(QUERIES["fares_by_passengers"])
    batch = [("trips", trip(1, 1, "5.00", 2.5), 1), ("trips", trip(2, 1, "7.00", nan()), 1),
             ("trips", trip(3, 1, "8.00", nan()), 1), ("trips", trip(4, 1, "3.00", None), 1)]
    ranges.apply(0, batch)
    distinct.apply(0, batch)
    assert ranges.snapshot == {(1, 2.5, NAN, 3): 1}
    assert distinct.snapshot == {(1, Decimal("3.00"), Decimal("8.00"), 2): 1}
    retract = [("trips", trip(2, 1, "7.00", nan()), -1), ("trips", trip(3, 1, "8.00", nan()), -1)]
    ranges.apply(1, retract)
    distinct.apply(1, retract)
    assert ranges.snapshot == {(1, 2.5, 2.5, 1): 1}
    assert distinct.snapshot == {(1, Decimal("3.00"), Decimal("5.00"), 1): 1}


def test_nan_keys_match_in_a_join() -> None:
    builder = GraphBuilder(0)
    left, left_session = builder.new_session("left")
    right, right_session = builder.new_session("right")
    joined = left.join(right).output("joined")
    graph = builder.finalize()
    left_session.insert(sql_row((nan(), "a")))
    right_session.insert(sql_row((nan(), "b")))
    right_session.insert(sql_row((0.0, "zero")))
    left_session.insert(sql_row((-0.0, "minus zero")))
    left_session.advance_to(1)
    right_session.advance_to(1)
    graph.run()
    assert joined.snapshot() == {(NAN, ("a", "b")): 1, (0.0, ("minus zero", "zero")): 1}
