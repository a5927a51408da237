"""DATE and TIMESTAMP values as Spark SQL 4.3 computes them (ANSI mode on, session time zone UTC).

A DATE is a ``datetime.date``; a TIMESTAMP a naive ``datetime.datetime``
holding UTC, the pipeline's session time zone. Every function here takes
non-NULL values (the compiled call handles NULL) and raises
``SqlRuntimeError`` with Spark's error class where Spark raises for the data.
Python's dates span the years 1 to 9999, Spark's far more: a result outside
Python's range is an error here, said as such.

>>> add_months(date(2024, 1, 31), 1)
datetime.date(2024, 2, 29)
>>> datediff(date(2024, 3, 1), date(2024, 2, 1))
29
>>> format_timestamp(datetime(2024, 5, 1, 8, 0, 0, 500000))
'2024-05-01 08:00:00.5'
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from .errors import SqlRuntimeError

_SPACES = "".join(chr(code) for code in range(33))
"""What Spark trims around a date or timestamp string (``UTF8String.trimAll``: spaces and control characters)."""

_DATE = re.compile(r"([+-]?\d{4,7})(?:-(\d{1,2})(?:-(\d{1,2})(?:[ T].*)?)?)?", re.DOTALL)
_TIMESTAMP = re.compile(
    r"([+-]?\d{4,7})(?:-(\d{1,2})(?:-(\d{1,2})"
    r"(?:[ T](\d{1,2})(?::(\d{1,2})(?::(\d{1,2})(?:\.(\d{0,9}))?)?)?)?)?)?"
    r"\s*(Z|UTC|([+-])(\d{1,2})(?::?(\d{2}))?)?")


def _invalid(text: str, target: str) -> SqlRuntimeError:
    return SqlRuntimeError(f"[CAST_INVALID_INPUT] The value {text!r} of the type \"STRING\" cannot be cast to "
                           f"\"{target}\" because it is malformed")


def _out_of_range(what: str) -> SqlRuntimeError:
    return SqlRuntimeError(f"[DATETIME_OVERFLOW] {what} is outside the years 1 to 9999 that final/ holds (Spark "
                           f"holds more)")


def parse_date(text: str) -> date:
    """``CAST(text AS DATE)``: ``yyyy``, ``yyyy-[m]m`` or ``yyyy-[m]m-[d]d``, then anything after a space or ``T``.

    Raises:
        SqlRuntimeError: the text is no date (``CAST_INVALID_INPUT``), or its year is outside 1..9999.
    """
    found = _DATE.fullmatch(text.strip(_SPACES))
    if found is None:
        raise _invalid(text, "DATE")
    year, month, day = int(found.group(1)), int(found.group(2) or 1), int(found.group(3) or 1)
    try:
        return date(year, month, day)
    except ValueError:
        if 1 <= year <= 9999:
            raise _invalid(text, "DATE") from None
        raise _out_of_range(f"the date {text!r}") from None


def parse_timestamp(text: str) -> datetime:
    """``CAST(text AS TIMESTAMP)``: a date, an optional time after a space or ``T`` (fractions to the
    microsecond), an optional zone (``Z``, ``UTC``, ``+hh:mm``), read as UTC.

    Raises:
        SqlRuntimeError: the text is no timestamp (``CAST_INVALID_INPUT``), or its year is outside 1..9999.
    """
    found = _TIMESTAMP.fullmatch(text.strip(_SPACES))
    if found is None:
        raise _invalid(text, "TIMESTAMP")
    year, month, day, hour, minute, second, fraction, _zone, sign, hours, minutes = found.groups()
    micros = int((fraction or "").ljust(6, "0")[:6] or 0)
    try:
        value = datetime(int(year), int(month or 1), int(day or 1), int(hour or 0), int(minute or 0),
                         int(second or 0), micros)
    except ValueError:
        if 1 <= int(year) <= 9999:
            raise _invalid(text, "TIMESTAMP") from None
        raise _out_of_range(f"the timestamp {text!r}") from None
    if sign is not None:
        offset = timedelta(hours=int(hours), minutes=int(minutes or 0))
        value = value - offset if sign == "+" else value + offset
    return value


def format_date(value: date) -> str:
    """``CAST(d AS STRING)``: ``yyyy-MM-dd``."""
    return value.isoformat()


def format_timestamp(value: datetime) -> str:
    """``CAST(ts AS STRING)``: ``yyyy-MM-dd HH:mm:ss``, then the fraction of a second without trailing zeros."""
    text = value.strftime("%Y-%m-%d %H:%M:%S")
    if value.microsecond:
        text += "." + f"{value.microsecond:06d}".rstrip("0")
    return text


def timestamp_to_date(value: datetime) -> date:
    """``CAST(ts AS DATE)``: the day, in the session's time zone (UTC)."""
    return value.date()


def date_to_timestamp(value: date) -> datetime:
    """``CAST(d AS TIMESTAMP)``: its midnight."""
    return datetime(value.year, value.month, value.day)


def add_days(value: date, days: int) -> date:
    """``date_add(d, n)`` (and ``date_sub`` with ``-n``)."""
    try:
        return value + timedelta(days=days)
    except OverflowError:
        raise _out_of_range(f"{value} + {days} days") from None


def add_months(value: date, months: int) -> date:
    """``add_months(d, n)``: the same day ``n`` months on, or the last day of that month if it is shorter."""
    index = value.year * 12 + value.month - 1 + months
    year, month = divmod(index, 12)
    if not 1 <= year <= 9999:
        raise _out_of_range(f"{value} + {months} months")
    return date(year, month + 1, min(value.day, calendar.monthrange(year, month + 1)[1]))


def last_day(value: date) -> date:
    """``last_day(d)``: the last day of its month."""
    return date(value.year, value.month, calendar.monthrange(value.year, value.month)[1])


def datediff(end: date, start: date) -> int:
    """``datediff(end, start)``: days from ``start`` to ``end``."""
    return (end - start).days


@dataclass(frozen=True)
class Interval:
    """An INTERVAL literal: ``months`` (a year-month interval) or ``days`` and ``micros`` (day-time)."""

    months: int = 0
    days: int = 0
    micros: int = 0

    @property
    def year_month(self) -> bool:
        return not (self.days or self.micros)

    def __str__(self) -> str:
        if self.months:
            return f"INTERVAL {self.months} MONTH"
        if not self.micros:
            return f"INTERVAL {self.days} DAY"
        return f"INTERVAL {self.days} DAY {self.micros} MICROSECOND"


_UNITS = {"YEAR": (12, 0, 0), "MONTH": (1, 0, 0), "WEEK": (0, 7, 0), "DAY": (0, 1, 0),
          "HOUR": (0, 0, 3_600_000_000), "MINUTE": (0, 0, 60_000_000), "SECOND": (0, 0, 1_000_000)}


def interval(amount: str, unit: str) -> Interval:
    """``INTERVAL 'amount' unit``: YEAR, MONTH, WEEK, DAY, HOUR, MINUTE or SECOND (singular or plural), or
    ``'y-m' YEAR TO MONTH``.

    Raises:
        ValueError: another unit, or an amount that is not a whole number.
    """
    unit = unit.upper().strip()
    text = amount.strip()
    if unit == "YEAR TO MONTH":
        found = re.fullmatch(r"([+-]?)(\d+)-(\d+)", text)
        if found is None:
            raise ValueError("a YEAR TO MONTH interval is written 'years-months'")
        sign = -1 if found.group(1) == "-" else 1
        return Interval(months=sign * (int(found.group(2)) * 12 + int(found.group(3))))
    unit = unit[:-1] if unit.endswith("S") and unit[:-1] in _UNITS else unit
    if unit not in _UNITS:
        raise ValueError(f"the unit {unit} is not one this subset takes ({', '.join(_UNITS)}, YEAR TO MONTH)")
    if not re.fullmatch(r"[+-]?\d+", text):
        raise ValueError("its amount must be a whole number")
    months, days, micros = (int(text) * part for part in _UNITS[unit])
    return Interval(months, days, micros)


def interval_result_type(value_type: str, amount: Interval) -> str:
    """The type of ``value ± amount``, as Spark types it: a DATE stays a DATE with months or whole days, and
    becomes a TIMESTAMP with hours, minutes or seconds; a TIMESTAMP stays a TIMESTAMP."""
    if value_type == "date" and amount.micros:
        return "timestamp"
    return value_type


def add_interval(value: date | datetime, amount: Interval, sign: int) -> date | datetime:
    """``value + amount`` (``sign`` 1) or ``value - amount`` (-1): months first (a month end kept in range, as
    ``add_months``), then days and time."""
    if isinstance(value, datetime):
        day = add_months(value.date(), sign * amount.months) if amount.months else value.date()
        moved = datetime.combine(day, value.time())
        try:
            return moved + sign * timedelta(days=amount.days, microseconds=amount.micros)
        except OverflowError:
            raise _out_of_range(f"{value} + {amount}") from None
    if amount.micros:
        return add_interval(date_to_timestamp(value), amount, sign)
    day = add_months(value, sign * amount.months) if amount.months else value
    return add_days(day, sign * amount.days)


_FIELDS = {
    "YEAR": "YEAR", "Y": "YEAR", "YEARS": "YEAR", "YR": "YEAR", "YRS": "YEAR", "QUARTER": "QUARTER", "QTR": "QUARTER",
    "MONTH": "MONTH", "MON": "MONTH", "MONS": "MONTH", "MONTHS": "MONTH", "WEEK": "WEEK", "W": "WEEK",
    "WEEKS": "WEEK", "DAY": "DAY", "D": "DAY", "DAYS": "DAY", "DAYOFWEEK": "DAYOFWEEK", "DOW": "DAYOFWEEK",
    "DAYOFWEEK_ISO": "DAYOFWEEK_ISO", "DOW_ISO": "DAYOFWEEK_ISO", "DOY": "DOY", "HOUR": "HOUR", "H": "HOUR",
    "HOURS": "HOUR", "HR": "HOUR", "HRS": "HOUR", "MINUTE": "MINUTE", "M": "MINUTE", "MIN": "MINUTE",
    "MINS": "MINUTE", "MINUTES": "MINUTE", "SECOND": "SECOND", "S": "SECOND", "SEC": "SECOND",
    "SECONDS": "SECOND", "SECS": "SECOND", "SECOND_OF_MINUTE": "SECOND_OF_MINUTE",
}
"""EXTRACT's field names and their synonyms, as Spark takes them; ``SECOND_OF_MINUTE`` is ``second(ts)``, a whole
number where EXTRACT's SECOND has the fraction."""


def extract_type(field: str, value_type: str) -> str:
    """The type of ``EXTRACT(field FROM value)``.

    Raises:
        ValueError: a field Spark does not take.
    """
    name = _FIELDS.get(field.upper())
    if name is None:
        raise ValueError(f"EXTRACT takes YEAR, QUARTER, MONTH, WEEK, DAY, DAYOFWEEK, DOY, HOUR, MINUTE or SECOND, "
                         f"not {field}")
    return "decimal(8,6)" if name == "SECOND" else "int"


def extract(field: str, value: date | datetime) -> Any:
    """``EXTRACT(field FROM value)`` (a DATE's time of day is midnight)."""
    name = _FIELDS[field.upper()]
    day = value.date() if isinstance(value, datetime) else value
    moment = value if isinstance(value, datetime) else date_to_timestamp(value)
    if name == "YEAR":
        return day.year
    if name == "QUARTER":
        return (day.month - 1) // 3 + 1
    if name == "MONTH":
        return day.month
    if name == "WEEK":
        return day.isocalendar()[1]
    if name == "DAY":
        return day.day
    if name == "DAYOFWEEK":
        return day.isoweekday() % 7 + 1  # Sunday is 1, Saturday 7
    if name == "DAYOFWEEK_ISO":
        return day.isoweekday()
    if name == "DOY":
        return day.timetuple().tm_yday
    if name == "HOUR":
        return moment.hour
    if name == "MINUTE":
        return moment.minute
    if name == "SECOND_OF_MINUTE":
        return moment.second
    return Decimal(moment.second * 1_000_000 + moment.microsecond).scaleb(-6)


_TRUNCATED = {"YEAR": "YEAR", "YYYY": "YEAR", "YY": "YEAR", "QUARTER": "QUARTER", "MONTH": "MONTH", "MM": "MONTH",
              "MON": "MONTH", "WEEK": "WEEK", "DAY": "DAY", "DD": "DAY", "HOUR": "HOUR", "MINUTE": "MINUTE",
              "SECOND": "SECOND", "MILLISECOND": "MILLISECOND", "MICROSECOND": "MICROSECOND"}


def date_trunc(unit: str, value: datetime) -> datetime | None:
    """``date_trunc(unit, ts)``: ``ts`` cut to the start of its year, quarter, month, week (Monday), day, hour,
    minute, second or millisecond; NULL for a unit Spark does not know."""
    name = _TRUNCATED.get(unit.upper())
    if name is None:
        return None
    if name in ("YEAR", "QUARTER", "MONTH", "WEEK"):
        return date_to_timestamp(trunc(value.date(), name))
    cut = {"DAY": value.replace(hour=0, minute=0, second=0, microsecond=0),
           "HOUR": value.replace(minute=0, second=0, microsecond=0),
           "MINUTE": value.replace(second=0, microsecond=0), "SECOND": value.replace(microsecond=0),
           "MILLISECOND": value.replace(microsecond=value.microsecond // 1000 * 1000), "MICROSECOND": value}
    return cut[name]


def trunc(value: date, unit: str) -> date | None:
    """``trunc(d, unit)``: ``d`` cut to the first day of its year, quarter, month or week (Monday); NULL for
    another unit, as Spark gives."""
    name = _TRUNCATED.get(unit.upper())
    if name == "YEAR":
        return date(value.year, 1, 1)
    if name == "QUARTER":
        return date(value.year, (value.month - 1) // 3 * 3 + 1, 1)
    if name == "MONTH":
        return date(value.year, value.month, 1)
    if name == "WEEK":
        return value - timedelta(days=value.weekday())
    return None


_PATTERN_LETTERS = {"yyyy": r"(?P<year>\d{4})", "MM": r"(?P<month>\d{2})", "dd": r"(?P<day>\d{2})",
                    "M": r"(?P<month>\d{1,2})", "d": r"(?P<day>\d{1,2})"}


def date_parser(pattern: str) -> Any:
    """``to_date(text, pattern)`` for a pattern of ``yyyy``, ``MM``/``M``, ``dd``/``d`` and separators: a function
    from text to a date that raises Spark's ``CANNOT_PARSE_TIMESTAMP`` where the text does not match.

    Raises:
        ValueError: the pattern has another letter (Java's formatter has many this subset does not copy).
    """
    parts, rest = [], pattern
    while rest:
        run = re.match(r"([A-Za-z])\1*", rest)
        if run is not None:
            letters = run.group(0)
            if letters not in _PATTERN_LETTERS or _PATTERN_LETTERS[letters] in parts:
                raise ValueError(f"the pattern letters {letters!r} are not ones this subset takes (yyyy, MM, M, dd, "
                                 f"d, each once)")
            parts.append(_PATTERN_LETTERS[letters])
            rest = rest[len(letters):]
        elif rest[0] == "'":
            raise ValueError("quoted text in a pattern is not in this subset")
        else:
            parts.append(re.escape(rest[0]))
            rest = rest[1:]
    compiled = re.compile("".join(parts))

    def parse(text: str) -> date:
        found = compiled.fullmatch(text)
        try:
            if found is None:
                raise ValueError
            parts = found.groupdict()
            return date(int(parts.get("year") or 1970), int(parts.get("month") or 1), int(parts.get("day") or 1))
        except (ValueError, IndexError):
            raise SqlRuntimeError(f"[CANNOT_PARSE_TIMESTAMP] Text {text!r} could not be parsed with the pattern "
                                  f"{pattern!r}") from None

    return parse
