"""A difference the SQL fuzzer found (seed 101, query 148): crash at version 0.

Shrunk by final.spark.fuzz. Fixed: date_trunc of a DATE reads it as its midnight, as Spark does (the DATE was
passed to the TIMESTAMP function as it was, and failed).

Spark SQL's answer at version 0: ['timestamp']: [(datetime(1999, 12, 27, 0, 0),)]

final/'s answer: raises FunctionError: map (SELECT DATE_TRUNC('WEEK', CAST('2000-01-01' AS …) #0 failed at version
Version(0) on the record (None,): your function raised AttributeError: 'datetime.date' object has no attribute
'date'

(FunctionError: map (SELECT DATE_TRUNC('WEEK', CAST('2000-01-01' AS …) #0 failed at version Version(0) on the record
(None,): your function raised AttributeError: 'datetime.date' object has no attribute 'date')

The query:

    SELECT date_trunc('WEEK', DATE '2000-01-01') AS c0 FROM t0
"""

from datetime import datetime

from final.spark.fuzz import replay
from final.spark.query import Table

TABLES = [
    Table('t0', (('k', 'INT'),)),
]

HISTORY = [
    [  # version 0
        ('t0', (None,), 1),
    ],
]
"""Each version's updates: (table, record, multiplicity)."""

QUERY = (
    "SELECT date_trunc('WEEK', DATE '2000-01-01') AS c0 FROM t0"
)

TYPES = ('timestamp',)
"""The result's types as Spark SQL gives them."""

ANSWERS = [
    [  # version 0
        (datetime(1999, 12, 27, 0, 0),),
    ],
]
"""Spark SQL's answer at each version: its rows, or the error class it raised."""


def test_seed_101_query_148() -> None:
    replay(TABLES, HISTORY, QUERY, TYPES, ANSWERS)
