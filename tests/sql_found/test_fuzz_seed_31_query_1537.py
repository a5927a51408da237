"""A difference the SQL fuzzer found (seed 31, query 1537): final-error at version 0.

Shrunk by final.spark.fuzz. Fixed: As query 3, for -Infinity: Spark SQL's cast gives NULL, the compiler raised
CAST_OVERFLOW.

Spark SQL's answer at version 0: ['decimal(4,1)']: [(None,), (None,)]

final/'s answer: raises [CAST_OVERFLOW] The value -inf of the type "DOUBLE" cannot be cast to "DECIMAL(4,1)" (in the
row (-inf,))

(final/ raises [CAST_OVERFLOW] The value -inf of the type "DOUBLE" cannot be cast to "DECIMAL(4,1)" (in the row
(-inf,)); Spark answers 2 rows)

The query:

    SELECT CAST(t0.a AS DECIMAL(4, 1)) AS c0 FROM t0
"""

from final.spark.fuzz import replay
from final.spark.query import Table

TABLES = [
    Table('t0', (('a', 'DOUBLE'),)),
]

HISTORY = [
    [  # version 0
        ('t0', (float("-inf"),), 2),
    ],
]
"""Each version's updates: (table, record, multiplicity)."""

QUERY = (
    'SELECT CAST(t0.a AS DECIMAL(4, 1)) AS c0 FROM t0'
)

TYPES = ('decimal(4,1)',)
"""The result's types as Spark SQL gives them."""

ANSWERS = [
    [  # version 0
        (None,),
        (None,),
    ],
]
"""Spark SQL's answer at each version: its rows, or the error class it raised."""


def test_seed_31_query_1537() -> None:
    replay(TABLES, HISTORY, QUERY, TYPES, ANSWERS)
