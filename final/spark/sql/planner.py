"""A query's plan: sqlglot's syntax tree, checked and typed, as a tree of relational steps that build ``final/``
dataflows.

Each ``Plan`` node has the fields of the rows it produces (``Field``: name,
qualifier, Spark type), the clause of the query it comes from, and
``build(env)``, which adds its operators to a graph through ``final/``'s
public stream API and returns the stream of its rows (tuples, one value per
field). ``Planner`` makes the tree: FROM and its joins, WHERE, GROUP BY and
HAVING, the SELECT list, DISTINCT, set operations, subqueries, WITH and
WITH RECURSIVE. Everything outside the subset is refused here, before a
graph exists, with the construct's line and column.

The steps and the documents they come from:

- ``Join``: an equi-join on the ON clause's equalities (003's ``join``);
  LEFT, RIGHT and FULL joins add the rows that found no match, padded with
  NULLs: by key (``left_join``, 003's three terms) when ON has only
  equalities, by row (an ``antijoin`` with the rows that matched) when a
  residual predicate decides matches too;
- ``Aggregate``: one ``aggregate`` per GROUP BY (004: counts and sums in
  place, MIN and MAX in a per-key hierarchy); a global aggregate adds its
  one row over an empty input from a ``constant``;
- ``SetOperation``: UNION ALL is ``concat``; the rest are ``distinct``,
  ``antijoin``, ``semijoin`` and ``threshold`` on whole rows;
- ``Recursive``: WITH RECURSIVE as ``iterate`` to a fixed point (002's
  loops), the UNION form made ``distinct`` in every round.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

from sqlglot import exp

from ..sqlfloat import NAN
from .errors import SqlError, SqlRuntimeError, refuse
from .expressions import (
    Expr,
    Expressions,
    Field,
    comparable,
    construct,
    converted,
    field_at,
    logic,
)
from .types import (
    BIGINT,
    DOUBLE,
    NULL,
    SqlType,
    bounded,
    checked_decimal,
    checked_integral,
    decimal_quotient,
    decimal_result,
    wider,
)

LABEL_WIDTH = 48
"""Longest clause text an operator's label carries (diagrams stay readable)."""


def clause_text(node: exp.Expression | None, prefix: str = "") -> str:
    """``node`` as Spark SQL text, shortened for a label."""
    text = prefix + (node.sql(dialect="spark", comments=False) if node is not None else "")
    return text if len(text) <= LABEL_WIDTH else text[: LABEL_WIDTH - 1] + "…"


@dataclass
class Env:
    """What a build reads: each table's input stream, the streams of recursive CTEs in scope, and the streams
    already built (a CTE read twice is built once; a loop's body keeps its own, on top of its parent's)."""

    tables: Mapping[str, Any]
    builder: Any
    recursive: dict[str, Any] = field(default_factory=dict)
    built: dict[int, Any] = field(default_factory=dict)
    parent: Env | None = None

    def inner(self, name: str, stream: Any) -> Env:
        """The environment of a loop body where ``name`` is the loop's variable."""
        return Env(self.tables, self.builder, {**self.recursive, name: stream}, {}, self)

    def find(self, plan: Plan) -> Any:
        env = self
        while env is not None:
            if id(plan) in env.built:
                return env.built[id(plan)]
            env = env.parent
        return None


class Plan:
    """A step of a query's plan: ``fields`` of its rows, the ``clause`` it comes from, its ``inputs`` (plans)."""

    fields: list[Field]
    clause: str
    inputs: list[Plan]
    step = "plan"

    def build(self, env: Env) -> Any:
        """This step's stream in ``env``'s graph, built once per environment; its operators carry its clause."""
        found = env.find(self)
        if found is not None:
            return found
        with env.builder.labelled(self.clause):
            stream = self._build(env)
        env.built[id(self)] = stream
        return stream

    def _build(self, env: Env) -> Any:
        raise NotImplementedError

    def describe(self) -> str:
        return self.step

    def explain(self, depth: int = 0) -> list[str]:
        """The plan as indented lines: each step, what it does in ``final/``, and its clause."""
        names = ", ".join(f"{f.name} {f.type}" for f in self.fields)
        line = f"{'  ' * depth}{self.describe()}  [{self.clause}]  -> ({names})"
        return [line, *(text for plan in self.inputs for text in plan.explain(depth + 1))]


class Scan(Plan):
    step = "scan"

    def __init__(self, table: str, fields: list[Field], clause: str) -> None:
        self.table, self.fields, self.clause, self.inputs = table, fields, clause, []

    def _build(self, env: Env) -> Any:
        return env.tables[self.table]

    def describe(self) -> str:
        return f"scan {self.table} (an input session)"


class Rename(Plan):
    """The same rows under new qualifiers (a table alias, a subquery's name): no operator."""

    step = "alias"

    def __init__(self, child: Plan, fields: list[Field], clause: str) -> None:
        self.child, self.fields, self.clause, self.inputs = child, fields, clause, [child]

    def build(self, env: Env) -> Any:
        return self.child.build(env)

    def explain(self, depth: int = 0) -> list[str]:
        return self.child.explain(depth)


class One(Plan):
    """One empty row that never changes: the FROM of a SELECT without one."""

    step = "constant"

    def __init__(self) -> None:
        self.fields, self.clause, self.inputs = [], "(no FROM)", []

    def _build(self, env: Env) -> Any:
        return env.builder.constant([()])

    def describe(self) -> str:
        return "constant one row (GraphBuilder.constant)"


class Project(Plan):
    """Each row mapped to the values of ``exprs``: ``map``."""

    step = "map"

    def __init__(self, child: Plan, exprs: list[Expr], fields: list[Field], clause: str) -> None:
        self.child, self.exprs, self.fields, self.clause, self.inputs = child, exprs, fields, clause, [child]

    def _build(self, env: Env) -> Any:
        positions = [expr.position for expr in self.exprs]
        if positions == list(range(len(self.child.fields))):
            return self.child.build(env)  # every column, in order: nothing to compute
        compute = row_function([expr.fn for expr in self.exprs], positions)
        if isinstance(compute, operator.itemgetter):
            return self.child.build(env).map(compute)  # picking columns cannot fail
        return self.child.build(env).map(naming_row(compute))

    def describe(self) -> str:
        return "map (compute the columns)"


def row_function(fns: Sequence[Callable[[tuple], Any]], positions: Sequence[int | None] = ()) -> Callable:
    """A function from a row to the tuple of ``fns``' values; an ``itemgetter`` when each picks a column."""
    if len(positions) > 1 and None not in positions:
        return operator.itemgetter(*positions)
    if len(fns) == 1:
        (only,) = fns
        return lambda row: (only(row),)
    return lambda row: tuple([fn(row) for fn in fns])


class Filter(Plan):
    """The rows whose condition is true (not false, not NULL): ``filter``."""

    step = "filter"

    def __init__(self, child: Plan, condition: Expr, clause: str) -> None:
        self.child, self.condition, self.fields = child, condition, child.fields
        self.clause, self.inputs = clause, [child]

    def _build(self, env: Env) -> Any:
        condition = naming_row(self.condition.fn)
        return self.child.build(env).filter(lambda row: condition(row) is True)

    def describe(self) -> str:
        return "filter (three-valued: NULL drops the row)"


class Distinct(Plan):
    step = "distinct"

    def __init__(self, child: Plan, clause: str) -> None:
        self.child, self.fields, self.clause, self.inputs = child, child.fields, clause, [child]

    def _build(self, env: Env) -> Any:
        return distinct_rows(self.child.build(env))

    def describe(self) -> str:
        return "distinct (each row once)"


def naming_row(fn: Callable[[tuple], Any]) -> Callable[[tuple], Any]:
    """``fn``, with the row it was given named in any ``SqlRuntimeError`` it raises (Spark names the row too)."""

    def named(row: tuple) -> Any:
        try:
            return fn(row)
        except SqlRuntimeError as error:
            raise SqlRuntimeError(f"{error} (in the row {row!r})") from None

    return named


def distinct_rows(stream: Any) -> Any:
    return stream.map(lambda row: (row, ())).distinct().map(operator.itemgetter(0))


@dataclass(frozen=True)
class JoinKey:
    """One equality of an ON clause: a function of the left row, one of the right row, and whether it is ``<=>``."""

    left: Callable[[tuple], Any]
    right: Callable[[tuple], Any]
    null_safe: bool


class Join(Plan):
    """``left kind JOIN right ON keys AND residual`` (``kind``: INNER, LEFT, RIGHT or FULL)."""

    step = "join"

    def __init__(self, left: Plan, right: Plan, kind: str, keys: list[JoinKey], residual: Expr | None,
                 clause: str) -> None:
        self.left, self.right, self.kind, self.keys, self.residual = left, right, kind, keys, residual
        self.fields, self.clause, self.inputs = [*left.fields, *right.fields], clause, [left, right]

    def describe(self) -> str:
        how = {"INNER": "join", "LEFT": "left join", "RIGHT": "right join", "FULL": "full outer join"}[self.kind]
        if self.kind != "INNER":
            how += " (003: matches, then the unmatched rows padded with NULLs, " + (
                "by row: the ON clause has a residual predicate)" if self.residual else "by key)")
        keys = f"{len(self.keys)} key{'s' if len(self.keys) != 1 else ''}" if self.keys else "no keys: every pair"
        return f"{how} on {keys}"

    def _key_functions(self) -> tuple[Callable, Callable]:
        """Each side's key: one value, or a tuple; ``None`` when an ``=`` part is NULL (such a row matches
        nothing; a ``<=>`` part keeps NULL as a value)."""
        keys = self.keys
        if not keys:
            return (lambda row: ()), (lambda row: ())

        def side(fns: list[Callable], safe: list[bool]) -> Callable:
            if len(fns) == 1:
                (fn,), (null_safe,) = fns, safe
                return (lambda row: ((fn(row),))) if null_safe else fn
            strict = [not null_safe for null_safe in safe]

            def key(row: tuple) -> tuple | None:
                values = tuple([fn(row) for fn in fns])
                for value, must in zip(values, strict, strict=True):
                    if value is None and must:
                        return None
                return values

            return key

        safe = [key.null_safe for key in keys]
        return side([key.left for key in keys], safe), side([key.right for key in keys], safe)

    def _build(self, env: Env) -> Any:
        left, right = self.left.build(env), self.right.build(env)
        left_key, right_key = self._key_functions()
        keyed_left = left.map(lambda row: (left_key(row), row))
        keyed_right = right.map(lambda row: (right_key(row), row))
        width_left, width_right = len(self.left.fields), len(self.right.fields)
        left_nulls, right_nulls = (None,) * width_left, (None,) * width_right
        if self.residual is None and self.kind != "INNER":
            return self._outer_by_key(keyed_left, keyed_right, left_nulls, right_nulls)
        present = operator.itemgetter(0)
        matched = keyed_left.filter(lambda pair: pair[0] is not None).join(
            keyed_right.filter(lambda pair: pair[0] is not None)).map(lambda pair: pair[1][0] + pair[1][1])
        if self.residual is not None:
            condition = naming_row(self.residual.fn)
            matched = matched.filter(lambda row: condition(row) is True)
        result = matched
        if self.kind in ("LEFT", "FULL"):
            hit = distinct_rows(matched.map(lambda row: row[:width_left]))
            missing = left.map(lambda row: (row, ())).antijoin(hit).map(present)
            result = result.concat(missing.map(lambda row: row + right_nulls))
        if self.kind in ("RIGHT", "FULL"):
            hit = distinct_rows(matched.map(lambda row: row[width_left:]))
            missing = right.map(lambda row: (row, ())).antijoin(hit).map(present)
            result = result.concat(missing.map(lambda row: left_nulls + row))
        return result

    def _outer_by_key(self, keyed_left: Any, keyed_right: Any, left_nulls: tuple, right_nulls: tuple) -> Any:
        """LEFT, RIGHT or FULL with only equalities in ON: final/'s ``left_join`` (and its mirror)."""
        if self.kind == "RIGHT":
            mirrored = keyed_right.left_join(keyed_left)
            return mirrored.map(lambda pair: (pair[1][1] or left_nulls) + pair[1][0])
        joined = keyed_left.left_join(keyed_right).map(lambda pair: pair[1][0] + (pair[1][1] or right_nulls))
        if self.kind == "LEFT":
            return joined
        only_right = keyed_right.left_join(keyed_left).filter(lambda pair: pair[1][1] is None)
        return joined.concat(only_right.map(lambda pair: left_nulls + pair[1][0]))


class MultiJoin(Plan):
    """Three or more tables joined by inner equi-joins, as one delta join (003): ``join_many`` keeps an
    arrangement of each input by each key it is looked up by, and none of any intermediate result."""

    step = "delta join"

    def __init__(self, inputs: list[Plan], constraints: list[tuple[int, Callable, int, Callable]],
                 clause: str) -> None:
        self.constraints, self.inputs = constraints, inputs
        self.fields = [f for plan in inputs for f in plan.fields]
        self.clause = clause

    def describe(self) -> str:
        return (f"delta join of {len(self.inputs)} inputs on {len(self.constraints)} equalities "
                f"(003: join_many, no intermediate arrangement)")

    def _build(self, env: Env) -> Any:
        first, *others = [plan.build(env) for plan in self.inputs]
        return first.join_many(others, self.constraints).map(lambda rows: sum(rows, ()))


@dataclass(frozen=True)
class Aggregation:
    """One aggregate call: the parts ``final/``'s ``aggregate`` keeps (name, kind, value function), and
    ``finish(values)`` that makes the SQL value from them (``values``: part name -> value)."""

    parts: list[tuple[str, str, Callable[[tuple], Any]]]
    finish: Callable[[dict], Any]
    type: SqlType


class Aggregate(Plan):
    """GROUP BY ``keys`` with ``aggregations``: rows ``(*keys, *aggregates)``, one per group with rows.

    Without GROUP BY (``whole``), the one group exists even over an empty
    input, as SQL has it: COUNT is 0 there and every other aggregate NULL.
    """

    step = "aggregate"

    def __init__(self, child: Plan, keys: list[Expr], aggregations: list[Aggregation], fields: list[Field],
                 whole: bool, clause: str) -> None:
        self.child, self.keys, self.aggregations, self.whole = child, keys, aggregations, whole
        self.fields, self.clause, self.inputs = fields, clause, [child]

    def describe(self) -> str:
        kinds = sorted({kind for aggregation in self.aggregations for _, kind, _ in aggregation.parts})
        how = "004: counts and sums in place" + (", MIN/MAX in a per-key hierarchy" if {"min", "max"} & set(kinds)
                                                else "")
        return f"aggregate {', '.join(kinds) or 'groups'} ({how})" + (" + the empty input's row" if self.whole else "")

    def _build(self, env: Env) -> Any:
        rows = self.child.build(env)
        key_fns = [key.fn for key in self.keys]
        if not key_fns:
            key = _none
        elif len(key_fns) == 1:
            key = key_fns[0]
        else:
            key = lambda row: tuple([fn(row) for fn in key_fns])  # noqa: E731 - one expression, named by its role
        named = {name: (kind, fn) for aggregation in self.aggregations for name, kind, fn in aggregation.parts}
        if not named:
            named = {"rows": ("count", _one)}
        finishes = [aggregation.finish for aggregation in self.aggregations]
        width = len(key_fns)

        def row(pair: tuple) -> tuple:
            values = dict(pair[1])
            keys = (pair[0],) if width == 1 else (pair[0] if width else ())
            try:
                return (*keys, *[finish(values) for finish in finishes])
            except SqlRuntimeError as error:
                raise SqlRuntimeError(f"{error} (in the group {keys!r})") from None

        grouped = rows.aggregate(key, named).map(row)
        if not self.whole:
            return grouped
        empty = {name: 0 if kind in ("count", "count_distinct") else None for name, (kind, _) in named.items()}
        default = tuple(finish(empty) for finish in finishes)
        present = grouped.map(lambda found: ((), ())).distinct().map(operator.itemgetter(0))
        absent = env.builder.constant([((), ())]).antijoin(present)
        return grouped.concat(absent.map(lambda pair: default))


def _none(row: tuple) -> None:
    return None


def _one(row: tuple) -> int:
    return 1


class SetOperation(Plan):
    """UNION [ALL], EXCEPT [ALL] or INTERSECT [ALL] of two queries with the same number of columns."""

    step = "set"

    def __init__(self, kind: str, keep_all: bool, left: Plan, right: Plan, fields: list[Field], clause: str) -> None:
        self.kind, self.keep_all, self.left, self.right = kind, keep_all, left, right
        self.fields, self.clause, self.inputs = fields, clause, [left, right]

    def describe(self) -> str:
        how = {
            ("UNION", True): "concat", ("UNION", False): "concat, then distinct",
            ("EXCEPT", False): "distinct rows, antijoin the other side's",
            ("EXCEPT", True): "each row max(0, m - n) times: concat with the negated other side, then threshold",
            ("INTERSECT", False): "distinct rows, semijoin the other side's",
            ("INTERSECT", True): "each row min(m, n) times: this side minus EXCEPT ALL",
        }[(self.kind, self.keep_all)]
        return f"{self.kind}{' ALL' if self.keep_all else ''} ({how})"

    def _build(self, env: Env) -> Any:
        left, right = self.left.build(env), self.right.build(env)
        present = operator.itemgetter(0)
        if self.kind == "UNION":
            both = left.concat(right)
            return both if self.keep_all else distinct_rows(both)
        if not self.keep_all:
            keys = distinct_rows(right)
            rows = distinct_rows(left).map(lambda row: (row, ()))
            kept = rows.antijoin(keys) if self.kind == "EXCEPT" else rows.semijoin(keys)
            return kept.map(present)
        surplus = left.concat(right.negate()).threshold(lambda multiplicity: max(multiplicity, 0))
        return surplus if self.kind == "EXCEPT" else left.concat(surplus.negate())


class RecursiveReference(Plan):
    """The recursive CTE read inside its own recursive term: the loop's variable."""

    step = "loop variable"

    def __init__(self, name: str, fields: list[Field], clause: str) -> None:
        self.name, self.fields, self.clause, self.inputs = name, fields, clause, []

    def build(self, env: Env) -> Any:
        return env.recursive[self.name]

    def describe(self) -> str:
        return f"{self.name} as of the previous round (the loop's variable)"


class Recursive(Plan):
    """WITH RECURSIVE ``name`` AS (base UNION [ALL] step): ``iterate`` to a fixed point.

    Each round is the base rows and ``step`` over the previous round: with
    UNION, made distinct, which is the least fixed point SQL defines; with
    UNION ALL, every derivation counts, which ends when the data has no
    cycle, as SQL's does.
    """

    step = "iterate"

    def __init__(self, name: str, base: Plan, step: Plan, keep_all: bool, fields: list[Field], clause: str) -> None:
        self.name, self.base, self.recursive_step, self.keep_all = name, base, step, keep_all
        self.fields, self.clause, self.inputs = fields, clause, [base, step]

    def describe(self) -> str:
        union = "UNION ALL" if self.keep_all else "UNION: distinct each round"
        return f"iterate {self.name} to a fixed point (002's loop; {union})"

    def _build(self, env: Env) -> Any:
        base = self.base.build(env)

        def round_(previous: Any) -> Any:
            following = self.recursive_step.build(env.inner(self.name, previous))
            combined = base.concat(following)
            return combined if self.keep_all else distinct_rows(combined)

        return (base if self.keep_all else distinct_rows(base)).iterate(round_)


# Aggregates -------------------------------------------------------------------------------------------------------


def aggregation(node: exp.AggFunc, argument: Expr | None, distinct: bool, text: str) -> Aggregation:
    """The ``Aggregation`` for COUNT, SUM, AVG, MIN or MAX over ``argument`` (None for ``COUNT(*)``), whose SQL is
    ``text``. Parts are named by what they keep (``count:fare_amount``), so SUM, COUNT and AVG of one column in
    one query share them."""
    if isinstance(node, exp.Count):
        if argument is None:
            return _single("count:*", "count", _one, BIGINT)
        if distinct:
            return _single(f"count_distinct:{text}", "count_distinct", argument.fn, BIGINT)
        return _single(f"count:{text}", "count", argument.fn, BIGINT)
    if distinct:
        raise refuse(node, f"{node.sql_name()}(DISTINCT ...) is not in the subset; COUNT(DISTINCT ...) is")
    kind, fn = argument.type, argument.fn
    if isinstance(node, (exp.Min, exp.Max)):
        if kind == NULL:
            raise refuse(node, f"{node.sql_name()} of NULL has no type; CAST it")
        which = "min" if isinstance(node, exp.Min) else "max"
        return _single(f"{which}:{text}", which, fn, kind)
    if not kind.numeric:
        raise refuse(node, f"{node.sql_name()} needs numbers, not {kind}")
    if kind == DOUBLE:
        return _double_sum(text, fn, average=isinstance(node, exp.Avg))
    total, count = f"sum:{text}", f"count:{text}"
    if kind.integral:
        if isinstance(node, exp.Sum):
            return Aggregation([(total, "sum", fn)], lambda values: _checked_sum(values[total]), BIGINT)

        def integral_average(values: dict) -> Any:
            return float(values[total]) / values[count] if values[count] else None

        return Aggregation([(total, "sum", fn), (count, "count", fn)], integral_average, DOUBLE)
    sum_type = bounded(kind.precision + 10, kind.scale)
    if isinstance(node, exp.Sum):
        return Aggregation([(total, "sum", fn)],
                           lambda values: None if values[total] is None else checked_decimal(values[total], sum_type),
                           sum_type)
    average_type = bounded(kind.precision + 4, kind.scale + 4)
    quotient_type = decimal_result("/", sum_type, SqlType("decimal", 20, 0))

    def decimal_average(values: dict) -> Any:
        if not values[count]:
            return None
        exact = checked_decimal(values[total], sum_type)
        return checked_decimal(decimal_quotient(exact, Decimal(values[count]), quotient_type), average_type)

    return Aggregation([(total, "sum", fn), (count, "count", fn)], decimal_average, average_type)


def _single(name: str, kind: str, fn: Callable[[tuple], Any], result: SqlType) -> Aggregation:
    """An aggregate that is one part of ``final/``'s ``aggregate``, as it is."""
    return Aggregation([(name, kind, fn)], operator.itemgetter(name), result)


def _checked_sum(total: int | None) -> int | None:
    return None if total is None else checked_integral(total, BIGINT)


def _double_sum(text: str, fn: Callable[[tuple], Any], average: bool) -> Aggregation:
    """SUM or AVG of a DOUBLE: the finite values summed exactly (as fractions), NaN and the infinities counted,
    so retractions cancel exactly; the result rounded once. (Spark adds in row order, which may differ from this
    in the last bits.)"""

    def finite(row: tuple) -> Fraction | None:
        value = fn(row)
        return None if value is None or not math.isfinite(value) else Fraction(value)

    def flag(test: Callable[[float], bool]) -> Callable[[tuple], Any]:
        return lambda row: 1 if (value := fn(row)) is not None and test(value) else None

    total, count, nan, up, down = (f"{part}:{text}" for part in ("finite_sum", "count", "nan", "up", "down"))
    # math.isnan, not v != v: Spark's one NaN (sqlfloat.NAN) equals itself.
    parts = [(total, "sum", finite), (count, "count", fn), (nan, "count", flag(math.isnan)),
             (up, "count", flag(lambda v: v == _INFINITIES[0])), (down, "count", flag(lambda v: v == _INFINITIES[1]))]

    def finish(values: dict) -> Any:
        rows = values[count]
        if not rows:
            return None
        if values[nan] or (values[up] and values[down]):
            return NAN
        if values[up] or values[down]:
            return _INFINITIES[0] if values[up] else _INFINITIES[1]
        exact = values[total] or 0
        return float(Fraction(exact) / rows) if average else float(exact)

    return Aggregation(parts, finish, DOUBLE)


_INFINITIES = (float("inf"), float("-inf"))


# The planner ------------------------------------------------------------------------------------------------------

UNSUPPORTED_CLAUSES = {
    "order": "ORDER BY (a result kept up to date is a multiset; sort it where you read it)",
    "limit": "LIMIT", "offset": "OFFSET", "qualify": "QUALIFY", "windows": "WINDOW", "laterals": "LATERAL VIEW",
    "pivots": "PIVOT", "cluster": "CLUSTER BY", "distribute": "DISTRIBUTE BY", "sort": "SORT BY",
    "into": "INTO", "prewhere": "PREWHERE", "connect": "CONNECT BY", "match": "MATCH_RECOGNIZE",
}


@dataclass
class Cte:
    """A CTE in scope: its plan, or, inside its own recursive term, the loop variable's fields."""

    plan: Plan


class Planner:
    """Plans one query over ``tables`` (name -> fields); ``read`` collects the tables the query reads, in order."""

    def __init__(self, tables: Mapping[str, list[Field]]) -> None:
        self.tables = {name.lower(): (name, fields) for name, fields in tables.items()}
        self.read: list[str] = []
        self.looping = False
        """Whether a recursive term is being planned: the delta join is not used inside loops."""

    # Queries

    def query(self, node: exp.Expression, ctes: Mapping[str, Cte]) -> Plan:
        """A SELECT, a set operation, or a parenthesized query, with its WITH clause."""
        ctes = dict(ctes)
        with_ = node.args.get("with_") or node.args.get("with")
        if with_ is not None:
            for cte in with_.expressions:
                name = cte.alias_or_name.lower()
                ctes[name] = Cte(self._cte(cte, name, ctes, bool(with_.args.get("recursive"))))
        if isinstance(node, exp.Subquery):
            return self._subquery_body(node, ctes)
        if isinstance(node, exp.Select):
            return self.select(node, ctes)
        if isinstance(node, (exp.Union, exp.Except, exp.Intersect)):
            return self.set_operation(node, ctes)
        raise refuse(node, f"{construct(node)} is not a query this subset runs; write a SELECT")

    def _subquery_body(self, node: exp.Subquery, ctes: Mapping[str, Cte]) -> Plan:
        for key in ("order", "limit", "offset"):
            if node.args.get(key) is not None:
                raise refuse(node.args[key], f"{UNSUPPORTED_CLAUSES[key]} is not in the subset")
        return self.query(node.this, ctes)

    def _cte(self, cte: exp.CTE, name: str, ctes: Mapping[str, Cte], recursive: bool) -> Plan:
        body = cte.this
        columns = [column.name for column in (cte.args["alias"].columns if cte.args.get("alias") else [])]
        if recursive and _reads(body, name):
            plan = self._recursive(cte, body, name, columns, ctes)
        else:
            plan = self.query(body, ctes)
        if columns:
            if len(columns) != len(plan.fields):
                raise refuse(cte, f"{name} names {len(columns)} columns but its query has {len(plan.fields)}")
            fields = [Field(None, column, f.type) for column, f in zip(columns, plan.fields, strict=True)]
            plan = Rename(plan, fields, plan.clause)
        return plan

    def _recursive(self, cte: exp.CTE, body: exp.Expression, name: str, columns: list[str],
                   ctes: Mapping[str, Cte]) -> Plan:
        if not isinstance(body, exp.Union):
            raise refuse(body, f"a recursive CTE is (base) UNION [ALL] (recursive term); {name} is not")
        base_node, step_node = body.this, body.expression
        if _reads(base_node, name):
            raise refuse(base_node, f"the base of recursive CTE {name} must not read {name}")
        references = [table for table in step_node.find_all(exp.Table) if table.name.lower() == name]
        if len(references) != 1:
            raise refuse(step_node, f"the recursive term of {name} must read {name} exactly once")
        for bad in step_node.find_all(exp.AggFunc):
            raise refuse(bad, f"the recursive term of {name} cannot aggregate ({bad.sql_name()})")
        base = self.query(base_node, ctes)
        names = columns or [f.name for f in base.fields]
        if len(names) != len(base.fields):
            raise refuse(cte, f"{name} names {len(names)} columns but its base has {len(base.fields)}")
        fields = [Field(None, column, f.type) for column, f in zip(names, base.fields, strict=True)]
        variable = RecursiveReference(name, fields, clause_text(references[0], "FROM "))
        self.looping, looping = True, self.looping
        try:
            step = self.query(step_node, {**ctes, name: Cte(variable)})
        finally:
            self.looping = looping
        step = self._cast_to(step, fields, step_node, f"the recursive term of {name}")
        keep_all = not body.args.get("distinct")
        return Recursive(name, base, step, keep_all, fields, clause_text(cte.args.get("alias"), "WITH RECURSIVE "))

    def _cast_to(self, plan: Plan, fields: list[Field], node: exp.Expression, what: str) -> Plan:
        if len(plan.fields) != len(fields):
            raise refuse(node, f"{what} has {len(plan.fields)} columns where {len(fields)} are needed")
        if all(a.type == b.type for a, b in zip(plan.fields, fields, strict=True)):
            return plan
        exprs = []
        for position, (have, want) in enumerate(zip(plan.fields, fields, strict=True)):
            if wider(have.type, want.type) != want.type:
                raise refuse(node, f"{what}: column {position + 1} is {have.type}, which does not fit {want.type}")
            exprs.append(converted(Expr(operator.itemgetter(position), have.type), want.type))
        return Project(plan, exprs, [Field(f.qualifier, f.name, e.type) for f, e in zip(plan.fields, exprs,
                                                                                         strict=True)], plan.clause)

    def set_operation(self, node: exp.Expression, ctes: Mapping[str, Cte]) -> Plan:
        for key in ("order", "limit", "offset"):
            if node.args.get(key) is not None:
                raise refuse(node.args[key], f"{UNSUPPORTED_CLAUSES[key]} is not in the subset")
        kind = {exp.Union: "UNION", exp.Except: "EXCEPT", exp.Intersect: "INTERSECT"}[type(node)]
        keep_all = not node.args.get("distinct")
        left, right = self.query(node.this, ctes), self.query(node.expression, ctes)
        if len(left.fields) != len(right.fields):
            raise refuse(node, f"{kind} needs the same number of columns on both sides, not {len(left.fields)} and "
                               f"{len(right.fields)}")
        types = []
        for position, (a, b) in enumerate(zip(left.fields, right.fields, strict=True)):
            common = wider(a.type, b.type)
            if common is None:
                raise refuse(node, f"{kind}: column {position + 1} is {a.type} on one side and {b.type} on the other")
            types.append(common)
        fields = [Field(None, f.name, kind_) for f, kind_ in zip(left.fields, types, strict=True)]
        left = self._cast_to(left, fields, node.this, f"the left side of {kind}")
        right = self._cast_to(right, fields, node.expression, f"the right side of {kind}")
        return SetOperation(kind, keep_all, left, right, fields, f"{kind}{' ALL' if keep_all else ''}")

    # SELECT

    def select(self, node: exp.Select, ctes: Mapping[str, Cte]) -> Plan:
        for key, words in UNSUPPORTED_CLAUSES.items():
            if node.args.get(key):
                value = node.args[key]
                raise refuse(value[0] if isinstance(value, list) else value, f"{words} is not in the subset")
        distinct = node.args.get("distinct")
        if distinct is not None and distinct.args.get("on"):
            raise refuse(distinct, "DISTINCT ON is not in the subset")
        source = node.args.get("from_") or node.args.get("from")
        plan = self.from_item(source.this, ctes) if source is not None else One()
        joins = node.args.get("joins") or []
        joined = self.delta_join(plan, joins, ctes) if not self.looping else None
        if joined is not None:
            plan = joined
        for join in joins if joined is None else []:
            plan = self.join(plan, join, ctes)
        where = node.args.get("where")
        if where is not None:
            condition = Expressions(plan.fields, where="in WHERE").boolean(where.this)
            plan = Filter(plan, condition, clause_text(where.this, "WHERE "))
        group = node.args.get("group")
        having = node.args.get("having")
        items = node.expressions
        if group is not None or having is not None or any(_aggregates(item) for item in items):
            plan, compiler = self.aggregate(plan, node, group, having)
        else:
            compiler = Expressions(plan.fields, where="in this SELECT list")
        exprs, fields = self.select_list(items, plan.fields, compiler)
        plan = Project(plan, exprs, fields, clause_text(exp.Select(expressions=node.expressions)))
        if distinct is not None:
            plan = Distinct(plan, "SELECT DISTINCT")
        return plan

    def select_list(self, items: list[exp.Expression], fields: list[Field],
                    compiler: Expressions) -> tuple[list[Expr], list[Field]]:
        exprs, out = [], []
        for item in items:
            if isinstance(item, exp.Star) or (isinstance(item, exp.Column) and isinstance(item.this, exp.Star)):
                if compiler.replace is not None:
                    raise refuse(item, "SELECT * with GROUP BY is not in the subset; name the columns")
                qualifier = item.table.lower() if isinstance(item, exp.Column) else ""
                chosen = [(p, f) for p, f in enumerate(fields)
                          if not qualifier or (f.qualifier or "").lower() == qualifier]
                if not chosen:
                    raise refuse(item, f"{item.sql()} matches no table here")
                for position, f in chosen:
                    exprs.append(Expr(operator.itemgetter(position), f.type, position=position))
                    out.append(Field(None, f.name, f.type))
                continue
            inner = item.this if isinstance(item, exp.Alias) else item
            compiled = compiler.compile(inner)
            if isinstance(item, exp.Alias):
                name = item.alias
            elif isinstance(inner, exp.Column):
                name = inner.name
            else:
                name = f"_c{len(out)}"
            exprs.append(compiled)
            out.append(Field(None, name, compiled.type))
        return exprs, out

    def from_item(self, node: exp.Expression, ctes: Mapping[str, Cte]) -> Plan:
        if isinstance(node, exp.Table):
            if node.args.get("db") or node.args.get("catalog"):
                raise refuse(node, f"{node.sql()}: name a bound table without a database")
            if node.args.get("joins") or node.args.get("laterals") or node.args.get("pivots"):
                raise refuse(node, f"{node.sql()[:40]} is not in the subset")
            name = node.name.lower()
            alias = node.alias or node.name
            if name in ctes:
                plan = ctes[name].plan
            elif name in self.tables:
                table, fields = self.tables[name]
                if table not in self.read:
                    self.read.append(table)
                plan = Scan(table, fields, f"FROM {table}")
            else:
                known = ", ".join(name for name, _ in self.tables.values()) or "none"
                raise refuse(node, f"table {node.name} is not bound (bound: {known}); bind it with --table "
                                   f"{node.name}=PATH")
            return Rename(plan, [Field(alias, f.name, f.type) for f in plan.fields], plan.clause)
        if isinstance(node, exp.Subquery):
            plan = self._subquery_body(node, ctes)
            alias = node.alias or None
            return Rename(plan, [Field(alias, f.name, f.type) for f in plan.fields], plan.clause)
        raise refuse(node, f"{construct(node)} in FROM is not in the subset; FROM takes tables, CTEs and subqueries")

    def join(self, left: Plan, node: exp.Join, ctes: Mapping[str, Cte]) -> Plan:
        if node.args.get("using"):
            raise refuse(node, "JOIN ... USING is not in the subset; write ON a.column = b.column")
        if node.args.get("method"):
            raise refuse(node, f"{node.args['method']} JOIN is not in the subset")
        side = (node.args.get("side") or "").upper()
        kind = (node.args.get("kind") or "").upper()
        if kind in ("SEMI", "ANTI") or kind not in ("", "INNER", "OUTER", "CROSS"):
            raise refuse(node, f"{side} {kind} JOIN is not in the subset".replace("  ", " ").strip())
        right = self.from_item(node.this, ctes)
        condition = node.args.get("on")
        if kind == "CROSS" and condition is not None:
            raise refuse(node, "CROSS JOIN takes no ON")
        if side and condition is None:
            raise refuse(node, f"{side} JOIN needs an ON clause")
        fields = [*left.fields, *right.fields]
        keys, residual = [], []
        for part in _conjuncts(condition):
            key = self._join_key(part, left.fields, right.fields)
            if key is None:
                residual.append(part)
            else:
                keys.append(key)
        compiler = Expressions(fields, where="in ON")
        residue = None
        for part in residual:
            compiled = compiler.boolean(part)
            residue = compiled if residue is None else logic(True, residue, compiled)
        clause = f"{side + ' ' if side else ''}JOIN {node.this.sql(dialect='spark')}"
        if condition is not None:
            clause += f" ON {condition.sql(dialect='spark')}"
        return Join(left, right, side or "INNER", keys, residue, clause_text(None, clause))

    def delta_join(self, first: Plan, joins: list[exp.Join], ctes: Mapping[str, Cte]) -> Plan | None:
        """Three or more tables in a row of INNER JOINs whose ON clauses connect them by ``=`` between columns of
        two tables: one ``MultiJoin``, then any other predicate of the ON clauses as a filter. None when that
        does not apply (an outer join, ``<=>``, a table reached by no equality)."""
        if len(joins) < 2 or any((join.args.get("side") or join.args.get("kind") or "INNER").upper() != "INNER"
                                 or join.args.get("on") is None or join.args.get("using") for join in joins):
            return None
        inputs = [first, *(self.from_item(join.this, ctes) for join in joins)]
        constraints, residual = [], []
        for number, join in enumerate(joins, 1):
            connected = False
            for part in _conjuncts(join.args["on"]):
                found = self._constraint(part, inputs[: number + 1])
                if found is None:
                    residual.append(part)
                else:
                    constraints.append(found)
                    connected = connected or number in (found[0], found[2])
            if not connected:
                return None
        plan: Plan = MultiJoin(inputs, constraints, clause_text(None, " ".join(
            f"JOIN {join.this.sql(dialect='spark')}" for join in joins)))
        compiler = Expressions(plan.fields, where="in ON")
        for part in residual:
            plan = Filter(plan, compiler.boolean(part), clause_text(part, "ON "))
        return plan

    def _constraint(self, part: exp.Expression, inputs: list[Plan]) -> tuple[int, Callable, int, Callable] | None:
        """``part`` as a delta join constraint ``(i, key_i, j, key_j)``: ``=`` between expressions each reading one
        input, two different ones."""
        if not isinstance(part, exp.EQ):
            return None
        sides = [_input_of(operand, inputs) for operand in (part.this, part.expression)]
        if None in sides or sides[0] == sides[1]:
            return None
        (i, j) = sides
        a = Expressions(inputs[i].fields, where="in ON").compile(part.this)
        b = Expressions(inputs[j].fields, where="in ON").compile(part.expression)
        a_fn, b_fn = comparable(a, b, part)
        return (i, a_fn, j, b_fn)

    def _join_key(self, part: exp.Expression, left: list[Field], right: list[Field]) -> JoinKey | None:
        """``part`` as a key of the join when it is ``a = b`` or ``a <=> b`` with each side reading one input."""
        if not isinstance(part, (exp.EQ, exp.NullSafeEQ)):
            return None
        sides = [_side(operand, left, right) for operand in (part.this, part.expression)]
        if sides == ["left", "right"]:
            on_left, on_right = part.this, part.expression
        elif sides == ["right", "left"]:
            on_left, on_right = part.expression, part.this
        else:
            return None
        a = Expressions(left, where="in ON").compile(on_left)
        b = Expressions(right, where="in ON").compile(on_right)
        a_fn, b_fn = comparable(a, b, part)
        return JoinKey(a_fn, b_fn, isinstance(part, exp.NullSafeEQ))

    # GROUP BY

    def aggregate(self, plan: Plan, node: exp.Select, group: exp.Group | None,
                  having: exp.Having | None) -> tuple[Plan, Expressions]:
        """The Aggregate step, and the compiler for the SELECT list and HAVING over its rows."""
        if group is not None:
            for key in ("rollup", "cube", "grouping_sets", "totals"):
                if group.args.get(key):
                    raise refuse(group, f"GROUP BY {key.upper().replace('_', ' ')} is not in the subset")
        inputs = Expressions(plan.fields, where="in GROUP BY")
        group_nodes = [self._group_node(item, node, plan.fields)
                       for item in (group.expressions if group is not None else [])]
        keys = [inputs.compile(item) for item in group_nodes]
        calls: dict[str, tuple[exp.AggFunc, int]] = {}
        for item in [*node.expressions, *([having.this] if having is not None else [])]:
            for call in _aggregates(item):
                calls.setdefault(call.sql(dialect="spark").lower(), (call, len(calls)))
        aggregations = []
        arguments = Expressions(plan.fields, where="inside an aggregate")
        for call, _ in calls.values():
            aggregations.append(self._aggregation(call, arguments))
        fields = [Field(None, f"key{i}", key.type) for i, key in enumerate(keys)] + [
            Field(None, f"agg{i}", a.type) for i, a in enumerate(aggregations)]
        aggregated = Aggregate(plan, keys, aggregations, fields, group is None,
                               clause_text(group, "") if group is not None else "global aggregate")
        width = len(keys)

        def replace(expression: exp.Expression) -> Expr | None:
            if isinstance(expression, exp.AggFunc):
                found = calls.get(expression.sql(dialect="spark").lower())
                if found is not None:
                    position = width + found[1]
                    return Expr(operator.itemgetter(position), aggregations[found[1]].type, position=position)
            for position, grouped in enumerate(group_nodes):
                if _same(expression, grouped, plan.fields):
                    return Expr(operator.itemgetter(position), keys[position].type, position=position)
            if isinstance(expression, exp.Column) and not isinstance(expression.this, exp.Star):
                alias = aliases.get(expression.name.lower()) if not expression.table else None
                if alias is not None and not _resolves(expression, plan.fields):
                    return compiler.compile(alias)  # HAVING may name a SELECT item by its alias
                field_at(plan.fields, expression)  # an unknown column is reported as such first
                raise refuse(expression, f"column {expression.sql()} is neither in GROUP BY nor inside an aggregate")
            return None

        aliases = {item.alias.lower(): item.this for item in node.expressions if isinstance(item, exp.Alias)}
        result: Plan = aggregated
        compiler = Expressions(fields, replace, where="after GROUP BY")
        if having is not None:
            result = Filter(result, compiler.boolean(having.this), clause_text(having.this, "HAVING "))
        return result, compiler

    def _group_node(self, item: exp.Expression, select: exp.Select, fields: list[Field]) -> exp.Expression:
        """A GROUP BY item: an ordinal (``GROUP BY 1``) or a SELECT alias stands for that SELECT item."""
        items = select.expressions
        if isinstance(item, exp.Literal) and not item.is_string:
            position = int(item.this)
            if not 1 <= position <= len(items):
                raise refuse(item, f"GROUP BY {position}: the SELECT list has {len(items)} items")
            chosen = items[position - 1]
            return chosen.this if isinstance(chosen, exp.Alias) else chosen
        if isinstance(item, exp.Column) and not item.table and not _resolves(item, fields):
            # A name that is no input column may be a SELECT alias (an input column wins, as in Spark).
            aliases = {selected.alias.lower(): selected.this for selected in items if isinstance(selected, exp.Alias)}
            if item.name.lower() in aliases:
                return aliases[item.name.lower()]
        if _aggregates(item):
            raise refuse(item, "GROUP BY cannot hold an aggregate")
        return item

    def _aggregation(self, call: exp.AggFunc, arguments: Expressions) -> Aggregation:
        if not isinstance(call, (exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max)):
            raise refuse(call, f"the aggregate {call.sql_name()}() is not in the subset (COUNT, SUM, AVG, MIN and "
                               f"MAX are)")
        inner = call.this
        distinct = isinstance(inner, exp.Distinct)
        if distinct:
            if len(inner.expressions) != 1:
                raise refuse(call, f"{call.sql_name()}(DISTINCT ...) takes one expression here")
            inner = inner.expressions[0]
        if isinstance(call, exp.Count) and (inner is None or isinstance(inner, exp.Star)):
            return aggregation(call, None, False, "*")
        if isinstance(call, exp.Count) and call.expressions:
            raise refuse(call, "COUNT of several expressions is not in the subset")
        if _aggregates(inner):
            raise refuse(call, "an aggregate inside an aggregate is not SQL")
        return aggregation(call, arguments.compile(inner), distinct, inner.sql(dialect="spark").lower())


def _conjuncts(condition: exp.Expression | None) -> list[exp.Expression]:
    if condition is None:
        return []
    while isinstance(condition, exp.Paren):
        condition = condition.this
    if isinstance(condition, exp.And):
        return [*_conjuncts(condition.this), *_conjuncts(condition.expression)]
    return [condition]


def _side(node: exp.Expression, left: list[Field], right: list[Field]) -> str | None:
    """``"left"`` or ``"right"`` when every column ``node`` reads is on that side of a join (and it reads one)."""
    found = set()
    for column in node.find_all(exp.Column):
        for name, fields in (("left", left), ("right", right)):
            try:
                field_at(fields, column)
            except SqlError:
                continue
            found.add(name)
    if isinstance(node, exp.AggFunc) or any(True for _ in node.find_all(exp.AggFunc)):
        return None
    return found.pop() if len(found) == 1 else None


def _resolves(column: exp.Column, fields: list[Field]) -> bool:
    try:
        field_at(fields, column)
    except SqlError:
        return False
    return True


def _input_of(node: exp.Expression, inputs: list[Plan]) -> int | None:
    """The one input whose columns ``node`` reads (it reads at least one, and no other input's), or None."""
    found = set()
    for column in node.find_all(exp.Column):
        owners = []
        for number, plan in enumerate(inputs):
            try:
                field_at(plan.fields, column)
            except SqlError:
                continue
            owners.append(number)
        if len(owners) != 1:
            return None
        found.add(owners[0])
    return found.pop() if len(found) == 1 else None


def _aggregates(node: exp.Expression) -> list[exp.AggFunc]:
    """The aggregate calls in ``node`` (not looking into subqueries)."""
    return [call for call in node.find_all(exp.AggFunc)]


def _same(node: exp.Expression, grouped: exp.Expression, fields: list[Field]) -> bool:
    """Whether ``node`` is the GROUP BY expression ``grouped``: the same column, or the same text."""
    if isinstance(node, exp.Column) and isinstance(grouped, exp.Column):
        try:
            return field_at(fields, node) == field_at(fields, grouped)
        except SqlError:
            return False
    if type(node) is not type(grouped):
        return False
    return node.sql(dialect="spark").lower() == grouped.sql(dialect="spark").lower()


def _reads(node: exp.Expression, name: str) -> bool:
    return any(table.name.lower() == name for table in node.find_all(exp.Table))
