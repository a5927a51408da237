"""Differential fuzzing of the SQL compiler: random tables, histories and queries, checked against Spark SQL.

SQLancer and Feldera's SQL tests find an engine's bugs by running many
random, well-typed queries over random data through the engine and through
a reference, and comparing the answers. This module does that for
``compile_sql``. A seeded generator makes a data set (two or three tables of
a few typed columns holding NULLs, NaN, signed zeros, infinities, decimals
at their scale, empty and unicode strings, and small integer domains, so
joins match and groups collide), a history of four to six versions (a load,
then commits that insert, delete, delete and insert again, or empty a
table), and queries of the subset over it (``QueryMaker``: expressions are
made by type, so Spark takes them, with bounds on every integer so nothing
overflows but where it is meant to). Each query is compiled, fed the history
version by version through ``IncrementalQuery``, and compared at every
version with Spark SQL computing the same text from scratch: the types, and
the rows as multisets with exact values (``same_rows``). A ``WITH RECURSIVE``
query over an acyclic edge table is checked against SQLite too (sqlglot
transpiles it), and only there when it recurses by UNION, which Spark does
not take.

A difference is shrunk (``Shrinker``: fewer versions, rows, columns and values;
clauses dropped and subexpressions replaced by their parts, while the query
still compiles and still differs in the same way) and written as a pytest
file that replays it without Spark (``reproducer``, ``replay``).
``python -m final.spark fuzz`` runs it all (``command``).
"""

from __future__ import annotations

import logging
import math
import os
import random
import re
import sqlite3
import sys
import textwrap
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from ..query import Table
from ..sqlfloat import NAN, sql_row

Row = tuple
Update = tuple[str, tuple, int]
"""``(table, record, multiplicity)``, as ``IncrementalQuery.apply`` takes it."""

QUERIES_PER_DATASET = 10
"""Queries made over one data set: Spark's DataFrames of its versions are made once for all of them."""

MAX_ROWS = 30
"""Rows a table holds at most at any version: Spark answers a query over so few in a few tenths of a second."""

TOLERANCE = 1e-9
"""Relative tolerance for a DOUBLE column of a query with SUM or AVG: Spark adds doubles in an order of its own."""

SHRINK_SECONDS = 240.0
"""Time one difference may take to shrink; a shrink stops there with what it has (still a reproducer)."""

SHRINK_LIMIT = 20
"""Differences shrunk in a run; the rest are written as found (when a bug makes many, the first few suffice)."""

SPARK_CONF = {
    "spark.sql.shuffle.partitions": "1",
    "spark.default.parallelism": "1",
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}
"""One partition: the tables are a few rows, and a task per shuffle partition would cost more than the query.
No generated code: every query is new, and compiling Java for it took longer than running it over so few
rows (Spark's interpreted evaluation has the same semantics, ANSI errors included; ``--conf`` puts it back)."""


# The data: tables and their history -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Commit:
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
    commits: tuple[Commit, ...]

    def updates(self, version: int) -> list[Update]:
        """Version ``version``'s changes against the version before (none before 0), then its churn."""
        before = self.commits[version - 1].rows if version else tuple(() for _ in self.tables)
        commit = self.commits[version]
        found: list[Update] = []
        for index, table in enumerate(self.tables):
            old, new = Counter(before[index]), Counter(commit.rows[index])
            found += [(table.name, row, -count) for row, count in (old - new).items()]
            found += [(table.name, row, count) for row, count in (new - old).items()]
        for index, row in commit.churn:
            found += [(self.tables[index].name, row, -1), (self.tables[index].name, row, 1)]
        return found

    @property
    def names(self) -> list[str]:
        return [table.name for table in self.tables]


@dataclass(frozen=True)
class Case:
    """One fuzzing case: a data set, a query over it, and who answers it from scratch.

    ``oracles`` is ``("spark",)``, ``("spark", "sqlite")`` for a recursive
    query over integers both run, or ``("sqlite",)`` for one Spark does not
    take (recursion by UNION); then ``types`` are the result's types, which
    SQLite cannot give. ``origin`` says where the case came from, for reports.
    """

    dataset: Dataset
    text: str
    oracles: tuple[str, ...] = ("spark",)
    types: tuple[str, ...] | None = None
    origin: str = ""


# Generating data --------------------------------------------------------------------------------------------------

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

SQL_TYPES = ("INT", "BIGINT", "DECIMAL", "DOUBLE", "STRING", "BOOLEAN")


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


def history(rng: random.Random, makers: Sequence[TableMaker]) -> tuple[Commit, ...]:
    """A load and three to five commits; each commit changes some tables by a few operations.

    The operations: insert new rows, copies of present ones, or rows deleted
    earlier; delete rows; update a row (one column changed); delete and
    insert again in the same commit (churn); and, rarely, empty a table.
    """
    current = [[maker.row(rng) for _ in range(rng.choice((0, 1, 2, 4, 6, 9, 12)))] for maker in makers]
    gone: list[list[Row]] = [[] for _ in makers]
    commits = [Commit(tuple(tuple(rows) for rows in current))]
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
        commits.append(Commit(tuple(tuple(rows) for rows in current), kept))
    return tuple(commits)


def make_dataset(rng: random.Random) -> Dataset:
    """Two or three tables ``t0``.. with a small integral key ``k`` and one to three more typed columns."""
    makers = []
    for index in range(rng.choice((2, 2, 3))):
        columns = [column_maker(rng, "k", rng.choice(("INT", "BIGINT", "INT")))]
        columns[0] = replace(columns[0], domain=columns[0].domain[:6] if len(columns[0].domain) > 6
                             else columns[0].domain)
        for name in ("a", "b", "c")[:rng.randint(1, 3)]:
            columns.append(column_maker(rng, name, rng.choice(SQL_TYPES)))
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


# Generating queries -----------------------------------------------------------------------------------------------

NUMERIC = ("int", "bigint", "decimal", "double")
FAMILIES = (*NUMERIC, "string", "boolean")

LIMITS = {"int": 2**31 - 1, "bigint": 2**63 - 1, "decimal": 1e15, "double": 1e15}
"""The largest magnitude an expression of each family may reach: the type's range for integers (beyond it
ANSI Spark raises), and far below any precision loss for DECIMAL and DOUBLE."""

ROWS_BOUND = MAX_ROWS**4
"""More rows than an aggregate can see (three sources joined, one of them a subquery of two): the bound a SUM's
or a COUNT's magnitude uses."""

SQL_NAMES = {"int": "INT", "bigint": "BIGINT", "double": "DOUBLE", "string": "STRING", "boolean": "BOOLEAN"}


def family_of(kind: str) -> str:
    """The family of a Spark type as a table declares it: ``DECIMAL(8,2)`` is ``decimal``."""
    kind = kind.lower()
    return "decimal" if kind.startswith("decimal") else kind


@dataclass(frozen=True)
class Expr:
    """What the generator knows of an expression: its text, family, and what it may take as values.

    ``bound`` bounds the magnitude of a numeric value; ``finite`` says a
    DOUBLE is never NaN or infinite; ``exact`` is False for a SUM or AVG of
    doubles (and what passes one on), whose last bits depend on the order
    Spark adds in: such a value is only ever output as it is, never compared,
    grouped, joined on or computed with. (-0.0 and 0.0, which a MIN or MAX
    of doubles gives as Spark meets them first, only a CAST to STRING could
    tell apart, and the subset has no CAST from DOUBLE to STRING.) ``values``
    are a column's own values, for literals that meet them.
    """

    sql: str
    family: str
    bound: float = 0.0
    finite: bool = True
    exact: bool = True
    values: tuple = ()


@dataclass(frozen=True)
class Scope:
    """What an expression may name: ``columns``; in a grouped SELECT, its keys, and ``inner`` (the FROM
    clause's columns) for aggregate arguments."""

    columns: tuple[Expr, ...]
    inner: tuple[Expr, ...] | None = None


@dataclass(frozen=True)
class Source:
    """A FROM item: its text (``t0 AS r1``, ``(SELECT ...) AS s0``) and its columns as the query names them."""

    sql: str
    columns: tuple[Expr, ...]


@dataclass(frozen=True)
class Made:
    """A generated query: its text, who answers it, and (for SQLite alone) its types."""

    text: str
    oracles: tuple[str, ...] = ("spark",)
    types: tuple[str, ...] | None = None


def _digits(bound: float) -> int:
    return len(str(int(bound)))


LIKE_PATTERNS = ("%", "", "a%", "%a", "%a%", "_", "__", "a_b", "%b%", "日%", "%😀", "A%", "%1%", " %", "%\\_%")
INT_DIVISORS = (-3, -2, 2, 3, 4, 7)
DECIMAL_DIVISORS = ("0.5", "2.50", "-1.5", "3.0", "0.25")
DOUBLE_DIVISORS = ("2.5E0", "0.25E0", "-4.0E0", "3.0E0")
COMPARISONS = ("=", "<>", "!=", "<", "<=", ">", ">=", "<=>")

OPERANDS = {
    "int": (("int", "int"),),
    "bigint": (("bigint", "bigint"), ("bigint", "int"), ("int", "bigint")),
    "decimal": (("decimal", "decimal"), ("decimal", "int"), ("int", "decimal"), ("decimal", "bigint")),
    "double": (("double", "double"), ("double", "int"), ("decimal", "double"), ("double", "decimal"),
               ("bigint", "double")),
}
"""Operand families whose sum, difference and product has the family named: INT with BIGINT is BIGINT, an
integer with a DECIMAL a DECIMAL, anything with a DOUBLE a DOUBLE."""

CASTS = {
    "int": ("bigint", "decimal", "double", "boolean"),
    "bigint": ("int", "decimal", "double", "boolean"),
    "decimal": ("int", "bigint", "decimal", "double", "boolean"),
    "double": ("int", "bigint", "decimal", "boolean"),
    "string": ("int", "bigint", "decimal", "boolean"),
    "boolean": ("int", "bigint", "decimal", "double"),
}
"""The families each family is cast from where no value can fail (bounds permitting): every cast between the
tables' types but from STRING, which is left to queries meant to raise, and DOUBLE to STRING, which the
subset leaves out (Spark's shortest-repr formatting of doubles is not implemented)."""

PRODUCTIONS = {
    "numeric": (("column", 5), ("literal", 1.5), ("aggregate", 4), ("arithmetic", 3), ("divide", 1),
                ("modulo", 0.7), ("negate", 0.4), ("case", 1), ("simple_case", 0.5), ("coalesce", 0.8),
                ("cast", 1.2), ("length", 0.4)),
    "string": (("column", 5), ("literal", 1.5), ("aggregate", 2), ("lower", 0.6), ("upper", 0.6),
               ("substring", 1), ("concat", 1), ("case", 0.6), ("coalesce", 0.6), ("cast", 1.5)),
    "boolean": (("column", 1), ("literal", 0.2), ("aggregate", 0.6), ("compare", 4), ("null_test", 1.2),
                ("in_list", 1), ("between", 0.8), ("like", 1), ("and_or", 1.5), ("not", 0.6), ("case", 0.3),
                ("cast", 0.3)),
}
LEAVES = {"column", "literal", "aggregate", "compare", "null_test", "in_list", "between", "like"}
"""The productions allowed at depth 0: a boolean's base predicates compare leaves."""


class QueryMaker:
    """Makes random queries of the subset over one data set, well-typed by construction.

    Every expression is made for a family (``expr``), from productions that
    give that family, with the bounds of ``Expr`` kept so that no integer
    overflows, no divisor is zero and no cast fails, except in queries made
    to raise (``error_query``), where the failing expression stands where
    every engine must evaluate it: a single table's SELECT list or an
    aggregate's argument.
    """

    def __init__(self, rng: random.Random, dataset: Dataset) -> None:
        self.rng = rng
        self.dataset = dataset
        self.facts = {table.name: column_facts(dataset, table) for table in dataset.tables}
        self._aliases = 0
        self._named_tables: set[str] = set()
        """Tables a FROM has named without an alias: a second reference to one gets an alias."""

    # Top level.

    def query(self) -> Made:
        """One query: a SELECT, a join, a set operation, a subquery in FROM, a WITH, or one meant to raise."""
        if self.dataset.names == ["edges", "roots"] and self.rng.random() < 0.7:
            return self.recursive()
        form = self._pick((("single", 2.5), ("join", 2.5), ("setop", 1.5), ("subquery", 1.5), ("with", 1.2),
                           ("error", 0.8)))
        if form == "error":
            made = self.error_query()
            if made is not None:
                return made
            form = "single"
        if form in ("single", "join"):
            count = 1 if form == "single" else self.rng.choice((2, 2, 3))
            return Made(self.select([self.base() for _ in range(count)])[0])
        if form == "setop":
            return Made(self.setop()[0])
        inner_sql, inner = self.inner_query()
        if form == "subquery":
            alias = self._alias("s")
            source = Source(f"({inner_sql}) AS {alias}", self._named(inner, alias))
            prefix = ""
        else:
            name = self._alias("w")
            ctes = [f"{name} AS ({inner_sql})"]
            if self.rng.random() < 0.3:
                # A second CTE that reads the first.
                second = self._alias("w")
                sql, inner = self.select([Source(name, self._named(inner, name))])
                ctes.append(f"{second} AS ({sql})")
                name = second
            prefix = f"WITH {', '.join(ctes)} "
            if self.rng.random() < 0.5:
                alias = self._alias("q")
                source = Source(f"{name} AS {alias}", self._named(inner, alias))
            else:
                source = Source(name, self._named(inner, name))
        sources = [source] + ([self.base()] if self.rng.random() < 0.35 else [])
        return Made(prefix + self.select(sources)[0])

    def inner_query(self) -> tuple[str, list[Expr]]:
        """A query to read from: a SELECT over one or two tables, or a set operation."""
        if self.rng.random() < 0.2:
            return self.setop()
        return self.select([self.base() for _ in range(self.rng.choice((1, 1, 2)))])

    def setop(self) -> tuple[str, list[Expr]]:
        """Two or three SELECTs joined by UNION [ALL], EXCEPT [ALL] or INTERSECT [ALL], columns widened."""
        operators = ("UNION ALL", "UNION", "EXCEPT", "EXCEPT ALL", "INTERSECT", "INTERSECT ALL")
        chosen = [self.rng.choice(operators) for _ in range(self.rng.choice((1, 1, 1, 2)))]
        exact = chosen != ["UNION ALL"] * len(chosen)
        sql, first = self.select([self.base() for _ in range(self.rng.choice((1, 1, 2)))], exact=exact)
        outputs = first
        for operator in chosen:
            targets = [self.rng.choice(NUMERIC) if column.family in NUMERIC and self.rng.random() < 0.5
                       else column.family for column in first]
            arm, columns = self.select([self.base() for _ in range(self.rng.choice((1, 1, 2)))], targets=targets,
                                       exact=exact)
            sql = f"{sql} {operator} {arm}"
            outputs = [_widened(a, b) for a, b in zip(outputs, columns, strict=True)]
        return sql, outputs

    def select(self, sources: Sequence[Source], targets: Sequence[str] | None = None,
               exact: bool = False) -> tuple[str, list[Expr]]:
        """``SELECT [DISTINCT] ... FROM ... [WHERE] [GROUP BY] [HAVING]``: a projection, a grouped
        aggregate or a global one, with output columns ``c0``, ``c1``, ...; ``targets`` fixes the
        families of the outputs (a set operation's later arms)."""
        from_sql, columns = self.from_clause(sources)
        if len(sources) == 1 and self.rng.random() < 0.3:
            # One source: its columns named bare (``k``, not ``r1.k``), as the query's only ones.
            columns = [replace(column, sql=column.sql.rpartition(".")[2]) for column in columns]
        plain = Scope(tuple(columns))
        where = f" WHERE {self.predicate(plain, self.rng.randint(0, 2)).sql}" if self.rng.random() < 0.45 else ""
        mode = self._pick((("plain", 5), ("grouped", 3), ("global", 1.5)))
        keys: list[Expr] = []
        group = having = ""
        if mode == "grouped":
            usable = [column for column in columns if column.exact]
            keys = self.rng.sample(usable, min(len(usable), self.rng.choice((1, 1, 2))))
            if self.rng.random() < 0.15:
                # An expression as the key; one without a column would be read as a position (GROUP BY 2).
                key = self.expr(self.rng.choice(FAMILIES), plain, 1)
                if any(re.search(rf"(?<![\w.']){re.escape(column.sql)}\b", key.sql) for column in columns):
                    keys = [key]
            if not keys:
                mode = "global"
            group = " GROUP BY " + ", ".join(key.sql for key in keys)
        if mode == "global":
            group = ""
        scope = plain if mode == "plain" else Scope(tuple(keys), tuple(columns))
        if mode != "plain" and self.rng.random() < (0.35 if mode == "grouped" else 0.1):
            having = f" HAVING {self.predicate(scope, self.rng.randint(0, 2)).sql}"
        families = list(targets) if targets is not None else [
            self._family(scope) for _ in range(self.rng.choice((1, 2, 2, 3, 4)))]
        items = []
        for position, family in enumerate(families):
            if mode == "grouped" and targets is None and position < len(keys) and self.rng.random() < 0.7:
                items.append(keys[position])
            else:
                items.append(self.expr(family, scope, self.rng.randint(0, 2), bare=not exact))
        distinct = "DISTINCT " if mode == "plain" and all(item.exact for item in items) \
            and self.rng.random() < 0.15 else ""
        listed = ", ".join(f"{item.sql} AS c{position}" for position, item in enumerate(items))
        outputs = [replace(item, sql=f"c{position}") for position, item in enumerate(items)]
        return f"SELECT {distinct}{listed} FROM {from_sql}{where}{group}{having}", outputs

    def from_clause(self, sources: Sequence[Source]) -> tuple[str, list[Expr]]:
        """The sources joined left to right, each ON a conjunction of equalities (and, sometimes, a residual
        predicate); a source no equality can join is left out."""
        sql, columns = sources[0].sql, list(sources[0].columns)
        for source in sources[1:]:
            pairs = [(left, right) for left in columns for right in source.columns
                     if left.exact and right.exact and _joinable(left.family, right.family)]
            if not pairs:
                continue
            keyed = [pair for pair in pairs if pair[0].sql.endswith(".k") and pair[1].sql.endswith(".k")]
            chosen = self.rng.sample(pairs, min(len(pairs), self.rng.choice((1, 1, 2))))
            if keyed and self.rng.random() < 0.6:
                chosen[0] = self.rng.choice(keyed)
            conditions = []
            for left, right in chosen:
                if left.family in ("int", "bigint") and self.rng.random() < 0.1:
                    conditions.append(f"({left.sql} + 1) = {right.sql}")
                else:
                    conditions.append(f"{left.sql} = {right.sql}")
            both = Scope((*columns, *source.columns))
            if self.rng.random() < 0.3:
                conditions.append(self.predicate(both, 1).sql)
            kind = self._pick((("JOIN", 2), ("INNER JOIN", 1), ("LEFT JOIN", 1.2), ("LEFT OUTER JOIN", 0.5),
                               ("RIGHT JOIN", 1), ("FULL OUTER JOIN", 0.8), ("FULL JOIN", 0.5)))
            sql = f"{sql} {kind} {source.sql} ON {' AND '.join(conditions)}"
            columns += source.columns
        return sql, columns

    def base(self) -> Source:
        """A table, under an alias (always when the query may read it twice) or its own name."""
        table = self.rng.choice(self.dataset.tables)
        if self.rng.random() < 0.6 or table.name in self._named_tables:
            alias = self._alias("r")
            sql = f"{table.name} AS {alias}" if self.rng.random() < 0.8 else f"{table.name} {alias}"
        else:
            alias = sql = table.name
            self._named_tables.add(table.name)
        facts = self.facts[table.name]
        return Source(sql, tuple(replace(fact, sql=f"{alias}.{fact.sql}") for fact in facts))

    # Expressions.

    def expr(self, family: str, scope: Scope, depth: int, bare: bool = False) -> Expr:
        """An expression of ``family`` over ``scope``, at most ``depth`` operators deep; an inexact value
        (``Expr.exact``) only when ``bare`` (an output as it is)."""
        kinds = PRODUCTIONS["numeric" if family in NUMERIC else family]
        for _ in range(16):
            kind = self._pick(kinds)
            if depth <= 0 and kind not in LEAVES:
                continue
            made = getattr(self, f"_{kind}")(family, scope, depth, bare)
            if made is not None and made.family == family and (made.exact or bare):
                return made
        return self.literal(family)

    def predicate(self, scope: Scope, depth: int) -> Expr:
        return self.expr("boolean", scope, depth)

    def literal(self, family: str, values: Sequence = (), null: float = 0.04) -> Expr:
        """A literal of ``family``: often one of ``values`` (a column's), so that predicates meet the data."""
        rng = self.rng
        if rng.random() < null:
            kind = "DECIMAL(5,2)" if family == "decimal" else SQL_NAMES[family]
            return Expr(f"CAST(NULL AS {kind})", family)
        pool = [value for value in values if value is not None and _literal_ok(value, family)]
        if pool and rng.random() < 0.6:
            value = rng.choice(pool)
        elif family == "int":
            value = rng.randint(-5, 20)
        elif family == "bigint":
            value = rng.choice((rng.randint(-5, 20), rng.choice((3000000000, -5000000000, 2**40))))
        elif family == "decimal":
            value = Decimal(rng.randint(-2000, 2000)).scaleb(-rng.randint(1, 3))
        elif family == "double":
            value = rng.choice((*DOUBLES, *SPECIAL_DOUBLES, rng.randint(-40, 40) / 4))
        elif family == "string":
            value = rng.choice(STRINGS)
        else:
            value = rng.random() < 0.5
        return literal(value, family)

    def _column(self, family: str, scope: Scope, depth: int, bare: bool) -> Expr | None:
        found = [column for column in scope.columns if column.family == family and (column.exact or bare)]
        return self.rng.choice(found) if found else None

    def _literal(self, family: str, scope: Scope, depth: int, bare: bool) -> Expr:
        near = [value for column in scope.columns if column.family == family for value in column.values]
        return self.literal(family, near)

    def _aggregate(self, family: str, scope: Scope, depth: int, bare: bool) -> Expr | None:
        """COUNT(*), COUNT([DISTINCT] x), SUM, AVG, MIN or MAX of an expression over a grouped SELECT's FROM."""
        if scope.inner is None:
            return None
        inner, rng = Scope(scope.inner), self.rng
        arguments = min(depth, 1)
        if family == "bigint":
            choice = self._pick((("count_star", 2), ("count", 2), ("count_distinct", 1.5), ("sum", 1.5),
                                 ("minmax", 1)))
            if choice == "count_star":
                return Expr("COUNT(*)", "bigint", ROWS_BOUND)
            if choice in ("count", "count_distinct"):
                argument = self.expr(self._family(inner), inner, arguments, bare=choice == "count")
                distinct = "DISTINCT " if choice == "count_distinct" else ""
                return Expr(f"COUNT({distinct}{argument.sql})", "bigint", ROWS_BOUND)
            if choice == "sum":
                argument = self.expr(rng.choice(("int", "bigint")), inner, arguments)
                return _bounded(Expr(f"SUM({argument.sql})", "bigint", argument.bound * ROWS_BOUND))
        if family == "decimal" and rng.random() < 0.6:
            argument = self.expr("decimal", inner, arguments)
            function = rng.choice(("SUM", "AVG"))
            bound = argument.bound * (ROWS_BOUND if function == "SUM" else 1)
            return _bounded(Expr(f"{function}({argument.sql})", "decimal", bound))
        if family == "double" and rng.random() < 0.6:
            function = rng.choice(("SUM", "AVG"))
            source = rng.choice(("double", "double", "int", "bigint") if function == "AVG" else ("double",))
            argument = self.expr(source, inner, arguments, bare=True)
            bound = argument.bound * (ROWS_BOUND if function == "SUM" else 1)
            return _bounded(Expr(f"{function}({argument.sql})", "double", bound, argument.finite, exact=False))
        argument = self.expr(family, inner, arguments, bare=True)
        function = rng.choice(("MIN", "MAX"))
        return replace(argument, sql=f"{function}({argument.sql})", values=())

    def _arithmetic(self, family: str, scope: Scope, depth: int, bare: bool) -> Expr | None:
        left, right = self.rng.choice(OPERANDS[family])
        operator = self.rng.choice("+-*")
        a, b = self.expr(left, scope, depth - 1), self.expr(right, scope, depth - 1)
        bound = a.bound * b.bound if operator == "*" else a.bound + b.bound
        return _bounded(_combined(f"({a.sql} {operator} {b.sql})", family, bound, a, b))

    def _divide(self, family: str, scope: Scope, depth: int, bare: bool) -> Expr | None:
        """``x / d`` (DOUBLE from integers or doubles, DECIMAL from decimals) or ``x div d``, by a literal
        that is not zero."""
        rng = self.rng
        if family == "int":
            return None
        if family == "bigint":
            a = self.expr(rng.choice(("int", "bigint")), scope, depth - 1)
            return replace(a, sql=f"({a.sql} div {rng.choice(INT_DIVISORS)})", family="bigint", values=())
        if family == "double":
            a = self.expr(rng.choice(("int", "bigint", "double")), scope, depth - 1)
            divisor = rng.choice(DOUBLE_DIVISORS + ((str(rng.choice(INT_DIVISORS)),) if a.family != "double"
                                                    else DECIMAL_DIVISORS))
        else:
            a = self.expr(rng.choice(("decimal", "decimal", "int")), scope, depth - 1)
            divisor = rng.choice(DECIMAL_DIVISORS + ((str(rng.choice(INT_DIVISORS)),) if a.family == "decimal"
                                                     else ()))
        smallest = abs(float(divisor.replace("E0", "")))
        return _bounded(replace(a, sql=f"({a.sql} / {_parenthesized(divisor)})", family=family,
                                bound=a.bound / smallest, values=()))

    def _modulo(self, family: str, scope: Scope, depth: int, bare: bool) -> Expr | None:
        a = self.expr(family, scope, depth - 1)
        if family in ("int", "bigint"):
            divisor = str(self.rng.choice(INT_DIVISORS))
        else:
            divisor = self.rng.choice((str(self.rng.choice(INT_DIVISORS)),) + DECIMAL_DIVISORS
                                      + (DOUBLE_DIVISORS if family == "double" else ()))
        return replace(a, sql=f"({a.sql} % {_parenthesized(divisor)})", values=(),
                       bound=min(a.bound, abs(float(divisor.replace("E0", "")))))

    def _negate(self, family: str, scope: Scope, depth: int, bare: bool) -> Expr | None:
        a = self.expr(family, scope, depth - 1)
        return replace(a, sql=f"(- {a.sql})", values=())

    def _case(self, family: str, scope: Scope, depth: int, bare: bool) -> Expr | None:
        branches, parts = [], []
        for position in range(self.rng.choice((1, 1, 2))):
            condition = self.predicate(scope, depth - 1)
            branch = self._branch(family, scope, depth - 1, typed=position == 0)
            branches.append(branch)
            parts.append(f"WHEN {condition.sql} THEN {branch.sql}")
        if self.rng.random() < 0.7:
            branch = self._branch(family, scope, depth - 1)
            branches.append(branch)
            parts.append(f"ELSE {branch.sql}")
        return _merged(f"CASE {' '.join(parts)} END", family, branches)

    def _simple_case(self, family: str, scope: Scope, depth: int, bare: bool) -> Expr | None:
        subject = self.expr(self._family(scope), scope, depth - 1)
        branches, parts = [], []
        for position in range(self.rng.choice((1, 2, 2))):
            value = self.literal(subject.family, subject.values, null=0.0)
            branch = self._branch(family, scope, depth - 1, typed=position == 0)
            branches.append(branch)
            parts.append(f"WHEN {value.sql} THEN {branch.sql}")
        if self.rng.random() < 0.6:
            branch = self._branch(family, scope, depth - 1)
            branches.append(branch)
            parts.append(f"ELSE {branch.sql}")
        return _merged(f"CASE {subject.sql} {' '.join(parts)} END", family, branches)

    def _branch(self, family: str, scope: Scope, depth: int, typed: bool = False) -> Expr:
        """A CASE branch: sometimes a bare NULL, but not when ``typed`` (a CASE of NULLs only has no type)."""
        if not typed and self.rng.random() < 0.08:
            return Expr("NULL", family)
        return self.expr(family, scope, depth)

    def _coalesce(self, family: str, scope: Scope, depth: int, bare: bool) -> Expr | None:
        parts = [self.expr(family, scope, depth - 1) for _ in range(self.rng.choice((2, 2, 3)))]
        texts = [part.sql for part in parts]
        if self.rng.random() < 0.15:
            texts.insert(1, "NULL")
        return _merged(f"COALESCE({', '.join(texts)})", family, parts)

    def _cast(self, family: str, scope: Scope, depth: int, bare: bool) -> Expr | None:
        """``CAST(x AS T)`` from another family, where the bounds say no value of x can fail."""
        source = self.rng.choice(CASTS[family])
        a = self.expr(source, scope, depth - 1)
        if family == "string":
            return Expr(f"CAST({a.sql} AS STRING)", "string")
        if family == "boolean":
            return Expr(f"CAST({a.sql} AS BOOLEAN)", "boolean")
        if a.family == "double" and not a.finite and family != "double":
            return None
        bound = 1.0 if a.family == "boolean" else a.bound
        if family == "decimal":
            scale = self.rng.randint(0, 4)
            precision = _digits(bound + 1) + scale + self.rng.randint(0, 2)
            if precision > 38:
                return None
            return Expr(f"CAST({a.sql} AS DECIMAL({precision},{scale}))", "decimal", bound + 1)
        if bound >= LIMITS[family]:
            return None
        return Expr(f"CAST({a.sql} AS {SQL_NAMES[family]})", family, bound, a.finite)

    def _length(self, family: str, scope: Scope, depth: int, bare: bool) -> Expr | None:
        if family != "int":
            return None
        return Expr(f"length({self.expr('string', scope, depth - 1).sql})", "int", 64)

    def _lower(self, family: str, scope: Scope, depth: int, bare: bool) -> Expr:
        return Expr(f"lower({self.expr('string', scope, depth - 1).sql})", "string")

    def _upper(self, family: str, scope: Scope, depth: int, bare: bool) -> Expr:
        return Expr(f"upper({self.expr('string', scope, depth - 1).sql})", "string")

    def _substring(self, family: str, scope: Scope, depth: int, bare: bool) -> Expr:
        text = self.expr("string", scope, depth - 1).sql
        start = _parenthesized(str(self.rng.randint(-3, 4)))
        if self.rng.random() < 0.3:
            return Expr(f"substring({text}, {start})", "string")
        return Expr(f"substring({text}, {start}, {_parenthesized(str(self.rng.randint(-1, 4)))})", "string")

    def _concat(self, family: str, scope: Scope, depth: int, bare: bool) -> Expr:
        parts = [self.expr("string", scope, depth - 1).sql for _ in range(self.rng.choice((2, 2, 3)))]
        if self.rng.random() < 0.3:
            return Expr(f"({parts[0]} || {parts[1]})", "string")
        return Expr(f"concat({', '.join(parts)})", "string")

    def _compare(self, family: str, scope: Scope, depth: int, bare: bool) -> Expr:
        rng = self.rng
        kind = self._family(scope, (*NUMERIC, "string", "string", "boolean"))
        kind = "numeric" if kind in NUMERIC else kind
        left = self._family(scope, NUMERIC) if kind == "numeric" else kind
        right = (left if rng.random() < 0.6 else rng.choice(NUMERIC)) if kind == "numeric" else kind
        a = self.expr(left, scope, depth - 1)
        b = self.literal(right, a.values) if rng.random() < 0.5 else self.expr(right, scope, depth - 1)
        return Expr(f"({a.sql} {rng.choice(COMPARISONS)} {b.sql})", "boolean")

    def _null_test(self, family: str, scope: Scope, depth: int, bare: bool) -> Expr:
        a = self.expr(self._family(scope), scope, depth - 1)
        return Expr(f"({a.sql} IS {'NOT ' if self.rng.random() < 0.5 else ''}NULL)", "boolean")

    def _in_list(self, family: str, scope: Scope, depth: int, bare: bool) -> Expr:
        a = self.expr(self._family(scope), scope, depth - 1)
        items = [self.literal(a.family, a.values, null=0.0).sql for _ in range(self.rng.randint(1, 4))]
        if self.rng.random() < 0.2:
            items.insert(self.rng.randrange(len(items) + 1), "NULL")
        negated = "NOT " if self.rng.random() < 0.35 else ""
        return Expr(f"({a.sql} {negated}IN ({', '.join(items)}))", "boolean")

    def _between(self, family: str, scope: Scope, depth: int, bare: bool) -> Expr:
        kind = self._family(scope, (*NUMERIC, "string"))
        a = self.expr(kind, scope, depth - 1)
        low, high = (self.literal(kind, a.values, null=0.02) for _ in range(2))
        negated = "NOT " if self.rng.random() < 0.3 else ""
        return Expr(f"({a.sql} {negated}BETWEEN {low.sql} AND {high.sql})", "boolean")

    def _like(self, family: str, scope: Scope, depth: int, bare: bool) -> Expr:
        a = self.expr("string", scope, depth - 1)
        pattern = self.rng.choice(LIKE_PATTERNS + tuple(value + "%" for value in a.values if _literal_ok(value,
                                                                                                          "string")))
        negated = "NOT " if self.rng.random() < 0.3 else ""
        return Expr(f"({a.sql} {negated}LIKE {literal(pattern, 'string').sql})", "boolean")

    def _and_or(self, family: str, scope: Scope, depth: int, bare: bool) -> Expr:
        a, b = self.predicate(scope, depth - 1), self.predicate(scope, depth - 1)
        return Expr(f"({a.sql} {self.rng.choice(('AND', 'OR'))} {b.sql})", "boolean")

    def _not(self, family: str, scope: Scope, depth: int, bare: bool) -> Expr:
        return Expr(f"(NOT {self.predicate(scope, depth - 1).sql})", "boolean")

    # Queries meant to raise, and recursive ones.

    def error_query(self) -> Made | None:
        """A query over one table whose output (or an aggregate's argument) may fail for the data: a zero
        divisor, an integer overflow, a string or a NaN that does not cast. Spark evaluates it for every row
        the WHERE keeps, so it must raise exactly when ``final/`` does."""
        source = self.base()
        plain = Scope(source.columns)
        failing = self.failing(plain)
        if failing is None:
            return None
        where = f" WHERE {self.predicate(plain, 1).sql}" if self.rng.random() < 0.4 else ""
        mode = self._pick((("plain", 3), ("grouped", 1.5), ("global", 1)))
        if failing.sql.startswith("SUM("):
            mode = self.rng.choice(("grouped", "global"))
        elif mode != "plain":
            function = self.rng.choice(("MIN", "MAX") + (("SUM",) if failing.family in NUMERIC else ()))
            failing = replace(failing, sql=f"{function}({failing.sql})")
        items, group = [failing], ""
        if mode == "grouped":
            key = self.rng.choice(source.columns)
            items.insert(0, key)
            group = f" GROUP BY {key.sql}"
        elif mode == "plain" and self.rng.random() < 0.5:
            items.append(self.expr(self.rng.choice(FAMILIES), plain, 1))
        listed = ", ".join(f"{item.sql} AS c{position}" for position, item in enumerate(items))
        return Made(f"SELECT {listed} FROM {source.sql}{where}{group}")

    def failing(self, scope: Scope) -> Expr | None:
        """An expression over ``scope`` that raises for some values its columns hold (or may come to hold)."""
        rng = self.rng
        columns = scope.columns
        integral = [column for column in columns if column.family in ("int", "bigint")]
        numeric = [column for column in columns if column.family in NUMERIC]
        options = []
        if numeric:
            options.append("divide")
        positive = [column for column in integral if all(value >= 0 for value in column.values)]
        if integral:
            options.append("overflow")
        if positive:
            options.append("sum_overflow")
        if any(column.family == "string" for column in columns):
            options.append("parse")
        if any(column.family == "double" for column in columns):
            options.append("double_cast")
        if any(column.family in ("decimal", "bigint") for column in columns):
            options.append("narrow")
        if not options:
            return None
        option = rng.choice(options)
        if option == "divide":
            a, b = rng.choice(numeric), rng.choice(numeric)
            operator = rng.choice(("/", "%", "div") if {a.family, b.family} <= {"int", "bigint"} else ("/", "%"))
            family = "double" if operator == "/" else "bigint"
            return Expr(f"({a.sql} {operator} {b.sql})", family)
        if option == "overflow":
            a = rng.choice(integral)
            # Half the column's range overflows: |a| > bound / 2 times the factor leaves the type.
            factor = LIMITS[a.family] // max(1, int(a.bound) // 2)
            if a.family == "int":
                factor = min(factor, 2**31 - 1)
            return Expr(f"({a.sql} * {factor})", a.family)
        if option == "sum_overflow":
            a = rng.choice(positive)
            # Each row's product fits a BIGINT, two of the largest do not: positive, so in any order of adding.
            factor = (2**63 - 1) // max(1, int(a.bound))
            return Expr(f"SUM(CAST({a.sql} AS BIGINT) * {factor})", "bigint")
        if option == "parse":
            a = rng.choice([column for column in columns if column.family == "string"])
            target = rng.choice(("INT", "BIGINT", "DOUBLE", "DECIMAL(6,2)", "BOOLEAN"))
            return Expr(f"CAST({a.sql} AS {target})", family_of(target))
        if option == "double_cast":
            a = rng.choice([column for column in columns if column.family == "double"])
            target = rng.choice(("INT", "BIGINT", "DECIMAL(4,1)"))
            return Expr(f"CAST({a.sql} AS {target})", family_of(target))
        a = rng.choice([column for column in columns if column.family in ("decimal", "bigint")])
        target = "INT" if a.family == "bigint" else f"DECIMAL({max(1, _digits(a.bound) - 1) + 1},1)"
        return Expr(f"CAST({a.sql} AS {target})", family_of(target))

    def recursive(self) -> Made:
        """A WITH RECURSIVE query over ``edges`` (src < dst) and ``roots``: reachability, paths with their
        depth, or path costs; by UNION ALL (Spark and SQLite) or UNION (SQLite only)."""
        rng = self.rng
        union = rng.choice(("UNION ALL", "UNION ALL", "UNION"))
        template = rng.choice(("reach", "paths", "cost"))
        if template == "reach":
            limit = f" WHERE e.dst <= {rng.randint(2, 8)}" if rng.random() < 0.3 else ""
            start = " WHERE node IS NOT NULL" if rng.random() < 0.3 else ""
            cte = (f"r(node) AS (SELECT node FROM roots{start} {union} "
                   f"SELECT e.dst FROM r JOIN edges AS e ON r.node = e.src{limit})")
            outer = rng.choice((
                ("SELECT node FROM r", ("bigint",)),
                ("SELECT DISTINCT node FROM r", ("bigint",)),
                ("SELECT node, COUNT(*) AS c1 FROM r GROUP BY node", ("bigint", "bigint")),
                ("SELECT COUNT(*) AS c0, COUNT(DISTINCT node) AS c1, MIN(node) AS c2, MAX(node) AS c3 FROM r",
                 ("bigint", "bigint", "bigint", "bigint")),
                ("SELECT r.node, COUNT(*) AS c1 FROM r JOIN edges ON r.node = edges.src GROUP BY r.node",
                 ("bigint", "bigint")),
            ))
        elif template == "paths":
            start = f" WHERE src = {rng.randint(0, 3)}" if rng.random() < 0.4 else ""
            limit = f" WHERE p.depth < {rng.randint(1, 4)}" if rng.random() < 0.4 else ""
            cte = (f"p(src, dst, depth) AS (SELECT src, dst, 1 FROM edges{start} {union} "
                   f"SELECT p.src, e.dst, p.depth + 1 FROM p JOIN edges AS e ON p.dst = e.src{limit})")
            outer = rng.choice((
                ("SELECT src, dst, depth FROM p", ("bigint", "bigint", "int")),
                ("SELECT src, dst, MIN(depth) AS c2, MAX(depth) AS c3, COUNT(*) AS c4 FROM p GROUP BY src, dst",
                 ("bigint", "bigint", "int", "int", "bigint")),
                ("SELECT depth, COUNT(*) AS c1 FROM p GROUP BY depth", ("int", "bigint")),
            ))
        else:
            cte = (f"c(node, cost) AS (SELECT node, 0 FROM roots {union} "
                   f"SELECT e.dst, c.cost + e.w FROM c JOIN edges AS e ON c.node = e.src)")
            outer = rng.choice((
                ("SELECT node, cost FROM c", ("bigint", "int")),
                ("SELECT node, MIN(cost) AS c1, MAX(cost) AS c2, SUM(cost) AS c3, COUNT(*) AS c4 FROM c "
                 "GROUP BY node", ("bigint", "int", "int", "bigint", "bigint")),
                ("SELECT node, AVG(cost) AS c1 FROM c GROUP BY node", ("bigint", "double")),
            ))
        text = f"WITH RECURSIVE {cte} {outer[0]}"
        if union == "UNION":
            return Made(text, ("sqlite",), outer[1])
        return Made(text, ("spark", "sqlite"))

    # Helpers.

    def _family(self, scope: Scope, among: Sequence[str] = FAMILIES) -> str:
        """A family among ``among``: mostly one a column in ``scope`` has (so expressions name columns
        rather than fold to literals), sometimes any."""
        present = [column.family for column in (*scope.columns, *(scope.inner or ())) if column.family in among]
        return self.rng.choice(present) if present and self.rng.random() < 0.8 else self.rng.choice(among)

    def _pick(self, weighted: Sequence[tuple[str, float]]) -> str:
        names = [name for name, _ in weighted]
        return self.rng.choices(names, weights=[weight for _, weight in weighted])[0]

    def _alias(self, prefix: str) -> str:
        self._aliases += 1
        return f"{prefix}{self._aliases}"

    @staticmethod
    def _named(columns: Sequence[Expr], alias: str) -> tuple[Expr, ...]:
        return tuple(replace(column, sql=f"{alias}.{column.sql}") for column in columns)


def column_facts(dataset: Dataset, table: Table) -> tuple[Expr, ...]:
    """Each column of ``table`` as the generator sees it, from every value it holds at any version."""
    facts = []
    for position, (name, kind) in enumerate(table.columns):
        values = {row[position] for commit in dataset.commits
                  for row in commit.rows[dataset.tables.index(table)]} - {None}
        family = family_of(kind)
        finite = [abs(float(value)) for value in values
                  if family in NUMERIC and math.isfinite(float(value))]
        facts.append(Expr(name, family, max(finite, default=0.0),
                          all(math.isfinite(float(value)) for value in values) if family == "double" else True,
                          values=tuple(sorted(values, key=repr))))
    return tuple(facts)


def literal(value: Any, family: str) -> Expr:
    """``value`` as a SQL literal of ``family`` (negative numbers in parentheses, so ``- -`` never reads
    as a comment)."""
    if family == "boolean":
        return Expr("TRUE" if value else "FALSE", family)
    if family == "string":
        return Expr(f"'{value}'", family, values=(value,))
    if family == "double":
        value = float(value)
        if math.isnan(value):
            return Expr("CAST('NaN' AS DOUBLE)", family, finite=False)
        if math.isinf(value):
            return Expr(f"CAST('{'-' if value < 0 else ''}Infinity' AS DOUBLE)", family, finite=False)
        text = repr(abs(value))
        text = text if "e" in text else text + "E0"
        return Expr(f"(-{text})" if math.copysign(1.0, value) < 0 else text, family, abs(value))
    if family == "decimal":
        text = format(abs(value), "f")
        if "." not in text:
            text = f"CAST({text} AS DECIMAL({len(text)},0))"
        return Expr(f"(-{text})" if value < 0 else text, family, float(abs(value)))
    if family == "bigint" and abs(value) <= 2**31 - 1:
        return Expr(f"CAST({value} AS BIGINT)", family, abs(value))
    return Expr(f"({value})" if value < 0 else str(value), family, abs(value))


def _literal_ok(value: Any, family: str) -> bool:
    """Whether ``value`` can be written as a literal of ``family`` (a string without quotes or backslashes)."""
    if family == "string":
        return isinstance(value, str) and "'" not in value and "\\" not in value
    if family == "boolean":
        return isinstance(value, bool)
    if family in ("int", "bigint"):
        return isinstance(value, int) and not isinstance(value, bool) and \
            abs(value) <= (2**31 - 1 if family == "int" else 2**62)
    if family == "decimal":
        return isinstance(value, Decimal)
    return isinstance(value, float)


def _parenthesized(text: str) -> str:
    return f"({text})" if text.startswith("-") else text


def _bounded(expr: Expr) -> Expr | None:
    """``expr``, or None if its bound leaves what its family may reach."""
    return expr if expr.bound <= LIMITS.get(expr.family, math.inf) else None


def _combined(sql: str, family: str, bound: float, *parts: Expr) -> Expr:
    return Expr(sql, family, bound, all(part.finite for part in parts), all(part.exact for part in parts))


def _merged(sql: str, family: str, parts: Sequence[Expr]) -> Expr:
    """A CASE or COALESCE of ``parts``: its bound the largest of theirs."""
    return _combined(sql, family, max((part.bound for part in parts), default=0.0), *parts)


def _widened(a: Expr, b: Expr) -> Expr:
    """A set operation's column from its arms' columns: the wider family, the larger bound."""
    if a.family == b.family:
        family = a.family
    elif "double" in (a.family, b.family):
        family = "double"
    elif "decimal" in (a.family, b.family):
        family = "decimal"
    else:
        family = "bigint"
    return replace(_combined(a.sql, family, max(a.bound, b.bound), a, b), values=())


def _joinable(left: str, right: str) -> bool:
    """Whether an equality between the two families is a join key: same family, or two integral ones."""
    return left == right or {left, right} <= {"int", "bigint"}


def generate_case(seed: int, index: int) -> Case:
    """Case ``index`` of the run seeded ``seed``: the same case on every machine and every run.

    Cases come ``QUERIES_PER_DATASET`` to a data set; one in ten data sets is
    a graph (for recursive queries). Each data set and each query has a
    ``random.Random`` of its own, seeded from ``seed`` and its position, so a
    case does not depend on the others.
    """
    number, position = divmod(index, QUERIES_PER_DATASET)
    dataset = _dataset(seed, number)
    rng = random.Random(f"fuzz query {seed} {number} {position}")
    made = QueryMaker(rng, dataset).query()
    return Case(dataset, made.text, made.oracles, made.types, origin=f"seed {seed}, query {index}")


def _dataset(seed: int, number: int) -> Dataset:
    rng = random.Random(f"fuzz data {seed} {number}")
    return make_graph(rng) if rng.random() < 0.1 else make_dataset(rng)


def generate(seed: int, count: int) -> list[Case]:
    """The first ``count`` cases of the run seeded ``seed``."""
    return [generate_case(seed, index) for index in range(count)]


CONSTRUCTS = {
    "WHERE": r"\bWHERE\b", "arithmetic": r" [+*-] ", "division": r" / ", "modulo": r" % ", "div": r" div ",
    "comparison": r" (<|<=|>|>=|<>|!=) ", "equality": r" = ", "AND": r" AND ", "OR": r" OR ", "NOT": r"\(NOT ",
    "IS NULL": r" IS NULL", "IS NOT NULL": r" IS NOT NULL", "<=>": r"<=>", "IN": r" IN \(",
    "NOT IN": r" NOT IN \(", "BETWEEN": r" BETWEEN ", "LIKE": r" LIKE ", "CASE": r"\bCASE WHEN\b",
    "simple CASE": r"\bCASE (?!WHEN)", "COALESCE": r"\bCOALESCE\(", "CAST": r"\bCAST\(", "lower": r"\blower\(",
    "upper": r"\bupper\(", "length": r"\blength\(", "substring": r"\bsubstring\(", "concat": r"\bconcat\(|\|\|",
    "INNER JOIN": r"\b(INNER )?JOIN\b", "LEFT JOIN": r"\bLEFT (OUTER )?JOIN\b", "RIGHT JOIN": r"\bRIGHT JOIN\b",
    "FULL JOIN": r"\bFULL (OUTER )?JOIN\b", "3-table join": r"JOIN .* JOIN ", "GROUP BY": r"\bGROUP BY\b",
    "COUNT(*)": r"COUNT\(\*\)", "COUNT(x)": r"COUNT\((?!\*|DISTINCT)", "COUNT(DISTINCT)": r"COUNT\(DISTINCT ",
    "SUM": r"\bSUM\(", "AVG": r"\bAVG\(", "MIN": r"\bMIN\(", "MAX": r"\bMAX\(", "HAVING": r"\bHAVING\b",
    "global aggregate": r"^SELECT (COUNT|SUM|AVG|MIN|MAX)\((?!.*GROUP BY)", "DISTINCT": r"SELECT DISTINCT ",
    "UNION ALL": r"\bUNION ALL\b", "UNION": r"\bUNION (?!ALL)", "EXCEPT": r"\bEXCEPT (?!ALL)",
    "EXCEPT ALL": r"\bEXCEPT ALL\b", "INTERSECT": r"\bINTERSECT (?!ALL)", "INTERSECT ALL": r"\bINTERSECT ALL\b",
    "subquery in FROM": r"FROM \(SELECT", "WITH": r"^WITH (?!RECURSIVE)", "WITH RECURSIVE": r"^WITH RECURSIVE",
    "recursive UNION": r"^WITH RECURSIVE .* UNION (?!ALL)",
}
"""Each construct of the subset and a pattern that finds it in a generated query: ``coverage`` counts them."""


def coverage(cases: Sequence[Case]) -> dict[str, int]:
    """How many of ``cases`` use each construct of ``CONSTRUCTS``."""
    return {name: sum(1 for case in cases if re.search(pattern, case.text)) for name, pattern in CONSTRUCTS.items()}


# Comparing answers ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """A query's answer at one version: its rows (a multiset, as a tuple) and types, or the error raised.

    ``error`` is Spark's error class (``DIVIDE_BY_ZERO``), or our error's
    message; ``refused`` says the engine refused the query itself (Spark's
    AnalysisException: a generator bug); ``crash`` that ours failed other
    than as Spark would (a Python error, a DataflowError not from the data).
    """

    rows: tuple[tuple, ...] = ()
    types: tuple[str, ...] | None = None
    error: str | None = None
    refused: str | None = None
    crash: str | None = None


def value_key(value: Any) -> tuple:
    """What makes two values the same here: a bool is not an int, a DECIMAL keeps its scale (1.50 is not
    1.5), -0.0 is 0.0 (and a DECIMAL -0.00 is 0.00), every NaN is one value."""
    if value is None:
        return (0,)
    if isinstance(value, bool):
        return (1, value)
    if isinstance(value, int):
        return (2, value)
    if isinstance(value, Decimal):
        return (3, str(abs(value) if value.is_zero() else value))
    if isinstance(value, float):
        return (4, "nan") if math.isnan(value) else (4, value + 0.0)
    if isinstance(value, str):
        return (5, value)
    return (6, type(value).__name__, repr(value))


def row_key(row: Sequence) -> tuple:
    return tuple(value_key(value) for value in row)


def tolerant_columns(text: str, types: Sequence[str] | None) -> tuple[int, ...]:
    """The DOUBLE columns of a query that uses SUM or AVG: compared within ``TOLERANCE`` (the generator
    lets such a value only pass through unchanged, so exactness elsewhere is untouched)."""
    if not types or not re.search(r"\b(SUM|AVG)\s*\(", text, re.IGNORECASE):
        return ()
    return tuple(position for position, kind in enumerate(types) if kind == "double")


def _close(a: Any, b: Any) -> bool:
    if not (isinstance(a, float) and isinstance(b, float)):
        return value_key(a) == value_key(b)
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b):
        return value_key(a) == value_key(b)
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=1e-12)


def same_rows(expected: Sequence[tuple], actual: Mapping[tuple, int],
              tolerant: Sequence[int] = ()) -> list[tuple[tuple, int, int]]:
    """Where ``actual`` (row -> multiplicity) differs from the multiset ``expected``: ``(row, expected
    count, actual count)`` for each differing row; empty when they are the same.

    Values compare by ``value_key``; in the ``tolerant`` positions two
    finite floats are the same within ``TOLERANCE`` (paired greedily among
    the rows that differ otherwise).
    """
    want: Counter = Counter()
    have: Counter = Counter()
    shown: dict[tuple, tuple] = {}
    for row in expected:
        key = row_key(row)
        want[key] += 1
        shown.setdefault(key, row)
    for row, count in actual.items():
        key = row_key(row)
        have[key] += count
        shown.setdefault(key, row)
    keys = [key for key in shown if want[key] != have[key]]
    if tolerant and keys:
        spare_want = [key for key in keys if want[key] > have[key] for _ in range(want[key] - max(have[key], 0))]
        spare_have = [key for key in keys if have[key] > want[key] for _ in range(have[key] - want[key])]
        fixed = set(range(len(next(iter(shown))))) - set(tolerant)
        for key in spare_want:
            for other in spare_have:
                if all(key[position] == other[position] for position in fixed) and all(
                        _close(shown[key][position], shown[other][position]) for position in tolerant):
                    spare_have.remove(other)
                    want[key] -= 1
                    want[other] += 1
                    break
        keys = [key for key in shown if want[key] != have[key]]
    return [(shown[key], want[key], have[key]) for key in keys]


# The engines: Spark SQL, SQLite, and ours ---------------------------------------------------------------------------


class SparkOracle:
    """Spark SQL computing a query from scratch over views of a data set's tables at one version.

    Views are registered only when a table's rows change, and DataFrames and
    answers are kept (``DATAFRAMES``, ``ANSWERS``) for the versions and
    queries a shrink asks for again.
    """

    DATAFRAMES = 256
    ANSWERS = 4096

    def __init__(self, session: Any) -> None:
        from pyspark.logger import PySparkLogger

        self.session = session
        # pyspark logs every query's error at ERROR level with its Java trace; here an error is an answer.
        PySparkLogger.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL + 1)
        self._frames: OrderedDict = OrderedDict()
        self._answers: OrderedDict = OrderedDict()
        self._views: dict[str, tuple] = {}
        self.queries = 0
        self.seconds = 0.0

    def answer(self, text: str, dataset: Dataset, version: int) -> Answer:
        """Spark's answer to ``text`` over ``dataset`` as of ``version`` (kept: the same text over the same
        rows of the tables it names is answered once)."""
        state = tuple((table.name, table.ddl, dataset.commits[version].rows[index])
                      for index, table in enumerate(dataset.tables))
        key = (text, tuple(item for item in state if re.search(rf"\b{item[0]}\b", text)))
        if key in self._answers:
            self._answers.move_to_end(key)
            return self._answers[key]
        for name, ddl, rows in state:
            self._view(name, ddl, rows)
        start = time.perf_counter()
        found = self._run(text)
        self.seconds += time.perf_counter() - start
        self.queries += 1
        self._answers[key] = found
        if len(self._answers) > self.ANSWERS:
            self._answers.popitem(last=False)
        return found

    def _view(self, name: str, ddl: str, rows: tuple) -> None:
        if self._views.get(name) == (ddl, rows):
            return
        key = (ddl, rows)
        frame = self._frames.get(key)
        if frame is None:
            # pyspark takes a float, not sqlfloat's NaN (a float subclass): float() gives it a plain one.
            frame = self.session.createDataFrame(
                [tuple(float(value) if isinstance(value, float) else value for value in row) for row in rows], ddl)
            self._frames[key] = frame
            if len(self._frames) > self.DATAFRAMES:
                self._frames.popitem(last=False)
        frame.createOrReplaceTempView(name)
        self._views[name] = key

    def _run(self, text: str) -> Answer:
        from pyspark.errors import AnalysisException

        try:
            frame = self.session.sql(text)
            types = tuple(field.dataType.simpleString() for field in frame.schema)
            return Answer(tuple(sql_row(tuple(row)) for row in frame.collect()), types)
        except AnalysisException as error:
            return Answer(refused=_first_line(error))
        except Exception as error:  # an ANSI error for the data: DIVIDE_BY_ZERO, CAST_INVALID_INPUT, ...
            condition = getattr(error, "getCondition", lambda: None)()
            return Answer(error=condition or _first_line(error))


SQLITE_TYPES = {"int": "INTEGER", "bigint": "INTEGER", "double": "REAL", "string": "TEXT", "boolean": "INTEGER",
                "decimal": "NUMERIC"}
"""The SQLite column type (its affinity) each family is stored as."""


class SqliteOracle:
    """SQLite (``sqlite3``) computing a query from scratch: the text transpiled by sqlglot, the version's
    rows loaded into a fresh in-memory database."""

    def answer(self, text: str, dataset: Dataset, version: int) -> Answer:
        import sqlglot

        connection = sqlite3.connect(":memory:")
        try:
            for index, table in enumerate(dataset.tables):
                columns = ", ".join(f"{name} {SQLITE_TYPES[family_of(kind)]}" for name, kind in table.columns)
                connection.execute(f"CREATE TABLE {table.name} ({columns})")
                marks = ", ".join("?" for _ in table.columns)
                connection.executemany(f"INSERT INTO {table.name} VALUES ({marks})",
                                       dataset.commits[version].rows[index])
            translated = sqlglot.transpile(text, read="spark", write="sqlite")[0]
            return Answer(tuple(tuple(row) for row in connection.execute(translated).fetchall()))
        except (sqlite3.Error, ValueError) as error:
            return Answer(refused=f"SQLite: {error}")
        finally:
            connection.close()


class Ours:
    """``final/`` answering a compiled query incrementally: one ``IncrementalQuery``, fed version by version.

    Once it has raised, it is broken (as ``IncrementalQuery`` is), and the
    case stops there.
    """

    def __init__(self, compiled: Any) -> None:
        from ..incremental import IncrementalQuery

        self.compiled = compiled
        self.query = IncrementalQuery(compiled)

    def answer(self, dataset: Dataset, version: int) -> tuple[Answer, dict[tuple, int]]:
        """Our answer after applying ``version``, and the snapshot (row -> multiplicity) it comes from."""
        from ...errors import DataflowError
        from .errors import SqlRuntimeError

        reads = set(self.compiled.inputs)
        updates = [update for update in dataset.updates(version) if update[0] in reads]
        try:
            self.query.apply(version, updates)
            snapshot = dict(self.query.snapshot)
        except DataflowError as error:
            cause = _cause_of(error, SqlRuntimeError)
            if cause is None:
                return Answer(crash=f"{type(error).__name__}: {_first_line(error)}"), {}
            return Answer(error=_first_line(cause)), {}
        except Exception as error:
            return Answer(crash=f"{type(error).__name__}: {_first_line(error)}"), {}
        rows = tuple(row for row, count in snapshot.items() for _ in range(max(count, 0)))
        return Answer(rows, tuple(self.compiled.types)), snapshot


def _cause_of(error: BaseException, kind: type) -> BaseException | None:
    """``error`` or the first error in its chain of causes that is a ``kind``."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, kind):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0][:300] if lines else type(error).__name__


# Checking one case ------------------------------------------------------------------------------------------------

KINDS = {
    "types": "the result's types differ from Spark's",
    "rows": "the rows differ",
    "spark-error": "Spark raises for the data and final/ does not",
    "final-error": "final/ raises for the data and Spark does not",
    "crash": "final/ fails other than as Spark would (a Python error, or a DataflowError not from the data)",
    "compile-crash": "compile_sql fails with an error other than SqlError",
}
"""What a difference can be."""

REFUSALS = {
    "compiler": "compile_sql refuses the query (SqlError): the generator left the subset, or the compiler lacks it",
    "spark": "Spark refuses the query (AnalysisException): the generator made a query that is not valid",
    "oracles": "Spark and SQLite disagree on a recursive query: the transpiled query means something else",
    "fuzzer": "the fuzzer failed on the case (a bug here, not in the compiler)",
}
"""Why a case may count as a generator error rather than a difference."""


@dataclass(frozen=True)
class Outcome:
    """How one case went.

    ``status`` is ``agree``, ``differ`` (``kind`` from ``KINDS``, at
    ``version``) or ``refused`` (``kind`` from ``REFUSALS``). ``answers``
    are the reference's answers at each version compared (for a difference,
    up to and including the one that differs), ``ours`` our answer there.
    """

    status: str
    versions: int = 0
    kind: str = ""
    version: int = -1
    detail: str = ""
    answers: tuple[Answer, ...] = ()
    ours: Answer | None = None


Fault = Callable[[Case, dict], dict]
"""A planted fault: takes a case and our snapshot at a version, returns the snapshot to compare (for tests)."""


class Checker:
    """Checks cases: compiles each query, and compares ``final/`` with the oracles at every version."""

    def __init__(self, spark: Any = None, fault: Fault | None = None) -> None:
        self.spark = SparkOracle(spark) if spark is not None else None
        self.sqlite = SqliteOracle()
        self.fault = fault

    def check(self, case: Case) -> Outcome:
        """``case``'s outcome: the first version where ``final/`` and the reference differ, if any.

        The reference is Spark (types and rows) when the case names it, and
        SQLite otherwise; SQLite also checks a recursive query Spark runs. A
        version where the reference raises for the data ends the case: ours
        must raise there too.
        """
        from . import SqlError, compile_sql

        tables = {table.name: table for table in case.dataset.tables}
        try:
            compiled = compile_sql(case.text, tables, name="fuzz")
        except SqlError as error:
            return Outcome("refused", kind="compiler", detail=str(error))
        except Exception as error:
            reference = self._reference(case, 0)
            if reference.refused is not None:  # not a query at all: Spark refuses it too
                return Outcome("refused", kind="spark", version=0, detail=reference.refused)
            return Outcome("differ", 1, kind="compile-crash", version=0,
                           detail=f"{type(error).__name__}: {_first_line(error)}", answers=(reference,))
        try:
            ours = Ours(compiled)
        except Exception as error:
            reference = self._reference(case, 0)
            return Outcome("differ", 1, kind="crash", version=0, detail=f"{type(error).__name__}: {_first_line(error)}",
                           answers=() if reference.refused is not None else (reference,))
        answers: list[Answer] = []
        for version in range(len(case.dataset.commits)):
            reference = self._reference(case, version)
            if reference.refused is not None:
                kind = "oracles" if reference.refused.startswith("oracles") else "spark"
                return Outcome("refused", version, kind=kind, version=version, detail=reference.refused)
            mine, snapshot = ours.answer(case.dataset, version)
            if self.fault is not None and mine.error is None and mine.crash is None:
                snapshot = self.fault(case, snapshot)
                mine = replace(mine, rows=tuple(row for row, count in snapshot.items()
                                                for _ in range(max(count, 0))))
            answers.append(reference)
            kind, detail = self._compare(case, reference, mine, snapshot)
            if kind:
                return Outcome("differ", version + 1, kind, version, detail, tuple(answers), mine)
            if reference.error is not None:
                return Outcome("agree", version + 1, answers=tuple(answers))
        return Outcome("agree", len(case.dataset.commits), answers=tuple(answers))

    def _reference(self, case: Case, version: int) -> Answer:
        """The reference's answer; for a recursive query Spark runs, SQLite's must hold the same rows."""
        if "spark" not in case.oracles:
            found = self.sqlite.answer(case.text, case.dataset, version)
            return replace(found, types=case.types) if found.refused is None else found
        if self.spark is None:
            raise RuntimeError("this case needs Spark: make the Checker with a SparkSession")
        found = self.spark.answer(case.text, case.dataset, version)
        if "sqlite" in case.oracles and found.error is None and found.refused is None:
            other = self.sqlite.answer(case.text, case.dataset, version)
            if other.refused is not None:
                return Answer(refused=f"oracles: {other.refused}")
            differing = same_rows(found.rows, Counter(other.rows), tolerant_columns(case.text, found.types))
            if differing:
                return Answer(refused=f"oracles: Spark and SQLite differ at version {version}: "
                                      f"{_describe(differing)}")
        return found

    @staticmethod
    def _compare(case: Case, reference: Answer, mine: Answer, snapshot: dict) -> tuple[str, str]:
        """The kind of difference between the reference's answer and ours, and a line describing it."""
        if mine.crash is not None:
            return "crash", mine.crash
        if reference.error is not None:
            return ("", "") if mine.error is not None else (
                "spark-error", f"Spark raises {reference.error}; final/ answers {len(mine.rows)} rows")
        if mine.error is not None:
            return "final-error", f"final/ raises {mine.error}; Spark answers {len(reference.rows)} rows"
        if reference.types is not None and tuple(mine.types or ()) != tuple(reference.types):
            return "types", f"types: Spark {list(reference.types)}, final/ {list(mine.types or ())}"
        differing = same_rows(reference.rows, snapshot, tolerant_columns(case.text, reference.types))
        if differing:
            return "rows", _describe(differing)
        return "", ""


def _describe(differing: Sequence[tuple[tuple, int, int]], limit: int = 4) -> str:
    shown = "; ".join(f"{_text(row)}: Spark {want}, final/ {have}" for row, want, have in differing[:limit])
    more = f" (and {len(differing) - limit} more rows)" if len(differing) > limit else ""
    return f"rows differ: {shown}{more}"


# Shrinking --------------------------------------------------------------------------------------------------------


def signature(outcome: Outcome) -> tuple[str, str]:
    """What a shrink keeps of a difference: its kind and, for a failure of ours, the error raised (its type
    and message, without the operators that name the query's clauses, which shrinking changes)."""
    if outcome.kind not in ("crash", "compile-crash"):
        return outcome.kind, ""
    return outcome.kind, outcome.detail.rpartition("raised ")[2] or outcome.detail


class Shrinker:
    """Makes a differing case smaller while it still differs in the same way (``Outcome.kind``).

    Passes, repeated until none helps or time runs out: drop versions (the
    first left becomes the load); drop the query's clauses, SELECT items,
    joins, set-operation arms and CTEs, and replace subexpressions by their
    parts or NULL (parsed and printed by sqlglot); drop rows (in halves,
    then quarters, ... then one by one), churn, tables and columns; replace
    values by NULL. A candidate is kept only if it compiles, Spark takes it,
    and the check differs with the same kind.
    """

    def __init__(self, checker: Checker, seconds: float = SHRINK_SECONDS) -> None:
        self.checker = checker
        self.seconds = seconds
        self.checks = 0

    def shrink(self, case: Case, outcome: Outcome) -> tuple[Case, Outcome]:
        """The smallest case found that differs as ``outcome`` does (``signature``), and its outcome."""
        self._deadline = time.monotonic() + self.seconds
        self._signature = signature(outcome)
        self._best = (case, outcome)
        passes = (self._versions, self._query, self._rows, self._churn, self._tables, self._columns, self._values)
        progress = True
        while progress and not self._late():
            progress = False
            for step in passes:
                if self._late():
                    break
                progress |= step()
        return self._best

    def _late(self) -> bool:
        return time.monotonic() > self._deadline

    def _try(self, case: Case) -> bool:
        """Keep ``case`` if it still differs with the same kind."""
        if self._late():
            return False
        self.checks += 1
        outcome = self.checker.check(case)
        if outcome.status == "differ" and signature(outcome) == self._signature:
            self._best = (case, outcome)
            return True
        return False

    @property
    def _case(self) -> Case:
        return self._best[0]

    def _with(self, tables: Sequence[Table] | None = None, commits: Sequence[Commit] | None = None,
              text: str | None = None) -> Case:
        dataset = self._case.dataset
        dataset = Dataset(tuple(dataset.tables if tables is None else tables),
                          tuple(dataset.commits if commits is None else commits))
        return replace(self._case, dataset=dataset, text=self._case.text if text is None else text)

    def _versions(self) -> bool:
        progress = False
        index = len(self._case.dataset.commits) - 1
        while index >= 0 and len(self._case.dataset.commits) > 1:
            commits = list(self._case.dataset.commits)
            del commits[index]
            if index == 0:
                commits[0] = replace(commits[0], churn=())
            progress |= self._try(self._with(commits=commits))
            index = min(index - 1, len(self._case.dataset.commits) - 1)
        return progress

    def _query(self) -> bool:
        """Each node of the query in turn: drop it or replace it by a part, keeping the first that differs."""
        import sqlglot

        progress = False
        index = 0
        while not self._late():
            try:
                tree = sqlglot.parse_one(self._case.text, read="spark")
            except sqlglot.errors.SqlglotError:
                return progress
            nodes = list(tree.walk())
            if index >= len(nodes):
                return progress
            kept = False
            # A query only SQLite answers has the types the generator wrote down; an edited one has none known.
            types = self._case.types if "spark" in self._case.oracles else None
            for candidate in _query_variants(tree, index):
                if candidate != self._case.text and self._try(replace(self._case, text=candidate, types=types)):
                    progress = kept = True
                    break
            if not kept:
                index += 1

    def _rows(self) -> bool:
        progress = False
        for table in range(len(self._case.dataset.tables)):
            distinct = list(dict.fromkeys(row for commit in self._case.dataset.commits for row in commit.rows[table]))
            size = max(1, len(distinct) // 2)
            while size >= 1 and distinct and not self._late():
                start = 0
                while start < len(distinct):
                    chunk = set(distinct[start:start + size])
                    if self._try(self._without_rows(table, chunk)):
                        progress = True
                        distinct = [row for row in distinct if row not in chunk]
                    else:
                        start += size
                size //= 2
        return progress

    def _without_rows(self, table: int, rows: set) -> Case:
        commits = [replace(commit,
                           rows=tuple(tuple(row for row in held if row not in rows) if position == table else held
                                      for position, held in enumerate(commit.rows)),
                           churn=tuple((index, row) for index, row in commit.churn
                                       if not (index == table and row in rows)))
                   for commit in self._case.dataset.commits]
        return self._with(commits=commits)

    def _churn(self) -> bool:
        progress = False
        for version in range(len(self._case.dataset.commits)):
            for entry in list(self._case.dataset.commits[version].churn):
                commits = list(self._case.dataset.commits)
                commits[version] = replace(commits[version],
                                           churn=tuple(item for item in commits[version].churn if item != entry))
                progress |= self._try(self._with(commits=commits))
        return progress

    def _tables(self) -> bool:
        """Drop the tables the query does not read (they only fill the reproducer)."""
        progress = False
        for name in list(self._case.dataset.names):
            if len(self._case.dataset.tables) == 1 or re.search(rf"\b{name}\b", self._case.text):
                continue
            keep = [index for index, table in enumerate(self._case.dataset.tables) if table.name != name]
            progress |= self._try(self._with(
                tables=[self._case.dataset.tables[index] for index in keep],
                commits=[Commit(tuple(commit.rows[index] for index in keep),
                                tuple((keep.index(table), row) for table, row in commit.churn if table in keep))
                         for commit in self._case.dataset.commits]))
        return progress

    def _columns(self) -> bool:
        progress = False
        for table in range(len(self._case.dataset.tables)):
            position = len(self._case.dataset.tables[table].columns) - 1
            while position >= 0 and len(self._case.dataset.tables[table].columns) > 1:
                name = self._case.dataset.tables[table].columns[position][0]
                if not re.search(rf"\b{name}\b", self._case.text):
                    progress |= self._try(self._without_column(table, position))
                position -= 1
        return progress

    def _without_column(self, table: int, position: int) -> Case:
        def cut(row: Row) -> Row:
            return row[:position] + row[position + 1:]

        tables = list(self._case.dataset.tables)
        tables[table] = replace(tables[table], columns=cut(tables[table].columns), key=None)
        commits = [Commit(tuple(tuple(cut(row) for row in held) if index == table else held
                                for index, held in enumerate(commit.rows)),
                          tuple((index, cut(row) if index == table else row) for index, row in commit.churn))
                   for commit in self._case.dataset.commits]
        return self._with(tables=tables, commits=commits)

    def _values(self) -> bool:
        """Replace a column's value by NULL wherever it is (one value at a time)."""
        progress = False
        for table in range(len(self._case.dataset.tables)):
            for position in range(len(self._case.dataset.tables[table].columns)):
                values = list(dict.fromkeys(row[position] for commit in self._case.dataset.commits
                                            for row in commit.rows[table] if row[position] is not None))
                for value in values:
                    if self._late():
                        return progress
                    progress |= self._try(self._replaced(table, position, value, None))
        return progress

    def _replaced(self, table: int, position: int, old: Any, new: Any) -> Case:
        def swap(row: Row) -> Row:
            if row[position] is old or (row[position] == old and type(row[position]) is type(old)):
                return (*row[:position], new, *row[position + 1:])
            return row

        commits = [Commit(tuple(tuple(swap(row) for row in held) if index == table else held
                                for index, held in enumerate(commit.rows)),
                          tuple((index, swap(row) if index == table else row) for index, row in commit.churn))
                   for commit in self._case.dataset.commits]
        return self._with(commits=commits)


def _query_variants(tree: Any, index: int) -> Iterator[str]:
    """Smaller queries made from ``tree`` at its ``index``-th node (in ``tree.walk()`` order): the node's
    clauses, items, joins, arms or list entries dropped one at a time, an outer join made inner, a set
    operation made ALL, the node replaced by one of its parts or by NULL."""
    from sqlglot import exp

    node = list(tree.walk())[index]
    changes: list[Callable[[Any], Any]] = []

    def dropping(key: str, position: int) -> Callable[[Any], Any]:
        return lambda n: n.set(key, [item for i, item in enumerate(n.args[key]) if i != position] or None)

    if isinstance(node, exp.SetOperation):
        changes += [lambda n: n.replace(n.this.copy()), lambda n: n.replace(n.expression.copy())]
        if node.args.get("distinct"):
            changes.append(lambda n: n.set("distinct", False))
    if isinstance(node, exp.Select):
        for key in ("where", "having", "distinct"):
            if node.args.get(key):
                changes.append(lambda n, key=key: n.set(key, None))
        if node.args.get("group"):
            changes.append(lambda n: (n.set("group", None), n.set("having", None)))
        if len(node.expressions) > 1:
            changes += [dropping("expressions", position) for position in range(len(node.expressions))]
        changes += [dropping("joins", position) for position in range(len(node.args.get("joins") or ()))]
    if isinstance(node, exp.With) and len(node.expressions) > 1:
        changes += [dropping("expressions", position) for position in range(len(node.expressions))]
    if isinstance(node, exp.Join) and (node.args.get("side") or node.args.get("kind")):
        changes.append(lambda n: (n.set("side", None), n.set("kind", None)))
    if isinstance(node, (exp.In, exp.Coalesce, exp.Concat)) and len(node.expressions) > 1:
        changes += [dropping("expressions", position) for position in range(len(node.expressions))]
    if isinstance(node, exp.Case):
        if node.args.get("default") is not None:
            changes += [lambda n: n.set("default", None), lambda n: n.replace(n.args["default"].copy())]
        for position in range(len(node.args.get("ifs") or ())):
            changes.append(lambda n, p=position: n.replace(n.args["ifs"][p].args["true"].copy()))
        if len(node.args.get("ifs") or ()) > 1:
            changes += [dropping("ifs", position) for position in range(len(node.args["ifs"]))]
    if _replaceable(node):
        for key, value in node.args.items():
            listed = isinstance(value, list)
            for position, child in enumerate(value if listed else [value]):
                if isinstance(child, (exp.Condition, exp.Paren)) and not isinstance(child, exp.DataType):
                    changes.append(lambda n, key=key, position=position, listed=listed:
                                   n.replace((n.args[key][position] if listed else n.args[key]).copy()))
        if not isinstance(node, exp.Null):
            changes.append(lambda n: n.replace(exp.Null()))
    seen = set()
    for change in changes:
        copy = tree.copy()
        target = list(copy.walk())[index]
        try:
            result = change(target)
            root = result if target is copy and isinstance(result, exp.Expression) else copy
            text = root.sql(dialect="spark")
        except Exception:  # a change that leaves no valid tree is no candidate
            continue
        if text not in seen:
            seen.add(text)
            yield text


def _replaceable(node: Any) -> bool:
    """Whether ``node`` is an expression a simpler one may stand for (not a clause, name, type, literal,
    or a CASE's WHEN branch)."""
    from sqlglot import exp

    if isinstance(node, (exp.Column, exp.Literal, exp.Identifier, exp.DataType, exp.Star, exp.Table,
                         exp.TableAlias, exp.Alias, exp.Null, exp.Boolean, exp.Select, exp.SetOperation,
                         exp.Subquery)):
        return False
    if isinstance(node, exp.If) and isinstance(node.parent, exp.Case):
        return False
    return isinstance(node, (exp.Condition, exp.Paren)) and node.parent is not None


# Reproducers ------------------------------------------------------------------------------------------------------


def _text(value: Any) -> str:
    """``value`` as Python source that rebuilds it (NaN and the infinities as ``float(...)``)."""
    if isinstance(value, float):
        if math.isnan(value):
            return 'float("nan")'
        if math.isinf(value):
            return f'float("{"-" if value < 0 else ""}inf")'
        return repr(float(value))
    if isinstance(value, Decimal):
        return f'Decimal("{value}")'
    if isinstance(value, tuple):
        inner = ", ".join(_text(item) for item in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_text(item) for item in value) + "]"
    return repr(value)


def reproducer(case: Case, outcome: Outcome, name: str) -> str:
    """A pytest file (its source) that replays ``case`` and asserts the reference's answers at every version
    up to the one that differs: it fails while ``final/`` still differs, and needs no Spark. Every line fits
    ruff's 120 columns, so the file can move into ``tests/`` as it is."""
    history = [case.dataset.updates(version) for version in range(outcome.version + 1)]
    types = outcome.answers[-1].types if outcome.answers else None
    reference = "Spark SQL" if "spark" in case.oracles else "SQLite"
    ours = outcome.ours
    if ours is None:
        said = outcome.detail
    elif ours.crash or ours.error:
        said = f"raises {ours.crash or ours.error}"
    else:
        said = f"{list(ours.types or ())}: {_text(list(ours.rows))}"
    expected = outcome.answers[-1] if outcome.answers else None
    if expected is None:
        wanted = "(no answer: the query fails before any version)"
    elif expected.error is not None:
        wanted = f"raises {expected.error}"
    else:
        wanted = f"{list(expected.types or ())}: {_text(list(expected.rows))}"
    kind = KINDS.get(outcome.kind, outcome.kind)
    paragraphs = [
        f"{kind[0].upper()}{kind[1:]}. Shrunk by final.spark.sql.fuzz; move it into tests/ once the "
        f"cause is fixed.",
        f"{reference}'s answer at version {outcome.version}: {wanted}", f"final/'s answer: {said}",
        f"({outcome.detail})",
    ]
    # The docstring is not raw: a backslash (a LIKE pattern's escape) is doubled to stay one.
    wrapped = "\n\n".join(textwrap.fill(paragraph, 116) for paragraph in paragraphs).replace("\\", "\\\\")
    query = textwrap.indent(textwrap.fill(case.text, 112), "    ").replace("\\", "\\\\")
    tables = "".join(f"    Table({table.name!r}, {table.columns!r}),\n" for table in case.dataset.tables)
    versions = "".join(f"    [  # version {version}\n"
                       + "".join(f"        ({table!r}, {_text(row)}, {count}),\n" for table, row, count in updates)
                       + "    ],\n" for version, updates in enumerate(history))
    listed = "".join(
        f"    {_text(answer.error)},  # version {version}\n" if answer.error is not None else
        f"    [  # version {version}\n" + "".join(f"        {_text(row)},\n" for row in answer.rows) + "    ],\n"
        for version, answer in enumerate(outcome.answers))
    decimal = "from decimal import Decimal\n\n" if "Decimal(" in versions + listed else ""
    pieces = textwrap.wrap(case.text, 100, drop_whitespace=False)
    text = "(\n" + "".join(f"    {piece!r}\n" for piece in pieces) + ")" if "".join(pieces) == case.text \
        else repr(case.text)
    # Spelled out of two parts: a line of this file that imports final/ would read as a stage importing another.
    imports = "\n".join(f"from {package} import {name}" for package, name in (
        ("final" + ".spark.query", "Table"), ("final" + ".spark.sql.fuzz", "replay")))
    source = f'''"""A difference the SQL fuzzer found ({case.origin}): {outcome.kind} at version {outcome.version}.

{wrapped}

The query:

{query}
"""

{decimal}{imports}

TABLES = [
{tables}]

HISTORY = [
{versions}]
"""Each version's updates: (table, record, multiplicity)."""

QUERY = {text}

TYPES = {(tuple(types) if types is not None else None)!r}
"""The result's types as {reference} gives them."""

ANSWERS = [
{listed}]
"""{reference}'s answer at each version: its rows, or the error class it raised."""


def test_{name}() -> None:
    replay(TABLES, HISTORY, QUERY, TYPES, ANSWERS)
'''
    return source


def replay(tables: Sequence[Table], history: Sequence[Sequence[Update]], query: str,
           types: Sequence[str] | None, answers: Sequence[list | str]) -> None:
    """Compile ``query``, apply ``history`` version by version, and assert ``answers`` (rows, or the error
    class a version raises) and ``types``, as the fuzzer compares them.

    Raises:
        AssertionError: naming the version and how ours differs.
    """
    from . import compile_sql

    compiled = compile_sql(query, {table.name: table for table in tables}, name="reproducer")
    if types is not None:
        assert tuple(compiled.types) == tuple(types), f"types: expected {list(types)}, final/ {list(compiled.types)}"
    ours = Ours(compiled)
    dataset = _replayed(tables, history)
    for version, expected in enumerate(answers):
        mine, snapshot = ours.answer(dataset, version)
        assert mine.crash is None, f"version {version}: final/ fails: {mine.crash}"
        if isinstance(expected, str):
            assert mine.error is not None, f"version {version}: Spark raises {expected}; final/ does not"
            return
        assert mine.error is None, f"version {version}: final/ raises {mine.error}; Spark does not"
        differing = same_rows(expected, snapshot, tolerant_columns(query, types))
        assert not differing, f"version {version}: {_describe(differing, limit=10)}"


def _replayed(tables: Sequence[Table], history: Sequence[Sequence[Update]]) -> Dataset:
    """A ``Dataset`` whose versions make exactly ``history``'s updates (churn as a retraction and an insert)."""
    names = [table.name for table in tables]
    current: list[Counter] = [Counter() for _ in tables]
    commits = []
    for updates in history:
        before = [Counter(held) for held in current]
        churn = []
        for name, row, count in updates:
            current[names.index(name)][row] += count
        net = Counter()
        for name, row, count in updates:
            net[(name, row)] += count
        for name, row, count in updates:
            if count < 0 and net[(name, row)] == 0 and before[names.index(name)][row] > 0:
                churn.append((names.index(name), row))
        commits.append(Commit(tuple(tuple(held.elements()) for held in current), tuple(dict.fromkeys(churn))))
    return Dataset(tuple(tables), tuple(commits))


# Running ----------------------------------------------------------------------------------------------------------


@dataclass
class Finding:
    """A case that differs (or that an engine refused), its outcome, and its shrunk form and reproducer."""

    case: Case
    outcome: Outcome
    shrunk: Case | None = None
    shrunk_outcome: Outcome | None = None
    path: str | None = None


@dataclass
class Run:
    """What a fuzzing run did: queries and versions checked, differences, generator errors, time."""

    queries: int = 0
    versions: int = 0
    differences: list[Finding] = field(default_factory=list)
    refused: list[Finding] = field(default_factory=list)
    raised: int = 0
    """Cases where Spark raised for the data at some version, and final/ did too: agreement."""
    seconds: float = 0.0
    spark_seconds: float = 0.0

    @property
    def summary(self) -> str:
        return f"{self.queries} queries x {self.versions} versions checked, {len(self.differences)} differences"


def run(spark: Any, seed: int, queries: int, out: str | None = None, shrink: int = SHRINK_LIMIT,
        fault: Fault | None = None, progress: Any = None, first: int = 0,
        shrink_seconds: float = SHRINK_SECONDS) -> Run:
    """Check cases ``first`` .. ``first + queries - 1`` of the run seeded ``seed``.

    The first ``shrink`` differences are shrunk, but for a failure of ours
    only the first two with the same error (``signature``): one bug makes
    many. Every difference is written as a reproducer under ``out`` (when
    given). ``progress``, if given, is
    called after each case with the ``Run`` so far.
    """
    checker = Checker(spark, fault)
    shrinker = Shrinker(checker, shrink_seconds)
    found = Run()
    shrunk: Counter = Counter()
    start = time.perf_counter()
    for index in range(first, first + queries):
        case = generate_case(seed, index)
        try:
            outcome = checker.check(case)
        except Exception as error:  # a bug of the fuzzer's own: counted, and the run goes on
            outcome = Outcome("refused", kind="fuzzer", detail=f"{type(error).__name__}: {_first_line(error)}")
        found.queries += 1
        found.versions += outcome.versions
        if outcome.status == "agree" and outcome.answers and outcome.answers[-1].error is not None:
            found.raised += 1
        if outcome.status == "refused":
            found.refused.append(Finding(case, outcome))
        elif outcome.status == "differ":
            finding = Finding(case, outcome)
            same = signature(outcome)
            if sum(shrunk.values()) < shrink and (not same[1] or shrunk[same] < 2):
                shrunk[same] += 1
                finding.shrunk, finding.shrunk_outcome = shrinker.shrink(case, outcome)
            if out is not None:
                finding.path = write_reproducer(finding, out, f"seed_{seed}_query_{index}")
            found.differences.append(finding)
        if progress is not None:
            progress(found)
    found.seconds = time.perf_counter() - start
    found.spark_seconds = checker.spark.seconds if checker.spark is not None else 0.0
    return found


def write_reproducer(finding: Finding, folder: str, name: str) -> str:
    """Write ``finding`` (shrunk if it was) as ``folder/test_fuzz_<name>.py``; return the path."""
    case = finding.shrunk or finding.case
    outcome = finding.shrunk_outcome or finding.outcome
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"test_fuzz_{name}.py")
    with open(path, "w") as file:
        file.write(reproducer(case, outcome, name))
    return path


def command(arguments: Any, conf: dict[str, str], log_file: str) -> int:
    """``python -m final.spark fuzz``: run, print each difference and generator error, and the summary line.

    Exit status 1 when a difference was found, 0 otherwise.
    """
    from ..session import check_master, settings, spark_session

    if arguments.queries < 1 or arguments.first < 0 or arguments.shrink < 0:
        raise ValueError(f"--queries takes a positive count and --first and --shrink counts from 0, not "
                         f"{arguments.queries}, {arguments.first} and {arguments.shrink}; e.g. --queries 200")
    check_master(settings(arguments.master, conf)[0])
    spark = spark_session(arguments.master, {**SPARK_CONF, **conf}, app_name="final-fuzz", log_file=log_file)
    bar = _progress_bar(arguments.queries)

    def progress(found: Run) -> None:
        bar.update(1)
        bar.set_postfix(differences=len(found.differences), refused=len(found.refused), refresh=False)

    try:
        found = run(spark, arguments.seed, arguments.queries, arguments.out, arguments.shrink, progress=progress,
                    first=arguments.first)
    finally:
        bar.close()
    for finding in found.differences:
        case = finding.shrunk or finding.case
        outcome = finding.shrunk_outcome or finding.outcome
        where = f"; reproducer {finding.path}" if finding.path else ""
        print(f"difference ({finding.case.origin}, {outcome.kind} at version {outcome.version}"
              f"{', shrunk' if finding.shrunk else ''}): {case.text}\n    {outcome.detail}{where}")
    for finding in found.refused:
        print(f"generator error ({finding.case.origin}, {REFUSALS[finding.outcome.kind].split(':')[0]}): "
              f"{finding.case.text}\n    {finding.outcome.detail}")
    print(f"{len(found.refused)} generator errors; {found.raised} queries raised for the data in Spark and "
          f"in final/ alike; {found.seconds:.0f} s, Spark {found.spark_seconds:.0f} s")
    print(found.summary)
    return 1 if found.differences else 0


def _progress_bar(total: int) -> Any:
    """A tqdm bar on stderr (a stand-in that does nothing when tqdm is missing)."""
    try:
        from tqdm import tqdm
    except ImportError:
        class Quiet:
            def update(self, count: int) -> None: ...
            def set_postfix(self, **values: Any) -> None: ...
            def close(self) -> None: ...
        return Quiet()
    return tqdm(total=total, file=sys.stderr, desc="fuzz", unit="query", dynamic_ncols=True)
