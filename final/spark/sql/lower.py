"""Lowering: a logical plan built as a ``final/`` dataflow through its public stream API, one function per node.

``lower(plan, env)`` returns the stream of the plan's rows: tuples, one
value per field, in the order of ``plan.fields``. Expressions become Python
functions here (``scalar.evaluator``), once the position of every column id
in the rows a node reads is known; a join's keys are the equalities of its
condition between its two sides. The steps and the documents they come from:

- ``Join``: an equi-join on the condition's equalities (003's ``join``);
  LEFT, RIGHT and FULL joins add the rows that found no match, padded: by key
  (``left_join``, 003's three terms) when the condition has only equalities,
  by row (an ``antijoin`` with the rows that matched) when a residual
  predicate decides matches too; SEMI and ANTI keep the left rows with (or
  without) a match, ``semijoin`` and ``antijoin``;
- ``MultiJoin``: ``join_many``, 003's delta join;
- ``Aggregate``: one ``aggregate`` per GROUP BY (004: counts and sums in
  place, MIN and MAX in a per-key hierarchy); a global aggregate adds its one
  row over an empty input from a ``constant``;
- ``SetOperation``: UNION ALL is ``concat``; the rest are ``distinct``,
  ``antijoin``, ``semijoin`` and ``threshold`` on whole rows;
- ``Recursive``: WITH RECURSIVE as ``iterate`` to a fixed point (002's
  loops), the UNION form made ``distinct`` in every round;
- ``TopK``: ``top_k`` over the rows in their ORDER BY order.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from fractions import Fraction
from functools import total_ordering
from typing import Any

from ...errors import RecordError
from ..sqlfloat import NAN
from . import dates, windows
from .errors import SqlRuntimeError
from .expressions import conjunction
from .logical import (
    Aggregate,
    AggregateCall,
    AtMostOne,
    Distinct,
    Filter,
    Join,
    MultiJoin,
    One,
    Plan,
    Project,
    Recursive,
    RecursiveReference,
    Rename,
    Scan,
    SetOperation,
    Sort,
    SortKey,
    TopK,
    Window,
)
from .scalar import Call, Field, Ref, Scalar, conjuncts, evaluator, ids
from .types import BIGINT, DOUBLE, SqlType, checked_decimal, checked_integral, decimal_quotient, decimal_result


@dataclass
class Env:
    """What a build reads: each table's input stream, the streams of recursive CTEs in scope, and the streams
    already built (a plan read twice is built once; a loop's body keeps its own, on top of its parent's)."""

    tables: Mapping[str, Any]
    builder: Any
    recursive: dict[str, Any] = field(default_factory=dict)
    built: dict[int, Any] = field(default_factory=dict)
    parent: Env | None = None

    def inner(self, name: str, stream: Any) -> Env:
        """The environment of a loop body where ``name`` is the loop's variable."""
        return Env(self.tables, self.builder, {**self.recursive, name: stream}, {}, self)

    def find(self, plan: Plan) -> Any:
        env: Env | None = self
        while env is not None:
            if id(plan) in env.built:
                return env.built[id(plan)]
            env = env.parent
        return None


def lower(plan: Plan, env: Env) -> Any:
    """``plan``'s stream in ``env``'s graph, built once per environment; its operators carry its clause."""
    found = env.find(plan)
    if found is not None:
        return found
    if isinstance(plan, (Rename, RecursiveReference)):
        stream = LOWERINGS[type(plan)](plan, env)
    else:
        with env.builder.labelled(plan.clause):
            stream = LOWERINGS[type(plan)](plan, env)
    env.built[id(plan)] = stream
    return stream


def literals(values: tuple) -> str:
    """``values`` as Spark SQL literals, for an error that names a row: ``(3, 'zero', NULL, 1.50, DATE
    '2024-01-31', 2.5D)`` (a quote in a string escaped by a backslash, as Spark reads it)."""
    return f"({', '.join(_literal(value) for value in values)})"


def _literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return "'" + value.replace("'", "\\'") + "'"
    if isinstance(value, float):
        return f"CAST('{value}' AS DOUBLE)".replace("nan", "NaN").replace("inf", "Infinity") if not math.isfinite(
            value) else f"{value!r}D"
    if isinstance(value, datetime):
        return f"TIMESTAMP '{dates.format_timestamp(value)}'"
    if isinstance(value, date):
        return f"DATE '{dates.format_date(value)}'"
    return str(value)


def layout(fields: Sequence[Field]) -> dict[int, int]:
    """Each field's id -> its position in a row."""
    return {f.id: position for position, f in enumerate(fields)}


def compiled(scalar: Scalar, fields: Sequence[Field]) -> Callable[[tuple], Any]:
    """``scalar`` as a function of a row of ``fields``, naming the row in any ``SqlRuntimeError``."""
    return naming_row(evaluator(scalar, layout(fields)))


def naming_row(fn: Callable[[tuple], Any]) -> Callable[[tuple], Any]:
    """``fn``, with the row it was given named in any ``SqlRuntimeError`` it raises (Spark names the row too)."""

    def named(row: tuple) -> Any:
        try:
            return fn(row)
        except SqlRuntimeError as error:
            raise SqlRuntimeError(f"{error} (in the row {literals(row)})") from None

    return named


def distinct_rows(stream: Any) -> Any:
    return stream.map(lambda row: (row, ())).distinct().map(operator.itemgetter(0))


_present = operator.itemgetter(0)


def _scan(plan: Scan, env: Env) -> Any:
    return env.tables[plan.table]


def _one(plan: One, env: Env) -> Any:
    return env.builder.constant([()])


def _rename(plan: Rename, env: Env) -> Any:
    return lower(plan.child, env)


def _project(plan: Project, env: Env) -> Any:
    rows = lower(plan.child, env)
    where = layout(plan.child.fields)
    if not plan.exprs:
        return rows.map(_unit)  # no column is read, only how many rows there are
    if all(isinstance(expr, Ref) for expr in plan.exprs):
        positions = [where[expr.id] for expr in plan.exprs]
        if positions == list(range(len(plan.child.fields))):
            return rows  # every column, in order: nothing to compute
        if len(positions) == 1:
            (only,) = positions
            return rows.map(lambda row: (row[only],))
        return rows.map(operator.itemgetter(*positions))  # picking columns cannot fail
    fns = [evaluator(expr, where) for expr in plan.exprs]
    if len(fns) == 1:
        (single,) = fns
        return rows.map(naming_row(lambda row: (single(row),)))
    return rows.map(naming_row(lambda row: tuple([fn(row) for fn in fns])))


def _filter(plan: Filter, env: Env) -> Any:
    condition = compiled(plan.condition, plan.child.fields)
    return lower(plan.child, env).filter(lambda row: condition(row) is True)


def _distinct(plan: Distinct, env: Env) -> Any:
    return distinct_rows(lower(plan.child, env))


def _sort(plan: Sort, env: Env) -> Any:
    return lower(plan.child, env)


# Joins ------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Keys:
    """A join's condition split: each side's key function (``None`` when an ``=`` part is NULL: such a row
    matches nothing; a ``<=>`` part keeps NULL as a value), and the residual predicate over both rows."""

    left: Callable[[tuple], Any]
    right: Callable[[tuple], Any]
    residual: Callable[[tuple], Any] | None


def join_keys(condition: Scalar | None, left: Sequence[Field], right: Sequence[Field]) -> Keys:
    """``condition``'s equalities between ``left`` and ``right`` as key functions, and the rest."""
    left_ids, right_ids = {f.id for f in left}, {f.id for f in right}
    pairs, residual = [], []
    for part in conjuncts(condition):
        sides = _sides(part, left_ids, right_ids)
        if sides is None:
            residual.append(part)
        else:
            pairs.append(sides)
    rest = compiled(conjunction(residual), [*left, *right]) if residual else None
    if not pairs:
        return Keys(_unit, _unit, rest)
    safe = [null_safe for _, _, null_safe in pairs]
    left_fns = [naming_row(evaluator(a, layout(left))) for a, _, _ in pairs]
    right_fns = [naming_row(evaluator(b, layout(right))) for _, b, _ in pairs]
    return Keys(_key(left_fns, safe), _key(right_fns, safe), rest)


def _sides(part: Scalar, left_ids: set[int], right_ids: set[int]) -> tuple[Scalar, Scalar, bool] | None:
    if not (isinstance(part, Call) and part.name in ("=", "<=>")):
        return None
    a, b = part.args
    if ids(a) and ids(b) and ids(a) <= left_ids and ids(b) <= right_ids:
        return a, b, part.name == "<=>"
    if ids(a) and ids(b) and ids(b) <= left_ids and ids(a) <= right_ids:
        return b, a, part.name == "<=>"
    return None


def _unit(row: tuple) -> tuple:
    return ()


def _key(fns: list[Callable], safe: list[bool]) -> Callable:
    if len(fns) == 1:
        (fn,), (null_safe,) = fns, safe
        return (lambda row: (fn(row),)) if null_safe else fn
    strict = [not null_safe for null_safe in safe]

    def key(row: tuple) -> tuple | None:
        values = tuple([fn(row) for fn in fns])
        for value, must in zip(values, strict, strict=True):
            if value is None and must:
                return None
        return values

    return key


def _join(plan: Join, env: Env) -> Any:
    left, right = lower(plan.left, env), lower(plan.right, env)
    if plan.null_aware is not None:
        return _not_in(plan, left, right)
    keys = join_keys(plan.condition, plan.left.fields, plan.right.fields)
    keyed_left = left.map(lambda row: (keys.left(row), row))
    keyed_right = right.map(lambda row: (keys.right(row), row))
    if plan.kind in ("SEMI", "ANTI"):
        return _semi(plan, left, keyed_left, keyed_right, keys)
    left_nulls, right_nulls = (None,) * len(plan.left.fields), plan.pad or (None,) * len(plan.right.fields)
    if keys.residual is None and plan.kind != "INNER":
        return _outer_by_key(plan.kind, keyed_left, keyed_right, left_nulls, right_nulls)
    width_left = len(plan.left.fields)
    matched = keyed_left.filter(lambda pair: pair[0] is not None).join(
        keyed_right.filter(lambda pair: pair[0] is not None)).map(lambda pair: pair[1][0] + pair[1][1])
    if keys.residual is not None:
        condition = keys.residual
        matched = matched.filter(lambda row: condition(row) is True)
    result = matched
    if plan.kind in ("LEFT", "FULL"):
        hit = distinct_rows(matched.map(lambda row: row[:width_left]))
        missing = left.map(lambda row: (row, ())).antijoin(hit).map(_present)
        result = result.concat(missing.map(lambda row: row + right_nulls))
    if plan.kind in ("RIGHT", "FULL"):
        hit = distinct_rows(matched.map(lambda row: row[width_left:]))
        missing = right.map(lambda row: (row, ())).antijoin(hit).map(_present)
        result = result.concat(missing.map(lambda row: left_nulls + row))
    return result


def _outer_by_key(kind: str, keyed_left: Any, keyed_right: Any, left_nulls: tuple, right_nulls: tuple) -> Any:
    """LEFT, RIGHT or FULL with only equalities in the condition: final/'s ``left_join`` (and its mirror)."""
    if kind == "RIGHT":
        mirrored = keyed_right.left_join(keyed_left)
        return mirrored.map(lambda pair: (pair[1][1] or left_nulls) + pair[1][0])
    joined = keyed_left.left_join(keyed_right).map(lambda pair: pair[1][0] + (pair[1][1] or right_nulls))
    if kind == "LEFT":
        return joined
    only_right = keyed_right.left_join(keyed_left).filter(lambda pair: pair[1][1] is None)
    return joined.concat(only_right.map(lambda pair: left_nulls + pair[1][0]))


def _semi(plan: Join, left: Any, keyed_left: Any, keyed_right: Any, keys: Keys) -> Any:
    """The left rows that have a match (SEMI) or none (ANTI), each with its own multiplicity: by key, with the
    right side's distinct keys; with a residual, by row, with the distinct left rows that matched."""
    present = keyed_right.filter(lambda pair: pair[0] is not None)
    if keys.residual is None:
        matches = present.map(_present).distinct_keys()
        kept = keyed_left.semijoin(matches) if plan.kind == "SEMI" else keyed_left.antijoin(matches)
        return kept.map(operator.itemgetter(1))
    condition = keys.residual
    matched = keyed_left.filter(lambda pair: pair[0] is not None).join(present).filter(
        lambda pair: condition(pair[1][0] + pair[1][1]) is True).map(lambda pair: pair[1][0])
    hit = distinct_rows(matched)
    rows = left.map(lambda row: (row, ()))
    return (rows.semijoin(hit) if plan.kind == "SEMI" else rows.antijoin(hit)).map(_present)


def _not_in(plan: Join, left: Any, right: Any) -> Any:
    """``value NOT IN (subquery)`` kept as SQL has it: a left row stays when no right row of its group (its
    correlation key) equals its value, no right row of the group is NULL, and its value is not NULL unless the
    group is empty. Three antijoins, one per way to fail."""
    keys = join_keys(plan.condition, plan.left.fields, plan.right.fields)
    value = compiled(plan.null_aware[0], plan.left.fields)
    column = compiled(plan.null_aware[1], plan.right.fields)
    group_left, group_right = keys.left, keys.right
    right_rows = right.filter(lambda row: group_right(row) is not None)
    equal = right_rows.filter(lambda row: column(row) is not None).map(
        lambda row: (group_right(row), column(row))).distinct_keys()
    nulls = right_rows.filter(lambda row: column(row) is None).map(group_right).distinct_keys()
    groups = right_rows.map(group_right).distinct_keys()
    kept = left.map(lambda row: ((group_left(row), value(row)), row)).antijoin(equal).map(operator.itemgetter(1))
    kept = kept.map(lambda row: (group_left(row), row)).antijoin(nulls).map(operator.itemgetter(1))
    with_value = kept.filter(lambda row: value(row) is not None or group_left(row) is None)
    without = kept.filter(lambda row: value(row) is None and group_left(row) is not None)
    return with_value.concat(without.map(lambda row: (group_left(row), row)).antijoin(groups).map(
        operator.itemgetter(1)))


def _multi_join(plan: MultiJoin, env: Env) -> Any:
    first, *others = [lower(member, env) for member in plan.members]
    constraints = [(i, naming_row(evaluator(a, layout(plan.members[i].fields))), j,
                    naming_row(evaluator(b, layout(plan.members[j].fields))))
                   for i, a, j, b in plan.equalities]
    return first.join_many(others, constraints).map(lambda rows: sum(rows, ()))


# Aggregates -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Aggregation:
    """One aggregate call as ``final/``'s ``aggregate`` keeps it: parts (name, kind, value function), and
    ``finish(values)`` that makes the SQL value from them (``values``: part name -> value)."""

    parts: list[tuple[str, str, Callable[[tuple], Any]]]
    finish: Callable[[dict], Any]


@dataclass(frozen=True)
class Grouping:
    """An ``Aggregate`` step's functions of its input rows: the GROUP BY ``key``, the ``named`` parts that
    ``final/``'s ``aggregate`` keeps per key, the ``finishes`` that make each aggregate's SQL value from them,
    and ``row``, the step's output row from a key's ``(key, ((name, value), ...))`` record. The dataflow here
    and a keyed operator on Spark's executors (``final.spark.executors``) build a GROUP BY from these alike."""

    key: Callable[[tuple], Any]
    named: dict[str, tuple[str, Callable[[tuple], Any]]]
    finishes: list[Callable[[dict], Any]]
    row: Callable[[tuple], tuple]

    def empty(self) -> tuple:
        """The one row of a global aggregate over no rows, as SQL has it: COUNT 0, every other aggregate NULL."""
        nothing = {name: 0 if kind in ("count", "count_distinct") else None for name, (kind, _) in self.named.items()}
        return tuple(finish(nothing) for finish in self.finishes)


def grouping(plan: Aggregate) -> Grouping:
    """``plan``'s GROUP BY as functions of its input rows (``Grouping``)."""
    inputs = plan.child.fields
    key_fns = [compiled(key, inputs) for key in plan.keys]
    if not key_fns:
        key = _none
    elif len(key_fns) == 1:
        key = key_fns[0]
    else:
        key = lambda row: tuple([fn(row) for fn in key_fns])  # noqa: E731 - one expression, named by its role
    aggregations = [aggregation(call, compiled(call.argument, inputs) if call.argument is not None else None)
                    for call in plan.calls]
    named = {name: (kind, fn) for one in aggregations for name, kind, fn in one.parts}
    if not named:
        named = {"rows": ("count", _one)}
    finishes = [one.finish for one in aggregations]
    width = len(key_fns)

    def row(pair: tuple) -> tuple:
        values = dict(pair[1])
        keys = (pair[0],) if width == 1 else (pair[0] if width else ())
        try:
            return (*keys, *[finish(values) for finish in finishes])
        except SqlRuntimeError as error:
            raise SqlRuntimeError(f"{error} (in the group {literals(keys)})") from None

    return Grouping(key, named, finishes, row)


def _aggregate(plan: Aggregate, env: Env) -> Any:
    rows = lower(plan.child, env)
    parts = grouping(plan)
    grouped = rows.aggregate(parts.key, parts.named).map(parts.row)
    if not plan.whole:
        return grouped
    default = parts.empty()
    present = grouped.map(lambda found: ((), ())).distinct().map(_present)
    absent = env.builder.constant([((), ())]).antijoin(present)
    return grouped.concat(absent.map(lambda pair: default))


def _none(row: tuple) -> None:
    return None


def _one(row: tuple) -> int:
    return 1


def aggregation(call: AggregateCall, argument: Callable[[tuple], Any] | None) -> Aggregation:
    """The ``Aggregation`` for an aggregate call of ``argument`` (None for ``COUNT(*)``). Parts are named by
    what they keep (``count:fare_amount``), so SUM, COUNT, AVG and STDDEV of one column in one query share
    them."""
    text = call.text.split("(", 1)[1][:-1] if "(" in call.text else call.text
    if call.function == "count":
        if argument is None:
            return _single("count:*", "count", _one)
        if call.distinct:
            return _single(f"count_distinct:{text}", "count_distinct", argument)
        return _single(f"count:{text}", "count", argument)
    if call.function in ("min", "max"):
        return _single(f"{call.function}:{text}", call.function, argument)
    if call.function == "any_value":
        return _single(f"min:{text}", "min", argument)  # every row of the group has the one value (the binder's check)
    if call.function == "count_if":
        return _single(f"count_if:{text}", "count", _counted_if(argument, True))
    if call.function in ("bool_and", "bool_or"):
        return _every_or_some(text, argument, call.function == "bool_and")
    if call.function in ("var_samp", "var_pop", "stddev_samp", "stddev_pop"):
        return _spread(text, argument, call.function)
    kind = call.argument.type
    average = call.function == "avg"
    if kind == DOUBLE:
        return _double_sum(text, argument, average)
    total, count = f"sum:{text}", f"count:{text}"
    if kind.integral:
        if not average:
            return Aggregation([(total, "sum", argument)], lambda values: _checked_sum(values[total]))

        def integral_average(values: dict) -> Any:
            return float(values[total]) / values[count] if values[count] else None

        return Aggregation([(total, "sum", argument), (count, "count", argument)], integral_average)
    sum_type = SqlType("decimal", min(kind.precision + 10, 38), kind.scale)
    if not average:
        return Aggregation([(total, "sum", argument)],
                           lambda values: None if values[total] is None else checked_decimal(values[total], sum_type))
    average_type = call.type
    quotient_type = decimal_result("/", sum_type, SqlType("decimal", 20, 0))

    def decimal_average(values: dict) -> Any:
        if not values[count]:
            return None
        exact = checked_decimal(values[total], sum_type)
        return checked_decimal(decimal_quotient(exact, Decimal(values[count]), quotient_type), average_type)

    return Aggregation([(total, "sum", argument), (count, "count", argument)], decimal_average)


def _single(name: str, kind: str, fn: Callable[[tuple], Any]) -> Aggregation:
    """An aggregate that is one part of ``final/``'s ``aggregate``, as it is."""
    return Aggregation([(name, kind, fn)], operator.itemgetter(name))


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

    return Aggregation(parts, finish)


_INFINITIES = (float("inf"), float("-inf"))


def _counted_if(fn: Callable[[tuple], Any], wanted: bool) -> Callable[[tuple], Any]:
    """1 for a row where ``fn`` is ``wanted`` (True or False, not NULL), else None: what a count of them counts."""
    return lambda row: 1 if fn(row) is wanted else None


def _every_or_some(text: str, fn: Callable[[tuple], Any], every: bool) -> Aggregation:
    """``bool_and`` (``every``) or ``bool_or`` of a condition: counts of its non-NULL values and of its false
    (true) ones, which retract exactly; NULL when it has no value."""
    count = f"count:{text}"
    flagged = f"count_false:{text}" if every else f"count_if:{text}"
    parts = [(count, "count", fn), (flagged, "count", _counted_if(fn, not every))]

    def finish(values: dict) -> bool | None:
        if not values[count]:
            return None
        return values[flagged] == 0 if every else values[flagged] > 0

    return Aggregation(parts, finish)


def _spread(text: str, fn: Callable[[tuple], Any], function: str) -> Aggregation:
    """VAR_SAMP, VAR_POP, STDDEV_SAMP or STDDEV_POP of a DOUBLE: the count, and the sums of the finite values
    and of their squares kept exact (as fractions), so a retraction takes off exactly what its row added, and
    the non-finite values counted; the variance computed exactly from them, rounded once to a DOUBLE (an
    infinity past DOUBLE's range), and its square root taken for a standard deviation.

    Spark updates a running mean and sum of squared deviations in row order (Welford's method), so the last
    bits of its answer depend on the partitioning, as its SUM's do. As Spark (its
    ``spark.sql.legacy.statisticalAggregate`` off) gives them: NULL over no rows, NULL for one row in the
    ``_samp`` forms, NaN when a value is NaN or infinite."""

    def finite(row: tuple) -> Fraction | None:
        value = fn(row)
        return None if value is None or not math.isfinite(value) else Fraction(value)

    def square(row: tuple) -> Fraction | None:
        value = finite(row)
        return None if value is None else value * value

    def odd(row: tuple) -> int | None:
        value = fn(row)
        return 1 if value is not None and not math.isfinite(value) else None

    count, total, squares, non_finite = (f"{part}:{text}" for part in ("count", "finite_sum", "finite_squares",
                                                                        "non_finite"))
    parts = [(count, "count", fn), (total, "sum", finite), (squares, "sum", square), (non_finite, "count", odd)]
    sample = function.endswith("_samp")
    root = function.startswith("stddev")

    def finish(values: dict) -> float | None:
        rows = values[count]
        if not rows or (sample and rows == 1):
            return None
        if values[non_finite]:
            return NAN
        first, second = Fraction(values[total] or 0), Fraction(values[squares] or 0)
        variance = (second - first * first / rows) / (rows - 1 if sample else rows)
        try:
            result = float(variance)
        except OverflowError:
            result = math.inf
        return math.sqrt(result) if root else result

    return Aggregation(parts, finish)


# Set operations, loops, order -------------------------------------------------------------------------------------


def _set_operation(plan: SetOperation, env: Env) -> Any:
    left, right = lower(plan.left, env), lower(plan.right, env)
    if plan.kind == "UNION":
        both = left.concat(right)
        return both if plan.keep_all else distinct_rows(both)
    if not plan.keep_all:
        keys = distinct_rows(right)
        rows = distinct_rows(left).map(lambda row: (row, ()))
        kept = rows.antijoin(keys) if plan.kind == "EXCEPT" else rows.semijoin(keys)
        return kept.map(_present)
    surplus = left.concat(right.negate()).threshold(lambda multiplicity: max(multiplicity, 0))
    return surplus if plan.kind == "EXCEPT" else left.concat(surplus.negate())


def _recursive_reference(plan: RecursiveReference, env: Env) -> Any:
    return env.recursive[plan.name]


def _recursive(plan: Recursive, env: Env) -> Any:
    base = lower(plan.base, env)

    def round_(previous: Any) -> Any:
        following = lower(plan.step, env.inner(plan.name, previous))
        combined = base.concat(following)
        return combined if plan.keep_all else distinct_rows(combined)

    return (base if plan.keep_all else distinct_rows(base)).iterate(round_)


@total_ordering
class Descending:
    """A value that sorts in the reverse of its own order (a DESC sort key)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Descending) and self.value == other.value

    def __lt__(self, other: Descending) -> bool:
        return other.value < self.value

    def __hash__(self) -> int:
        return hash(self.value)


def sort_key(keys: Sequence[SortKey], fields: Sequence[Field], whole_row: bool = True) -> Callable[[tuple], tuple]:
    """A row's place in ORDER BY ``keys`` order as a tuple Python compares: each key as (where NULL goes, the
    value, reversed for DESC), then (``whole_row``) the whole row, NULLs first, so rows equal in every key still
    have one order and the window of a top-k is determined."""
    fns = [evaluator(key.expression, layout(fields)) for key in keys]
    parts = [(fn, key.descending, 0 if key.nulls_first else 2) for fn, key in zip(fns, keys, strict=True)]

    def key(row: tuple) -> tuple:
        ranked = []
        for fn, descending, null_rank in parts:
            value = fn(row)
            if value is None:
                ranked.append((null_rank, 0))
            else:
                ranked.append((1, Descending(value) if descending else value))
        if whole_row:
            ranked.append(tuple((0, 0) if value is None else (1, value) for value in row))
        return tuple(ranked)

    return key


def rank_of(plan: Plan) -> Callable[[tuple], tuple] | None:
    """For a query that ends in a top-k whose ORDER BY keys are among its columns: a result row's place in that
    order, without the whole row that breaks ties here (Spark breaks them in no stated order). None otherwise."""
    if not isinstance(plan, TopK) or plan.partition:
        return None
    own = {f.id for f in plan.fields}
    if not all(ids(key.expression) <= own for key in plan.keys):
        return None
    return sort_key(plan.keys, plan.fields, whole_row=False)


def _top_k(plan: TopK, env: Env) -> Any:
    rows = lower(plan.child, env)
    order = naming_row(sort_key(plan.keys, plan.child.fields))
    parts = [compiled(scalar, plan.child.fields) for scalar in plan.partition]
    window = rows.map(lambda row: (tuple([fn(row) for fn in parts]), row)).top_k(plan.limit, plan.offset, order)
    return window.map(operator.itemgetter(1))


def _at_most_one(plan: AtMostOne, env: Env) -> Any:
    def single(values: list[tuple[Any, int]]) -> list[tuple[Any, int]]:
        if sum(multiplicity for _, multiplicity in values) > 1:
            raise SqlRuntimeError("[SCALAR_SUBQUERY_TOO_MANY_ROWS] More than one row returned by a subquery used "
                                  "as an expression")
        return [(value, multiplicity) for value, multiplicity in values]

    return lower(plan.child, env).map(lambda row: ((), row)).reduce(single).map(operator.itemgetter(1))


def _window(plan: Window, env: Env) -> Any:
    """A reduce per partition: its rows (each copy of a repeated row apart, as ROW_NUMBER counts them) sorted by
    the ORDER BY, then the whole row; each call's values computed over them (``windows.column``); each row out
    with its values appended."""
    rows = lower(plan.child, env)
    inputs = plan.child.fields
    parts = [compiled(scalar, inputs) for scalar in plan.partition]
    order = sort_key(plan.order, inputs)
    peer = sort_key(plan.order, inputs, whole_row=False)

    def maybe(scalar: Scalar | None) -> Callable[[tuple], Any] | None:
        return compiled(scalar, inputs) if scalar is not None else None

    columns = [windows.column(call, maybe(call.argument), maybe(call.default),
                              aggregation(call.aggregate, maybe(call.aggregate.argument)) if call.aggregate else None)
               for call in plan.calls]

    def partition(values: list[tuple[tuple, int]]) -> list[tuple[tuple, int]]:
        copies: list[tuple] = []
        for row, multiplicity in values:
            if multiplicity < 0:
                raise RecordError(f"a window function ranks rows, but the row {row!r} has multiplicity "
                                  f"{multiplicity}; feed it collections whose multiplicities are not negative")
            copies += [row] * multiplicity
        copies.sort(key=order)
        places = [peer(row) for row in copies]
        peers = [0] * len(copies)
        for position in range(1, len(copies)):
            peers[position] = peers[position - 1] + (places[position] != places[position - 1])
        computed = [column(copies, peers) for column in columns]
        out: dict[tuple, int] = {}
        for position, row in enumerate(copies):
            extended = (*row, *(values[position] for values in computed))
            out[extended] = out.get(extended, 0) + 1
        return list(out.items())

    return rows.map(lambda row: (tuple([fn(row) for fn in parts]), row)).reduce(partition).map(
        operator.itemgetter(1))


LOWERINGS: dict[type, Callable[[Any, Env], Any]] = {
    Scan: _scan, One: _one, Rename: _rename, Project: _project, Filter: _filter, Distinct: _distinct, Sort: _sort,
    Join: _join, MultiJoin: _multi_join, Aggregate: _aggregate, SetOperation: _set_operation,
    RecursiveReference: _recursive_reference, Recursive: _recursive, TopK: _top_k, AtMostOne: _at_most_one,
    Window: _window,
}
"""The one function that builds each kind of node."""
