"""Binding SQL's date and time functions: each call typed as Spark 4.3 types it, its kernel from ``dates.py``.

``expressions.Expressions`` hands here the calls it does not bind itself:
``EXTRACT`` and ``year``/``month``/... , ``date_add``/``date_sub``,
``datediff``, ``add_months``, ``date_trunc``, ``trunc``, ``to_date``, and
``DATE``/``TIMESTAMP`` arithmetic with an ``INTERVAL``. A function whose
value depends on when or where it runs (``current_date()``, ``now()``,
``rand()``) is refused: a result kept up to date must depend on the data
alone. sqlglot parses some of Spark's functions into its own names
(``date_trunc`` is ``TimestampTrunc``); refusals here use the names the
user wrote.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp
from sqlglot.dialects.spark import Spark

from . import dates
from .errors import refuse
from .scalar import Call, Scalar
from .types import DATE, INT, NULL, STRING, TIMESTAMP, SqlType

if TYPE_CHECKING:
    from .expressions import Expressions

NON_DETERMINISTIC = (exp.CurrentDate, exp.CurrentTimestamp, exp.CurrentTime, exp.Rand, exp.Uuid, exp.StrToUnix)
NON_DETERMINISTIC_NAMES = {"now", "current_timezone", "unix_timestamp", "random", "randn", "uuid", "rand",
                           "monotonically_increasing_id", "spark_partition_id", "input_file_name", "localtimestamp"}

PARTS = {exp.Year: "YEAR", exp.Quarter: "QUARTER", exp.Month: "MONTH", exp.Day: "DAY", exp.DayOfMonth: "DAY",
         exp.DayOfWeek: "DAYOFWEEK", exp.DayOfYear: "DOY", exp.WeekOfYear: "WEEK", exp.Hour: "HOUR",
         exp.Minute: "MINUTE", exp.Second: "SECOND_OF_MINUTE"}
"""The field each one-argument function extracts, as EXTRACT names it."""

SPELLING = {exp.TimestampTrunc: "date_trunc", exp.DateTrunc: "trunc", exp.TsOrDsToDate: "to_date",
            exp.TsOrDsAdd: "date_add", exp.DateDiff: "datediff", exp.AddMonths: "add_months",
            exp.DayOfMonth: "dayofmonth", exp.WeekOfYear: "weekofyear", exp.CurrentDate: "current_date",
            exp.CurrentTimestamp: "current_timestamp", exp.StrToUnix: "unix_timestamp"}
"""Spark's names for the sqlglot nodes that have other names."""


def spelled(node: exp.Expression) -> str:
    """The function's name as a user of Spark SQL writes it."""
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    return SPELLING.get(type(node), node.sql_name().lower())


def binds(node: exp.Expression) -> bool:
    """Whether ``node`` is a date or time call this module binds (or refuses by name)."""
    return (isinstance(node, (*PARTS, *NON_DETERMINISTIC, exp.Extract, exp.TsOrDsAdd, exp.DateDiff, exp.AddMonths,
                              exp.TimestampTrunc, exp.DateTrunc, exp.TsOrDsToDate, exp.LastDay))
            or (isinstance(node, exp.Anonymous) and node.name.lower() in NON_DETERMINISTIC_NAMES))


def bind(binder: Expressions, node: exp.Expression) -> Scalar:
    """The call ``node`` as a typed ``Scalar``.

    Raises:
        SqlError: a non-deterministic function, an argument of the wrong type, or a unit Spark does not take.
    """
    if isinstance(node, NON_DETERMINISTIC) or isinstance(node, exp.Anonymous):
        raise refuse(node, f"{spelled(node)}() depends on when it runs, not on the data, so its result cannot be "
                           f"kept up to date; pass the moment in as a column or a literal")
    if isinstance(node, tuple(PARTS)):
        return extract(binder, PARTS[type(node)], _as_date_argument(binder, node), node)
    if isinstance(node, exp.Extract):
        return extract(binder, node.this.name.upper(), binder.bind(node.expression), node)
    if isinstance(node, exp.TsOrDsAdd):
        days = _integer(binder, node.expression, node)
        return Call("date_add", (_date(binder, node.this, node), days), DATE, dates.add_days)
    if isinstance(node, exp.DateDiff):
        end, start = _date(binder, node.this, node), _date(binder, node.expression, node)
        return Call("datediff", (end, start), INT, dates.datediff)
    if isinstance(node, exp.AddMonths):
        months = _integer(binder, node.expression, node)
        return Call("add_months", (_date(binder, node.this, node), months), DATE, dates.add_months)
    if isinstance(node, exp.LastDay):
        return Call("last_day", (_date(binder, node.this, node),), DATE, dates.last_day)
    if isinstance(node, exp.TimestampTrunc):
        unit = _unit(node.args.get("unit"), node)
        value = binder.bind(node.this)
        value = _converted(value, TIMESTAMP, node)
        return Call(f"date_trunc {unit!r}", (value,), TIMESTAMP, lambda ts: dates.date_trunc(unit, ts))
    if isinstance(node, exp.DateTrunc):
        unit = _unit(node.args.get("unit"), node)
        return Call(f"trunc {unit!r}", (_date(binder, node.this, node),), DATE, lambda d: dates.trunc(d, unit))
    if isinstance(node, exp.TsOrDsToDate):
        form = node.args.get("format")
        if form is None:
            return _date(binder, node.this, node)
        if not (isinstance(form, exp.Literal) and form.is_string):
            raise refuse(node, "to_date takes its format as a literal string here")
        pattern = Spark().generator().format_time(node).strip("'")  # sqlglot keeps it as strftime; Spark's again
        text = binder.string(node.this)
        try:
            parse = dates.date_parser(pattern)
        except ValueError as error:
            raise refuse(node, f"to_date's format {pattern!r}: {error}") from None
        return Call(f"to_date {pattern!r}", (text,), DATE, parse)
    raise refuse(node, f"the function {spelled(node)}() is not in the SQL subset final/ compiles")


def interval(node: exp.Interval) -> dates.Interval:
    """An ``INTERVAL`` literal's amount.

    Raises:
        SqlError: its amount or unit is not one Spark takes.
    """
    amount = node.this
    unit = node.args.get("unit")
    if isinstance(unit, exp.IntervalSpan):
        unit_text = f"{unit.this.name} TO {unit.expression.name}"
    else:
        unit_text = unit.name if unit is not None else ""
    if not isinstance(amount, exp.Literal):
        raise refuse(node, "an INTERVAL's amount is a literal here (INTERVAL '3' DAY)")
    try:
        return dates.interval(amount.this, unit_text)
    except ValueError as error:
        raise refuse(node, f"INTERVAL {amount.sql()} {unit_text}: {error}") from None


def shifted(value: Scalar, amount: dates.Interval, sign: int, node: exp.Expression) -> Scalar:
    """``value + amount`` (``sign`` 1) or ``value - amount`` (-1) for a DATE or TIMESTAMP ``value``, typed as Spark
    types it.

    Raises:
        SqlError: ``value`` is no date or time, or Spark refuses this combination.
    """
    if value.type not in (DATE, TIMESTAMP):
        raise refuse(node, f"an INTERVAL is added to a DATE or TIMESTAMP, not {value.type}")
    try:
        result = SqlType(dates.interval_result_type(value.type.name, amount))
    except ValueError as error:
        raise refuse(node, str(error)) from None
    value = _converted(value, result, node)
    symbol = "+" if sign > 0 else "-"
    return Call(f"{symbol} {amount}", (value,), result, lambda v: dates.add_interval(v, amount, sign))


def extract(binder: Expressions, field: str, value: Scalar, node: exp.Expression) -> Scalar:
    """``EXTRACT(field FROM value)`` for a DATE or TIMESTAMP (a string is read as Spark reads it)."""
    if value.type == STRING:
        value = _converted(value, TIMESTAMP if field in ("HOUR", "MINUTE", "SECOND") else DATE, node)
    if value.type not in (DATE, TIMESTAMP, NULL):
        raise refuse(node, f"EXTRACT({field} FROM ...) needs a DATE or TIMESTAMP, not {value.type}")
    try:
        result = SqlType.of_text(dates.extract_type(field, value.type.name))
    except ValueError as error:
        raise refuse(node, str(error)) from None
    return Call(f"extract {field.lower()}", (value,), result, lambda v: dates.extract(field, v))


def _as_date_argument(binder: Expressions, node: exp.Expression) -> Scalar:
    """A one-argument date function's argument: sqlglot wraps it in an implicit ``to_date`` for some."""
    inner = node.this
    if isinstance(inner, exp.TsOrDsToDate) and inner.args.get("format") is None:
        inner = inner.this
    value = binder.bind(inner)
    if isinstance(node, (exp.Hour, exp.Minute, exp.Second)):
        return value
    return _converted(value, DATE, node) if value.type in (STRING, TIMESTAMP) else value


def _date(binder: Expressions, node: exp.Expression, call: exp.Expression) -> Scalar:
    inner = node.this if isinstance(node, exp.TsOrDsToDate) and node.args.get("format") is None else node
    value = binder.bind(inner)
    if value.type in (STRING, TIMESTAMP):
        return _converted(value, DATE, call)
    if value.type not in (DATE, NULL):
        raise refuse(call, f"{spelled(call)}() needs a DATE, not {value.type}")
    return value


def _integer(binder: Expressions, node: exp.Expression, call: exp.Expression) -> Scalar:
    value = binder.bind(node)
    if not (value.type.integral and value.type.name != "bigint") and value.type != NULL:
        raise refuse(call, f"{spelled(call)}() takes an INT, SMALLINT or TINYINT number of days or months, not "
                           f"{value.type}")
    return value


def _unit(node: exp.Expression | None, call: exp.Expression) -> str:
    if node is None or not isinstance(node, (exp.Literal, exp.Var)):
        raise refuse(call, f"{spelled(call)}() takes its unit as a literal here")
    return node.name.upper()


def _converted(value: Scalar, target: SqlType, node: exp.Expression) -> Scalar:
    from .expressions import converted  # expressions binds through this module: imported when first needed

    return converted(value, target)

