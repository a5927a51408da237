"""A difference the SQL fuzzer found (seed 2028, query 819): types at version 0.

Shrunk by final.spark.fuzz. Fixed: floor, ceil and round give back an integer literal as a computed value, not as
one written, so beside a DECIMAL it is typed by its type (DECIMAL(20,0) for a BIGINT), as Spark types every
expression but a literal; CAST(5 AS INT) too.

Spark SQL's answer at version 0: ['decimal(22,0)']: []

final/'s answer: ['decimal(15,0)']: []

(types: Spark ['decimal(22,0)'], final/ ['decimal(15,0)'])

The query:

    SELECT CAST(r1.k AS DECIMAL(1, 0)) * FLOOR(1099511627776) AS c2 FROM t0 AS r1
"""

from final.spark.fuzz import replay
from final.spark.query import Table

TABLES = [
    Table('t0', (('k', 'INT'),)),
]

HISTORY = [
    [  # version 0
    ],
]
"""Each version's updates: (table, record, multiplicity)."""

QUERY = (
    'SELECT CAST(r1.k AS DECIMAL(1, 0)) * FLOOR(1099511627776) AS c2 FROM t0 AS r1'
)

TYPES = ('decimal(22,0)',)
"""The result's types as Spark SQL gives them."""

ANSWERS = [
    [  # version 0
    ],
]
"""Spark SQL's answer at each version: its rows, or the error class it raised."""


def test_seed_2028_query_819() -> None:
    replay(TABLES, HISTORY, QUERY, TYPES, ANSWERS)
