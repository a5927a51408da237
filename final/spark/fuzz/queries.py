"""Random queries of the SQL subset for the fuzzer, well-typed by construction, and the cases they make.

SQLancer and Feldera's SQL tests find an engine's bugs by running many
random, well-typed queries through it and through a reference. Here
``QueryMaker`` makes them over one data set (``data``): SELECTs with WHERE,
GROUP BY, HAVING and DISTINCT, joins of every kind, set operations,
subqueries in FROM, WITH, ``WITH RECURSIVE`` over a graph, subqueries in
expressions (EXISTS, IN, their negations and scalar ones, correlated or
not), dates and timestamps with their intervals and functions, the
function library (trimming to splitting strings, Java regular expressions,
rounding, greatest and least, nullif and nvl; count_if, bool_and and
bool_or, the spreads, any_value where it is deterministic), window
functions (with QUALIFY, and the top rows per group), ORDER BY with LIMIT
and OFFSET, and queries made to raise for the data. Expressions are made by type family
(``TYPE_FAMILIES``), each carrying what the generator knows of it
(``GeneratedExpr``: a bound on its magnitude, whether it is finite and
exact), so Spark takes every query and no integer overflows, no divisor is
zero and no cast fails except where a query is meant to raise.

A case (``FuzzCase``) is a data set and a query; ``generate_case`` makes
case ``index`` of a seed's run from the seed and the index alone, so a
reported case is made again from its number.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from ..query import Table
from .data import DATES, DOUBLES, MAX_ROWS, SPECIAL_DOUBLES, STRINGS, TIMESTAMPS, Dataset, make_dataset, make_graph

NUMERIC = ("int", "bigint", "decimal", "double")
TEMPORAL = ("date", "timestamp")
TYPE_FAMILIES = (*NUMERIC, "string", "boolean", *TEMPORAL)
"""The families an expression is made for: a Spark type without its parameters (``decimal`` for every
``DECIMAL(p,s)``), as the generator tells types apart."""

LIMITS = {"int": 2**31 - 1, "bigint": 2**63 - 1, "decimal": 1e15, "double": 1e15}
"""The largest magnitude an expression of each family may reach: the type's range for integers (beyond it
ANSI Spark raises), and far below any precision loss for DECIMAL and DOUBLE."""

ROWS_BOUND = MAX_ROWS**4
"""More rows than an aggregate can see (three sources joined, one of them a subquery of two): the bound a SUM's
or a COUNT's magnitude uses."""

SQL_NAMES = {"int": "INT", "bigint": "BIGINT", "double": "DOUBLE", "string": "STRING", "boolean": "BOOLEAN",
             "date": "DATE", "timestamp": "TIMESTAMP"}


def family_of(kind: str) -> str:
    """The family of a Spark type as a table declares it: ``DECIMAL(8,2)`` is ``decimal``."""
    kind = kind.lower()
    return "decimal" if kind.startswith("decimal") else kind


@dataclass(frozen=True)
class GeneratedExpr:
    """What the generator knows of an expression: its text, family, and what it may take as values.

    ``bound`` bounds the magnitude of a numeric value; ``finite`` says a
    DOUBLE is never NaN or infinite; ``exact`` is False for a SUM or AVG of
    doubles and for a spread (``SPREADS``) of any numbers (and what passes
    one on), whose last bits depend on the order Spark adds in: such a
    value is only ever output as it is, never compared, grouped, joined on
    or computed with. (-0.0 and 0.0, which a MIN or MAX
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
class ExprScope:
    """What an expression may name: ``columns``; in a grouped SELECT, its keys, and ``inner`` (the FROM
    clause's columns) for aggregate arguments."""

    columns: tuple[GeneratedExpr, ...]
    inner: tuple[GeneratedExpr, ...] | None = None


@dataclass(frozen=True)
class Source:
    """A FROM item: its text (``t0 AS r1``, ``(SELECT ...) AS s0``) and its columns as the query names them."""

    sql: str
    columns: tuple[GeneratedExpr, ...]


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
    "string": ("int", "bigint", "decimal", "boolean", "date", "timestamp"),
    "boolean": ("int", "bigint", "decimal", "double"),
    "date": ("timestamp",),
    "timestamp": ("date",),
}
"""The families each family is cast from where no value can fail (bounds permitting): every cast between the
tables' types that Spark takes but from STRING, which is left to queries meant to raise, and DOUBLE to STRING,
which the subset leaves out (Spark's shortest-repr formatting of doubles is not implemented)."""

DAY_UNITS = ("DAY", "DAYS")
TIME_UNITS = ("HOUR", "HOURS", "MINUTE", "MINUTES", "SECOND", "SECONDS")
MONTH_UNITS = ("MONTH", "MONTHS", "YEAR", "YEARS")
"""INTERVAL units: a DATE plus days or months stays a DATE, plus hours or seconds it is a TIMESTAMP."""

TRUNC_UNITS = ("YEAR", "yyyy", "YY", "QUARTER", "MONTH", "mm", "MON", "WEEK")
DATE_TRUNC_UNITS = (*TRUNC_UNITS, "DAY", "dd", "HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND")
FIELD_FUNCTIONS = ("year", "quarter", "month", "day", "dayofmonth", "dayofweek", "dayofyear", "weekofyear")
EXTRACT_FIELDS = ("YEAR", "QUARTER", "MONTH", "DAY", "WEEK", "DOW", "DOW_ISO", "DOY", "HOUR", "MINUTE")
"""The units of ``trunc`` and ``date_trunc`` and the INT fields of a DATE or TIMESTAMP the generator reads."""

TRIM_CHARACTERS = ("a", " ", "ab", "x", " a", "😀", "é ", "")
"""What ``trim(... FROM s)`` takes off either end: one character or several, spaces, one outside the BMP, none."""
FRAGMENTS = ("a", "b", " ", "ab", "é", "😀", "%", "")
"""What ``replace``, ``instr`` and ``locate`` look for and ``split_part`` splits at (beside the text's own values):
letters, a space, characters beyond ASCII and the BMP, and the empty string, which Spark finds at 1 and never
replaces or splits at."""
INSERTS = ("", "-", "é", "😀", "xy")
"""What ``replace`` puts in place of what it finds."""
FILLS = (" ", "0", "xy", "é", "😀", "")
"""What ``lpad`` and ``rpad`` pad with: none (the text cut to the size, never padded) and more than one character."""
PAD_SIZE = 12
"""The largest size a padded text is given: past the strings' lengths (``STRINGS``), and short enough that a
``length`` of it keeps the bound the generator gives it."""
PART_INDEXES = (-3, -2, -1, 1, 2, 3)
"""``split_part``'s index outside the error queries: never 0, which Spark refuses for the data
(``INVALID_INDEX_OF_ZERO``); past either end is ``''``."""

REGEX_PATTERNS = (
    ("a", 0), ("^a", 0), ("b$", 0), ("[ab]+", 0), ("[^a-z ]", 0), ("\\d+", 0), ("\\s", 0), ("\\w+", 0),
    ("(a)(b)?", 2), ("([a-z]+)(\\d*)", 2), ("(?i)A+", 0), ("a|b", 0), ("(a|é)", 1), ("^(.)(.*)$", 2),
    ("(\\w)\\1", 1), (".", 0), ("[😀日]", 0), ("\\.|%", 0), ("a{1,2}", 0), ("(?<v>[ab])", 1), ("(?s)a.", 0),
    ("^\\s*(\\S+)\\s*$", 1), ("(?:ab)+", 0), ("[0-9]", 0), ("^$", 0),
)
"""Java patterns the compiler reads (``sql.regex``), each with its number of groups: character classes and
their escapes, groups (named, non-capturing, back references), anchors, alternation, quantifiers and a flag.
None matches the empty string but at an anchor."""
EMPTY_MATCHES = (("x*", 0), ("a*?", 0), ("(b?)", 1), ("", 0))
"""Patterns that match the empty string between any two characters. ``regexp_replace`` is given one only over a
text known to hold no character outside the BMP: after an empty match before such a character Java searches on
from the middle of its UTF-16 pair, and Spark writes each half as '?', where the compiler keeps the character
whole (the known limitation pinned in tests/test_sql_functions.py)."""
REPLACEMENTS = (("", "-", "$0", "[$0]", "é", "\\$", "😀"), ("$1", "<$1>", "$1$0"), ("$2$1", "$1-$2"))
"""``regexp_replace``'s replacements by the groups they name (``REPLACEMENTS[n]`` names group n at most): groups
by number, a quoted ``$``, characters beyond ASCII; Spark fails on one naming a group the pattern lacks, which
only the error queries do."""
SPREADS = ("stddev", "stddev_samp", "stddev_pop", "std", "variance", "var_samp", "var_pop")
"""The aggregates of a spread: Spark updates a running mean in row order (``final/`` keeps exact sums), so
their last bits depend on its partitioning, as a SUM of doubles does."""

PRODUCTIONS = {
    "numeric": (("column", 5), ("literal", 1.5), ("aggregate", 4), ("arithmetic", 3), ("divide", 1),
                ("modulo", 0.7), ("negate", 0.4), ("case", 1), ("simple_case", 0.5), ("coalesce", 0.8),
                ("cast", 1.2), ("length", 0.4), ("date_field", 0.8), ("datediff", 0.4), ("scalar_subquery", 0.8),
                ("window", 2.8), ("round", 0.8), ("floor", 0.6), ("extreme", 0.6), ("nullif", 0.4), ("nvl", 0.5),
                ("position", 1), ("spread", 1.5)),
    "string": (("column", 5), ("literal", 1.5), ("aggregate", 2), ("lower", 0.6), ("upper", 0.6),
               ("substring", 1), ("concat", 1), ("case", 0.6), ("coalesce", 0.6), ("cast", 1.5),
               ("scalar_subquery", 0.3), ("window", 0.5), ("trim", 1.5), ("replace", 0.6), ("pad", 1.2),
               ("split_part", 0.5), ("regexp_extract", 0.6), ("regexp_replace", 1), ("extreme", 0.3),
               ("nullif", 0.3), ("nvl", 0.3)),
    "date": (("column", 5), ("literal", 1.5), ("aggregate", 1.5), ("date_shift", 2), ("interval_shift", 1.5),
             ("last_day", 0.5), ("truncate", 0.6), ("case", 0.5), ("coalesce", 0.5), ("cast", 0.8),
             ("scalar_subquery", 0.3), ("window", 0.4), ("extreme", 0.3), ("nullif", 0.2), ("nvl", 0.3)),
    "timestamp": (("column", 5), ("literal", 1.5), ("aggregate", 1), ("interval_shift", 2), ("truncate", 1),
                  ("case", 0.4), ("coalesce", 0.4), ("cast", 1), ("window", 0.3), ("extreme", 0.3), ("nullif", 0.2),
                  ("nvl", 0.2)),
    "boolean": (("column", 1), ("literal", 0.2), ("aggregate", 0.9), ("compare", 4), ("null_test", 1.2),
                ("in_list", 1), ("between", 0.8), ("like", 1), ("and_or", 1.5), ("not", 0.6), ("case", 0.3),
                ("cast", 0.3), ("rlike", 0.8)),
}
LEAVES = {"column", "literal", "aggregate", "spread", "compare", "null_test", "in_list", "between", "like"}
"""The productions allowed at depth 0: a boolean's base predicates compare leaves."""


class QueryMaker:
    """Makes random queries of the subset over one data set, well-typed by construction.

    Every expression is made for a family (``expr``), from productions that
    give that family, with the bounds of ``GeneratedExpr`` kept so that no integer
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
        self._windows: tuple[ExprScope, str] | None = None
        """While a SELECT list is made: the rows' columns (a grouped SELECT's keys) and its mode, over which a
        window function may be made."""
        self._outer: ExprScope | None = None
        """While a WHERE or a plain SELECT list is made: the columns a subquery in it may correlate with, each
        with its qualifier (a bare name inside the subquery would name the subquery's own column)."""

    # Top level.

    def query(self) -> Made:
        """One query: a SELECT, a join, a set operation, a subquery in FROM, a WITH, or one meant to raise."""
        if self.dataset.names == ["edges", "roots"] and self.rng.random() < 0.7:
            return self.recursive()
        form = self._pick((("single", 2.5), ("join", 2.5), ("setop", 1.5), ("subquery", 1.5), ("with", 1.2),
                           ("error", 0.8), ("top_per_group", 0.4)))
        if form == "top_per_group":
            return Made(self.top_per_group())
        if form == "error":
            made = self.error_query()
            if made is not None:
                return made
            form = "single"
        if form in ("single", "join"):
            count = 1 if form == "single" else self.rng.choice((2, 2, 3))
            # A quarter of the outermost SELECT lists name no item: Spark's names for them are compared too.
            named = self.rng.random() >= 0.25
            sql, outputs = self.select([self.base() for _ in range(count)], named=named)
            if not named:  # ORDER BY them by position (a window or an aggregate is no key of its own there)
                outputs = [replace(item, sql=str(position + 1)) for position, item in enumerate(outputs)]
            return Made(self.ordered(sql, outputs))
        if form == "setop":
            return Made(self.ordered(*self.setop()))
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
        sql, outputs = self.select(sources)
        return Made(self.ordered(prefix + sql, outputs))

    def ordered(self, sql: str, outputs: Sequence[GeneratedExpr]) -> str:
        """``sql``, a fifth of the time with ``ORDER BY`` some of its exact columns (by name or position, either
        way, NULLs first or last) and mostly a ``LIMIT`` (a top-k), sometimes an ``OFFSET``: rows tied at the
        window's edge compare as Spark's order ranks them (``SqlQuery.rank``)."""
        rng = self.rng
        usable = [(position, column) for position, column in enumerate(outputs) if column.exact]
        if not usable or rng.random() >= 0.2:
            return sql
        keys = []
        for position, column in rng.sample(usable, rng.randint(1, len(usable))):
            named = str(position + 1) if rng.random() < 0.25 else column.sql
            keys.append(named + rng.choice(("", " ASC", " DESC", " DESC")) +
                        rng.choice(("", "", " NULLS FIRST", " NULLS LAST")))
        sql = f"{sql} ORDER BY {', '.join(keys)}"
        if rng.random() < 0.8:
            sql += f" LIMIT {rng.choice((0, 1, 1, 2, 3, 3, 5, 8))}"
            if rng.random() < 0.3:
                sql += f" OFFSET {rng.randint(1, 3)}"
        return sql

    def inner_query(self) -> tuple[str, list[GeneratedExpr]]:
        """A query to read from: a SELECT over one or two tables, or a set operation."""
        if self.rng.random() < 0.2:
            return self.setop()
        return self.select([self.base() for _ in range(self.rng.choice((1, 1, 2)))])

    def setop(self) -> tuple[str, list[GeneratedExpr]]:
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
               exact: bool = False, named: bool = True) -> tuple[str, list[GeneratedExpr]]:
        """``SELECT [DISTINCT] ... FROM ... [WHERE] [GROUP BY] [HAVING]``: a projection, a grouped
        aggregate or a global one, with output columns ``c0``, ``c1``, ...; ``targets`` fixes the
        families of the outputs (a set operation's later arms). Without ``named``, the items have no
        alias (Spark names them: ``count(1)``, ``(r1.a + 1)``) and the outputs are the items."""
        from_sql, columns = self.from_clause(sources)
        qualified = ExprScope(tuple(columns))
        if len(sources) == 1 and self.rng.random() < 0.3:
            # One source: its columns named bare (``k``, not ``r1.k``), as the query's only ones.
            columns = [replace(column, sql=column.sql.rpartition(".")[2]) for column in columns]
        plain = ExprScope(tuple(columns))
        conditions = []
        with self._correlating(qualified):
            if self.rng.random() < 0.45:
                conditions.append(self.predicate(plain, self.rng.randint(0, 2)).sql)
            if self.rng.random() < 0.2:
                conditions.append(self.subquery_predicate(plain, qualified).sql)
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        mode = self._pick((("plain", 5), ("grouped", 3), ("global", 1.5)))
        keys: list[GeneratedExpr] = []
        group = having = ""
        if mode == "grouped":
            usable = [column for column in columns if column.exact]
            keys = self.rng.sample(usable, min(len(usable), self.rng.choice((1, 1, 2))))
            if self.rng.random() < 0.15:
                # An expression as the key; one without a column would be read as a position (GROUP BY 2).
                key = self.expr(self.rng.choice(TYPE_FAMILIES), plain, 1)
                if any(re.search(rf"(?<![\w.']){re.escape(column.sql)}\b", key.sql) for column in columns):
                    keys = [key]
            if not keys:
                mode = "global"
            group = " GROUP BY " + ", ".join(key.sql for key in keys)
        if mode == "global":
            group = ""
        scope = plain if mode == "plain" else ExprScope(tuple(keys), tuple(columns))
        if mode != "plain" and self.rng.random() < (0.35 if mode == "grouped" else 0.1):
            having = f" HAVING {self.predicate(scope, self.rng.randint(0, 2)).sql}"
        families = list(targets) if targets is not None else [
            self._family(scope) for _ in range(self.rng.choice((1, 2, 2, 3, 4)))]
        items = []
        windows = (scope, mode) if mode != "global" and self.rng.random() < 0.45 else None
        with self._correlating(qualified if mode == "plain" else None), self._windowing(windows):
            for position, family in enumerate(families):
                if mode == "grouped" and targets is None and position < len(keys) and self.rng.random() < 0.7:
                    items.append(keys[position])
                else:
                    items.append(self.expr(family, scope, self.rng.randint(0, 2), bare=not exact))
            if mode != "plain" and targets is None and not exact and self.rng.random() < 0.2:
                # A spread beside the groups' other aggregates, as a report gives a deviation with a mean.
                spread = self._spread("double", scope, 0, bare=True)
                items += [spread] if spread is not None else []
        qualify = ""
        if windows is not None and mode == "plain" and self.rng.random() < 0.25:
            # Columns named with their source: a bare c0 of a subquery would also be the SELECT item c0's name,
            # which Spark calls ambiguous in QUALIFY.
            ranking = self._ranking(qualified, total=True)
            if ranking is not None:
                qualify = f" QUALIFY {ranking} {self.rng.choice(('=', '<=', '<'))} {self.rng.randint(1, 3)}"
        distinct = "DISTINCT " if mode == "plain" and all(item.exact for item in items) \
            and self.rng.random() < 0.15 else ""
        if not named:
            listed = ", ".join(item.sql for item in items)
            return f"SELECT {distinct}{listed} FROM {from_sql}{where}{group}{having}{qualify}", items
        listed = ", ".join(f"{item.sql} AS c{position}" for position, item in enumerate(items))
        outputs = [replace(item, sql=f"c{position}") for position, item in enumerate(items)]
        return f"SELECT {distinct}{listed} FROM {from_sql}{where}{group}{having}{qualify}", outputs

    def top_per_group(self) -> str:
        """The top rows per group, as a data engineer writes it: ``ROW_NUMBER() OVER (PARTITION BY ... ORDER
        BY ...)`` in a subquery, kept to ``rn = 1`` (or ``<= k``) outside."""
        rng = self.rng
        source = self.base()
        scope = ExprScope(source.columns)
        ranking = self._ranking(scope, total=True, function="ROW_NUMBER")
        chosen = rng.sample(source.columns, rng.randint(1, len(source.columns)))
        listed = ", ".join(f"{column.sql} AS c{position}" for position, column in enumerate(chosen))
        where = f" WHERE {self.predicate(scope, 1).sql}" if rng.random() < 0.3 else ""
        alias = self._alias("s")
        kept = ", ".join(f"{alias}.c{position} AS c{position}" for position in range(len(chosen)))
        bound = rng.choice((f"= {rng.randint(1, 2)}", f"<= {rng.randint(1, 3)}", f"< {rng.randint(2, 4)}"))
        return (f"SELECT {kept}, {alias}.rn AS c{len(chosen)} FROM (SELECT {listed}, {ranking} AS rn FROM "
                f"{source.sql}{where}) AS {alias} WHERE {alias}.rn {bound}")

    def from_clause(self, sources: Sequence[Source]) -> tuple[str, list[GeneratedExpr]]:
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
            both = ExprScope((*columns, *source.columns))
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

    # Window functions.

    @contextmanager
    def _windowing(self, windows: tuple[ExprScope, str] | None) -> Iterator[None]:
        """Expressions made inside may hold a window function over ``windows`` (none when None)."""
        saved, self._windows = self._windows, windows
        try:
            yield
        finally:
            self._windows = saved

    def _over(self, scope: ExprScope, total: bool, ordered: bool = True, frame: str = "") -> str:
        """An OVER clause: PARTITION BY none, one or two of ``scope``'s columns, and (``ordered``) an ORDER BY of
        one or two of them, or with ``total`` of all of them, so that rows tie only where they are the same
        row (Spark orders ties in no stated way: a ROW_NUMBER or LAG over them would be its choice)."""
        rng = self.rng
        exact = [column for column in scope.columns if column.exact]
        parts = []
        if exact and rng.random() < 0.7:
            parts.append("PARTITION BY " + ", ".join(column.sql for column in rng.sample(
                exact, min(len(exact), rng.choice((1, 1, 2))))))
        if ordered and exact:
            keys = rng.sample(exact, len(exact)) if total else rng.sample(exact, min(len(exact), rng.choice((1, 2))))
            parts.append("ORDER BY " + ", ".join(
                column.sql + rng.choice(("", " ASC", " DESC")) + rng.choice(("", "", " NULLS FIRST", " NULLS LAST"))
                for column in keys))
        if frame:
            parts.append(frame)
        return f"OVER ({' '.join(parts)})"

    def _ranking(self, scope: ExprScope, total: bool, function: str | None = None) -> str | None:
        """``ROW_NUMBER()``, ``RANK()`` or ``DENSE_RANK()`` over ``scope``'s rows; None where no order is
        total (a ROW_NUMBER needs one, so that its numbers are Spark's)."""
        function = function or self.rng.choice(("ROW_NUMBER", "RANK", "DENSE_RANK"))
        if not any(column.exact for column in scope.columns) or (
                function == "ROW_NUMBER" and not all(column.exact for column in scope.columns)):
            return None
        return f"{function}() {self._over(scope, total=total or function == 'ROW_NUMBER')}"

    def _window(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr | None:
        """A window function of ``family`` over the SELECT's rows: a ranking (INT), LAG or LEAD (with an offset
        and a default), FIRST_VALUE or LAST_VALUE, or (in a SELECT without GROUP BY) an aggregate over a
        frame. Those whose value depends on how ties are ordered get a total ORDER BY."""
        if self._windows is None:
            return None
        rows, mode = self._windows
        rng = self.rng
        with self._windowing(None), self._correlating(None):
            choices = ["offset", "value", "value"] + (["ranking"] if family == "int" else []) + (
                ["aggregate"] if mode == "plain" else [])
            choice = rng.choice(choices)
            if choice == "ranking":
                ranking = self._ranking(rows, total=False)
                return GeneratedExpr(ranking, "int", ROWS_BOUND) if ranking is not None else None
            if not all(column.exact for column in rows.columns) and choice != "aggregate":
                return None
            if choice == "aggregate":
                value = self._aggregated(family, ExprScope(rows.columns), depth, over=True)
                if value is None or "DISTINCT" in value.sql:
                    return None
                frame = rng.choice(("", "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
                                    "RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
                                    "ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING",
                                    "RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"))
                if not any(column.exact for column in rows.columns):
                    frame = ""  # no ORDER BY to be had: a frame up to the current row needs one
                total = frame.startswith("ROWS") and "CURRENT" in frame
                over = self._over(rows, total=total, ordered=bool(frame) or rng.random() < 0.6, frame=frame)
                return replace(value, sql=f"{value.sql} {over}", values=())
            argument = self.expr(family, rows, min(depth - 1, 1))
            if ", true)" in argument.sql:
                # sqlglot reads any_value(x, true) inside a window function as the window's own IGNORE NULLS,
                # which the subset refuses.
                return None
            if choice == "value":
                function = rng.choice(("FIRST_VALUE", "LAST_VALUE"))
                frame = rng.choice(("", "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
                                    "ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"))
                return replace(argument, sql=f"{function}({argument.sql}) {self._over(rows, True, frame=frame)}",
                               values=())
            function = rng.choice(("LAG", "LEAD"))
            extra = f", {rng.randint(0, 3)}" if rng.random() < 0.6 else ""
            if extra and family in ("int", "bigint", "string", "boolean", *TEMPORAL) and rng.random() < 0.5:
                extra += f", {self.literal(family, argument.values, null=0.0).sql}"
            return replace(argument, sql=f"{function}({argument.sql}{extra}) {self._over(rows, True)}", values=())

    # Subqueries in expressions.

    @contextmanager
    def _correlating(self, outer: ExprScope | None) -> Iterator[None]:
        """Expressions made inside may hold a subquery correlated with ``outer`` (none when None)."""
        saved, self._outer = self._outer, outer
        try:
            yield
        finally:
            self._outer = saved

    def _inner_source(self) -> Source:
        """A table for a subquery, under an alias of its own (``x3``), so its columns never capture the outer
        query's names."""
        table = self.rng.choice(self.dataset.tables)
        alias = self._alias("x")
        return Source(f"{table.name} AS {alias}",
                      tuple(replace(fact, sql=f"{alias}.{fact.sql}") for fact in self.facts[table.name]))

    def _correlation(self, inner: Source, outer: ExprScope, equalities: bool) -> str:
        """A subquery's WHERE: none, one or two conditions tying an inner column to an outer one (equalities, or
        with ``equalities`` False sometimes ``<``, ``>=``, ``<>``), and sometimes a predicate of its own."""
        rng = self.rng
        pairs = [(mine, theirs) for mine in inner.columns for theirs in outer.columns
                 if mine.exact and theirs.exact and _joinable(mine.family, theirs.family)]
        conditions = []
        for mine, theirs in rng.sample(pairs, min(len(pairs), rng.choice((0, 1, 1, 1, 2)))):
            operator = "=" if equalities or rng.random() < 0.6 else rng.choice(("<", ">=", "<>"))
            conditions.append(f"{mine.sql} {operator} {theirs.sql}")
        if not conditions or rng.random() < 0.5:
            conditions.append(self.predicate(ExprScope(inner.columns), rng.randint(0, 1)).sql)
        return f" WHERE {' AND '.join(conditions)}" if rng.random() < 0.95 else ""

    def subquery_predicate(self, scope: ExprScope, outer: ExprScope) -> GeneratedExpr:
        """``[NOT] EXISTS (SELECT ...)`` or ``x [NOT] IN (SELECT ...)`` (its column, or an aggregate per
        group), correlated with ``outer`` or not; ``x`` is an expression over ``scope``. NOT IN correlates by
        equalities only, as the subset does."""
        rng = self.rng
        kind = self._pick((("exists", 1), ("not_exists", 1), ("in", 1.2), ("not_in", 1)))
        with self._correlating(None):
            inner = self._inner_source()
            if kind in ("exists", "not_exists"):
                where = self._correlation(inner, outer, equalities=rng.random() < 0.7)
                item = rng.choice(("1", "*", inner.columns[-1].sql))
                negated = "NOT " if kind == "not_exists" else ""
                return GeneratedExpr(f"({negated}EXISTS (SELECT {item} FROM {inner.sql}{where}))", "boolean")
            column = rng.choice([column for column in inner.columns if column.exact])
            family = rng.choice(("int", "bigint")) if column.family in ("int", "bigint") else column.family
            probe = self.expr(family, scope, 1)
            where = self._correlation(inner, outer, equalities=True)
            item, group = column.sql, ""
            if rng.random() < 0.2:
                item, group = f"{rng.choice(('MIN', 'MAX'))}({column.sql})", f" GROUP BY {inner.columns[0].sql}"
            negated = "NOT " if kind == "not_in" else ""
            return GeneratedExpr(f"({probe.sql} {negated}IN (SELECT {item} FROM {inner.sql}{where}{group}))",
                                 "boolean")

    def _scalar_subquery(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr | None:
        """``(SELECT aggregate FROM ... WHERE ...)``, correlated by equalities or not (over no rows: NULL, or 0
        for a COUNT). One of a column, which may hold two rows, is an error query's (``two_rows``)."""
        outer = self._outer
        if outer is None:
            return None
        with self._correlating(None), self._windowing(None):
            inner = self._inner_source()
            value = self._aggregate(family, ExprScope((), inner.columns), depth, bare)
            if value is None:
                return None
            where = self._correlation(inner, outer, equalities=True)
            return replace(value, sql=f"(SELECT {value.sql} FROM {inner.sql}{where})", values=())

    # Expressions.

    def expr(self, family: str, scope: ExprScope, depth: int, bare: bool = False) -> GeneratedExpr:
        """An expression of ``family`` over ``scope``, at most ``depth`` operators deep; an inexact value
        (``GeneratedExpr.exact``) only when ``bare`` (an output as it is)."""
        kinds = PRODUCTIONS["numeric" if family in NUMERIC else family]
        for _ in range(16):
            kind = self._pick(kinds)
            if depth <= 0 and kind not in LEAVES:
                continue
            made = getattr(self, f"_{kind}")(family, scope, depth, bare)
            if made is not None and made.family == family and (made.exact or bare):
                return made
        return self.literal(family)

    def predicate(self, scope: ExprScope, depth: int) -> GeneratedExpr:
        return self.expr("boolean", scope, depth)

    def literal(self, family: str, values: Sequence = (), null: float = 0.04) -> GeneratedExpr:
        """A literal of ``family``: often one of ``values`` (a column's), so that predicates meet the data."""
        rng = self.rng
        if rng.random() < null:
            kind = "DECIMAL(5,2)" if family == "decimal" else SQL_NAMES[family]
            return GeneratedExpr(f"CAST(NULL AS {kind})", family)
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
        elif family == "date":
            value = rng.choice(DATES)
        elif family == "timestamp":
            value = rng.choice(TIMESTAMPS)
        else:
            value = rng.random() < 0.5
        if family in TEMPORAL and rng.random() < 0.15:  # the text cast, beside the typed literal
            return GeneratedExpr(f"CAST('{_temporal_text(value)}' AS {SQL_NAMES[family]})", family, values=(value,))
        return literal(value, family)

    def _column(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr | None:
        found = [column for column in scope.columns if column.family == family and (column.exact or bare)]
        return self.rng.choice(found) if found else None

    def _literal(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        near = [value for column in scope.columns if column.family == family for value in column.values]
        return self.literal(family, near)

    def _aggregate(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr | None:
        """An aggregate (``_aggregated``) of an expression over a grouped SELECT's FROM, or now and then
        ``any_value`` of its keys (``_any_value``)."""
        if scope.inner is None:
            return None
        with self._windowing(None):  # no window function inside an aggregate
            if self.rng.random() < 0.05:
                return self._any_value(family, scope, depth)
            return self._aggregated(family, ExprScope(scope.inner), depth)

    def _aggregated(self, family: str, inner: ExprScope, depth: int, over: bool = False) -> GeneratedExpr | None:
        """COUNT(*), COUNT([DISTINCT] x), count_if, SUM, AVG, MIN, MAX, bool_and or bool_or (in their
        spellings), its argument an expression over ``inner`` (the FROM clause's columns); ``over`` a window,
        only those the subset takes there (COUNT, SUM, AVG, MIN and MAX)."""
        rng = self.rng
        arguments = min(depth, 1)
        if family == "bigint":
            choice = self._pick((("count_star", 2), ("count", 2), ("count_distinct", 1.5),
                                 ("count_if", 0 if over else 1.2), ("sum", 1.5), ("minmax", 1)))
            if choice == "count_star":
                return GeneratedExpr("COUNT(*)", "bigint", ROWS_BOUND)
            if choice in ("count", "count_distinct"):
                argument = self.expr(self._family(inner), inner, arguments, bare=choice == "count")
                distinct = "DISTINCT " if choice == "count_distinct" else ""
                return GeneratedExpr(f"COUNT({distinct}{argument.sql})", "bigint", ROWS_BOUND)
            if choice == "count_if":
                return GeneratedExpr(f"count_if({self.predicate(inner, arguments).sql})", "bigint", ROWS_BOUND)
            if choice == "sum":
                argument = self.expr(rng.choice(("int", "bigint")), inner, arguments)
                return _bounded(GeneratedExpr(f"SUM({argument.sql})", "bigint", argument.bound * ROWS_BOUND))
        if family == "decimal" and rng.random() < 0.6:
            argument = self.expr("decimal", inner, arguments)
            function = rng.choice(("SUM", "AVG"))
            bound = argument.bound * (ROWS_BOUND if function == "SUM" else 1)
            return _bounded(GeneratedExpr(f"{function}({argument.sql})", "decimal", bound))
        if family == "double" and rng.random() < 0.6:
            function = rng.choice(("SUM", "AVG"))
            source = rng.choice(("double", "double", "int", "bigint") if function == "AVG" else ("double",))
            argument = self.expr(source, inner, arguments, bare=True)
            bound = argument.bound * (ROWS_BOUND if function == "SUM" else 1)
            return _bounded(GeneratedExpr(f"{function}({argument.sql})", "double", bound, argument.finite, exact=False))
        if family == "boolean" and not over and rng.random() < 0.6:
            function = rng.choice(("bool_and", "bool_or", "every", "some", "any"))
            return GeneratedExpr(f"{function}({self.predicate(inner, arguments).sql})", "boolean")
        argument = self.expr(family, inner, arguments, bare=True)
        function = rng.choice(("MIN", "MAX"))
        return replace(argument, sql=f"{function}({argument.sql})", values=())

    def _spread(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr | None:
        """A spread (``SPREADS``) of a numeric column of a grouped SELECT's FROM: a DOUBLE, never exact (Spark's
        running mean rounds in row order), so only an output as it is. Its argument is a column, not an
        expression: values close together far from zero (``x + 2.5E6`` over x = 0.1 and 0.3) would lose to that
        rounding more than the comparison's tolerance."""
        if family != "double" or not bare or scope.inner is None:
            return None
        columns = [column for column in scope.inner if column.family in NUMERIC and column.exact]
        if not columns:
            return None
        column = self.rng.choice(columns)
        function = self.rng.choice(SPREADS)
        bound = column.bound if function.startswith("std") else column.bound ** 2
        return _bounded(GeneratedExpr(f"{function}({column.sql})", "double", bound, column.finite, exact=False))

    def _any_value(self, family: str, scope: ExprScope, depth: int) -> GeneratedExpr | None:
        """``any_value`` of a GROUP BY key or an expression of the key columns (a constant where there are none):
        the one value every row of a group has, so Spark's choice of a row does not show. Of any other expression
        it is the value of whichever row Spark reads first, which the subset refuses."""
        rng = self.rng
        keys = [key for key in scope.columns if key.family == family]
        if keys and rng.random() < 0.6:
            argument = rng.choice(keys)
        else:
            columns = ExprScope(tuple(key for key in scope.columns if key in (scope.inner or ())))
            with self._correlating(None):
                argument = self.expr(family, columns, min(depth, 1))
        ignoring = ", true" if rng.random() < 0.2 else ""
        return replace(argument, sql=f"any_value({argument.sql}{ignoring})", values=())

    def _arithmetic(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr | None:
        left, right = self.rng.choice(OPERANDS[family])
        operator = self.rng.choice("+-*")
        a, b = self.expr(left, scope, depth - 1), self.expr(right, scope, depth - 1)
        bound = a.bound * b.bound if operator == "*" else a.bound + b.bound
        return _bounded(_combined(f"({a.sql} {operator} {b.sql})", family, bound, a, b))

    def _divide(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr | None:
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

    def _modulo(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr | None:
        a = self.expr(family, scope, depth - 1)
        if family in ("int", "bigint"):
            divisor = str(self.rng.choice(INT_DIVISORS))
        else:
            divisor = self.rng.choice((str(self.rng.choice(INT_DIVISORS)),) + DECIMAL_DIVISORS
                                      + (DOUBLE_DIVISORS if family == "double" else ()))
        return replace(a, sql=f"({a.sql} % {_parenthesized(divisor)})", values=(),
                       bound=min(a.bound, abs(float(divisor.replace("E0", "")))))

    def _negate(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr | None:
        a = self.expr(family, scope, depth - 1)
        return replace(a, sql=f"(- {a.sql})", values=())

    def _case(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr | None:
        return self._when_then(family, scope, depth, "CASE", (1, 1, 2), 0.7,
                               lambda: self.predicate(scope, depth - 1).sql)

    def _simple_case(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr | None:
        subject = self.expr(self._family(scope), scope, depth - 1)
        return self._when_then(family, scope, depth, f"CASE {subject.sql}", (1, 2, 2), 0.6,
                               lambda: self.literal(subject.family, subject.values, null=0.0).sql)

    def _when_then(self, family: str, scope: ExprScope, depth: int, opening: str, counts: tuple[int, ...],
                   otherwise: float, when: Callable[[], str]) -> GeneratedExpr:
        """``opening WHEN .. THEN .. [ELSE ..] END``: ``rng.choice(counts)`` branches, each after its ``when()``,
        and an ELSE with probability ``otherwise``."""
        branches, parts = [], []
        for position in range(self.rng.choice(counts)):
            condition = when()
            branch = self._branch(family, scope, depth - 1, typed=position == 0)
            branches.append(branch)
            parts.append(f"WHEN {condition} THEN {branch.sql}")
        if self.rng.random() < otherwise:
            branch = self._branch(family, scope, depth - 1)
            branches.append(branch)
            parts.append(f"ELSE {branch.sql}")
        return _merged(f"{opening} {' '.join(parts)} END", family, branches)

    def _branch(self, family: str, scope: ExprScope, depth: int, typed: bool = False) -> GeneratedExpr:
        """A CASE branch: sometimes a bare NULL, but not when ``typed`` (a CASE of NULLs only has no type)."""
        if not typed and self.rng.random() < 0.08:
            return GeneratedExpr("NULL", family)
        return self.expr(family, scope, depth)

    def _coalesce(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr | None:
        parts = [self.expr(family, scope, depth - 1) for _ in range(self.rng.choice((2, 2, 3)))]
        texts = [part.sql for part in parts]
        if self.rng.random() < 0.15:
            texts.insert(1, "NULL")
        return _merged(f"COALESCE({', '.join(texts)})", family, parts)

    def _cast(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr | None:
        """``CAST(x AS T)`` from another family, where the bounds say no value of x can fail."""
        source = self.rng.choice(CASTS[family])
        a = self.expr(source, scope, depth - 1)
        if family == "string":
            return GeneratedExpr(f"CAST({a.sql} AS STRING)", "string")
        if family in ("boolean", *TEMPORAL):
            return GeneratedExpr(f"CAST({a.sql} AS {SQL_NAMES[family]})", family)
        if a.family == "double" and not a.finite and family != "double":
            return None
        bound = 1.0 if a.family == "boolean" else a.bound
        if family == "decimal":
            scale = self.rng.randint(0, 4)
            precision = _digits(bound + 1) + scale + self.rng.randint(0, 2)
            if precision > 38:
                return None
            return GeneratedExpr(f"CAST({a.sql} AS DECIMAL({precision},{scale}))", "decimal", bound + 1)
        if bound >= LIMITS[family]:
            return None
        return GeneratedExpr(f"CAST({a.sql} AS {SQL_NAMES[family]})", family, bound, a.finite)

    def _date_shift(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr | None:
        """``date_add``, ``date_sub`` or ``add_months`` of a DATE by a literal or an INT expression small enough
        to stay within the years 1..9999 (month ends as Spark keeps them: 2024-01-31 plus a month is 2024-02-29)."""
        if family != "date":
            return None
        rng = self.rng
        a = self.expr("date", scope, depth - 1)
        function, largest = rng.choice((("date_add", 1000), ("date_sub", 1000), ("add_months", 100)))
        amount = self.expr("int", scope, depth - 1) if rng.random() < 0.35 else None
        if amount is None or amount.bound > largest:
            amount = literal(rng.randint(-largest // 10, largest // 4), "int")
        return GeneratedExpr(f"{function}({a.sql}, {amount.sql})", "date")

    def _interval_shift(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr | None:
        """A DATE or TIMESTAMP plus or minus an INTERVAL: days or months keep a DATE, hours or seconds make it a
        TIMESTAMP; either unit syntax (``INTERVAL '3' DAY``, ``INTERVAL 3 DAYS``), and ``YEAR TO MONTH`` and
        ``DAY TO SECOND`` spans."""
        rng = self.rng
        if family == "date":
            a = self.expr("date", scope, depth - 1)
            units = DAY_UNITS + MONTH_UNITS
        else:
            a = self.expr(rng.choice(TEMPORAL), scope, depth - 1)
            units = TIME_UNITS + (DAY_UNITS + MONTH_UNITS if a.family == "timestamp" else ())
        span = rng.random()
        if span < 0.15:
            interval = f"INTERVAL '{rng.randint(0, 3)}-{rng.randint(0, 11)}' YEAR TO MONTH"
        elif span < 0.3 and family == "timestamp":
            interval = (f"INTERVAL '{rng.randint(0, 40)} {rng.randint(0, 23):02}:{rng.randint(0, 59):02}:"
                        f"{rng.randint(0, 59):02}.{rng.randint(0, 999999):06}' DAY TO SECOND")
        else:
            unit = rng.choice(units)
            amount = rng.randint(1, 40) if not unit.startswith("YEAR") else rng.randint(1, 3)
            interval = f"INTERVAL '{amount}' {unit.rstrip('S')}" if rng.random() < 0.5 else \
                f"INTERVAL {amount} {unit}"
        return GeneratedExpr(f"({a.sql} {rng.choice('+-')} {interval})", family)

    def _last_day(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        return GeneratedExpr(f"last_day({self.expr('date', scope, depth - 1).sql})", "date")

    def _truncate(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        """``trunc(date, unit)`` (a DATE) or ``date_trunc(unit, date or timestamp)`` (a TIMESTAMP)."""
        rng = self.rng
        if family == "date":
            return GeneratedExpr(f"trunc({self.expr('date', scope, depth - 1).sql}, '{rng.choice(TRUNC_UNITS)}')",
                                 "date")
        a = self.expr(rng.choice(TEMPORAL), scope, depth - 1)
        return GeneratedExpr(f"date_trunc('{rng.choice(DATE_TRUNC_UNITS)}', {a.sql})", "timestamp")

    def _date_field(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr | None:
        """An INT field of a DATE or TIMESTAMP: ``year(x)`` and the other field functions, or ``EXTRACT``."""
        if family != "int":
            return None
        rng = self.rng
        a = self.expr(rng.choice(TEMPORAL), scope, depth - 1)
        if rng.random() < 0.5:
            return GeneratedExpr(f"{rng.choice(FIELD_FUNCTIONS)}({a.sql})", "int", 9999)
        return GeneratedExpr(f"EXTRACT({rng.choice(EXTRACT_FIELDS)} FROM {a.sql})", "int", 9999)

    def _datediff(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr | None:
        if family != "int":
            return None
        a, b = (self.expr("date", scope, depth - 1) for _ in range(2))
        return GeneratedExpr(f"datediff({a.sql}, {b.sql})", "int", 3_700_000)

    def _length(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr | None:
        if family != "int":
            return None
        return GeneratedExpr(f"length({self.expr('string', scope, depth - 1).sql})", "int", 64)

    def _lower(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        return GeneratedExpr(f"lower({self.expr('string', scope, depth - 1).sql})", "string")

    def _upper(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        return GeneratedExpr(f"upper({self.expr('string', scope, depth - 1).sql})", "string")

    def _substring(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        text = self.expr("string", scope, depth - 1).sql
        start = _parenthesized(str(self.rng.randint(-3, 4)))
        if self.rng.random() < 0.3:
            return GeneratedExpr(f"substring({text}, {start})", "string")
        return GeneratedExpr(f"substring({text}, {start}, {_parenthesized(str(self.rng.randint(-1, 4)))})", "string")

    def _concat(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        parts = [self.expr("string", scope, depth - 1).sql for _ in range(self.rng.choice((2, 2, 3)))]
        if self.rng.random() < 0.3:
            return GeneratedExpr(f"({parts[0]} || {parts[1]})", "string")
        return GeneratedExpr(f"concat({', '.join(parts)})", "string")

    def _trim(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        """``trim``, ``ltrim`` or ``rtrim`` of spaces, or ``trim([BOTH|LEADING|TRAILING] [chars] FROM s)``."""
        rng = self.rng
        text = self.expr("string", scope, depth - 1)
        form = rng.choice(("trim", "trim", "ltrim", "ltrim", "rtrim", "rtrim", "BOTH", "LEADING", "TRAILING", ""))
        if form in ("trim", "ltrim", "rtrim"):
            return GeneratedExpr(f"{form}({text.sql})", "string")
        if form and rng.random() < 0.15:
            return GeneratedExpr(f"trim({form} FROM {text.sql})", "string")
        characters = literal(rng.choice(TRIM_CHARACTERS), "string") if rng.random() < 0.75 else \
            self.expr("string", scope, depth - 1)
        return GeneratedExpr(f"trim({form + ' ' if form else ''}{characters.sql} FROM {text.sql})", "string")

    def _fragment(self, text: GeneratedExpr, scope: ExprScope, depth: int) -> GeneratedExpr:
        """A string to look for in ``text``: one of ``FRAGMENTS`` or of its values, or another string."""
        rng = self.rng
        if rng.random() < 0.2:
            return self.expr("string", scope, depth - 1)
        found = [value for value in text.values if _literal_ok(value, "string")]
        return literal(rng.choice(FRAGMENTS + tuple(found)), "string")

    def _replace(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        """``replace(s, search[, replacement])``: every occurrence (removed without a replacement)."""
        rng = self.rng
        text = self.expr("string", scope, depth - 1)
        search = self._fragment(text, scope, depth)
        if rng.random() < 0.25:
            return GeneratedExpr(f"replace({text.sql}, {search.sql})", "string")
        inserted = literal(rng.choice(INSERTS), "string") if rng.random() < 0.8 else \
            self.expr("string", scope, depth - 1)
        return GeneratedExpr(f"replace({text.sql}, {search.sql}, {inserted.sql})", "string")

    def _position(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr | None:
        """Where a string is in another: ``instr(s, sub)``, ``position(sub IN s)`` or ``locate(sub, s[,
        start])``, the start a literal or any INT (below 1, or NULL, it finds nothing)."""
        if family != "int":
            return None
        rng = self.rng
        text = self.expr("string", scope, depth - 1)
        part = self._fragment(text, scope, depth)
        form = rng.choice(("instr", "position", "locate"))
        if form == "instr":
            sql = f"instr({text.sql}, {part.sql})"
        elif form == "position":
            sql = f"position({part.sql} IN {text.sql})"
        elif rng.random() < 0.4:
            sql = f"locate({part.sql}, {text.sql})"
        else:
            start = literal(rng.randint(-1, 5), "int") if rng.random() < 0.6 else self.expr("int", scope, depth - 1)
            sql = f"locate({part.sql}, {text.sql}, {start.sql})"
        return GeneratedExpr(sql, "int", 64)

    def _pad(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        """``lpad`` or ``rpad`` of a string to a size (a literal, or an INT within ``PAD_SIZE``), with spaces or
        ``FILLS`` or another string; a text longer than the size is cut to it."""
        rng = self.rng
        text = self.expr("string", scope, depth - 1)
        size = self.expr("int", scope, depth - 1) if rng.random() < 0.3 else None
        if size is None or size.bound > PAD_SIZE:
            size = literal(rng.randint(-1, PAD_SIZE // 2), "int")
        name = rng.choice(("lpad", "rpad"))
        if rng.random() < 0.25:
            return GeneratedExpr(f"{name}({text.sql}, {size.sql})", "string")
        fill = literal(rng.choice(FILLS), "string") if rng.random() < 0.8 else self.expr("string", scope, depth - 1)
        return GeneratedExpr(f"{name}({text.sql}, {size.sql}, {fill.sql})", "string")

    def _split_part(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        """``split_part(s, delimiter, index)``, the index one of ``PART_INDEXES`` (never 0)."""
        text = self.expr("string", scope, depth - 1)
        delimiter = self._fragment(text, scope, depth)
        return GeneratedExpr(f"split_part({text.sql}, {delimiter.sql}, {self.rng.choice(PART_INDEXES)})", "string")

    def _regexp_extract(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        """``regexp_extract(s, pattern[, index])``: the index of a group the pattern has (the first by default,
        so only when it has one); an unmatched group or no match at all is ``''``."""
        rng = self.rng
        text = self.expr("string", scope, depth - 1)
        pattern, groups = rng.choice(REGEX_PATTERNS + EMPTY_MATCHES)
        if groups and rng.random() < 0.3:
            return GeneratedExpr(f"regexp_extract({text.sql}, {_regex_literal(pattern)})", "string")
        index = rng.randint(0, groups)
        return GeneratedExpr(f"regexp_extract({text.sql}, {_regex_literal(pattern)}, {index})", "string")

    def _regexp_replace(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        """``regexp_replace(s, pattern, replacement)``, the replacement naming only groups the pattern has, or a
        string column (the data holds no ``$`` or backslash, so it reads as itself). A pattern that matches the
        empty string anywhere only over a text with no character outside the BMP (``EMPTY_MATCHES``)."""
        rng = self.rng
        text = self.expr("string", scope, depth - 1)
        pattern, groups = rng.choice(REGEX_PATTERNS + (EMPTY_MATCHES if _within_bmp(text) else ()))
        column = self._column("string", scope, 0, bare=False) if rng.random() < 0.15 else None
        if column is not None:
            replacement = column.sql
        else:
            named = min(groups, 2) if rng.random() < 0.7 else rng.randint(0, min(groups, 2))
            replacement = _regex_literal(rng.choice(REPLACEMENTS[named]))
        return GeneratedExpr(f"regexp_replace({text.sql}, {_regex_literal(pattern)}, {replacement})", "string")

    def _rlike(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        """Whether a Java pattern matches somewhere in a string: ``RLIKE``, ``REGEXP``, ``regexp_like``, negated
        or not."""
        rng = self.rng
        text = self.expr("string", scope, depth - 1)
        pattern = _regex_literal(rng.choice(REGEX_PATTERNS + EMPTY_MATCHES)[0])
        form = rng.choice(("RLIKE", "NOT RLIKE", "REGEXP", "regexp_like"))
        if form == "regexp_like":
            return GeneratedExpr(f"regexp_like({text.sql}, {pattern})", "boolean")
        return GeneratedExpr(f"({text.sql} {form} {pattern})", "boolean")

    def _round(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr | None:
        """``round(x[, d])`` (half up) or ``bround(x[, d])`` (half to even), ``d`` a literal (Spark wants a
        constant) from -2 to 3: of x's family, a DECIMAL one digit wider for a carry; rounding to tens or
        hundreds may leave an integer type, so the bound grows by as much."""
        rng = self.rng
        a = self.expr(family, scope, depth - 1)
        scale = rng.choice((-2, -1, 0, 0, 1, 2, 3))
        name = rng.choice(("round", "round", "bround"))
        places = "" if scale == 0 and rng.random() < 0.5 else f", {scale}"
        return _bounded(replace(a, sql=f"{name}({a.sql}{places})", bound=a.bound + 10.0 ** max(-scale, 0),
                                values=()))

    def _floor(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr | None:
        """``floor``, ``ceil`` or ``ceiling``: a BIGINT of an integer or a finite DOUBLE (an infinity fails, in the
        error queries; NaN is 0), a DECIMAL of scale 0 of a DECIMAL."""
        if family not in ("bigint", "decimal"):
            return None
        rng = self.rng
        source = family if family == "decimal" else rng.choice(("int", "bigint", "double", "double"))
        a = self.expr(source, scope, depth - 1)
        if not a.finite:
            return None
        name = rng.choice(("floor", "ceil", "ceiling"))
        return _bounded(GeneratedExpr(f"{name}({a.sql})", family, a.bound + 1))

    def _extreme(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        """``greatest`` or ``least`` of two or three values that widen to ``family`` (``OPERANDS``), NULLs
        skipped, NaN above every number; sometimes one a literal near the first's values."""
        rng = self.rng
        families = list(rng.choice(OPERANDS[family])) if family in NUMERIC else [family, family]
        families += [family] if rng.random() < 0.3 else []
        parts = [self.expr(kind, scope, depth - 1) for kind in families]
        if rng.random() < 0.3:
            parts[-1] = self.literal(families[-1], parts[0].values)
        name = rng.choice(("greatest", "least"))
        return _merged(f"{name}({', '.join(part.sql for part in parts)})", family, parts)

    def _nullif(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        """``nullif(a, b)``: NULL where a equals b, else a; b often a literal among a's values, so it does."""
        rng = self.rng
        a = self.expr(family, scope, depth - 1)
        other = rng.choice(NUMERIC) if family in NUMERIC and rng.random() < 0.3 else family
        b = self.literal(other, a.values, null=0.0) if rng.random() < 0.6 else self.expr(other, scope, depth - 1)
        return replace(a, sql=f"nullif({a.sql}, {b.sql})", values=())

    def _nvl(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        """``nvl(a, b)`` or ``ifnull(a, b)``: a COALESCE of two."""
        parts = [self.expr(family, scope, depth - 1) for _ in range(2)]
        name = self.rng.choice(("nvl", "ifnull"))
        return _merged(f"{name}({parts[0].sql}, {parts[1].sql})", family, parts)

    def _compare(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        rng = self.rng
        kind = self._family(scope, (*NUMERIC, "string", "string", "boolean", *TEMPORAL))
        kind = "numeric" if kind in NUMERIC else kind
        left = self._family(scope, NUMERIC) if kind == "numeric" else kind
        right = (left if rng.random() < 0.6 else rng.choice(NUMERIC)) if kind == "numeric" else kind
        if kind in TEMPORAL and rng.random() < 0.2:
            right = rng.choice(TEMPORAL)  # a DATE beside a TIMESTAMP is read as its midnight
        a = self.expr(left, scope, depth - 1)
        b = self.literal(right, a.values) if rng.random() < 0.5 else self.expr(right, scope, depth - 1)
        return GeneratedExpr(f"({a.sql} {rng.choice(COMPARISONS)} {b.sql})", "boolean")

    def _null_test(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        a = self.expr(self._family(scope), scope, depth - 1)
        return GeneratedExpr(f"({a.sql} IS {'NOT ' if self.rng.random() < 0.5 else ''}NULL)", "boolean")

    def _in_list(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        a = self.expr(self._family(scope), scope, depth - 1)
        items = [self.literal(a.family, a.values, null=0.0).sql for _ in range(self.rng.randint(1, 4))]
        if self.rng.random() < 0.2:
            items.insert(self.rng.randrange(len(items) + 1), "NULL")
        negated = "NOT " if self.rng.random() < 0.35 else ""
        return GeneratedExpr(f"({a.sql} {negated}IN ({', '.join(items)}))", "boolean")

    def _between(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        kind = self._family(scope, (*NUMERIC, "string", *TEMPORAL))
        a = self.expr(kind, scope, depth - 1)
        low, high = (self.literal(kind, a.values, null=0.02) for _ in range(2))
        negated = "NOT " if self.rng.random() < 0.3 else ""
        return GeneratedExpr(f"({a.sql} {negated}BETWEEN {low.sql} AND {high.sql})", "boolean")

    def _like(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        a = self.expr("string", scope, depth - 1)
        pattern = self.rng.choice(LIKE_PATTERNS + tuple(value + "%" for value in a.values if _literal_ok(value,
                                                                                                          "string")))
        negated = "NOT " if self.rng.random() < 0.3 else ""
        return GeneratedExpr(f"({a.sql} {negated}LIKE {literal(pattern, 'string').sql})", "boolean")

    def _and_or(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        a, b = self.predicate(scope, depth - 1), self.predicate(scope, depth - 1)
        return GeneratedExpr(f"({a.sql} {self.rng.choice(('AND', 'OR'))} {b.sql})", "boolean")

    def _not(self, family: str, scope: ExprScope, depth: int, bare: bool) -> GeneratedExpr:
        return GeneratedExpr(f"(NOT {self.predicate(scope, depth - 1).sql})", "boolean")

    # Queries meant to raise, and recursive ones.

    def error_query(self) -> Made | None:
        """A query over one table whose output (or an aggregate's argument) may fail for the data: a zero
        divisor, an integer overflow, a string or a NaN that does not cast, ``split_part``'s index 0, a group a
        pattern lacks, the floor of an infinity. Spark evaluates it for every row
        the WHERE keeps, so it must raise exactly when ``final/`` does."""
        source = self.base()
        if self.rng.random() < 0.08:
            return Made(f"SELECT {self.two_rows(source)} AS c0 FROM {source.sql}")
        plain = ExprScope(source.columns)
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
            items.append(self.expr(self.rng.choice(TYPE_FAMILIES), plain, 1))
        listed = ", ".join(f"{item.sql} AS c{position}" for position, item in enumerate(items))
        return Made(f"SELECT {listed} FROM {source.sql}{where}{group}")

    def two_rows(self, source: Source) -> str:
        """``(SELECT x.c FROM t AS x WHERE x.k = v)`` over ``source``'s own table: an uncorrelated scalar subquery
        that fails the query (``SCALAR_SUBQUERY_TOO_MANY_ROWS``) when two rows have the key. The outer query then
        has rows too (the same table, no WHERE), so Spark runs the subquery: over rows its optimizer knows are none
        (an empty table, a WHERE it folds to false) it drops the subquery unrun, where ``final/``'s join of it
        still runs it."""
        table = source.sql.split()[0]
        alias = self._alias("x")
        facts = self.facts[table]
        column, key = self.rng.choice(facts), facts[0]
        where = f" WHERE {alias}.{key.sql} = {self.literal(key.family, key.values, null=0.0).sql}"
        return f"(SELECT {alias}.{column.sql} FROM {table} AS {alias}{where})"

    def failing(self, scope: ExprScope) -> GeneratedExpr | None:
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
        strings = [column for column in columns if column.family == "string"]
        ints = [column for column in columns if column.family == "int"]
        if strings and ints:
            options.append("part_zero")
        if strings:
            options.append("no_group")
        if any(column.family == "double" and not column.finite for column in columns):
            options.append("floor_infinity")
        if not options:
            return None
        option = rng.choice(options)
        if option == "divide":
            a, b = rng.choice(numeric), rng.choice(numeric)
            operator = rng.choice(("/", "%", "div") if {a.family, b.family} <= {"int", "bigint"} else ("/", "%"))
            family = "double" if operator == "/" else "bigint"
            return GeneratedExpr(f"({a.sql} {operator} {b.sql})", family)
        if option == "overflow":
            a = rng.choice(integral)
            # Half the column's range overflows: |a| > bound / 2 times the factor leaves the type.
            factor = LIMITS[a.family] // max(1, int(a.bound) // 2)
            if a.family == "int":
                factor = min(factor, 2**31 - 1)
            return GeneratedExpr(f"({a.sql} * {factor})", a.family)
        if option == "sum_overflow":
            a = rng.choice(positive)
            # Each row's product fits a BIGINT, two of the largest do not: positive, so in any order of adding.
            factor = (2**63 - 1) // max(1, int(a.bound))
            return GeneratedExpr(f"SUM(CAST({a.sql} AS BIGINT) * {factor})", "bigint")
        if option == "parse":
            a = rng.choice([column for column in columns if column.family == "string"])
            target = rng.choice(("INT", "BIGINT", "DOUBLE", "DECIMAL(6,2)", "BOOLEAN", "DATE", "TIMESTAMP"))
            return GeneratedExpr(f"CAST({a.sql} AS {target})", family_of(target))
        if option == "part_zero":
            # An index that is 0 for some row: the column itself if it holds 0, else less one of its values.
            a, index = rng.choice(strings), rng.choice(ints)
            shift = rng.choice([value for value in index.values if value] or [1])
            position = index.sql if 0 in index.values or not index.values else \
                f"({index.sql} - {_parenthesized(str(shift))})"
            delimiter = literal(rng.choice(FRAGMENTS), "string")
            return GeneratedExpr(f"split_part({a.sql}, {delimiter.sql}, {position})", "string")
        if option == "no_group":
            # A group the pattern lacks: Spark fails at the first row the pattern matches.
            a = rng.choice(strings)
            pattern, groups = rng.choice(REGEX_PATTERNS)
            if rng.random() < 0.5:
                return GeneratedExpr(f"regexp_extract({a.sql}, {_regex_literal(pattern)}, {groups + 1})", "string")
            return GeneratedExpr(f"regexp_replace({a.sql}, {_regex_literal(pattern)}, '${groups + 1}')", "string")
        if option == "floor_infinity":
            a = rng.choice([column for column in columns if column.family == "double" and not column.finite])
            return GeneratedExpr(f"{rng.choice(('floor', 'ceil'))}({a.sql})", "bigint")
        if option == "double_cast":
            a = rng.choice([column for column in columns if column.family == "double"])
            target = rng.choice(("INT", "BIGINT", "DECIMAL(4,1)"))
            return GeneratedExpr(f"CAST({a.sql} AS {target})", family_of(target))
        a = rng.choice([column for column in columns if column.family in ("decimal", "bigint")])
        target = "INT" if a.family == "bigint" else f"DECIMAL({max(1, _digits(a.bound) - 1) + 1},1)"
        return GeneratedExpr(f"CAST({a.sql} AS {target})", family_of(target))

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

    def _family(self, scope: ExprScope, among: Sequence[str] = TYPE_FAMILIES) -> str:
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
    def _named(columns: Sequence[GeneratedExpr], alias: str) -> tuple[GeneratedExpr, ...]:
        return tuple(replace(column, sql=f"{alias}.{column.sql}") for column in columns)


def column_facts(dataset: Dataset, table: Table) -> tuple[GeneratedExpr, ...]:
    """Each column of ``table`` as the generator sees it, from every value it holds at any version."""
    facts = []
    for position, (name, kind) in enumerate(table.columns):
        values = {row[position] for commit in dataset.commits
                  for row in commit.rows[dataset.tables.index(table)]} - {None}
        family = family_of(kind)
        finite = [abs(float(value)) for value in values
                  if family in NUMERIC and math.isfinite(float(value))]
        facts.append(GeneratedExpr(name, family, max(finite, default=0.0),
                          all(math.isfinite(float(value)) for value in values) if family == "double" else True,
                          values=tuple(sorted(values, key=repr))))
    return tuple(facts)


def literal(value: Any, family: str) -> GeneratedExpr:
    """``value`` as a SQL literal of ``family`` (negative numbers in parentheses, so ``- -`` never reads
    as a comment)."""
    if family == "boolean":
        return GeneratedExpr("TRUE" if value else "FALSE", family)
    if family == "string":
        return GeneratedExpr(f"'{value}'", family, values=(value,))
    if family in TEMPORAL:
        return GeneratedExpr(f"{SQL_NAMES[family]} '{_temporal_text(value)}'", family, values=(value,))
    if family == "double":
        value = float(value)
        if math.isnan(value):
            return GeneratedExpr("CAST('NaN' AS DOUBLE)", family, finite=False)
        if math.isinf(value):
            return GeneratedExpr(f"CAST('{'-' if value < 0 else ''}Infinity' AS DOUBLE)", family, finite=False)
        text = repr(abs(value))
        text = text if "e" in text else text + "E0"
        return GeneratedExpr(f"(-{text})" if math.copysign(1.0, value) < 0 else text, family, abs(value))
    if family == "decimal":
        text = format(abs(value), "f")
        if "." not in text:
            text = f"CAST({text} AS DECIMAL({len(text)},0))"
        return GeneratedExpr(f"(-{text})" if value < 0 else text, family, float(abs(value)))
    if family == "bigint" and abs(value) <= 2**31 - 1:
        return GeneratedExpr(f"CAST({value} AS BIGINT)", family, abs(value))
    return GeneratedExpr(f"({value})" if value < 0 else str(value), family, abs(value))


def _literal_ok(value: Any, family: str) -> bool:
    """Whether ``value`` can be written as a literal of ``family`` (a string without quotes or backslashes)."""
    if family == "string":
        return isinstance(value, str) and "'" not in value and "\\" not in value
    if family == "boolean":
        return isinstance(value, bool)
    if family == "date":
        return isinstance(value, date) and not isinstance(value, datetime)
    if family == "timestamp":
        return isinstance(value, datetime)
    if family in ("int", "bigint"):
        return isinstance(value, int) and not isinstance(value, bool) and \
            abs(value) <= (2**31 - 1 if family == "int" else 2**62)
    if family == "decimal":
        return isinstance(value, Decimal)
    return isinstance(value, float)


def _temporal_text(value: date) -> str:
    """A DATE's or TIMESTAMP's text as Spark reads it: ``2024-01-31``, ``2024-01-31 23:59:59.999999``."""
    return value.isoformat(sep=" ") if isinstance(value, datetime) else value.isoformat()


def _parenthesized(text: str) -> str:
    return f"({text})" if text.startswith("-") else text


def _regex_literal(text: str) -> str:
    """A Java pattern or replacement as a SQL string literal: Spark reads ``\\\\`` in one as a backslash."""
    return "'" + text.replace("\\", "\\\\") + "'"


def _within_bmp(expr: GeneratedExpr) -> bool:
    """Whether ``expr`` is a column or a literal known to hold only strings of characters within the BMP."""
    return bool(expr.values) and all(isinstance(value, str) and all(ord(character) <= 0xFFFF for character in value)
                                     for value in expr.values)


def _bounded(expr: GeneratedExpr) -> GeneratedExpr | None:
    """``expr``, or None if its bound leaves what its family may reach."""
    return expr if expr.bound <= LIMITS.get(expr.family, math.inf) else None


def _combined(sql: str, family: str, bound: float, *parts: GeneratedExpr) -> GeneratedExpr:
    return GeneratedExpr(sql, family, bound, all(part.finite for part in parts), all(part.exact for part in parts))


def _merged(sql: str, family: str, parts: Sequence[GeneratedExpr]) -> GeneratedExpr:
    """A CASE or COALESCE of ``parts``: its bound the largest of theirs."""
    return _combined(sql, family, max((part.bound for part in parts), default=0.0), *parts)


def _widened(a: GeneratedExpr, b: GeneratedExpr) -> GeneratedExpr:
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


QUERIES_PER_DATASET = 10
"""Queries made over one data set: Spark's DataFrames of its versions are made once for all of them."""


@dataclass(frozen=True)
class FuzzCase:
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


def generate_case(seed: int, index: int) -> FuzzCase:
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
    return FuzzCase(dataset, made.text, made.oracles, made.types, origin=f"seed {seed}, query {index}")


def _dataset(seed: int, number: int) -> Dataset:
    rng = random.Random(f"fuzz data {seed} {number}")
    return make_graph(rng) if rng.random() < 0.1 else make_dataset(rng)


def generate(seed: int, count: int) -> list[FuzzCase]:
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
    "DATE literal": r"\bDATE '", "TIMESTAMP literal": r"\bTIMESTAMP '", "CAST to DATE": r"AS DATE\)",
    "CAST to TIMESTAMP": r"AS TIMESTAMP\)", "INTERVAL days": r"INTERVAL '?\d+'? DAYS?\b",
    "INTERVAL months": r"INTERVAL '?\d+'? (MONTH|YEAR)S?\b", "INTERVAL hours": r"INTERVAL '?\d+'? (HOUR|MINUTE|SECOND)",
    "YEAR TO MONTH": r"YEAR TO MONTH", "DAY TO SECOND": r"DAY TO SECOND", "date_add": r"\bdate_add\(",
    "date_sub": r"\bdate_sub\(", "add_months": r"\badd_months\(", "datediff": r"\bdatediff\(",
    "last_day": r"\blast_day\(", "trunc": r"\btrunc\(", "date_trunc": r"\bdate_trunc\(",
    "EXTRACT": r"\bEXTRACT\(", "EXISTS": r"(?<!NOT )EXISTS \(", "NOT EXISTS": r"NOT EXISTS \(",
    "field functions": r"\b(year|quarter|month|day|dayofmonth|dayofweek|dayofyear|weekofyear)\(",
    "IN (subquery)": r"(?<!NOT) IN \(SELECT ", "NOT IN (subquery)": r" NOT IN \(SELECT ",
    "correlated subquery": r"\bx\d+\.\w+ (=|<|>=|<>) (?!x\d)[a-z]\w*\.\w+",
    "scalar subquery": r"[=<>(,] \(SELECT (?!.* IN \(SELECT)", "ORDER BY": r"\bORDER BY\b", "LIMIT": r"\bLIMIT \d",
    "OFFSET": r"\bOFFSET \d", "ORDER BY position": r"ORDER BY (.*, )?\d", "NULLS LAST": r"NULLS LAST",
    "ROW_NUMBER": r"\bROW_NUMBER\(\) OVER", "RANK": r"\bRANK\(\) OVER", "DENSE_RANK": r"\bDENSE_RANK\(\) OVER",
    "LAG": r"\bLAG\(", "LEAD": r"\bLEAD\(", "FIRST_VALUE": r"\bFIRST_VALUE\(", "LAST_VALUE": r"\bLAST_VALUE\(",
    "aggregate OVER": r"\b(COUNT|SUM|AVG|MIN|MAX)\([^()]*(\([^()]*\))?[^()]*\) OVER", "ROWS frame": r"\bROWS BETWEEN",
    "RANGE frame": r"\bRANGE BETWEEN", "PARTITION BY": r"\bPARTITION BY\b", "QUALIFY": r"\bQUALIFY\b",
    "top rows per group": r"\.rn (=|<=|<) \d",
    "trim": r"\btrim\((?!(BOTH|LEADING|TRAILING)?[^()]* FROM )", "ltrim": r"\bltrim\(", "rtrim": r"\brtrim\(",
    "trim FROM": r"\btrim\((BOTH |LEADING |TRAILING )?'",
    "trim BOTH|LEADING|TRAILING": r"\btrim\((BOTH|LEADING|TRAILING) ", "replace": r"\breplace\(", "instr": r"\binstr\(",
    "position": r"\bposition\(", "locate": r"\blocate\(", "lpad": r"\blpad\(", "rpad": r"\brpad\(",
    "split_part": r"\bsplit_part\(", "RLIKE": r" RLIKE ", "REGEXP": r" REGEXP ", "regexp_like": r"\bregexp_like\(",
    "regexp_extract": r"\bregexp_extract\(", "regexp_replace": r"\bregexp_replace\(",
    "regexp_replace $n": r"\bregexp_replace\(.*, '[^']*\$[1-9]", "round": r"\bround\(", "bround": r"\bbround\(",
    "floor": r"\bfloor\(", "ceil": r"\bceil(ing)?\(", "greatest": r"\bgreatest\(", "least": r"\bleast\(",
    "nullif": r"\bnullif\(", "nvl": r"\bnvl\(", "ifnull": r"\bifnull\(", "count_if": r"\bcount_if\(",
    "bool_and": r"\b(bool_and|every)\(", "bool_or": r"\b(bool_or|some|any)\(", "stddev": r"\b(stddev|std)\(",
    "stddev_samp": r"\bstddev_samp\(", "stddev_pop": r"\bstddev_pop\(", "variance": r"\bvariance\(",
    "var_samp": r"\bvar_samp\(", "var_pop": r"\bvar_pop\(", "any_value": r"\bany_value\(",
}
"""Each construct of the subset and a pattern that finds it in a generated query: ``coverage`` counts them."""


def coverage(cases: Sequence[FuzzCase]) -> dict[str, int]:
    """How many of ``cases`` use each construct of ``CONSTRUCTS``."""
    return {name: sum(1 for case in cases if re.search(pattern, case.text)) for name, pattern in CONSTRUCTS.items()}

