"""A difference the SQL fuzzer found (seed 101, query 197): types at version 0.

Shrunk by final.spark.fuzz. Fixed: two DECIMALs that widen past 38 digits keep their integer digits and give
up places (Spark 4.3's adjustPrecisionScale, as in arithmetic), DECIMAL(32,2) and DECIMAL(32,10) meeting in
DECIMAL(38,8); the compiler capped the scale instead (DECIMAL(38,10)). Comparisons and IN round both sides to
that type first, as Spark does.

Spark SQL's answer at version 0: ['decimal(38,8)']: [(None,)]

final/'s answer: ['decimal(38,10)']: [(None,)]

(types: Spark ['decimal(38,8)'], final/ ['decimal(38,10)'])

The query:

    SELECT CASE NULL WHEN 7.0E0 THEN SUM(s4.c0) ELSE AVG(s4.c0 / 0.25) END AS c2 FROM (SELECT 9.08 AS c0, b AS c1, a
    AS c2, k AS c3 FROM t0 AS r1 INTERSECT ALL SELECT COUNT(*) AS c0, NULL AS c1, 1.1E0 AS c2, 4 AS c3 FROM t2) AS
    s4
"""

from final.spark.fuzz import replay
from final.spark.query import Table

TABLES = [
    Table('t0', (('k', 'INT'), ('a', 'DOUBLE'), ('b', 'DATE'))),
    Table('t2', (('k', 'INT'), ('a', 'DOUBLE'), ('b', 'TIMESTAMP'))),
]

HISTORY = [
    [  # version 0
    ],
]
"""Each version's updates: (table, record, multiplicity)."""

QUERY = (
    'SELECT CASE NULL WHEN 7.0E0 THEN SUM(s4.c0) ELSE AVG(s4.c0 / 0.25) END AS c2 FROM (SELECT 9.08 AS '
    'c0, b AS c1, a AS c2, k AS c3 FROM t0 AS r1 INTERSECT ALL SELECT COUNT(*) AS c0, NULL AS c1, 1.1E0 '
    'AS c2, 4 AS c3 FROM t2) AS s4'
)

TYPES = ('decimal(38,8)',)
"""The result's types as Spark SQL gives them."""

ANSWERS = [
    [  # version 0
        (None,),
    ],
]
"""Spark SQL's answer at each version: its rows, or the error class it raised."""


def test_seed_101_query_197() -> None:
    replay(TABLES, HISTORY, QUERY, TYPES, ANSWERS)
