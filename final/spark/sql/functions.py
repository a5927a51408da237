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

FIELD_FUNCTIONS = {exp.Year: "year", exp.Quarter: "quarter", exp.Month: "month", exp.Day: "day",
                   exp.DayOfMonth: "dayofmonth", exp.DayOfWeek: "dayofweek", exp.DayOfYear: "dayofyear",
                   exp.WeekOfYear: "weekofyear", exp.Hour: "hour", exp.Minute: "minute", exp.Second: "second"}
"""The functions that read one field of a date or time (``dates.field_function``), by sqlglot's node."""

SPELLING = {exp.TimestampTrunc: "date_trunc", exp.DateTrunc: "trunc", exp.TsOrDsToDate: "to_date",
            exp.StrToTime: "to_timestamp", exp.TsOrDsAdd: "date_add", exp.DateDiff: "datediff",
            exp.AddMonths: "add_months", exp.CurrentDate: "current_date", exp.CurrentTimestamp: "current_timestamp",
            exp.StrToUnix: "unix_timestamp", exp.LogicalAnd: "bool_and", exp.LogicalOr: "bool_or",
            exp.VariancePop: "var_pop", exp.StrPosition: "locate", exp.RegexpLike: "rlike", **FIELD_FUNCTIONS}
"""Spark's names for the sqlglot nodes that have other names."""


def spelled(node: exp.Expression) -> str:
    """The function's name as a user of Spark SQL writes it (``date_trunc``, not sqlglot's ``TIMESTAMP_TRUNC``):
    Spark's name for it, as sqlglot writes the call back in Spark's dialect."""
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    if not isinstance(node, exp.Func):
        return node.key  # ``any(x)``, parsed as ANY, which is no function node
    if type(node) in SPELLING:
        return SPELLING[type(node)]
    written = node.sql(dialect="spark").split("(", 1)[0].strip()
    return (written if written.replace("_", "").isalnum() else node.sql_name()).lower()


def binds(node: exp.Expression) -> bool:
    """Whether ``node`` is a date or time call this module binds (or refuses by name)."""
    return (isinstance(node, (*FIELD_FUNCTIONS, *NON_DETERMINISTIC, exp.Extract, exp.TsOrDsAdd, exp.DateDiff,
                              exp.AddMonths, exp.TimestampTrunc, exp.DateTrunc, exp.TsOrDsToDate, exp.StrToTime,
                              exp.LastDay))
            or (isinstance(node, exp.Anonymous) and node.name.lower() in NON_DETERMINISTIC_NAMES))


def bind(binder: Expressions, node: exp.Expression) -> Scalar:
    """The call ``node`` as a typed ``Scalar``.

    Raises:
        SqlError: a non-deterministic function, an argument of the wrong type, or a field, unit or pattern Spark
            does not take.
    """
    if isinstance(node, NON_DETERMINISTIC) or isinstance(node, exp.Anonymous):
        raise refuse(node, f"{spelled(node)}() depends on when it runs, not on the data, so its result cannot be "
                           f"kept up to date; pass the moment in as a column or a literal")
    if type(node) in FIELD_FUNCTIONS:
        name = FIELD_FUNCTIONS[type(node)]
        value = _moment(binder, node.this, node, TIMESTAMP if name in ("hour", "minute", "second") else DATE)
        return Call(name, (value,), dates.RESULT_TYPES[name], lambda v: dates.field_function(name, v))
    if isinstance(node, exp.Extract):
        field = node.this.name.upper()
        try:
            result = dates.extract_type(field)
        except ValueError as error:
            raise refuse(node, str(error)) from None
        of_time = dates.EXTRACT_FIELDS[field] in ("hour", "minute", "second")
        value = _moment(binder, node.expression, node, TIMESTAMP if of_time else DATE)
        return Call(f"extract {field.lower()}", (value,), result, lambda v: dates.extract(field, v))
    if isinstance(node, exp.TsOrDsAdd):
        days = _days(binder, node.expression, node)
        return Call("date_add", (_date(binder, node.this, node), days), DATE, dates.add_days)
    if isinstance(node, exp.DateDiff):
        end, start = _date(binder, node.this, node), _date(binder, node.expression, node)
        return Call("datediff", (end, start), INT, dates.datediff)
    if isinstance(node, exp.AddMonths):
        months = _days(binder, node.expression, node)
        return Call("add_months", (_date(binder, node.this, node), months), DATE, dates.add_months)
    if isinstance(node, exp.LastDay):
        return Call("last_day", (_date(binder, node.this, node),), DATE, dates.last_day)
    if isinstance(node, exp.TimestampTrunc):
        unit = _unit(node.args.get("unit"), node)
        value = _moment(binder, node.this, node, TIMESTAMP)
        value = _converted(value, TIMESTAMP) if value.type == DATE else value  # a DATE truncates as its midnight
        return Call(f"date_trunc {unit!r}", (value,), TIMESTAMP, lambda ts: dates.date_trunc(unit, ts))
    if isinstance(node, exp.DateTrunc):
        unit = _unit(node.args.get("unit"), node)
        return Call(f"trunc {unit!r}", (_date(binder, node.this, node),), DATE, lambda d: dates.trunc(d, unit))
    if isinstance(node, (exp.TsOrDsToDate, exp.StrToTime)):
        return _parsed(binder, node)
    raise refuse(node, f"the function {spelled(node)}() is not in the SQL subset final/ compiles")


def _parsed(binder: Expressions, node: exp.Expression) -> Scalar:
    """``to_date(text[, pattern])`` and ``to_timestamp(text, pattern)``."""
    target = DATE if isinstance(node, exp.TsOrDsToDate) else TIMESTAMP
    if node.args.get("format") is None:
        return _moment(binder, node.this, node, target)
    form = node.args["format"]
    if not (isinstance(form, exp.Literal) and form.is_string):
        raise refuse(node, f"{spelled(node)} takes its pattern as a literal string here")
    pattern = Spark().generator().format_time(node).strip("'")  # sqlglot keeps it as strftime; Spark's again
    try:
        dates.datetime_pattern(pattern)
    except ValueError as error:
        raise refuse(node, f"{spelled(node)}'s pattern {pattern!r}: {error}") from None
    parse = dates.to_date if target == DATE else dates.to_timestamp
    return Call(f"{spelled(node)} {pattern!r}", (binder.string(node.this),), target, lambda text: parse(text, pattern))


def is_interval(node: exp.Expression) -> bool:
    """Whether ``node`` is an INTERVAL literal, or a sum or difference of them (``INTERVAL 1 DAY 2 HOURS``)."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, (exp.Add, exp.Sub)):
        return is_interval(node.this) and is_interval(node.expression)
    return isinstance(node, exp.Interval)


def interval(node: exp.Expression) -> dates.Interval:
    """The amount of an INTERVAL literal (or of a sum or difference of them).

    Raises:
        SqlError: an amount or unit Spark refuses, or year-month and day-time intervals mixed.
    """
    while isinstance(node, exp.Paren):
        node = node.this
    try:
        if isinstance(node, (exp.Add, exp.Sub)):
            return dates.add_intervals(interval(node.this), interval(node.expression),
                                       1 if isinstance(node, exp.Add) else -1)
        amount, unit = node.this, node.args.get("unit")
        if isinstance(unit, exp.IntervalSpan):
            unit_text = f"{unit.this.name} TO {unit.expression.name}"
        else:
            unit_text = unit.name if unit is not None else None
        if not isinstance(amount, exp.Literal):
            raise refuse(node, "an INTERVAL's amount is a literal here (INTERVAL '3' DAY)")
        return dates.interval(amount.this, unit_text)
    except ValueError as error:
        raise refuse(node, f"{node.sql(dialect='spark')}: {error}") from None


def shifted(value: Scalar, amount: dates.Interval, sign: int, node: exp.Expression) -> Scalar:
    """``value + amount`` (``sign`` 1) or ``value - amount`` (-1) for a DATE or TIMESTAMP ``value``, typed as Spark
    types it.

    Raises:
        SqlError: ``value`` is no date or time.
    """
    try:
        result = dates.interval_result_type(value.type, amount)
    except ValueError as error:
        raise refuse(node, str(error)) from None
    symbol = "+" if sign > 0 else "-"
    return Call(f"{symbol} {amount.type}", (value,), result, lambda v: dates.add_interval(v, amount, sign))


def _moment(binder: Expressions, node: exp.Expression, call: exp.Expression, target: SqlType) -> Scalar:
    """A date or time argument: a DATE or TIMESTAMP as it is (a string read as ``target``); sqlglot wraps some in an
    implicit ``to_date``, which is unwrapped."""
    if isinstance(node, exp.TsOrDsToDate) and node.args.get("format") is None:
        node = node.this
    value = binder.bind(node)
    if value.type == STRING:
        return _converted(value, target)
    if value.type not in (DATE, TIMESTAMP, NULL):
        raise refuse(call, f"{spelled(call)}() needs a DATE or TIMESTAMP, not {value.type}")
    return value


def _date(binder: Expressions, node: exp.Expression, call: exp.Expression) -> Scalar:
    """A DATE argument: a TIMESTAMP's day, a string read as a date."""
    value = _moment(binder, node, call, DATE)
    return _converted(value, DATE) if value.type == TIMESTAMP else value


def _days(binder: Expressions, node: exp.Expression, call: exp.Expression) -> Scalar:
    """A number of days or months: TINYINT, SMALLINT or INT, a string read as an INT, as Spark takes them."""
    value = binder.bind(node)
    if value.type == STRING:
        return _converted(value, INT)
    if value.type.name not in dates.DAY_COUNT_TYPES and value.type != NULL:
        raise refuse(call, f"{spelled(call)}() takes an INT, SMALLINT or TINYINT number, not {value.type}")
    return value


def _unit(node: exp.Expression | None, call: exp.Expression) -> str:
    if node is None or not isinstance(node, (exp.Literal, exp.Var)):
        raise refuse(call, f"{spelled(call)}() takes its unit as a literal here")
    return node.name.upper()


def _converted(value: Scalar, target: SqlType) -> Scalar:
    from .expressions import converted  # expressions binds through this module: imported when first needed

    return converted(value, target)
