"""Random data sets for the SQL fuzzer: a few small typed tables and a history of versions over them.

A data set is what a fuzzed query runs over: two or three tables ``t0``..
(or a graph, ``edges`` and ``roots``, for recursive queries) of a few typed
columns whose values are the awkward ones (NULL, NaN, signed zeros,
infinities, decimals at their scale, empty and unicode strings, month ends,
leap days and the days around 1970) drawn from small domains, so joins
match and groups collide. Its history is a load and three to five commits
that insert, delete, update, empty a table, or delete a row and insert it
again in one version (churn), as Delta commits do: what an incremental
engine gets wrong is most often a retraction. Each version is stored whole
(``DatasetCommit``); ``Dataset.updates`` gives a version as the changes
``IncrementalQuery`` is fed.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from ..incremental import UnversionedChange
from ..query import Table
from ..sqlfloat import NAN

Row = tuple
"""A table's row: its values in the order of the table's columns, None for NULL."""

MAX_ROWS = 30
"""Rows a table holds at most at any version: Spark answers a query over so few in a few tenths of a second."""


@dataclass(frozen=True)
class DatasetCommit:
    """One version of a data set: each table's rows as of it, and rows deleted and inserted again in it.

    ``rows[i]`` is table i's rows, a multiset (repeats allowed) in a fixed
    order. ``churn`` holds ``(i, row)`` for rows present before and after the
    commit that it retracts and inserts in the same version: the two updates
    cancel out, as when a Delta commit rewrites a file and leaves a row where
    it was.
    """

    rows: tuple[tuple[Row, ...], ...]
    churn: tuple[tuple[int, Row], ...] = ()


@dataclass(frozen=True)
class Dataset:
    """Tables and their history: ``commits[v]`` is version v, version 0 the initial load."""

    tables: tuple[Table, ...]
    commits: tuple[DatasetCommit, ...]

    def updates(self, version: int) -> list[UnversionedChange]:
        """Version ``version``'s changes against the version before (none before 0), then its churn."""
        before = self.commits[version - 1].rows if version else tuple(() for _ in self.tables)
        commit = self.commits[version]
        found: list[UnversionedChange] = []
        for index, table in enumerate(self.tables):
            old, new = Counter(before[index]), Counter(commit.rows[index])
            found += [(table.name, row, -count) for row, count in (old - new).items()]
            found += [(table.name, row, count) for row, count in (new - old).items()]
        for index, row in commit.churn:
            found += [(self.tables[index].name, row, -1), (self.tables[index].name, row, 1)]
        return found

    @property
    def names(self) -> list[str]:
        """The tables' names, in order."""
        return [table.name for table in self.tables]


SKEW = 0.3
"""How often a column takes its domain's first value beside a uniform draw: one group much larger than the rest."""

STRINGS = ("", "a", "b", "A", "ab", "abc", "a b", " a", "b ", "é", "Ünï", "日本", "😀", "a%b", "a_b", "10", "-3",
           " 7 ", "1.5", "true", "NaN", "ß", "Z", "aa")
"""String values: empty, case pairs, spaces, unicode beyond the BMP, LIKE's wildcards as data, and numbers and
booleans as text (for CAST)."""

DOUBLES = (0.0, -0.0, 0.5, -1.25, 2.0, 0.1, 1.1, 3.75, -7.5, 100.0, 0.3, -0.1, 1e-3, 2.5e6)
"""Double values: signed zeros, dyadic fractions (exact in any order of addition) and decimal fractions that
are not."""

SPECIAL_DOUBLES = (NAN, math.inf, -math.inf)
"""NaN and the infinities, where Spark's rules and Python's part: half the DOUBLE columns hold some, and
literals draw from them too."""

DATES = (date(2024, 1, 31), date(2024, 2, 29), date(2023, 2, 28), date(2023, 12, 31), date(2024, 3, 1),
         date(2000, 1, 1), date(1999, 12, 31), date(1970, 1, 1), date(1969, 12, 31), date(2024, 5, 31))
"""Date values: month ends (a 31st, both ends of February, a leap day), year ends, and the days either side of
1970-01-01, where Spark's day count turns negative."""

TIMESTAMPS = (datetime(2024, 1, 31, 23, 59, 59, 999999), datetime(2024, 2, 29),
              datetime(2023, 12, 31, 12, 30, 15, 123456), datetime(1970, 1, 1),
              datetime(1969, 12, 31, 23, 59, 59, 500000), datetime(2024, 3, 1, 0, 0, 1), datetime(2000, 6, 15, 6, 7, 8))
"""Timestamp values (session time zone UTC): the last microsecond of a month, midnights, a fraction of a second
before 1970, a leap day."""

GENERATED_TYPES = ("INT", "BIGINT", "DECIMAL", "DOUBLE", "STRING", "BOOLEAN", "DATE", "TIMESTAMP")
"""The Spark types a generated column may have; a DECIMAL gets its precision and scale in ``column_maker``."""


@dataclass(frozen=True)
class ColumnMaker:
    """How a generated column's values are drawn: from ``domain``, or NULL with probability ``nulls``."""

    name: str
    kind: str
    domain: tuple
    nulls: float

    def value(self, rng: random.Random) -> Any:
        """NULL, or a value of the domain; its first value a third of the time, so groups are skewed."""
        if rng.random() < self.nulls:
            return None
        return self.domain[0] if rng.random() < SKEW else rng.choice(self.domain)


def column_maker(rng: random.Random, name: str, kind: str) -> ColumnMaker:
    """A column of Spark type ``kind`` (``DECIMAL`` gets a random precision and scale) and its domain."""
    nulls = rng.choice((0.0, 0.1, 0.1, 0.25))
    if kind in ("INT", "BIGINT"):
        style = rng.choice(("tiny", "small", "small", "medium") + (("big",) if kind == "BIGINT" else ()))
        if style == "tiny":
            domain = (0, 1, 2, 3)
        elif style == "small":
            domain = tuple(range(-3, 6))
        elif style == "medium":
            domain = (0, *rng.sample(range(-1000, 1001), 7))
        else:
            domain = (0, *(rng.randint(-10**12, 10**12) for _ in range(6)))
    elif kind == "DECIMAL":
        precision = rng.randint(2, 12)
        scale = rng.randint(0, min(4, precision - 1))
        largest = min(10 ** (precision - scale) - 1, 999) * 10**scale + 10**scale - 1
        domain = tuple({Decimal(0).scaleb(-scale)} | {Decimal(rng.randint(-largest, largest)).scaleb(-scale)
                                                      for _ in range(6)})
        domain = tuple(sorted(domain))
        kind = f"DECIMAL({precision},{scale})"
    elif kind == "DOUBLE":
        domain = (*rng.sample(DOUBLES, 5), *(rng.randint(-80, 80) / 4 for _ in range(2)))
        if rng.random() < 0.5:
            domain += tuple(rng.sample(SPECIAL_DOUBLES, rng.randint(1, 3)))
    elif kind == "STRING":
        domain = tuple(rng.sample(STRINGS, 6))
    elif kind == "DATE":
        domain = tuple(rng.sample(DATES, 5))
    elif kind == "TIMESTAMP":
        domain = tuple(rng.sample(TIMESTAMPS, 4))
    else:
        domain = (True, False)
    return ColumnMaker(name, kind, domain, nulls)


@dataclass(frozen=True)
class TableMaker:
    """How a generated table's rows are made and changed; ``edges`` keeps src < dst (an acyclic graph)."""

    table: Table
    columns: tuple[ColumnMaker, ...]
    edges: bool = False

    def row(self, rng: random.Random) -> Row:
        """A new row: each column's value drawn (for an edge, two distinct nodes in order)."""
        if self.edges:
            nodes = self.columns[0].domain
            src, dst = sorted(rng.sample(nodes, 2))
            src = None if rng.random() < 0.04 else src
            return (src, dst, self.columns[2].value(rng))
        return tuple(column.value(rng) for column in self.columns)

    def changed(self, rng: random.Random, row: Row) -> Row:
        """``row`` with one column drawn again (for an edge, another edge)."""
        if self.edges:
            return self.row(rng)
        position = rng.randrange(len(row))
        return (*row[:position], self.columns[position].value(rng), *row[position + 1:])


def history(rng: random.Random, makers: Sequence[TableMaker]) -> tuple[DatasetCommit, ...]:
    """A load and three to five commits; each commit changes some tables by a few operations.

    The operations: insert new rows, copies of present ones, or rows deleted
    earlier; delete rows; update a row (one column changed); delete and
    insert again in the same commit (churn); and, rarely, empty a table.
    """
    current = [[maker.row(rng) for _ in range(rng.choice((0, 1, 2, 4, 6, 9, 12)))] for maker in makers]
    gone: list[list[Row]] = [[] for _ in makers]
    commits = [DatasetCommit(tuple(tuple(rows) for rows in current))]
    for _ in range(rng.randint(3, 5)):
        churn = []
        for index, maker in enumerate(makers):
            rows = current[index]
            if rng.random() < 0.25:
                continue
            before = Counter(rows)
            for _ in range(rng.randint(1, 3)):
                operation = rng.choice(("insert", "insert", "delete", "delete", "update", "churn", "clear"))
                if operation == "clear" and rng.random() < 0.4:
                    gone[index] += rows
                    rows.clear()
                elif operation == "insert":
                    for _ in range(rng.randint(1, 4)):
                        pick = rng.random()
                        if pick < 0.2 and rows:
                            rows.append(rng.choice(rows))
                        elif pick < 0.45 and gone[index]:
                            rows.append(rng.choice(gone[index]))
                        else:
                            rows.append(maker.row(rng))
                elif operation == "delete" and rows:
                    for _ in range(min(len(rows), rng.randint(1, 3))):
                        gone[index].append(rows.pop(rng.randrange(len(rows))))
                elif operation == "update" and rows:
                    position = rng.randrange(len(rows))
                    gone[index].append(rows[position])
                    rows[position] = maker.changed(rng, rows[position])
                elif operation == "churn":
                    both = list((before & Counter(rows)).elements())
                    if both:
                        churn.append((index, rng.choice(both)))
            while len(rows) > MAX_ROWS:
                gone[index].append(rows.pop(rng.randrange(len(rows))))
        after = [Counter(rows) for rows in current]
        kept = tuple((index, row) for index, row in churn if after[index][row])
        commits.append(DatasetCommit(tuple(tuple(rows) for rows in current), kept))
    return tuple(commits)


def make_dataset(rng: random.Random) -> Dataset:
    """Two or three tables ``t0``.. with a small integral key ``k`` and one to three more typed columns."""
    makers = []
    for index in range(rng.choice((2, 2, 3))):
        columns = [column_maker(rng, "k", rng.choice(("INT", "BIGINT", "INT")))]
        columns[0] = replace(columns[0], domain=columns[0].domain[:6] if len(columns[0].domain) > 6
                             else columns[0].domain)
        for name in ("a", "b", "c")[:rng.randint(1, 3)]:
            columns.append(column_maker(rng, name, rng.choice(GENERATED_TYPES)))
        table = Table(f"t{index}", tuple((column.name, column.kind) for column in columns))
        makers.append(TableMaker(table, tuple(columns)))
    return Dataset(tuple(maker.table for maker in makers), history(rng, makers))


def make_graph(rng: random.Random) -> Dataset:
    """``edges(src, dst, w)`` with src < dst over a few nodes (a DAG: recursion ends), and ``roots(node)``."""
    nodes = tuple(range(rng.randint(4, 9)))
    edges = TableMaker(Table("edges", (("src", "BIGINT"), ("dst", "BIGINT"), ("w", "INT"))), (
        ColumnMaker("src", "BIGINT", nodes, 0.0), ColumnMaker("dst", "BIGINT", nodes, 0.0),
        ColumnMaker("w", "INT", (0, 1, 2, 3, 5), 0.1)), edges=True)
    roots = TableMaker(Table("roots", (("node", "BIGINT"),)), (ColumnMaker("node", "BIGINT", nodes, 0.05),))
    return Dataset((edges.table, roots.table), history(rng, (edges, roots)))

