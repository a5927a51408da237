"""A difference the SQL fuzzer found (seed 31, query 3): final-error at version 0.

Shrunk by final.spark.fuzz. Fixed: Spark SQL casts a NaN DOUBLE to DECIMAL as NULL, even in ANSI mode; the
compiler raised CAST_OVERFLOW.

Spark SQL's answer at version 0: ['decimal(4,1)']: [(None,)]

final/'s answer: raises [CAST_OVERFLOW] The value NaN of the type "DOUBLE" cannot be cast to "DECIMAL(4,1)" (in the
row (NaN,))

(final/ raises [CAST_OVERFLOW] The value NaN of the type "DOUBLE" cannot be cast to "DECIMAL(4,1)" (in the row
(NaN,)); Spark answers 1 rows)

The query:

    SELECT CAST(t2.a AS DECIMAL(4,1)) AS c0 FROM t2
"""

from final.spark.fuzz import replay
from final.spark.query import Table

TABLES = [
    Table('t2', (('a', 'DOUBLE'),)),
]

HISTORY = [
    [  # version 0
        ('t2', (float("nan"),), 1),
    ],
]
"""Each version's updates: (table, record, multiplicity)."""

QUERY = (
    'SELECT CAST(t2.a AS DECIMAL(4,1)) AS c0 FROM t2'
)

TYPES = ('decimal(4,1)',)
"""The result's types as Spark SQL gives them."""

ANSWERS = [
    [  # version 0
        (None,),
    ],
]
"""Spark SQL's answer at each version: its rows, or the error class it raised."""


def test_seed_31_query_3() -> None:
    replay(TABLES, HISTORY, QUERY, TYPES, ANSWERS)
