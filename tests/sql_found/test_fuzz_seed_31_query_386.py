"""A difference the SQL fuzzer found (seed 31, query 386): compile-crash at version 0.

Shrunk by final.spark.fuzz. Fixed: The minus of a parenthesized literal, -(-1.47), crashed the compiler, which
took it for a literal.

Spark SQL's answer at version 0: ['decimal(3,2)']: []

final/'s answer: AttributeError: 'Neg' object has no attribute 'lower'

(AttributeError: 'Neg' object has no attribute 'lower')

The query:

    SELECT -(-1.47) AS c1 FROM t0
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
    'SELECT -(-1.47) AS c1 FROM t0'
)

TYPES = ('decimal(3,2)',)
"""The result's types as Spark SQL gives them."""

ANSWERS = [
    [  # version 0
    ],
]
"""Spark SQL's answer at each version: its rows, or the error class it raised."""


def test_seed_31_query_386() -> None:
    replay(TABLES, HISTORY, QUERY, TYPES, ANSWERS)
