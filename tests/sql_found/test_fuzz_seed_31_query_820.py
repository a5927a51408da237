"""A difference the SQL fuzzer found (seed 31, query 820): crash at version 0.

Shrunk by final.spark.fuzz. Fixed: SUM of doubles told NaN apart by v != v, but Spark's one NaN (sqlfloat.NAN)
equals itself, so a NaN reached the exact sum as a fraction and raised.

Spark SQL's answer at version 0: ['decimal(3,1)', 'int']: [(Decimal("-71.0"), -3)]

final/'s answer: raises FunctionError: aggregate (GROUP BY r1.a, r1.k) + map (GROUP BY r1.a, r1.k) + map (SELECT
CAST(CAST(CAST(11 AS BIGINT) AS DOUBLE) …) + filter (WHERE (NOT s3.c1 BETWEEN 3000000000 AND CAST(0 …) + map (SELECT
(-71.0) AS c0, COALESCE((-3), (-s3.c0)) …) #6 failed finishing the versions before {1}: your function raised

(FunctionError: aggregate (GROUP BY r1.a, r1.k) + map (GROUP BY r1.a, r1.k) + map (SELECT CAST(CAST(CAST(11 AS
BIGINT) AS DOUBLE) …) + filter (WHERE (NOT s3.c1 BETWEEN 3000000000 AND CAST(0 …) + map (SELECT (-71.0) AS c0,
COALESCE((-3), (-s3.c0)) …) #6 failed finishing the versions before {1}: your function raised )

The query:

    SELECT (-71.0) AS c0, COALESCE((-3), (-s3.c0)) AS c1 FROM (SELECT CAST(CAST(CAST(11 AS BIGINT) AS DOUBLE) AS
    INT) AS c0, r1.k AS c1, SUM(r1.k * r1.c) AS c2 FROM t1 AS r1 RIGHT JOIN t0 AS r2 ON r1.b GROUP BY r1.a, r1.k) AS
    s3 WHERE (NOT s3.c1 BETWEEN 3000000000 AND CAST(0 AS BIGINT))
"""

from decimal import Decimal

from final.spark.fuzz import replay
from final.spark.query import Table

TABLES = [
    Table('t0', (('k', 'INT'), ('a', 'BOOLEAN'))),
    Table('t1', (('k', 'BIGINT'), ('a', 'INT'), ('b', 'BOOLEAN'), ('c', 'DOUBLE'))),
]

HISTORY = [
    [  # version 0
        ('t0', (None, None), 1),
        ('t1', (0, None, True, float("inf")), 1),
    ],
]
"""Each version's updates: (table, record, multiplicity)."""

QUERY = (
    'SELECT (-71.0) AS c0, COALESCE((-3), (-s3.c0)) AS c1 FROM (SELECT CAST(CAST(CAST(11 AS BIGINT) AS '
    'DOUBLE) AS INT) AS c0, r1.k AS c1, SUM(r1.k * r1.c) AS c2 FROM t1 AS r1 RIGHT JOIN t0 AS r2 ON r1.b '
    'GROUP BY r1.a, r1.k) AS s3 WHERE (NOT s3.c1 BETWEEN 3000000000 AND CAST(0 AS BIGINT))'
)

TYPES = ('decimal(3,1)', 'int')
"""The result's types as Spark SQL gives them."""

ANSWERS = [
    [  # version 0
        (Decimal("-71.0"), -3),
    ],
]
"""Spark SQL's answer at each version: its rows, or the error class it raised."""


def test_seed_31_query_820() -> None:
    replay(TABLES, HISTORY, QUERY, TYPES, ANSWERS)
