"""A difference the SQL fuzzer found (seed 99, query 30): types at version 0.

Shrunk by final.spark.fuzz. Fixed: the layered compiler folded CAST(1 AS BIGINT) into a literal, and then
typed it beside a DECIMAL by its digits (DECIMAL(1,0)); Spark types a cast by its type (DECIMAL(20,0)), only an
integer written as one by its digits (Literal.folded).

Spark SQL's answer at version 0: ['decimal(28,3)']: []

final/'s answer: ['decimal(9,3)']: []

(types: Spark ['decimal(28,3)'], final/ ['decimal(9,3)'])

The query:

    SELECT a * CAST(1 AS BIGINT) AS c2 FROM t0 AS r1
"""

from final.spark.fuzz import replay
from final.spark.query import Table

TABLES = [
    Table('t0', (('a', 'DECIMAL(7,3)'),)),
]

HISTORY = [
    [  # version 0
    ],
]
"""Each version's updates: (table, record, multiplicity)."""

QUERY = (
    'SELECT a * CAST(1 AS BIGINT) AS c2 FROM t0 AS r1'
)

TYPES = ('decimal(28,3)',)
"""The result's types as Spark SQL gives them."""

ANSWERS = [
    [  # version 0
    ],
]
"""Spark SQL's answer at each version: its rows, or the error class it raised."""


def test_seed_99_query_30() -> None:
    replay(TABLES, HISTORY, QUERY, TYPES, ANSWERS)
