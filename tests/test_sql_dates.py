"""``final/spark/sql/dates.py`` against Spark 4.3 itself: DATE, TIMESTAMP and interval values, types and errors.

Each case is a Spark SQL expression over literals and the call of ``dates``
that should give the same value, of the type ``dates`` says (its
``RESULT_TYPES``, ``extract_type``, ``interval_result_type``). The value
cases of a group run as one SELECT with a column each; a case Spark raises
for runs alone, and ``dates`` must raise a ``SqlRuntimeError`` of the same
error class. Cases Spark refuses while parsing or analysing the query are
a ``ValueError`` here (the compiler refuses them). Results outside the
years 1..9999 are Spark values Python cannot hold: Spark prints them, and
``dates`` raises ``DateRangeError``.

Interval literals are read the way the compiler reads them: parsed by
sqlglot, then ``interval`` on the literal's text and unit.
"""

from __future__ import annotations

import doctest
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

import pytest
import sqlglot
from sqlglot import exp

from final.spark.sql import dates
from final.spark.sql.dates import (
    DATE,
    DAY_COUNT_TYPES,
    RESULT_TYPES,
    TIMESTAMP,
    DateRangeError,
    Interval,
    add_days,
    add_interval,
    add_intervals,
    add_months,
    date_literal,
    date_to_timestamp,
    date_trunc,
    datediff,
    datetime_pattern,
    extract,
    extract_type,
    field_function,
    format_date,
    format_timestamp,
    interval,
    interval_result_type,
    months_between,
    parse_date,
    parse_timestamp,
    timestamp_literal,
    timestamp_micros,
    timestamp_to_date,
    to_date,
    to_timestamp,
    trunc,
)
from final.spark.sql.errors import SqlRuntimeError
from final.spark.sql.types import INT, STRING, SqlType, cast


@dataclass(frozen=True)
class Agreeing:
    """``sql`` evaluates in Spark to what ``mine()`` returns, and Spark types it ``type``."""

    sql: str
    mine: Callable[[], Any]
    type: SqlType


@dataclass(frozen=True)
class Failing:
    """Spark raises ``condition`` (its error class) evaluating ``sql``; ``mine()`` raises a SqlRuntimeError whose
    message starts with it."""

    sql: str
    mine: Callable[[], Any]
    condition: str


@dataclass(frozen=True)
class Refused:
    """Spark refuses ``sql`` before running it (parse or analysis); ``mine()`` raises a ValueError."""

    sql: str
    mine: Callable[[], Any]


@dataclass(frozen=True)
class Beyond:
    """Spark evaluates ``sql`` to a date or time outside the years 1..9999; ``mine()`` raises DateRangeError."""

    sql: str
    mine: Callable[[], Any]


def quoted(text: str) -> str:
    """``text`` as a Spark SQL string literal: quotes and backslashes escaped, non-printable characters as
    ``\\uXXXX``."""
    body = "".join(character if " " <= character <= "~" and character not in "'\\" else
                   ("\\" + character if character in "'\\" else f"\\u{ord(character):04x}") for character in text)
    return f"'{body}'"


def day(text: str) -> date:
    return date.fromisoformat(text)


def moment(text: str) -> datetime:
    return datetime.fromisoformat(text)


# CAST(string AS DATE | TIMESTAMP), literals, printing, casts -------------------------------------------------

DATE_TEXTS = ["2020", "2020-1", "2020-01", "2020-1-5", "2020-01-05", "2020-01-05 garbage", "2020-01-05T garbage",
              "2020-01-05Tgarbage", "  2020-01-05  ", "\t2020-01-05\n", "\x0b\x1c2020-01-05\x1f\x01",
              "\x7f2020-01-05\x7f", "2020-02-29", "02020-01-01", "+2020-01-01", "0001-01-01", "9999-12-31",
              "2020-01-05 ", "2020-01-05T", "2020-01 ", "2020 ", "2020-12-31 23:59:59"]
BAD_DATE_TEXTS = ["2020-01-05x", "2020-02-30", "2019-02-29", "2020-04-31", "20", "200", "2020-13-01", "2020-00-10",
                  "2020-01-00", "2020-001-01", "2020-01-001", "", " ", "2020T", "2020-01T", "2020-", "2020-01-",
                  "2020/01/05", "\u0661\u0662\u0663\u0664-01-01", "\u00a02020-01-01", "2020-01-01\u3000",
                  "\u00852020-01-01", "12345678-01-01", "T2020-01-01", "+ 2020-01-01", "--2020-01-01"]
DATE_TEXTS_BEYOND = ["12020-01-01", "-2020-01-01", "0000-01-01", "+1234567-01-01"]

TIMESTAMP_TEXTS = [
    "2020-01-01 ", "2020", "2020-1", "2020-01-01 1", "2020-01-01 1:2", "2020-01-01 1:2:3", "2020-01-01T01:02:03.1",
    "2020-01-01 01:02:03.123456789", "2020-01-01 01:02:03.", "2020-01-01 01:02:03Z", "2020-01-01 01:02:03.Z",
    "2020-01-01 01:02:03 +01:00", "2020-01-01 01:02:03+01:00", "2020-01-01 01:02:03.5-0130",
    "2020-01-01 01:02:03 UTC", "2020-01-01 01:02:03 GMT", "2020-01-01 01:02:03 UT",
    "2020-07-01 12:00:00 America/New_York",
    "2020-07-01 12:00:00 PST", "2020-07-01 12:00:00 CST", "2020-07-01 12:00:00 EST", "2020-07-01 12:00:00 GMT+8",
    "2020-07-01 12:00:00 UTC+01:30", "2020-07-01 12:00:00 UT-5", "2020-07-01 12:00:00 +1:00",
    "2020-07-01 12:00:00 +01:3", "2020-07-01 12:00:00 GMT+1:3", "2020-07-01 12:00:00 +18:00",
    "2020-07-01 12:00:00 -18:00", "2020-07-01 12:00:00 +01:30:15", "2020-07-01 12:00:00 +013015",
    "2020-07-01 12:00:00 +1", "2020-07-01 12:00:00 -00", "2020-07-01 12:00:00 Etc/GMT+5",
    "2020-07-01 12:00:00 Europe/Paris", "2020-07-01 12:00:00 ROK", "2020-07-01 12:00:00 US/Eastern",
    "2020-01-01 12:00:00 Z ", "2020-01-01 01:02:03.1234567+01:00", "2020-01-01T01:02:03 Europe/Paris",
    "2020-03-08 02:30:00 America/New_York", "2020-11-01 01:30:00 America/New_York", "0001-01-01 00:00:00",
    "9999-12-31 23:59:59.999999", "1969-12-31 23:59:59.999999", "2020-02-29 00:00:00", " 2020-02-29 10:00 ",
    "10000-01-01 00:00:00 Asia/Tokyo", "0000-12-31 23:00:00 -05:00",
]
BAD_TIMESTAMP_TEXTS = [
    "2020-01-01T", "2020-01-01 01:02:03 bogus", "2020-01-01 01:02:03 +19:00", "2020-01-01 01:02:03 +18:01",
    "2020-01-01 01:02 +01:00", "2020-01-01 24:00:00", "2020-01-01 23:60:00", "2020-01-01 23:59:60", " T12:34:56",
    "2020-01-01 12:00:00 z", "2020-01-01 12:00:00 utc", "2020-01-01 12:00:00 europe/paris",
    "2020-01-01 12:00:00 +001", "2020-01-01 12:00:00 +123", "2020-01-01 12:00:00 GMT+", "294248-01-01",
    "2020-01-01 001:02:03", "2020-01-01 01:02:03:04", "2020-01-01  01:02:03", "2019-02-29 00:00:00", "x", "",
    "2020-01-01 12:", "2020-01-01 12:00:", "-12:00:00", "T", "2020-01-01 12:00:00 America/New York",
]
TIMESTAMP_TEXTS_BEYOND = ["+10000-01-01", "0001-01-01 00:00:00+01:00", "9999-12-31 23:00:00 -05:00", "-0001-01-01"]

CASTS = [
    *(Agreeing(f"CAST({quoted(text)} AS DATE)", lambda text=text: parse_date(text), DATE) for text in DATE_TEXTS),
    *(Agreeing(f"CAST({quoted(text)} AS TIMESTAMP)", lambda text=text: parse_timestamp(text), TIMESTAMP)
      for text in TIMESTAMP_TEXTS),
    *(Agreeing(f"DATE {quoted(text)}", lambda text=text: date_literal(text), DATE)
      for text in ["2020", "2020-1", " 2020-01-05 x", "2020-02-29"]),
    *(Agreeing(f"TIMESTAMP {quoted(text)}", lambda text=text: timestamp_literal(text), TIMESTAMP)
      for text in ["2020", "2020-01-05 10:00:00 +01:00", "2020-01-05T10:11:12.000001"]),
    *(Agreeing(f"CAST(DATE'{text}' AS STRING)", lambda text=text: format_date(day(text)), STRING)
      for text in ["0001-01-01", "0999-12-31", "2020-02-29", "9999-12-31"]),
    *(Agreeing(f"CAST(TIMESTAMP'{text}' AS STRING)", lambda text=text: format_timestamp(moment(text)), STRING)
      for text in ["2020-01-01 01:02:03.100", "2020-01-01 01:02:03.123456", "2020-01-01 00:00:00",
                   "0001-01-01 00:00:00.000010", "0999-12-31 23:59:59.5", "9999-12-31 23:59:59.999999"]),
    *(Agreeing(f"CAST(DATE'{text}' AS TIMESTAMP)", lambda text=text: date_to_timestamp(day(text)), TIMESTAMP)
      for text in ["2020-01-01", "0001-01-01", "9999-12-31", "1969-12-31"]),
    *(Agreeing(f"CAST(TIMESTAMP'{text}' AS DATE)", lambda text=text: timestamp_to_date(moment(text)), DATE)
      for text in ["2020-01-01 23:59:59.999999", "1969-12-31 23:59:59.5", "0001-01-01 00:00:00",
                   "1970-01-01 00:00:00"]),
]

# Day and month arithmetic -----------------------------------------------------------------------------------

ADD_DAYS = [("2020-01-01", 1), ("2020-01-01", -1), ("2020-02-28", 1), ("2019-02-28", 1), ("2020-12-31", 1),
            ("2020-03-01", -1), ("2020-01-01", 366), ("2020-01-01", -737424), ("0001-01-01", 3652058)]
ADD_MONTHS = [("2020-01-31", 1), ("2020-02-29", 1), ("2020-02-29", 12), ("2019-02-28", 12), ("2020-03-31", -1),
              ("2020-01-31", -2), ("2020-04-30", 1), ("2020-12-15", 1), ("2021-01-15", -1), ("2020-01-31", 0),
              ("2020-05-31", -3), ("2020-05-31", -15), ("0001-01-31", 1), ("9999-12-31", -1), ("2020-08-31", 25)]
DATEDIFF = [("2020-03-01", "2020-02-01"), ("2020-02-01", "2020-03-01"), ("9999-12-31", "0001-01-01"),
            ("2020-01-01", "2020-01-01"), ("2021-01-01", "2020-12-31"), ("2020-03-01", "2020-02-28"),
            ("2019-03-01", "2019-02-28")]
MONTHS_BETWEEN = [("2020-03-31", "2020-02-29"), ("2020-03-15", "2020-02-01"), ("1997-02-28 10:30:00", "1996-10-30"),
                  ("2020-01-31 23:59:59.999", "2020-01-01"), ("2020-01-01", "2020-03-15"),
                  ("2020-02-29", "2020-01-31"), ("2021-02-28", "2020-02-29"), ("2020-03-30", "2020-02-29"),
                  ("2020-01-15 12:00:00", "2020-01-15 00:00:00"), ("2020-01-16 00:00:00", "2020-01-15 23:59:59")]


def _random_moments(count: int) -> list[tuple[str, str]]:
    """Pairs of times spread over centuries, with seconds: enough cases that rounding to 8 places is exercised."""
    generator = random.Random(20260430)
    start = datetime(1900, 1, 1)

    def one() -> str:
        return str(start + timedelta(seconds=generator.randrange(0, 200 * 365 * 86_400)))

    return [(one(), one()) for _ in range(count)]


ARITHMETIC = [
    *(Agreeing(f"date_add(DATE'{text}', {count})", lambda text=text, count=count: add_days(day(text), count),
               RESULT_TYPES["date_add"]) for text, count in ADD_DAYS),
    *(Agreeing(f"date_sub(DATE'{text}', {count})", lambda text=text, count=count: add_days(day(text), -count),
               RESULT_TYPES["date_sub"]) for text, count in ADD_DAYS if text != "0001-01-01"),
    Agreeing("DATE'2020-03-01' - 1", lambda: add_days(date(2020, 3, 1), -1), RESULT_TYPES["date_sub"]),
    Agreeing("1 + DATE'2020-02-28'", lambda: add_days(date(2020, 2, 28), 1), RESULT_TYPES["date_add"]),
    Agreeing("date_add(DATE'2020-01-01', CAST(1 AS TINYINT))", lambda: add_days(date(2020, 1, 1), 1), DATE),
    Agreeing("date_add(DATE'2020-01-01', '7')", lambda: add_days(date(2020, 1, 1), cast("7", STRING, INT)), DATE),
    Agreeing("date_add(TIMESTAMP'2020-01-01 23:00:00', 1)",
             lambda: add_days(timestamp_to_date(datetime(2020, 1, 1, 23)), 1), DATE),
    *(Agreeing(f"add_months(DATE'{text}', {count})", lambda text=text, count=count: add_months(day(text), count),
               RESULT_TYPES["add_months"]) for text, count in ADD_MONTHS),
    Agreeing("add_months(DATE'2020-01-31', -1.9)", lambda: add_months(date(2020, 1, 31), -1), DATE),
    *(Agreeing(f"datediff(DATE'{end}', DATE'{start}')", lambda end=end, start=start: datediff(day(end), day(start)),
               RESULT_TYPES["datediff"]) for end, start in DATEDIFF),
    *(Agreeing(f"months_between(TIMESTAMP'{later}', TIMESTAMP'{earlier}')",
               lambda later=later, earlier=earlier: months_between(moment(later), moment(earlier)),
               RESULT_TYPES["months_between"]) for later, earlier in [*MONTHS_BETWEEN, *_random_moments(40)]),
    *(Agreeing(f"months_between(TIMESTAMP'{later}', TIMESTAMP'{earlier}', false)",
               lambda later=later, earlier=earlier: months_between(moment(later), moment(earlier), round_off=False),
               RESULT_TYPES["months_between"]) for later, earlier in MONTHS_BETWEEN),
    Agreeing("months_between(DATE'2020-03-15', DATE'2020-02-01')",
             lambda: months_between(date(2020, 3, 15), date(2020, 2, 1)), RESULT_TYPES["months_between"]),
]

# Intervals --------------------------------------------------------------------------------------------------


def compiled_interval(node: exp.Expression) -> Interval:
    """The interval an expression sqlglot parsed denotes, read as the compiler reads it."""
    if isinstance(node, exp.Neg):
        return compiled_interval(node.this).negated()
    if isinstance(node, (exp.Add, exp.Sub)):
        return add_intervals(compiled_interval(node.this), compiled_interval(node.expression),
                             1 if isinstance(node, exp.Add) else -1)
    assert isinstance(node, exp.Interval), node
    unit = node.args.get("unit")
    if isinstance(unit, exp.IntervalSpan):
        unit_text = f"{unit.this.name} TO {unit.expression.name}"
    else:
        unit_text = None if unit is None else unit.name
    if isinstance(node.this, exp.Neg):
        return interval(node.this.this.name, unit_text).negated()
    return interval(node.this.name, unit_text)


def literal_interval(sql: str) -> Interval:
    return compiled_interval(sqlglot.parse_one(sql, read="spark"))


INTERVALS = [
    "INTERVAL '3' MONTH", "INTERVAL 1 YEAR", "INTERVAL '90' DAY", "INTERVAL '1-2' YEAR TO MONTH", "INTERVAL 3 HOURS",
    "INTERVAL '-3' MONTH", "INTERVAL -3 MONTH", "INTERVAL '+3' MONTH", "-INTERVAL '3' MONTH", "INTERVAL -'3' MONTH",
    "INTERVAL -'-3' MONTH", "INTERVAL '-1-2' YEAR TO MONTH", "INTERVAL -'1-2' YEAR TO MONTH",
    "INTERVAL '0-11' YEAR TO MONTH", "INTERVAL ' 1-2 ' YEAR TO MONTH", "INTERVAL '1 2:03:04.5' DAY TO SECOND",
    "INTERVAL '-1 2:03:04.123456789' DAY TO SECOND", "INTERVAL '1 2:03' DAY TO MINUTE", "INTERVAL '1 2' DAY TO HOUR",
    "INTERVAL '2:03:04' HOUR TO SECOND", "INTERVAL '03:04.5' MINUTE TO SECOND", "INTERVAL '25:03' HOUR TO MINUTE",
    "INTERVAL '-3:04' HOUR TO MINUTE", "INTERVAL '1 2:3:4' DAY TO SECOND", "INTERVAL '100 2' DAY TO HOUR",
    "INTERVAL '61:03' MINUTE TO SECOND", "INTERVAL '1.5' SECOND", "INTERVAL '-1.5' SECOND", "INTERVAL '.5' SECOND",
    "INTERVAL '1.' SECOND", "INTERVAL '59.999999999' SECOND", "INTERVAL '- 0.5' SECOND", "INTERVAL '+ 0.5' SECOND",
    "INTERVAL 2 WEEKS", "INTERVAL 2 MILLISECONDS", "INTERVAL 2 MICROSECOND", "INTERVAL '3 months'",
    "INTERVAL '1 day 2 hours'", "INTERVAL '1 year -2 months'", "INTERVAL '1 day 2 hours 3 minutes 4.5 seconds'",
    "INTERVAL '1 day 1 day'", "INTERVAL 1 YEAR 2 MONTHS", "INTERVAL 1 DAY 2 HOURS",
    "INTERVAL '1' DAY - INTERVAL '2' HOURS",
    "INTERVAL '1' SECOND + INTERVAL '2' DAY", "INTERVAL '1' MONTH + INTERVAL '2' YEAR", "INTERVAL '100' HOUR",
    "INTERVAL 1 month", "INTERVAL '3' Month", "INTERVAL ' 3 ' MONTH", "INTERVAL '03' MONTH", "INTERVAL '0' DAY",
    "INTERVAL '3' YEARS", "INTERVAL '3' MINUTES", "INTERVAL '100000' SECOND", "INTERVAL '-2147483648' MONTH",
    "INTERVAL '-178956970-8' YEAR TO MONTH", "INTERVAL '178956970' YEAR",
]
"""Interval literals Spark takes; each is checked by its type and by adding it to a time (the value)."""

INTERVAL_ARITHMETIC = [
    ("DATE'2020-01-31'", "+", "INTERVAL '1' MONTH"),
    ("DATE'2020-01-31'", "+", "INTERVAL '1' DAY"),
    ("DATE'2020-01-31'", "+", "INTERVAL '1' HOUR"),
    ("DATE'2020-02-29'", "+", "INTERVAL '1' YEAR"),
    ("DATE'2020-03-31'", "-", "INTERVAL '1' MONTH"),
    ("TIMESTAMP'2020-01-31 10:00:00'", "+", "INTERVAL '1' MONTH"),
    ("TIMESTAMP'2020-01-31 10:00:00'", "+", "INTERVAL '1' DAY"),
    ("TIMESTAMP'2020-01-31 22:00:00'", "+", "INTERVAL 3 HOURS"),
    ("DATE'2020-01-31'", "+", "INTERVAL '1 2:03:04' DAY TO SECOND"),
    ("DATE'2020-01-31'", "+", "INTERVAL '1 2' DAY TO HOUR"),
    ("DATE'2020-01-31'", "+", "INTERVAL '1.5' SECOND"),
    ("DATE'2020-01-10'", "-", "INTERVAL 1 DAY 2 HOURS"),
    ("DATE'2020-01-10'", "+", "INTERVAL 2 WEEKS"),
    ("DATE'2020-01-10'", "+", "INTERVAL '24' HOUR"),
    ("DATE'2020-01-01'", "-", "INTERVAL '-1' DAY"),
    ("TIMESTAMP'2020-01-31 10:00:00'", "-", "INTERVAL '1' MONTH"),
    ("TIMESTAMP'2020-01-31 10:00:00'", "+", "INTERVAL '1-1' YEAR TO MONTH"),
    ("DATE'2021-03-31'", "+", "INTERVAL '-1' MONTH"),
    ("DATE'2020-12-31'", "+", "INTERVAL '1' DAY"),
    ("TIMESTAMP'2020-12-31 23:59:59.999999'", "+", "INTERVAL '0.000001' SECOND"),
    ("TIMESTAMP'2020-03-01 00:00:00'", "-", "INTERVAL '1 0:00:00.000001' DAY TO SECOND"),
    ("TIMESTAMP'2020-02-29 12:00:00'", "+", "INTERVAL '1-0' YEAR TO MONTH"),
    ("DATE'2020-01-10'", "+", "INTERVAL '1 day 2 hours'"),
    ("DATE'2020-01-10'", "+", "INTERVAL '1 year -2 months'"),
    ("DATE'0001-01-01'", "+", "INTERVAL '0 0:00:00.5' DAY TO SECOND"),
]
"""``value ± interval``; ``interval + value`` is the same in Spark (checked below for a few)."""


def _value_of(sql: str) -> date | datetime:
    return eval_literal(sqlglot.parse_one(sql, read="spark"))


def eval_literal(node: exp.Expression) -> date | datetime:
    """A DATE or TIMESTAMP literal's value, read as the compiler reads it (sqlglot makes both a CAST)."""
    assert isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal), node
    if node.to.this == exp.DataType.Type.DATE:
        return date_literal(node.this.name)
    return timestamp_literal(node.this.name)


def _interval_case(value_sql: str, sign: str, interval_sql: str) -> Agreeing:
    value, amount = _value_of(value_sql), literal_interval(interval_sql)
    kind = interval_result_type(DATE if type(value) is date else TIMESTAMP, amount)
    return Agreeing(f"{value_sql} {sign} {interval_sql}",
                    lambda: add_interval(value, amount, 1 if sign == "+" else -1), kind)


INTERVAL_CASES = [
    *(Agreeing(f"typeof({sql})", lambda sql=sql: str(literal_interval(sql).type), STRING) for sql in INTERVALS),
    *(Agreeing(f"TIMESTAMP'2000-01-31 00:00:00' + ({sql})",
               lambda sql=sql: add_interval(datetime(2000, 1, 31), literal_interval(sql)), TIMESTAMP)
      for sql in INTERVALS if abs(literal_interval(sql).months) < 12_000),
    *(_interval_case(value, sign, amount) for value, sign, amount in INTERVAL_ARITHMETIC),
    *(Agreeing(f"{amount} + {value}", _interval_case(value, "+", amount).mine, _interval_case(value, "+", amount).type)
      for value, sign, amount in INTERVAL_ARITHMETIC[:4] if sign == "+"),
]

# Fields and truncation ------------------------------------------------------------------------------------

FIELD_VALUES = ["DATE'2021-01-03'", "TIMESTAMP'2021-01-03 10:11:12.5'", "DATE'2020-12-31'", "DATE'2021-01-01'",
                "DATE'2019-12-30'", "DATE'2016-01-01'", "DATE'2020-02-29'", "DATE'0001-01-01'",
                "TIMESTAMP'9999-12-31 23:59:59.999999'", "TIMESTAMP'2021-06-15 00:00:00.000001'"]
TRUNC_TEXTS = [*dates.DATE_TRUNC_UNITS, "year", "quarter", "mm", "month", "week", "dd", "day", "hour", "minute",
               "second", "Y", "Q", "M", "W", "D", "H", "bogus", "", "DAYS", "HOURS", "MONTHS", " year", "year "]
TRUNC_MOMENTS = ["2021-05-19 10:11:12.345678", "2021-01-01 00:00:00", "2020-02-29 23:59:59.999999",
                 "0001-01-03 12:00:00", "9999-12-31 23:59:59.999999"]

FIELDS = [
    *(Agreeing(f"EXTRACT({field} FROM {value})", lambda field=field, value=value: extract(field, _value_of(value)),
               extract_type(field))
      for field in [*dates.EXTRACT_FIELDS, "year", "Dow_Iso"] for value in FIELD_VALUES[:2]),
    *(Agreeing(f"EXTRACT({field} FROM {value})", lambda field=field, value=value: extract(field, _value_of(value)),
               extract_type(field)) for field in ["WEEK", "YEAROFWEEK", "DOW", "DOW_ISO", "DOY", "QUARTER", "SECOND"]
      for value in FIELD_VALUES[2:]),
    *(Agreeing(f"{name}({value})", lambda name=name, value=value: field_function(name, _value_of(value)),
               RESULT_TYPES[name]) for name in dates.FIELD_FUNCTIONS for value in FIELD_VALUES),
    *(Agreeing(f"date_trunc({quoted(unit)}, TIMESTAMP'{text}')",
               lambda unit=unit, text=text: date_trunc(unit, moment(text)), RESULT_TYPES["date_trunc"])
      for unit in TRUNC_TEXTS for text in TRUNC_MOMENTS[:2]),
    *(Agreeing(f"date_trunc({quoted(unit)}, TIMESTAMP'{text}')",
               lambda unit=unit, text=text: date_trunc(unit, moment(text)), RESULT_TYPES["date_trunc"])
      for unit in dates.DATE_TRUNC_UNITS for text in TRUNC_MOMENTS[2:]),
    Agreeing("date_trunc('MONTH', DATE'2021-05-19')", lambda: date_trunc("MONTH", date_to_timestamp(date(2021, 5, 19))),
             RESULT_TYPES["date_trunc"]),
    *(Agreeing(f"trunc(DATE'{text[:10]}', {quoted(unit)})", lambda unit=unit, text=text: trunc(day(text[:10]), unit),
               RESULT_TYPES["trunc"]) for unit in TRUNC_TEXTS for text in TRUNC_MOMENTS),
    Agreeing("trunc(TIMESTAMP'2021-05-19 10:00:00', 'MM')",
             lambda: trunc(timestamp_to_date(datetime(2021, 5, 19, 10)), "MM"), RESULT_TYPES["trunc"]),
]

# to_date and to_timestamp -----------------------------------------------------------------------------------

PATTERNS = [
    ("2020-01-05", "yyyy-MM-dd"), ("05/01/2020", "dd/MM/yyyy"), ("20200105", "yyyyMMdd"),
    ("2020-01-05 10:11:12", "yyyy-MM-dd HH:mm:ss"), ("2020", "yyyy"), ("2020-05", "yyyy-MM"), ("10:11", "HH:mm"),
    ("05", "dd"), ("10", "MM"), ("2020-01-05T10:11:12", "yyyy-MM-dd'T'HH:mm:ss"),
    ("2020-01-05t10:11:12", "yyyy-MM-dd'T'HH:mm:ss"), ("2020.01.05", "yyyy.MM.dd"), ("2020 01 05", "yyyy MM dd"),
    ("2020:01:05", "yyyy:MM:dd"), ("2020/01/05", "yyyy/MM/dd"), ("2020,01,05", "yyyy,MM,dd"),
    ("2020_01_05", "yyyy_MM_dd"), ("2020-01-05", "yyyy-dd-MM"), ("2020-01-05-05", "yyyy-MM-dd-dd"),
    ("2020x01x05", "yyyy'x'MM'x'dd"), ("2020X01X05", "yyyy'x'MM'x'dd"), ("20200105 010203", "yyyyMMdd HHmmss"),
    ("20200105010203", "yyyyMMddHHmmss"), ("2020-31", "yyyy-dd"), ("2020'01", "yyyy''MM"),
    ("2020-01-05 23:59:59", "yyyy-MM-dd HH:mm:ss"), ("2020-02-29", "yyyy-MM-dd"), ("0001-01-01", "yyyy-MM-dd"),
    ("9999-12-31 23:59:59", "yyyy-MM-dd HH:mm:ss"), ("2020-01-05 at 10", "yyyy-MM-dd 'at' HH"),
    ("05.01.2020 10h11", "dd.MM.yyyy HH'h'mm"), ("1:2020", "'1:'yyyy"),
]
BAD_PATTERNS = [
    ("2020-1-5", "yyyy-MM-dd"), ("2020-01-05 ", "yyyy-MM-dd"), (" 2020-01-05", "yyyy-MM-dd"),
    ("2020-01-05x", "yyyy-MM-dd"), ("2020-02-30", "yyyy-MM-dd"), ("2019-02-29", "yyyy-MM-dd"),
    ("2020-13-05", "yyyy-MM-dd"), ("2020-00-05", "yyyy-MM-dd"), ("2020-01-00", "yyyy-MM-dd"),
    ("2020-01-32", "yyyy-MM-dd"), ("20-01-05", "yyyy-MM-dd"), ("020-01-05", "yyyy-MM-dd"),
    ("02020-01-05", "yyyy-MM-dd"), ("12020-01-05", "yyyy-MM-dd"), ("+2020-01-05", "yyyy-MM-dd"),
    ("2020-01-5", "yyyy-MM-dd"), ("2020-001-05", "yyyy-MM-dd"), ("2020-01-05 24:11:12", "yyyy-MM-dd HH:mm:ss"),
    ("2020-01-05 23:60:12", "yyyy-MM-dd HH:mm:ss"), ("2020-01-05 23:11:60", "yyyy-MM-dd HH:mm:ss"),
    ("2020-01-05 1:11:12", "yyyy-MM-dd HH:mm:ss"), ("2020-01-05", "yyyy-MM-dd-"), ("x", "yyyy-MM-dd"),
    ("2020-01-05-06", "yyyy-MM-dd-dd"), ("20200105", "yyyy"), ("202001051", "yyyyMMdd"), ("2020010", "yyyyMMdd"),
    ("-2020105", "yyyyMMdd"), ("-202-01-05", "yyyy-MM-dd"), ("", "yyyy-MM-dd"),
    ("\u0662\u0660\u0662\u0660-01-05", "yyyy-MM-dd"), ("2020-01-05", "yyyy-MM-dd HH"),
    ("2020-01-05 10:11:12.5", "yyyy-MM-dd HH:mm:ss"), ("-0000-01-05", "yyyy-MM-dd"), ("2020-01-05", ""),
    ("02-30", "MM-dd"), ("2020-01-05 at10", "yyyy-MM-dd 'at' HH"), ("2020-01-+5", "yyyy-MM-dd"),
    ("+9999999999-01-01", "yyyy-MM-dd"),
]
PATTERNS_BEYOND = [("-2020-01-05", "yyyy-MM-dd"), ("0000-01-05", "yyyy-MM-dd"), ("+20201-01-05", "yyyy-MM-dd"),
                   ("+202001105", "yyyyMMdd"), ("-202001105", "yyyyMMdd"), ("-20201-01-05", "yyyy-MM-dd")]

TO_DATES = [
    *(Agreeing(f"to_date({quoted(text)})", lambda text=text: to_date(text), RESULT_TYPES["to_date"])
      for text in ["2020-01-05", " 2020-1-5 ", "2020-01-05 10:11:12", "2020"]),
    *(Agreeing(f"to_timestamp({quoted(text)})", lambda text=text: to_timestamp(text), RESULT_TYPES["to_timestamp"])
      for text in ["2020-01-05 10:11:12", "2020-01-05T10:11:12.5+01:00", "2020"]),
    *(Agreeing(f"to_date({quoted(text)}, {quoted(pattern)})", lambda text=text, pattern=pattern: to_date(text, pattern),
               RESULT_TYPES["to_date"]) for text, pattern in PATTERNS),
    *(Agreeing(f"to_timestamp({quoted(text)}, {quoted(pattern)})",
               lambda text=text, pattern=pattern: to_timestamp(text, pattern), RESULT_TYPES["to_timestamp"])
      for text, pattern in PATTERNS),
]

GROUPS = {"casts": CASTS, "arithmetic": ARITHMETIC, "intervals": INTERVAL_CASES, "fields": FIELDS,
          "patterns": TO_DATES}

# Errors ------------------------------------------------------------------------------------------------------

FAILING = [
    *(Failing(f"CAST({quoted(text)} AS DATE)", lambda text=text: parse_date(text), "CAST_INVALID_INPUT")
      for text in BAD_DATE_TEXTS),
    *(Failing(f"CAST({quoted(text)} AS TIMESTAMP)", lambda text=text: parse_timestamp(text), "CAST_INVALID_INPUT")
      for text in BAD_TIMESTAMP_TEXTS),
    Failing("to_date('x')", lambda: to_date("x"), "CAST_INVALID_INPUT"),
    Failing("to_timestamp('2020-02-30')", lambda: to_timestamp("2020-02-30"), "CAST_INVALID_INPUT"),
    Failing("date_add(DATE'2020-01-01', 'x')", lambda: add_days(date(2020, 1, 1), cast("x", STRING, INT)),
            "CAST_INVALID_INPUT"),
    Failing("add_months(DATE'2020-01-31', 2147483647)", lambda: add_months(date(2020, 1, 31), 2147483647),
            "ARITHMETIC_OVERFLOW"),
    Failing("add_months(DATE'2020-01-31', -2147483648)", lambda: add_months(date(2020, 1, 31), -2147483648),
            "ARITHMETIC_OVERFLOW"),
    Failing("DATE'2020-01-01' + INTERVAL '178956970' YEAR",
            lambda: add_interval(date(2020, 1, 1), literal_interval("INTERVAL '178956970' YEAR")),
            "ARITHMETIC_OVERFLOW"),
    Failing("INTERVAL '2147483647' MONTH + INTERVAL '1' MONTH",
            lambda: literal_interval("INTERVAL '2147483647' MONTH + INTERVAL '1' MONTH"),
            "INTERVAL_ARITHMETIC_OVERFLOW"),
    Failing("-INTERVAL '-2147483648' MONTH", lambda: literal_interval("-INTERVAL '-2147483648' MONTH"),
            "INTERVAL_ARITHMETIC_OVERFLOW"),
    Failing("INTERVAL '106751991' DAY + INTERVAL '1' DAY",
            lambda: literal_interval("INTERVAL '106751991' DAY + INTERVAL '1' DAY"), "INTERVAL_ARITHMETIC_OVERFLOW"),
    *(Failing(f"to_date({quoted(text)}, {quoted(pattern)})", lambda text=text, pattern=pattern: to_date(text, pattern),
              "CANNOT_PARSE_TIMESTAMP") for text, pattern in BAD_PATTERNS),
    *(Failing(f"to_timestamp({quoted(text)}, {quoted(pattern)})",
              lambda text=text, pattern=pattern: to_timestamp(text, pattern), "CANNOT_PARSE_TIMESTAMP")
      for text, pattern in BAD_PATTERNS[:6]),
]

REFUSED = [
    *(Refused(f"DATE {quoted(text)}", lambda text=text: date_literal(text))
      for text in ["2020-01-05x", "2020-02-30", "x", "2020T"]),
    *(Refused(f"TIMESTAMP {quoted(text)}", lambda text=text: timestamp_literal(text))
      for text in ["2020-01-05T", "x", "2020-01-01 25:00:00"]),
    *(Refused(f"typeof({sql})", lambda sql=sql: literal_interval(sql)) for sql in [
        "INTERVAL '1.5' DAY", "INTERVAL 1.5 HOUR", "INTERVAL '1.5' MONTH", "INTERVAL 1.5 YEAR",
        "INTERVAL '1-12' YEAR TO MONTH",
        "INTERVAL '1' YEAR TO MONTH", "INTERVAL '1 - 2' YEAR TO MONTH", "INTERVAL '1 24:00:00' DAY TO SECOND",
        "INTERVAL '1 2:60:00' DAY TO SECOND", "INTERVAL '1 2:03:60' DAY TO SECOND", "INTERVAL '2:03:04' DAY TO SECOND",
        "INTERVAL '1 2' DAY TO MINUTE", "INTERVAL '1:02:03' HOUR TO MINUTE", "INTERVAL '1 2:03:04.' DAY TO SECOND",
        "INTERVAL '2:61' HOUR TO MINUTE", "INTERVAL '3:04.5' HOUR TO MINUTE", "INTERVAL '1.1234567890' SECOND",
        "INTERVAL '1.5' MILLISECOND", "INTERVAL '1.5' MICROSECOND", "INTERVAL '1.5' WEEK", "INTERVAL '--3' MONTH",
        "INTERVAL '' MONTH", "INTERVAL '178956971' YEAR",
        "INTERVAL '2147483648' MONTH", "INTERVAL '106751992' DAY", "INTERVAL '178956970-8' YEAR TO MONTH",
        "INTERVAL '106751991 04:00:54.775808' DAY TO SECOND", "INTERVAL '1 month 2 days'", "INTERVAL 1 MONTH 2 DAYS",
        "INTERVAL '1' MONTH + INTERVAL '2' DAY", "INTERVAL '1 2' HOUR TO DAY", "INTERVAL '1' SECOND TO SECOND",
        "INTERVAL '1-2' MONTH TO YEAR", "INTERVAL '1 002:03:04' DAY TO SECOND", "INTERVAL '1  2:03:04' DAY TO SECOND",
        "INTERVAL '- 1 2:03:04' DAY TO SECOND", "INTERVAL '1' DECADE", "INTERVAL '1 2:03:4.1234567891' DAY TO SECOND"]),
    # sqlglot reads these two as INTERVAL '3' X AS MONTH and INTERVAL '1' E AS DAY: the text goes to interval as is.
    Refused("typeof(INTERVAL '3x' MONTH)", lambda: interval("3x", "MONTH")),
    Refused("typeof(INTERVAL '1e2' DAY)", lambda: interval("1e2", "DAY")),
    *(Refused(f"EXTRACT({field} FROM DATE'2021-01-03')", lambda field=field: extract(field, date(2021, 1, 3)))
      for field in ["DAYOFMONTH", "DAYOFYEAR", "EPOCH", "MILLISECONDS", "MICROSECONDS", "WEEKDAY"]),
]

BEYOND = [
    *(Beyond(f"CAST({quoted(text)} AS DATE)", lambda text=text: parse_date(text)) for text in DATE_TEXTS_BEYOND),
    *(Beyond(f"CAST({quoted(text)} AS TIMESTAMP)", lambda text=text: parse_timestamp(text))
      for text in TIMESTAMP_TEXTS_BEYOND),
    Beyond("date_add(DATE'9999-12-31', 1)", lambda: add_days(date(9999, 12, 31), 1)),
    Beyond("date_sub(DATE'0001-01-01', 1)", lambda: add_days(date(1, 1, 1), -1)),
    Beyond("date_add(DATE'2020-01-01', 2147483647)", lambda: add_days(date(2020, 1, 1), 2147483647)),
    Beyond("date_sub(DATE'2020-01-01', -2147483648)", lambda: add_days(date(2020, 1, 1), 2147483648)),
    Beyond("add_months(DATE'9999-12-31', 1)", lambda: add_months(date(9999, 12, 31), 1)),
    Beyond("add_months(DATE'0001-01-01', -1)", lambda: add_months(date(1, 1, 1), -1)),
    *(Beyond(f"{value} {sign} {amount}", _interval_case(value, sign, amount).mine) for value, sign, amount in [
        ("TIMESTAMP'9999-12-31 23:00:00'", "+", "INTERVAL 2 HOURS"), ("DATE'9999-12-31'", "+", "INTERVAL '1' DAY"),
        ("DATE'0001-01-01'", "-", "INTERVAL '1' DAY"), ("DATE'0001-01-01'", "-", "INTERVAL '1' HOUR"),
        ("DATE'9999-12-15'", "+", "INTERVAL '1' MONTH"), ("TIMESTAMP'0001-01-31 10:00:00'", "-", "INTERVAL '1' MONTH"),
        ("DATE'2020-01-01'", "+", "INTERVAL '5000000' DAY")]),
    *(Beyond(f"to_date({quoted(text)}, {quoted(pattern)})", lambda text=text, pattern=pattern: to_date(text, pattern))
      for text, pattern in PATTERNS_BEYOND),
]


def spark_error(spark, sql: str) -> tuple[bool, Exception] | None:
    """What Spark raises for ``SELECT sql``, and whether it did before running the query (parsing or analysing
    it, which ``spark.sql`` does at once); None if the query runs."""
    try:
        frame = spark.sql(f"SELECT {sql}")
    except Exception as error:
        return True, error
    try:
        frame.collect()
    except Exception as error:
        return False, error
    return None


def condition_of(error: Exception) -> str:
    return (getattr(error, "getCondition", lambda: None)() or "").split(".")[0]


# The tests ---------------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("group", list(GROUPS))
def test_values_and_types_are_sparks(spark, group: str) -> None:
    """Each group's cases in one SELECT: every column's value and type is what ``dates`` gives."""
    cases = GROUPS[group]
    frame = spark.sql("SELECT " + ", ".join(f"{case.sql} AS c{index}" for index, case in enumerate(cases)))
    kinds = [field.dataType.simpleString() for field in frame.schema.fields]
    # pyspark cannot collect a TIMESTAMP within a day of 0001-01-01 (datetime.fromtimestamp fails there), so
    # TIMESTAMPs are compared as their microseconds.
    row = frame.selectExpr(*(f"unix_micros(c{index})" if kind == "timestamp" else f"c{index}"
                             for index, kind in enumerate(kinds))).collect()[0]
    differences = []
    for index, (case, kind) in enumerate(zip(cases, kinds, strict=True)):
        mine = case.mine()
        comparable = timestamp_micros(mine) if isinstance(mine, datetime) else mine
        if row[index] != comparable or type(row[index]) is not type(comparable) or kind != str(case.type):
            differences.append(f"{case.sql}: Spark {row[index]!r} ({kind}), dates {mine!r} ({case.type})")
    assert differences == []


@pytest.mark.slow
def test_errors_are_sparks(spark) -> None:
    """Where Spark raises for the data, ``dates`` raises a SqlRuntimeError of the same error class; for
    to_date and to_timestamp the message is Spark's, to where Spark names its ``try_`` function."""
    differences = []
    for case in FAILING:
        refused, theirs = spark_error(spark, case.sql) or (False, None)
        try:
            case.mine()
        except SqlRuntimeError as error:
            ours = str(error)
        else:
            ours = "no error"
        if theirs is None or refused or condition_of(theirs) != case.condition or not ours.startswith(
                f"[{case.condition}]"):
            differences.append(f"{case.sql}: Spark {theirs and condition_of(theirs)} (before running: {refused}), "
                               f"dates {ours[:60]}")
        elif case.condition == "CANNOT_PARSE_TIMESTAMP" and not str(theirs).startswith(ours):
            differences.append(f"{case.sql}: Spark says {str(theirs)[:150]!r}, dates {ours!r}")
    assert differences == []


@pytest.mark.slow
def test_what_spark_refuses_before_running_dates_refuses_with_a_value_error(spark) -> None:
    differences = []
    for case in REFUSED:
        refused, theirs = spark_error(spark, case.sql) or (False, None)
        try:
            case.mine()
        except ValueError:
            ours = True
        else:
            ours = False
        if not refused or not ours:
            differences.append(f"{case.sql}: Spark refused it: {refused} ({theirs!r:.80}); dates raised ValueError: "
                               f"{ours}")
    assert differences == []


@pytest.mark.slow
def test_results_beyond_the_years_python_holds_are_sparks_values_and_a_date_range_error(spark) -> None:
    """Spark computes these (its DATE and TIMESTAMP reach further); ``dates`` says it cannot hold them."""
    frame = spark.sql("SELECT " + ", ".join(f"CAST({case.sql} AS STRING)" for case in BEYOND))
    printed = frame.collect()[0]
    for case, text in zip(BEYOND, printed, strict=True):
        assert text[0] in "+-" or text.startswith("0000"), (case.sql, text)
        with pytest.raises(DateRangeError, match=r"^\[DATETIME_OUT_OF_PYTHON_RANGE\] .* the year -?\d+, outside"):
            case.mine()


@pytest.mark.slow
def test_a_time_alone_is_on_todays_date_in_its_zone(spark) -> None:
    texts = ["12:34:56", "T12:34:56", "1:2", "12:34:56.5 +05:00", "T00:00:00 Asia/Tokyo"]
    frame = spark.sql("SELECT " + ", ".join(f"CAST({quoted(text)} AS TIMESTAMP)" for text in texts))
    assert list(frame.collect()[0]) == [parse_timestamp(text) for text in texts]


@pytest.mark.slow
def test_date_add_takes_the_day_counts_spark_takes(spark) -> None:
    """``DAY_COUNT_TYPES`` is exactly the numeric types Spark's date_add accepts."""
    for kind in ["tinyint", "smallint", "int", "bigint", "decimal(2,1)", "double", "boolean"]:
        value = "true" if kind == "boolean" else "1"
        error = spark_error(spark, f"date_add(DATE'2020-01-01', CAST({value} AS {kind}))")
        assert (error is None) == (kind in DAY_COUNT_TYPES), kind
        assert error is None or (error[0] and condition_of(error[1]) == "DATATYPE_MISMATCH"), error


def test_pattern_letters_other_than_the_six_are_refused_by_name() -> None:
    for pattern, named in [("uuuu-MM-dd", "'u'"), ("yyyy-LL-dd", "'L'"), ("yy-MM-dd", "(yy)"), ("y-M-d", "(y)"),
                           ("yyyyy-MM-dd", "(yyyyy)"), ("yyyy-MMM-dd", "(MMM)"), ("yyyy-MM-dd hh", "'h'"),
                           ("yyyy-MM-ddTHH", "'T'"), ("yyyy-MM-ddEEE", "'E'"), ("yyyy-MM-dd HH:mm:ss.SSS", "'S'"),
                           ("yyyy#MM#dd", "'#'"), ("yyyy{MM}dd", "'{'"), ("yyyy-MM-dd[", "'['")]:
        with pytest.raises(ValueError, match=f"datetime pattern .*{re.escape(named)}"):
            datetime_pattern(pattern)
        with pytest.raises(ValueError):
            to_date("2020-01-05", pattern)
    with pytest.raises(ValueError, match="never closed"):
        datetime_pattern("yyyy-MM-dd'")


def test_an_interval_is_added_to_a_date_or_a_timestamp_only() -> None:
    with pytest.raises(ValueError, match="DATE or a TIMESTAMP"):
        interval_result_type(INT, interval("1", "DAY"))


def test_every_function_has_a_result_type() -> None:
    assert set(RESULT_TYPES) == {"to_date", "to_timestamp", "date_add", "date_sub", "add_months", "datediff",
                                 "last_day", "months_between", "date_trunc", "trunc", *dates.FIELD_FUNCTIONS}


def test_doctests() -> None:
    assert doctest.testmod(dates).failed == 0
