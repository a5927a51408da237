"""A difference the SQL fuzzer found (seed 2028, query 484): final-error at version 0.

Shrunk by final.spark.fuzz. Fixed: a scalar subquery whose value nothing reads is not joined (Spark's optimizer
drops it, so its two rows fail nothing there), and a SELECT item nothing reads no longer keeps what it reads needed
(the prune rule's reads are of the items kept).

Spark SQL's answer at version 0: ['string']: [('2024-01-31 23:59:59.999999',), ('2024-01-31 23:59:59.999999',)]

final/'s answer: raises [SCALAR_SUBQUERY_TOO_MANY_ROWS] More than one row returned by a subquery used as an
expression

(final/ raises [SCALAR_SUBQUERY_TOO_MANY_ROWS] More than one row returned by a subquery used as an expression; Spark
answers 2 rows)

The query:

    WITH w3 AS (SELECT '2024-01-31 23:59:59.999999' AS c1, (SELECT x2.k FROM t1 AS x2) AS c3 FROM t1 AS r1), w4 AS
    (SELECT w3.c1 AS c3 FROM w3) SELECT q5.c3 AS c0 FROM w4 AS q5
"""

from final.spark.fuzz import replay
from final.spark.query import Table

TABLES = [
    Table('t1', (('k', 'INT'),)),
]

HISTORY = [
    [  # version 0
        ('t1', (None,), 2),
    ],
]
"""Each version's updates: (table, record, multiplicity)."""

QUERY = (
    "WITH w3 AS (SELECT '2024-01-31 23:59:59.999999' AS c1, (SELECT x2.k FROM t1 AS x2) AS c3 FROM t1 AS "
    'r1), w4 AS (SELECT w3.c1 AS c3 FROM w3) SELECT q5.c3 AS c0 FROM w4 AS q5'
)

TYPES = ('string',)
"""The result's types as Spark SQL gives them."""

ANSWERS = [
    [  # version 0
        ('2024-01-31 23:59:59.999999',),
        ('2024-01-31 23:59:59.999999',),
    ],
]
"""Spark SQL's answer at each version: its rows, or the error class it raised."""


def test_seed_2028_query_484() -> None:
    replay(TABLES, HISTORY, QUERY, TYPES, ANSWERS)
