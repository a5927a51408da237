"""A difference the SQL fuzzer found (seed 31, query 1145): compile-crash at version 0.

Shrunk by final.spark.fuzz. Fixed: -NULL crashed the compiler; Spark SQL types it as a DOUBLE.

Spark SQL's answer at version 0: ['int']: []

final/'s answer: AttributeError: 'Null' object has no attribute 'lower'

(AttributeError: 'Null' object has no attribute 'lower')

The query:

    WITH w3 AS (SELECT 3 AS c0, -CAST(NULL AS DOUBLE) AS c1 FROM t2 AS r1) SELECT w3.c0 AS c2 FROM w3
"""

from final.spark.fuzz import replay
from final.spark.query import Table

TABLES = [
    Table('t2', (('k', 'INT'),)),
]

HISTORY = [
    [  # version 0
    ],
]
"""Each version's updates: (table, record, multiplicity)."""

QUERY = (
    'WITH w3 AS (SELECT 3 AS c0, -CAST(NULL AS DOUBLE) AS c1 FROM t2 AS r1) SELECT w3.c0 AS c2 FROM w3'
)

TYPES = ('int',)
"""The result's types as Spark SQL gives them."""

ANSWERS = [
    [  # version 0
    ],
]
"""Spark SQL's answer at each version: its rows, or the error class it raised."""


def test_seed_31_query_1145() -> None:
    replay(TABLES, HISTORY, QUERY, TYPES, ANSWERS)
