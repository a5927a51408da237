"""A difference the SQL fuzzer found (seed 1, query 1504): the rows differ, at version

Shrunk by final.spark.fuzz. Fixed: unary minus (and abs) of a DOUBLE returned Python's NaN, not Spark's one NaN
(sqlfloat.NAN), so two NaN rows stayed apart in DISTINCT, joins and MIN/MAX.

Spark SQL's answer at version 1: ['double']: [(float("nan"),)]
final/'s answer: ['double']: [(float("nan"),), (float("nan"),), (float("nan"),), (float("nan"),)]
(rows differ: (float("nan"),): Spark 1, final/ 4)
"""

from final.spark.fuzz import replay
from final.spark.query import Table

TABLES = [
    Table('t0', (('a', 'DOUBLE'),)),
]

HISTORY = [
    [('t0', (float("nan"),), 1)],
    [('t0', (float("nan"),), 1)],
]
"""Each version's updates: (table, record, multiplicity)."""

QUERY = 'SELECT DISTINCT -r2.a AS c1 FROM t0 AS r1 JOIN t0 AS r2 ON r1.a = r2.a'

TYPES = ('double',)
"""The result's types as Spark SQL gives them."""

ANSWERS = [
    [(float("nan"),)],
    [(float("nan"),)],
]
"""Spark SQL's answer at each version: its rows, or the error class it raised."""


def test_seed_1_query_1504() -> None:
    replay(TABLES, HISTORY, QUERY, TYPES, ANSWERS)
