"""Spark SQL 4.3's DATE and TIMESTAMP values as plain Python functions (ANSI mode on, session time zone UTC).

A DATE is a ``datetime.date`` and a TIMESTAMP a naive ``datetime.datetime``
holding the UTC time; NULL is ``None`` and is the caller's to handle: every
function here takes non-NULL values. Each rule was checked against Spark
4.3 itself (``tests/test_sql_dates.py`` compares every function with Spark
on literal expressions); where Spark's rule is surprising, the docstring
says so.

Two limits of the Python types shape what follows:

- Python's dates span the years 1 to 9999; Spark's DATE reaches about 5.8
  million years either side of 1970 and its TIMESTAMP about 290,000. A
  result outside 1..9999 raises ``DateRangeError`` (a ``SqlRuntimeError``
  that says it is ``final/``'s limit, not Spark's), unless Spark raises an
  error with an error class of its own there (``add_months``'s
  ``ARITHMETIC_OVERFLOW``, a cast's ``CAST_INVALID_INPUT``), which is then
  raised instead.
- Spark reads a string with its own hand-written parsers, not Python's:
  ``parse_date`` and ``parse_timestamp`` follow them character by
  character, and ``to_date``/``to_timestamp`` with a pattern follow Java's
  ``DateTimeFormatter`` in strict mode for the pattern letters supported.

Intervals are the ANSI interval types Spark 4.3 gives literals
(``INTERVAL '3' MONTH`` is an ``interval month``): ``Interval`` holds one,
``interval`` reads a literal as sqlglot 30 hands it over, ``add_interval``
adds one to a DATE or TIMESTAMP. The Spark type of every result is in one
place: ``RESULT_TYPES``, ``extract_type`` and ``interval_result_type``.
"""

from __future__ import annotations

import math
import re
import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache

from .errors import SqlRuntimeError
from .types import DATE, DOUBLE, INT, TIMESTAMP, SqlType

SECONDS = SqlType("decimal", 8, 6)
"""EXTRACT(SECOND FROM ...): the seconds with their microseconds, as Spark types them."""

DAY_MICROSECONDS = 86_400_000_000
INT_RANGE = range(-(1 << 31), 1 << 31)
LONG_RANGE = range(-(1 << 63), 1 << 63)
"""Spark counts a DATE's days in an INT, a TIMESTAMP's and a day-time interval's microseconds in a BIGINT
(LONG), and a year-month interval's months in an INT."""

_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
_CYCLE_DAYS = 146_097
"""The Gregorian calendar repeats every 400 years, which have this many days: how a year outside Python's
range is mapped onto one inside it to count its days."""


class DateRangeError(SqlRuntimeError):
    """A DATE or TIMESTAMP outside the years 1..9999 that Python's ``date`` and ``datetime`` hold.

    Spark holds such a value (its types reach further), so this is
    ``final/``'s limit, not an error Spark raises: the message says so.
    """


def _out_of_range(what: str, year: int) -> DateRangeError:
    return DateRangeError(f"[DATETIME_OUT_OF_PYTHON_RANGE] {what} falls in the year {year}, outside the years 1 to "
                          f"9999 that final/ holds (Python's date and datetime); Spark SQL would compute it, so keep "
                          f"the data within those years")


def epoch_day(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to a valid proleptic Gregorian date of any year (Spark's DATE value)."""
    cycles, year_in_cycle = divmod(year - 1, 400)
    return date(year_in_cycle + 1, month, day).toordinal() - _EPOCH_ORDINAL + cycles * _CYCLE_DAYS


def _civil(days: int) -> tuple[int, int, int]:
    """The (year, month, day) ``days`` after 1970-01-01, for any year."""
    cycles, rest = divmod(days + _EPOCH_ORDINAL - 1, _CYCLE_DAYS)
    inside = date.fromordinal(rest + 1)
    return inside.year + 400 * cycles, inside.month, inside.day


def _leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _month_days(year: int, month: int) -> int:
    if month == 2:
        return 29 if _leap(year) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _valid_date(year: int, month: int, day: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= _month_days(year, month)


def _date(days: int, what: str) -> date:
    """The ``date`` ``days`` after 1970-01-01; ``DateRangeError`` outside the years 1..9999."""
    year, month, day = _civil(days)
    if not 1 <= year <= 9999:
        raise _out_of_range(what, year)
    return date(year, month, day)


def _timestamp(micros: int, what: str) -> datetime:
    """The naive UTC ``datetime`` ``micros`` microseconds after 1970-01-01 00:00; ``DateRangeError`` outside the years
    1..9999."""
    days, rest = divmod(micros, DAY_MICROSECONDS)
    year, month, day = _civil(days)
    if not 1 <= year <= 9999:
        raise _out_of_range(what, year)
    return datetime(year, month, day) + timedelta(microseconds=rest)


def timestamp_micros(value: datetime) -> int:
    """A TIMESTAMP's microseconds since 1970-01-01 00:00 UTC (Spark's value for it)."""
    return epoch_day(value.year, value.month, value.day) * DAY_MICROSECONDS + (
        ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond)


def _invalid_cast(text: str, target: str) -> SqlRuntimeError:
    return SqlRuntimeError(f"[CAST_INVALID_INPUT] The value '{text}' of the type \"STRING\" cannot be cast to "
                           f"\"{target}\" because it is malformed. Correct the value as per the syntax, or change its "
                           f"target type")


# Reading strings: CAST(string AS DATE) and CAST(string AS TIMESTAMP) -------------------------------------------

_TRIMMED = "".join(chr(code) for code in (*range(33), 127))
"""What Spark trims around a date or timestamp string: it looks at the UTF-8 bytes one at a time, so only ASCII
whitespace and control characters go (no Unicode space, not even U+00A0), unlike the trim of a number cast."""

_DATE_HEAD = re.compile(r"([+-]?)([0-9]{4,7})(?:-([0-9]{1,2})(?:-([0-9]{1,2}))?)?")
"""The part of a DATE string before the first space or 'T': a year of 4 to 7 digits, then an optional month and
day of 1 or 2 digits each (ASCII digits only)."""


def _date_fields(text: str) -> tuple[int, int, int] | None:
    """Spark's reading of ``text`` as a DATE: (year, month, day), or None when Spark finds it malformed."""
    body = text.strip(_TRIMMED)
    cut = min((found for found in (body.find(" "), body.find("T")) if found >= 0), default=len(body))
    head = _DATE_HEAD.fullmatch(body[:cut])
    # After the day, anything may follow a space or a 'T'; after a year or a month, nothing may.
    if head is None or (cut < len(body) and head.group(4) is None):
        return None
    year = int(head.group(2)) * (-1 if head.group(1) == "-" else 1)
    month, day = int(head.group(3) or 1), int(head.group(4) or 1)
    return (year, month, day) if _valid_date(year, month, day) else None


def parse_date(text: str) -> date:
    """``CAST(text AS DATE)``: Spark's forms ``[+-]yyyy``, ``yyyy-[m]m``, ``yyyy-[m]m-[d]d``, the last followed
    by anything after a space or a ``T``; ASCII whitespace and control characters around it are ignored.

    >>> parse_date(" 2020-2-29T23:59 ")
    datetime.date(2020, 2, 29)
    >>> parse_date("2021")
    datetime.date(2021, 1, 1)

    Raises:
        SqlRuntimeError: ``[CAST_INVALID_INPUT]`` for text Spark finds malformed (``2020-02-30``, ``2020-01-05x``,
            ``20``); ``DateRangeError`` for a date outside the years 1..9999 (Spark reads years of up to 7 digits).
    """
    fields = _date_fields(text)
    if fields is None:
        raise _invalid_cast(text, "DATE")
    year, month, day = fields
    if not 1 <= year <= 9999:
        raise _out_of_range(f"CAST('{text}' AS DATE)", year)
    return date(year, month, day)


def _segment_fits(segment: int, digits: int) -> bool:
    """Whether a timestamp string's segment may have this many digits: the year 4 to 6, the fraction any number
    (only the first six count), a zone's segment none (a named zone), the rest 1 or 2."""
    if segment == 6:
        return True
    if segment == 0:
        return 4 <= digits <= 6
    return digits <= 2 if segment == 7 else 1 <= digits <= 2


def _timestamp_fields(text: str) -> tuple[list[int], str | None, bool] | None:
    """Spark's reading of ``text`` as a TIMESTAMP: the segments (year, month, day, hour, minute, second,
    microsecond), the zone's text if there is one, and whether the text was a time alone; None when malformed.

    The segments are read left to right: ``-`` closes the year and month, a space or ``T`` the day, ``:`` the
    hour and minute, ``.`` the second; after the seconds (or their fraction) the rest of the text is a zone. A
    ``:`` inside the first number makes the text a time of day alone, and so does a ``T`` as its very first
    character (before any trimmed space).
    """
    stripped = text.strip(_TRIMMED)
    if not stripped:
        return None
    position = len(text) - len(text.lstrip(_TRIMMED))
    end = position + len(stripped)
    segments = [1, 1, 1, 0, 0, 0, 0, 0]
    segment = value = digits = fraction_digits = 0
    sign: int | None = None
    zone: str | None = None
    time_only = False
    if text[position] in "+-":
        sign = -1 if text[position] == "-" else 1
        position += 1
    while position < end:
        character = text[position]
        if "0" <= character <= "9":
            if segment == 6:
                fraction_digits += 1
            if segment != 6 or digits < 6:  # a fraction's digits after the sixth are dropped, not rounded
                value = value * 10 + ord(character) - ord("0")
            digits += 1
            position += 1
            continue
        if position == 0 and character == "T":
            time_only, segment = True, 3
            position += 1
            continue
        if segment < 2 and character == "-":
            next_segment = segment + 1
        elif segment == 0 and character == ":" and sign is None:
            time_only, segment, next_segment = True, 3, 4
        elif (segment == 2 and character in " T") or (segment in (3, 4) and character == ":"):
            next_segment = segment + 1
        elif segment == 5 and character == ".":
            next_segment = 6
        elif segment in (5, 6):
            next_segment = 7
            zone = text[position:end]
            position = end - 1
        else:
            return None
        if not _segment_fits(segment, digits):
            return None
        segments[segment] = value
        segment, value, digits = next_segment, 0, 0
        position += 1
    if not _segment_fits(segment, digits):
        return None
    segments[segment] = value
    segments[6] *= 10 ** max(6 - fraction_digits, 0)
    segments[0] *= sign or 1
    return segments[:7], zone, time_only


def parse_timestamp(text: str) -> datetime:
    """``CAST(text AS TIMESTAMP)``: ``yyyy[-[m]m[-[d]d]]``, then after a space or ``T``
    ``[h]h[:[m]m[:[s]s[.fraction]]]``, then a zone after the seconds (``Z``, ``+01:00``, ``-0130``, ``UTC+8``,
    ``Europe/Paris``, Java's short ids such as ``PST``); the result is the UTC time. A time alone (``12:34``,
    ``T12:34:56``) is on today's date in its zone, as in Spark. Digits of a fraction after the sixth are dropped.

    >>> parse_timestamp("2020-01-05 10:11:12.5 +01:00")
    datetime.datetime(2020, 1, 5, 9, 11, 12, 500000)

    Raises:
        SqlRuntimeError: ``[CAST_INVALID_INPUT]`` for text Spark finds malformed (a field out of its range, an
            unknown zone, a year beyond a BIGINT of microseconds); ``DateRangeError`` for a time outside the years
            1..9999.
    """
    fields = _timestamp_fields(text)
    if fields is None:
        raise _invalid_cast(text, "TIMESTAMP")
    (year, month, day, hour, minute, second, micro), zone_text, time_only = fields
    zone = UTC if zone_text is None else _zone_of(zone_text.strip(_JAVA_TRIMMED))
    if zone is None or hour > 23 or minute > 59 or second > 59:
        raise _invalid_cast(text, "TIMESTAMP")
    if time_only:
        today = datetime.now(UTC).astimezone(zone).date()
        year, month, day = today.year, today.month, today.day
    if not _valid_date(year, month, day):
        raise _invalid_cast(text, "TIMESTAMP")
    local = epoch_day(year, month, day) * DAY_MICROSECONDS + (
        ((hour * 60 + minute) * 60 + second) * 1_000_000 + micro)
    micros = local - _offset_micros(zone, year, month, day, hour, minute, second)
    if micros not in LONG_RANGE:
        raise _invalid_cast(text, "TIMESTAMP")
    return _timestamp(micros, f"CAST('{text}' AS TIMESTAMP)")


SHORT_ZONE_IDS = {
    "EST": "-05:00", "HST": "-10:00", "MST": "-07:00", "ACT": "Australia/Darwin", "AET": "Australia/Sydney",
    "AGT": "America/Argentina/Buenos_Aires", "ART": "Africa/Cairo", "AST": "America/Anchorage",
    "BET": "America/Sao_Paulo", "BST": "Asia/Dhaka", "CAT": "Africa/Harare", "CNT": "America/St_Johns",
    "CST": "America/Chicago", "CTT": "Asia/Shanghai", "EAT": "Africa/Addis_Ababa", "ECT": "Europe/Paris",
    "IET": "America/Indiana/Indianapolis", "IST": "Asia/Kolkata", "JST": "Asia/Tokyo", "MIT": "Pacific/Apia",
    "NET": "Asia/Yerevan", "NST": "Pacific/Auckland", "PLT": "Asia/Karachi", "PNT": "America/Phoenix",
    "PRT": "America/Puerto_Rico", "PST": "America/Los_Angeles", "SST": "Pacific/Guadalcanal",
    "VST": "Asia/Ho_Chi_Minh",
}
"""Java's ``ZoneId.SHORT_IDS``, which Spark passes to ``ZoneId.of``: three-letter names Java still accepts."""

_JAVA_TRIMMED = "".join(chr(code) for code in range(33))
"""What Java's ``String.trim`` removes, which Spark applies to a zone's text."""

_OFFSET = re.compile(r"[+-]([0-9]{1,2}|[0-9]{2}(:?)[0-9]{2}(?:\2[0-9]{2})?)")
"""The offsets Java's ``ZoneOffset.of`` reads: ``+h``, ``+hh``, ``+hhmm``, ``+hh:mm``, ``+hhmmss``, ``+hh:mm:ss``."""

_REGION = re.compile(r"[A-Za-z][A-Za-z0-9~/._+-]+")
"""The form of a region's name Java accepts; Python's tz database must also know the name."""


@lru_cache(maxsize=1)
def _regions() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def _zone_of(name: str) -> tzinfo | None:
    """The time zone a timestamp string names, as Spark reads it (``getZoneId``), or None if Spark knows none.

    Spark first pads ``+1:30`` to ``+01:30`` and ``+01:3`` to ``+01:03``; then Java's ``ZoneId.of`` takes ``Z``,
    an offset (``+h``, ``+hh``, ``+hh:mm``, ``+hhmm``, ``+hh:mm:ss``, ``+hhmmss``, at most 18 hours), ``UTC``,
    ``GMT`` or ``UT`` alone or followed by an offset, a short id, or a region (case matters: ``utc`` is none).
    """
    name = re.sub(r"([+-])([0-9]):", r"\g<1>0\2:", name, count=1)
    name = re.sub(r"([+-])([0-9]{2}):([0-9])$", r"\1\2:0\3", name, count=1)
    name = SHORT_ZONE_IDS.get(name, name)
    if name == "Z":
        return UTC
    for prefix in ("UTC", "GMT", "UT"):
        if name == prefix:
            return UTC
        if name.startswith((prefix + "+", prefix + "-")):
            return _fixed_offset(name[len(prefix):])
    if name[:1] in ("+", "-"):
        return _fixed_offset(name)
    if _REGION.fullmatch(name) and name in _regions():
        return zoneinfo.ZoneInfo(name)
    return None


def _fixed_offset(text: str) -> timezone | None:
    """Java's ``ZoneOffset.of``: ``+h``, ``+hh``, ``+hhmm``, ``+hh:mm``, ``+hhmmss``, ``+hh:mm:ss``, up to 18:00."""
    if not _OFFSET.fullmatch(text):
        return None
    numbers = text[1:].replace(":", "")
    hours, minutes, seconds = int(numbers[:2]), int(numbers[2:4] or 0), int(numbers[4:6] or 0)
    total = (hours * 60 + minutes) * 60 + seconds
    if minutes > 59 or seconds > 59 or total > 18 * 3600:
        return None
    return timezone(timedelta(seconds=-total if text[0] == "-" else total))


def _offset_micros(zone: tzinfo, year: int, month: int, day: int, hour: int, minute: int, second: int) -> int:
    """``zone``'s offset from UTC at that local time, in microseconds. A gap or an overlap in a region's clock
    takes the offset before the change, as Java's ``ZonedDateTime.of`` does. A year outside 1..9999 takes the
    offset of the nearest year Python holds (the zone's rules repeat yearly beyond the last change)."""
    if isinstance(zone, timezone):
        return zone.utcoffset(None) // timedelta(microseconds=1)
    inside = min(max(year, 1), 9999)
    local = datetime(inside, month, min(day, _month_days(inside, month)), hour, minute, second, tzinfo=zone)
    return local.utcoffset() // timedelta(microseconds=1)


def date_literal(text: str) -> date:
    """``DATE 'text'``: the forms ``parse_date`` reads; Spark refuses anything else when it parses the query.

    Raises:
        ValueError: text Spark's parser refuses (``INVALID_TYPED_LITERAL``), or a date outside the years 1..9999
            (Spark would take it; final/ cannot hold it).
    """
    try:
        return parse_date(text)
    except DateRangeError as error:
        raise ValueError(f"DATE '{text}' is outside the years 1 to 9999 that final/ holds; write a date within "
                         f"them") from error
    except SqlRuntimeError:
        raise ValueError(f"DATE '{text}' is not a date Spark reads (INVALID_TYPED_LITERAL): write yyyy-mm-dd, "
                         f"yyyy-mm or yyyy") from None


def timestamp_literal(text: str) -> datetime:
    """``TIMESTAMP 'text'``: the forms ``parse_timestamp`` reads, in UTC; Spark refuses anything else when it
    parses the query.

    Raises:
        ValueError: text Spark's parser refuses (``INVALID_TYPED_LITERAL``), or a time outside the years 1..9999.
    """
    try:
        return parse_timestamp(text)
    except DateRangeError as error:
        raise ValueError(f"TIMESTAMP '{text}' is outside the years 1 to 9999 that final/ holds; write a time "
                         f"within them") from error
    except SqlRuntimeError:
        raise ValueError(f"TIMESTAMP '{text}' is not a timestamp Spark reads (INVALID_TYPED_LITERAL): write "
                         f"yyyy-mm-dd hh:mm:ss[.ffffff][zone]") from None


# Printing, and casts between the two types -------------------------------------------------------------------


def format_date(value: date) -> str:
    """``CAST(value AS STRING)``: ``yyyy-MM-dd``, the year with four digits.

    >>> format_date(date(987, 6, 5))
    '0987-06-05'
    """
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"


def format_timestamp(value: datetime) -> str:
    """``CAST(value AS STRING)``: ``yyyy-MM-dd HH:mm:ss``, then the fraction of a second without its trailing
    zeros (none when it is zero).

    >>> format_timestamp(datetime(2020, 1, 5, 10, 11, 12, 500000))
    '2020-01-05 10:11:12.5'
    """
    text = f"{format_date(value)} {value.hour:02d}:{value.minute:02d}:{value.second:02d}"
    return f"{text}.{value.microsecond:06d}".rstrip("0") if value.microsecond else text


def date_to_timestamp(value: date) -> datetime:
    """``CAST(value AS TIMESTAMP)``: midnight at the start of that day, UTC."""
    return datetime(value.year, value.month, value.day)


def timestamp_to_date(value: datetime) -> date:
    """``CAST(value AS DATE)``: the UTC day the time falls in."""
    return value.date()


# Date arithmetic ---------------------------------------------------------------------------------------------

DAY_COUNT_TYPES = frozenset({"tinyint", "smallint", "int"})
"""What ``date_add``/``date_sub`` (and ``DATE + n``, ``DATE - n``) take as the day count: Spark refuses a BIGINT,
DECIMAL, DOUBLE or BOOLEAN at analysis; a STRING is cast to INT (``[CAST_INVALID_INPUT]`` if it is not one).
``add_months`` instead takes any number (cast to INT: ``1.9`` is 1, a BIGINT over INT's range is
``[CAST_OVERFLOW]``) or a STRING, not a BOOLEAN. Both take a TIMESTAMP or STRING first argument, cast to DATE."""


def add_days(value: date, days: int) -> date:
    """``date_add(value, days)`` (``date_sub`` is ``days`` negated; ``DATE + days`` is the same): Spark never
    raises here, even where its INT of days wraps around, and no such result lies within the years 1..9999.

    Raises:
        DateRangeError: a result outside the years 1..9999.
    """
    return _date(epoch_day(value.year, value.month, value.day) + days, f"date_add({format_date(value)}, {days})")


def _add_months_fields(year: int, month: int, day: int, months: int) -> tuple[int, int, int]:
    """Java's ``LocalDate.plusMonths``: the same day ``months`` later, or that month's last day if it is shorter."""
    new_year, new_month = divmod(year * 12 + month - 1 + months, 12)
    return new_year, new_month + 1, min(day, _month_days(new_year, new_month + 1))


def add_months(value: date, months: int) -> date:
    """``add_months(value, months)``: the same day of the month ``months`` later, or the last day of a shorter
    month. A month end is not kept as one: Spark 3+ moves 2020-02-29 to 2020-03-29, not 03-31.

    >>> add_months(date(2020, 1, 31), 1), add_months(date(2020, 2, 29), 12)
    (datetime.date(2020, 2, 29), datetime.date(2021, 2, 28))

    Raises:
        SqlRuntimeError: ``[ARITHMETIC_OVERFLOW]`` when the result's day count overflows Spark's INT (about 5.8
            million years away), as Spark raises; ``DateRangeError`` for any other result outside 1..9999.
    """
    year, month, day = _add_months_fields(value.year, value.month, value.day, months)
    if epoch_day(year, month, day) not in INT_RANGE:
        raise SqlRuntimeError(f"[ARITHMETIC_OVERFLOW] add_months({format_date(value)}, {months}) overflows a DATE")
    if not 1 <= year <= 9999:
        raise _out_of_range(f"add_months({format_date(value)}, {months})", year)
    return date(year, month, day)


def last_day(value: date) -> date:
    """``last_day(d)``: the last day of its month."""
    return date(value.year, value.month, _month_days(value.year, value.month))


def datediff(end: date, start: date) -> int:
    """``datediff(end, start)``: the days from ``start`` to ``end`` (negative if ``end`` is earlier); an INT.

    >>> datediff(date(2020, 3, 1), date(2020, 2, 1))
    29
    """
    return (end - start).days


def months_between(later: date | datetime, earlier: date | datetime, round_off: bool = True) -> float:
    """``months_between(later, earlier[, round_off])``, a DOUBLE; a DATE is read as its midnight.

    Whole months when both days of the month are equal or both are their month's last day; otherwise the
    month difference plus the difference in (day, second of the day) over 31 days, rounded half up to 8 places
    when ``round_off``. Seconds are whole: the microseconds of each time are ignored.
    """
    later, earlier = _as_timestamp(later), _as_timestamp(earlier)
    months = (later.year * 12 + later.month) - (earlier.year * 12 + earlier.month)
    last = (later.day == _month_days(later.year, later.month)
            and earlier.day == _month_days(earlier.year, earlier.month))
    if later.day == earlier.day or last:
        return float(months)
    seconds = ((later.day - earlier.day) * 86_400 + _second_of_day(later) - _second_of_day(earlier))
    difference = months + seconds / (31 * 86_400.0)
    if not round_off:
        return difference
    # Java's Math.round(x * 1e8) / 1e8: half up, on the exact binary value of the product.
    return math.floor(Fraction(difference * 1e8) + Fraction(1, 2)) / 1e8


def _second_of_day(value: datetime) -> int:
    return (value.hour * 60 + value.minute) * 60 + value.second


# Intervals ---------------------------------------------------------------------------------------------------

INTERVAL_FIELDS = ("year", "month", "day", "hour", "minute", "second")
"""The fields of Spark's ANSI interval types, from the largest: a type runs from one field to another."""

_UNITS = {
    "year": ("year", 12, 0, 0), "month": ("month", 1, 0, 0), "week": ("day", 0, 7, 0), "day": ("day", 0, 1, 0),
    "hour": ("hour", 0, 0, 3_600_000_000), "minute": ("minute", 0, 0, 60_000_000),
    "second": ("second", 0, 0, 1_000_000), "millisecond": ("second", 0, 0, 1_000),
    "microsecond": ("second", 0, 0, 1),
}
"""Each unit a literal may name (singular or plural): the field of its type, and one of it in months, days and
microseconds."""


@dataclass(frozen=True)
class Interval:
    """The value of an ANSI interval literal: ``months``, or ``days`` and ``microseconds``; ``start`` to ``end`` are
    the fields of its Spark type (``interval day to hour`` is ``("day", "hour")``).

    Invariant: a year-month interval (``start`` is ``year`` or ``month``) has ``days == microseconds == 0`` and
    ``months`` within an INT; a day-time interval has ``months == 0``, ``abs(microseconds)`` under a day with the
    sign of ``days`` (a total of ``days * DAY_MICROSECONDS + microseconds``), and that total within a BIGINT.
    ``INTERVAL_FIELDS.index(start) <= INTERVAL_FIELDS.index(end)``.
    """

    months: int
    days: int
    microseconds: int
    start: str
    end: str

    @property
    def year_month(self) -> bool:
        return self.start in ("year", "month")

    @property
    def total_microseconds(self) -> int:
        return self.days * DAY_MICROSECONDS + self.microseconds

    @property
    def type(self) -> SqlType:
        """Its Spark type, as ``df.schema`` spells it: ``interval month``, ``interval day to second``."""
        return SqlType(f"interval {self.start}" if self.start == self.end else f"interval {self.start} to {self.end}")

    def negated(self) -> Interval:
        """``-interval``.

        Raises:
            SqlRuntimeError: ``[INTERVAL_ARITHMETIC_OVERFLOW]`` for the one value whose negation leaves its range.
        """
        return _interval(-self.months, -self.total_microseconds, self.start, self.end, "-interval")


def _interval(months: int, micros: int, start: str, end: str, what: str) -> Interval:
    """An ``Interval`` of that many months (year-month) or microseconds (day-time); SqlRuntimeError if it
    overflows its type, as Spark's interval arithmetic raises."""
    if months not in INT_RANGE or micros not in LONG_RANGE:
        raise SqlRuntimeError(f"[INTERVAL_ARITHMETIC_OVERFLOW] Integer overflow while operating with intervals: "
                              f"{what}")
    days = abs(micros) // DAY_MICROSECONDS
    days = -days if micros < 0 else days
    return Interval(months, days, micros - days * DAY_MICROSECONDS, start, end)


_AMOUNT = re.compile(r"\s*([+-]?)\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*")
"""A single unit's amount: a sign (spaces may follow it), then ``5``, ``5.``, ``5.25`` or ``.25``."""

_PAIR = re.compile(r"\s*([+-]?\s*(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))\s+([A-Za-z]+)")
"""One amount and its unit in a literal's text (``1 day 2 hours`` has two)."""

_YEAR_MONTH = re.compile(r"\s*([+-]?)([0-9]+)-([0-9]+)\s*")
"""``INTERVAL '[+-]y-m' YEAR TO MONTH``."""

_SPANS = {
    ("day", "hour"): r"([0-9]+) ([0-9]{1,2})()()()",
    ("day", "minute"): r"([0-9]+) ([0-9]{1,2}):([0-9]{1,2})()()",
    ("day", "second"): r"([0-9]+) ([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:\.([0-9]{1,9}))?",
    ("hour", "minute"): r"()([0-9]+):([0-9]{1,2})()()",
    ("hour", "second"): r"()([0-9]+):([0-9]{1,2}):([0-9]{1,2})(?:\.([0-9]{1,9}))?",
    ("minute", "second"): r"()()([0-9]+):([0-9]{1,2})(?:\.([0-9]{1,9}))?",
}
"""The day-time ``start TO end`` forms, each with five groups: days, hours, minutes, seconds and a fraction, the
ones a form lacks empty; the first field has any number of digits, the others one or two."""

_BOUNDS = (None, 23, 59, 59)
"""The largest hour, minute and second a day-time form takes after its first field."""


def interval(amount: str, unit: str | None) -> Interval:
    """The value of ``INTERVAL 'amount' unit`` as sqlglot 30 gives it: the literal's text and its unit's text.

    sqlglot reads ``INTERVAL 1 YEAR`` and ``INTERVAL '1' YEAR`` alike (``amount`` ``'1'``, ``unit`` ``'YEAR'``),
    ``INTERVAL '3 months'`` as ``'3'`` ``'MONTHS'``, ``INTERVAL '1-2' YEAR TO MONTH`` with ``unit``
    ``'YEAR TO MONTH'`` (the span's two ``Var`` names joined by ``TO``), ``INTERVAL '1 day 2 hours'`` with no
    unit, and ``INTERVAL 1 DAY 2 HOURS`` as the sum of two intervals (``add_intervals``). A sign outside the
    quotes (``INTERVAL -'3' MONTH``) is a ``Neg`` around the text: ``negated()``.

    A single unit (``year``, ``month``, ``week``, ``day``, ``hour``, ``minute``, ``second``, ``millisecond``,
    ``microsecond``, any case, plural or not) takes a signed whole number; only seconds take a fraction (up to
    nine digits, cut to microseconds). ``week`` is seven days; milliseconds and microseconds are seconds. Spans:
    ``year to month`` (``[+-]y-m``, m up to 11) and the day-time spans (``[+-]d h:m:s.f`` and its parts).

    Raises:
        ValueError: a literal Spark refuses when it parses the query (its message names the rule), including
            a value beyond the type's range.
    """
    literal = f"INTERVAL '{amount}'" + (f" {unit}" if unit else "")
    if unit is None:
        return _unit_sum(amount, literal)
    words = unit.lower().split()
    if len(words) == 3 and words[1] == "to":
        return _span(amount, words[0], words[2], literal)
    if len(words) != 1:
        raise ValueError(f"{literal}: the unit {unit!r} is not one Spark takes")
    found = _AMOUNT.fullmatch(amount)
    if found is None:
        raise ValueError(f"{literal}: an interval's value must be a number")
    return _unit_sum(f"{found.group(1)}{found.group(2)} {words[0]}", literal)


def _unit_sum(text: str, literal: str) -> Interval:
    """An interval written as number-unit pairs (``1 day 2 hours``), each pair's amount added; one type must
    cover every unit, year-month or day-time."""
    position, months, days, micros, fields = 0, 0, 0, 0, []
    while position < len(text.rstrip()):
        pair = _PAIR.match(text, position)
        if pair is None:
            raise ValueError(f"{literal}: expected a number and a unit at {text[position:]!r}")
        name = pair.group(2).lower()
        name = name[:-1] if name.endswith("s") and name[:-1] in _UNITS else name
        if name not in _UNITS:
            raise ValueError(f"{literal}: {pair.group(2)!r} is not a unit Spark takes ({', '.join(_UNITS)})")
        field, unit_months, unit_days, unit_micros = _UNITS[name]
        number = pair.group(1).replace(" ", "")
        whole, _, fraction = number.lstrip("+-").partition(".")
        if "." in number and name != "second":
            raise ValueError(f"{literal}: {name} cannot have a fractional part (INVALID_INTERVAL_FORMAT)")
        if len(fraction) > 9:
            raise ValueError(f"{literal}: seconds take at most nine fractional digits (INVALID_INTERVAL_FORMAT)")
        negative = number.startswith("-")
        amount = int(whole or 0) * unit_micros + int((fraction + "000000")[:6])
        amount = -amount if negative else amount
        count = -int(whole or 0) if negative else int(whole or 0)
        months, days, micros = months + count * unit_months, days + count * unit_days, micros + amount
        fields.append(field)
        position = pair.end()
    year_month = {field in ("year", "month") for field in fields}
    if len(year_month) != 1:
        raise ValueError(f"{literal}: Cannot mix year-month and day-time fields" if fields else
                         f"{literal}: the interval has no value")
    start = min(fields, key=INTERVAL_FIELDS.index)
    end = max(fields, key=INTERVAL_FIELDS.index)
    if months not in INT_RANGE or days not in INT_RANGE:
        raise ValueError(f"{literal} is beyond the range of Spark's interval (INVALID_INTERVAL_FORMAT)")
    return _checked_literal(months, days * DAY_MICROSECONDS + micros, start, end, literal)


def _checked_literal(months: int, micros: int, start: str, end: str, literal: str) -> Interval:
    try:
        return _interval(months, micros, start, end, literal)
    except SqlRuntimeError:
        raise ValueError(f"{literal} is beyond the range of Spark's interval type "
                         f"(INTERVAL_ARITHMETIC_OVERFLOW)") from None


def _span(amount: str, start: str, end: str, literal: str) -> Interval:
    """``INTERVAL 'amount' start TO end``."""
    if (start, end) == ("year", "month"):
        found = _YEAR_MONTH.fullmatch(amount)
        if found is None or int(found.group(3)) > 11:
            raise ValueError(f"{literal}: a year-month interval is [+|-]y-m with m from 0 to 11 "
                             f"(INVALID_INTERVAL_FORMAT)")
        months = int(found.group(2)) * 12 + int(found.group(3))
        months = -months if found.group(1) == "-" else months
        if months not in INT_RANGE:
            raise ValueError(f"{literal} is beyond the range of Spark's interval (INVALID_INTERVAL_FORMAT)")
        return Interval(months, 0, 0, "year", "month")
    form = _SPANS.get((start, end))
    if form is None:
        raise ValueError(f"{literal}: Spark takes the spans YEAR TO MONTH and DAY|HOUR|MINUTE TO "
                         f"HOUR|MINUTE|SECOND, from a larger field to a smaller (INVALID_INTERVAL_FORMAT)")
    found = re.fullmatch(rf"\s*([+-]?){form}\s*", amount)
    if found is None:
        raise ValueError(f"{literal} does not match the form of an interval {start} to {end} "
                         f"(INVALID_INTERVAL_FORMAT)")
    parts = [int(text) if text else 0 for text in found.groups()[1:5]]
    leading = [text != "" for text in found.groups()[1:5]].index(True)
    for index in range(leading + 1, 4):
        if parts[index] > _BOUNDS[index]:
            raise ValueError(f"{literal}: {('day', 'hour', 'minute', 'second')[index]} {parts[index]} is outside "
                             f"0 to {_BOUNDS[index]}")
    fraction = found.group(6) or ""
    micros = (((parts[0] * 24 + parts[1]) * 60 + parts[2]) * 60 + parts[3]) * 1_000_000
    micros += int((fraction + "000000")[:6])
    return _checked_literal(0, -micros if found.group(1) == "-" else micros, start, end, literal)


def add_intervals(left: Interval, right: Interval, sign: int = 1) -> Interval:
    """``left + right`` (``sign`` 1) or ``left - right`` (-1): the type runs from the larger start to the smaller
    end (``INTERVAL '1' DAY + INTERVAL '2' HOUR`` is an ``interval day to hour``).

    Raises:
        ValueError: one year-month and one day-time interval (Spark refuses the query).
        SqlRuntimeError: ``[INTERVAL_ARITHMETIC_OVERFLOW]`` when the result leaves its type's range.
    """
    if left.year_month != right.year_month:
        raise ValueError(f"{left.type} and {right.type} cannot be added: Spark does not mix year-month and day-time "
                         f"intervals")
    fields = (left.start, left.end, right.start, right.end)
    return _interval(left.months + sign * right.months, left.total_microseconds + sign * right.total_microseconds,
                     min(fields, key=INTERVAL_FIELDS.index), max(fields, key=INTERVAL_FIELDS.index),
                     f"{left.type} {'+' if sign > 0 else '-'} {right.type}")


def interval_result_type(value_type: SqlType, interval: Interval) -> SqlType:
    """The type of ``value ± interval`` (and ``interval + value``) in Spark 4.3: a TIMESTAMP stays one; a DATE
    stays one with a year-month interval or one of whole days (``interval day``, ``INTERVAL 2 WEEKS`` too), and
    becomes a TIMESTAMP with any other day-time interval, even ``INTERVAL '24' HOUR``.

    Spark refuses at analysis: ``interval - value``, ``DATE + BIGINT``, ``TIMESTAMP + INT``, a year-month plus a
    day-time interval, a number plus an interval, a STRING plus a year-month interval. A STRING plus a day-time
    interval is a STRING in Spark (the text read as a TIMESTAMP, the sum printed back), not modelled here.

    Raises:
        ValueError: ``value_type`` is neither DATE nor TIMESTAMP.
    """
    if value_type == TIMESTAMP:
        return TIMESTAMP
    if value_type != DATE:
        raise ValueError(f"an interval is added to a DATE or a TIMESTAMP, not to {value_type}")
    whole_days = interval.start == interval.end == "day"
    return DATE if interval.year_month or whole_days else TIMESTAMP


def add_interval(value: date | datetime, interval: Interval, sign: int = 1) -> date | datetime:
    """``value + interval`` (``sign`` 1) or ``value - interval`` (-1), of ``interval_result_type``'s type.

    Months move the day as ``add_months`` does and keep a TIMESTAMP's time of day; a day-time interval adds its
    days to a DATE when it is whole days, otherwise its microseconds to the time (a DATE at midnight UTC).

    Raises:
        SqlRuntimeError: ``[ARITHMETIC_OVERFLOW]`` where ``add_months`` raises it, ``[INTERVAL_ARITHMETIC_OVERFLOW]``
            when negating the interval overflows; ``DateRangeError`` for a result outside the years 1..9999.
    """
    if sign < 0:
        interval = interval.negated()
    if isinstance(value, datetime):
        if interval.year_month:
            year, month, day = _add_months_fields(value.year, value.month, value.day, interval.months)
            if not 1 <= year <= 9999:
                raise _out_of_range(f"{format_timestamp(value)} + {interval.type}", year)
            return value.replace(year=year, month=month, day=day)
        return _timestamp(timestamp_micros(value) + interval.total_microseconds,
                          f"{format_timestamp(value)} + {interval.type}")
    if interval.year_month:
        return add_months(value, interval.months)
    if interval_result_type(DATE, interval) == DATE:
        return add_days(value, interval.days)
    return _timestamp(timestamp_micros(date_to_timestamp(value)) + interval.total_microseconds,
                      f"{format_date(value)} + {interval.type}")


# Fields of a date or time ------------------------------------------------------------------------------------

_FIELD_NAMES = {
    "year": ("YEAR", "Y", "YEARS", "YR", "YRS"), "yearofweek": ("YEAROFWEEK",), "quarter": ("QUARTER", "QTR"),
    "month": ("MONTH", "MON", "MONS", "MONTHS"), "week": ("WEEK", "W", "WEEKS"), "day": ("DAY", "D", "DAYS"),
    "dayofweek": ("DAYOFWEEK", "DOW"), "dayofweek_iso": ("DAYOFWEEK_ISO", "DOW_ISO"), "dayofyear": ("DOY",),
    "hour": ("HOUR", "H", "HOURS", "HR", "HRS"), "minute": ("MINUTE", "M", "MIN", "MINS", "MINUTES"),
    "second": ("SECOND", "S", "SEC", "SECONDS", "SECS"),
}
EXTRACT_FIELDS = {spelling: field for field, spellings in _FIELD_NAMES.items() for spelling in spellings}
"""The fields ``EXTRACT(field FROM ...)`` takes in Spark 4.3, by every spelling it accepts (any case), and what
each means. Spark refuses others at analysis (``INVALID_EXTRACT_FIELD``): ``DAYOFMONTH``, ``DAYOFYEAR``,
``EPOCH``, ``MILLISECONDS`` among them, though ``dayofmonth()`` and ``dayofyear()`` are functions."""

_FIELD_VALUES: dict[str, Callable[[datetime], int]] = {
    "year": lambda value: value.year,
    "yearofweek": lambda value: value.isocalendar()[0],
    "quarter": lambda value: (value.month - 1) // 3 + 1,
    "month": lambda value: value.month,
    "week": lambda value: value.isocalendar()[1],
    "day": lambda value: value.day,
    "dayofweek": lambda value: value.isoweekday() % 7 + 1,
    "dayofweek_iso": lambda value: value.isoweekday(),
    "dayofyear": lambda value: value.timetuple().tm_yday,
    "hour": lambda value: value.hour,
    "minute": lambda value: value.minute,
    "second": lambda value: value.second,
}

FIELD_FUNCTIONS = {
    "year": "year", "quarter": "quarter", "month": "month", "day": "day", "dayofmonth": "day",
    "dayofweek": "dayofweek", "dayofyear": "dayofyear", "weekofyear": "week", "hour": "hour", "minute": "minute",
    "second": "second",
}
"""The functions that read one field, each by the field it reads; all return an INT, ``second()`` too."""


def _as_timestamp(value: date | datetime) -> datetime:
    return value if isinstance(value, datetime) else date_to_timestamp(value)


def extract(field: str, value: date | datetime) -> int | Decimal:
    """``EXTRACT(field FROM value)``: an INT, or for SECOND a DECIMAL(8, 6) with the microseconds. A DATE is read as
    its midnight (its HOUR is 0). DOW counts from Sunday = 1, DOW_ISO from Monday = 1; WEEK and YEAROFWEEK are
    ISO 8601's (weeks start on Monday; week 1 holds the year's first Thursday).

    >>> extract("second", datetime(2021, 1, 3, 10, 11, 12, 500000))
    Decimal('12.500000')

    Raises:
        ValueError: a field Spark refuses (``INVALID_EXTRACT_FIELD``).
    """
    name = EXTRACT_FIELDS.get(field.upper())
    if name is None:
        raise ValueError(f"EXTRACT({field} FROM ...): Spark takes the fields {', '.join(EXTRACT_FIELDS)}")
    moment = _as_timestamp(value)
    if name == "second":
        return Decimal(moment.second * 1_000_000 + moment.microsecond).scaleb(-6)
    return _FIELD_VALUES[name](moment)


def extract_type(field: str) -> SqlType:
    """The type of ``EXTRACT(field FROM ...)``: DECIMAL(8, 6) for the seconds, INT for the rest.

    Raises:
        ValueError: a field Spark refuses.
    """
    name = EXTRACT_FIELDS.get(field.upper())
    if name is None:
        raise ValueError(f"EXTRACT({field} FROM ...): Spark takes the fields {', '.join(EXTRACT_FIELDS)}")
    return SECONDS if name == "second" else INT


def field_function(name: str, value: date | datetime) -> int:
    """``year(value)``, ``quarter``, ``month``, ``day``/``dayofmonth``, ``dayofweek`` (Sunday = 1), ``dayofyear``,
    ``weekofyear`` (ISO 8601), ``hour``, ``minute``, ``second`` (an INT, without the fraction).

    Raises:
        ValueError: ``name`` is not one of those functions.
    """
    field = FIELD_FUNCTIONS.get(name.lower())
    if field is None:
        raise ValueError(f"{name}() is not one of {', '.join(FIELD_FUNCTIONS)}")
    return _FIELD_VALUES[field](_as_timestamp(value))


# Truncation --------------------------------------------------------------------------------------------------

TRUNC_UNITS = {"YEAR": "year", "YYYY": "year", "YY": "year", "QUARTER": "quarter", "MONTH": "month", "MM": "month",
               "MON": "month", "WEEK": "week"}
DATE_TRUNC_UNITS = {**TRUNC_UNITS, "DAY": "day", "DD": "day", "HOUR": "hour", "MINUTE": "minute",
                    "SECOND": "second", "MILLISECOND": "millisecond", "MICROSECOND": "microsecond"}
"""The units ``trunc`` and ``date_trunc`` take, each by every spelling (any case, no surrounding spaces). Spark
gives NULL for any other unit (``Y``, ``D``, ``days``, and ``DAY`` for ``trunc``), not an error."""


def _truncated_date(value: date, unit: str) -> date:
    if unit == "year":
        return date(value.year, 1, 1)
    if unit == "quarter":
        return date(value.year, (value.month - 1) // 3 * 3 + 1, 1)
    if unit == "month":
        return date(value.year, value.month, 1)
    if unit == "week":
        return value - timedelta(days=value.weekday())  # never before 0001-01-01, itself a Monday
    return value


def date_trunc(unit: str, value: datetime) -> datetime | None:
    """``date_trunc(unit, value)``: the TIMESTAMP at the start of the ``unit`` holding ``value`` (a week starts on
    Monday); None, as Spark's NULL, for a unit it does not know. A DATE argument is cast to TIMESTAMP first.
    """
    name = DATE_TRUNC_UNITS.get(unit.upper())
    if name is None:
        return None
    if name in ("year", "quarter", "month", "week", "day"):
        return date_to_timestamp(_truncated_date(value.date(), name))
    if name == "hour":
        return value.replace(minute=0, second=0, microsecond=0)
    if name == "minute":
        return value.replace(second=0, microsecond=0)
    if name == "second":
        return value.replace(microsecond=0)
    if name == "millisecond":
        return value.replace(microsecond=value.microsecond // 1000 * 1000)
    return value


def trunc(value: date, unit: str) -> date | None:
    """``trunc(value, unit)``: the DATE starting the year, quarter, month or week (from Monday) holding ``value``;
    None, as Spark's NULL, for any other unit (DAY included). A TIMESTAMP argument is cast to DATE first.
    """
    name = TRUNC_UNITS.get(unit.upper())
    return None if name is None else _truncated_date(value, name)


# Reading strings with a pattern: to_date and to_timestamp ----------------------------------------------------

_PATTERN_FIELDS = {"yyyy": "year", "MM": "month", "dd": "day", "HH": "hour", "mm": "minute", "ss": "second"}
"""The pattern letters supported, each as Java's DateTimeFormatter reads it in Spark: ``yyyy`` a year of four
digits, or more after a ``+`` or ``-``; the others exactly two digits."""

_RANGES = {"year": ("Year", -999_999_999, 999_999_999, "-999999999 - 999999999"),
           "month": ("MonthOfYear", 1, 12, "1 - 12"), "day": ("DayOfMonth", 1, 31, "1 - 28/31"),
           "hour": ("HourOfDay", 0, 23, "0 - 23"), "minute": ("MinuteOfHour", 0, 59, "0 - 59"),
           "second": ("SecondOfMinute", 0, 59, "0 - 59")}
"""The range Java checks each field against, with Java's name for the field and its words for the range (both
in the error's text)."""

_MONTH_NAMES = "JANUARY FEBRUARY MARCH APRIL MAY JUNE JULY AUGUST SEPTEMBER OCTOBER NOVEMBER DECEMBER".split()
"""How Java names a month when it refuses a date (``Invalid date 'FEBRUARY 30'``)."""

_YEAR_DIGITS = (4, 19)
"""A ``yyyy`` year reads 4 to 19 digits (Java's ``appendValue(YEAR, 4, 19, EXCEEDS_PAD)``)."""


@dataclass(frozen=True)
class _Field:
    """A numeric field of a pattern; ``reserved`` is the width of the two-digit fields right after it with no
    separator between, left to them when it reads a run of digits (Java's adjacent value parsing)."""

    name: str
    reserved: int = 0


@lru_cache(maxsize=64)
def datetime_pattern(pattern: str) -> tuple[_Field | str, ...]:
    """A Java DateTimeFormatter pattern made of ``yyyy``, ``MM``, ``dd``, ``HH``, ``mm``, ``ss`` and literal text,
    as the fields and literals ``to_date`` and ``to_timestamp`` read in order. Literal text is any character but
    a letter and ``#{}[]``, or anything in single quotes (``''`` is a quote).

    sqlglot hands a literal pattern over in strftime form (``'yyyy-MM-dd'`` is ``%Y-%mstrict-%dstrict``);
    ``sqlglot.time.format_time(text, Spark.INVERSE_TIME_MAPPING, Spark.INVERSE_TIME_TRIE)`` gives the Java
    pattern back for these six letters, but makes ``yyyy`` of a ``y`` (which Spark reads differently).

    Raises:
        ValueError: any other pattern letter or letter count (named), ``#{}[]``, or an unclosed quote.
    """
    parts: list[_Field | str] = []
    index = 0
    while index < len(pattern):
        character = pattern[index]
        if character == "'":
            close = index + 1
            while close < len(pattern) and not (pattern[close] == "'" and pattern[close + 1:close + 2] != "'"):
                close += 2 if pattern[close] == "'" else 1
            if close >= len(pattern):
                raise ValueError(f"datetime pattern {pattern!r}: the quote at {index} is never closed")
            quoted = pattern[index + 1:close]
            parts.append(quoted.replace("''", "'") if quoted else "'")
            index = close + 1
        elif character.isascii() and character.isalpha():
            run = len(pattern[index:]) - len(pattern[index:].lstrip(character))
            letters = character * run
            if letters not in _PATTERN_FIELDS:
                raise ValueError(f"datetime pattern {pattern!r}: the letter {character!r} ({letters}) is not "
                                 f"supported here; to_date and to_timestamp take yyyy, MM, dd, HH, mm, ss and "
                                 f"separators")
            parts.append(_Field(_PATTERN_FIELDS[letters]))
            index += run
        elif character in "#{}[]":
            raise ValueError(f"datetime pattern {pattern!r}: {character!r} is not supported here (Spark reserves "
                             f"#, {{ and }}; [ ] make optional sections); quote it to match it literally")
        else:
            parts.append(character)
            index += 1
    for position, part in enumerate(parts):
        if part == _Field("year"):
            following = parts[position + 1:]
            adjacent = next((count for count, item in enumerate(following) if not isinstance(item, _Field)),
                            len(following))
            parts[position] = _Field("year", 2 * adjacent)
    return tuple(parts)


class _Unparsed(Exception):
    """Java's parse failure: where, and how the message words it; ``whole`` if the message begins with the text
    (when Java's parser fails, not Spark's own defaults for the fields a pattern lacks)."""

    def __init__(self, detail: str, whole: bool = True) -> None:
        super().__init__(detail)
        self.detail, self.whole = detail, whole


def _digits(text: str, start: int, limit: int) -> int:
    """How many ASCII digits run from ``start``, at most ``limit``."""
    end = start
    while end < len(text) and end - start < limit and "0" <= text[end] <= "9":
        end += 1
    return end - start


def _read_year(text: str, position: int, reserved: int) -> tuple[int, int]:
    """A ``yyyy`` year at ``position``: (value, end). Strict ``EXCEEDS_PAD``: a ``+`` only before more than four
    digits, which need it; ``-0000`` is refused."""
    start = position
    sign = text[position] if position < len(text) and text[position] in "+-" else ""
    position += len(sign)
    low, high = _YEAR_DIGITS
    count = _digits(text, position, high + reserved)
    if count < low:
        raise _Unparsed(f"at index {position}")
    if reserved:
        count = max(low, count - reserved)
    value = int(text[position:position + count])
    if sign == "-" and value == 0:
        raise _Unparsed(f"at index {start}")
    if (sign == "+" and count <= low) or (not sign and count > low):
        raise _Unparsed(f"at index {start if sign else position}")
    return -value if sign == "-" else value, position + count


def _parse_pattern(text: str, pattern: str) -> tuple[int, int, int, int, int, int]:
    """(year, month, day, hour, minute, second) read from ``text`` by ``pattern`` (strictly, literals in any case),
    each checked against its range; a field the pattern lacks is 1970, January, the 1st or 0."""
    found: dict[str, int] = {}
    position = 0
    for part in datetime_pattern(pattern):
        if isinstance(part, str):
            piece = text[position:position + len(part)]
            if len(piece) < len(part) or any(a != b and a.upper() != b.upper() and a.lower() != b.lower()
                                             for a, b in zip(piece, part, strict=True)):
                raise _Unparsed(f"at index {position}")
            position += len(part)
            continue
        start = position
        if part.name == "year":
            value, position = _read_year(text, position, part.reserved)
        else:
            if _digits(text, position, 2) < 2:
                raise _Unparsed(f"at index {position}")
            value, position = int(text[position:position + 2]), position + 2
        if found.setdefault(part.name, value) != value:
            raise _Unparsed(f"at index {start}")
    if position < len(text):
        raise _Unparsed(f", unparsed text found at index {position}")
    for name, value in found.items():
        label, low, high, words = _RANGES[name]
        if not low <= value <= high:
            raise _Unparsed(f": Invalid value for {label} (valid values {words}): {value}")
    year, month, day = found.get("year", 1970), found.get("month", 1), found.get("day", 1)
    if not _valid_date(year, month, day):
        # Java checks the date when the text has all three fields; otherwise Spark does, once it fills in defaults.
        whole = {"year", "month", "day"} <= found.keys()
        if (month, day) == (2, 29):
            raise _Unparsed(f": Invalid date 'February 29' as '{year}' is not a leap year", whole)
        raise _Unparsed(f": Invalid date '{_MONTH_NAMES[month - 1]} {day}'", whole)
    return year, month, day, found.get("hour", 0), found.get("minute", 0), found.get("second", 0)


def _parsed_timestamp(text: str, pattern: str, function: str) -> datetime:
    try:
        year, month, day, hour, minute, second = _parse_pattern(text, pattern)
    except _Unparsed as failure:
        joiner = "" if failure.detail[0] in ",:" else " "
        reason = f"Text '{text}' could not be parsed{joiner}{failure.detail}" if failure.whole else (
            failure.detail.removeprefix(": "))
        raise SqlRuntimeError(f"[CANNOT_PARSE_TIMESTAMP] {reason}. Use `try_{function}` to tolerate invalid input "
                              f"string and return NULL instead") from None
    micros = epoch_day(year, month, day) * DAY_MICROSECONDS + ((hour * 60 + minute) * 60 + second) * 1_000_000
    return _timestamp(micros, f"{function}('{text}', '{pattern}')")


def to_date(text: str, pattern: str | None = None) -> date:
    """``to_date(text[, pattern])``: without a pattern ``CAST(text AS DATE)``; with one, ``text`` read by it (see
    ``datetime_pattern``) exactly, from its first character to its last, with no space trimmed; fields it lacks
    are 1970, January, the 1st, midnight. Spark reads through a TIMESTAMP, so a time in the pattern is checked too.

    Raises:
        ValueError: a pattern with letters other than yyyy, MM, dd, HH, mm, ss (the compiler refuses it).
        SqlRuntimeError: without a pattern as ``parse_date``; with one, ``[CANNOT_PARSE_TIMESTAMP]`` for text that
            does not match or names an invalid date or time (ANSI mode; Spark's ``try_to_date`` would give NULL);
            ``DateRangeError`` for a date outside the years 1..9999.
    """
    if pattern is None:
        return parse_date(text)
    return _parsed_timestamp(text, pattern, "to_date").date()


def to_timestamp(text: str, pattern: str | None = None) -> datetime:
    """``to_timestamp(text[, pattern])``: without a pattern ``CAST(text AS TIMESTAMP)``; with one, as ``to_date``
    reads it, the time in UTC.

    Raises:
        ValueError: a pattern with letters other than yyyy, MM, dd, HH, mm, ss.
        SqlRuntimeError: as ``parse_timestamp`` without a pattern, as ``to_date`` with one.
    """
    if pattern is None:
        return parse_timestamp(text)
    return _parsed_timestamp(text, pattern, "to_timestamp")


# Result types ------------------------------------------------------------------------------------------------

RESULT_TYPES: dict[str, SqlType] = {
    "to_date": DATE, "to_timestamp": TIMESTAMP, "date_add": DATE, "date_sub": DATE, "add_months": DATE,
    "datediff": INT, "last_day": DATE, "months_between": DOUBLE, "date_trunc": TIMESTAMP, "trunc": DATE,
    **{name: INT for name in FIELD_FUNCTIONS},
}
"""The Spark type of each function's result, whatever its arguments' types (``second()`` is an INT, where
``EXTRACT(SECOND ...)`` is ``extract_type``'s DECIMAL); ``interval_result_type`` types ``± INTERVAL``."""
