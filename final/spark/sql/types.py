"""Spark SQL's types and the values ``final/`` holds for them, with Spark 4.3's rules (ANSI mode on).

A value of each type is one Python type in a record: BOOLEAN a bool, the
integral types an int (checked against the type's range), DECIMAL(p, s) a
``Decimal`` with exactly ``s`` places, DOUBLE a float (NaN as
``sqlfloat.NAN``), STRING a str, TIMESTAMP and DATE a datetime and a date;
NULL is ``None``. ``SqlType.of_text`` reads a table's column type.

The rules that differ from Python's, each as Spark's analyzer applies them:

- integer arithmetic stays in its type and overflow is an error
  (``ARITHMETIC_OVERFLOW``), where Python's ints grow;
- ``/`` is DOUBLE for integers (``1 / 2 = 0.5``) and DECIMAL for decimals,
  ``div`` truncates to BIGINT, ``%`` takes the dividend's sign; a zero
  divisor is an error, for DOUBLE too;
- DECIMAL results have the precision and scale of ``decimal_result``
  (rounded half up, with at least 6 places kept when precision runs out),
  and a value too large for its type is an error, never a rounded number;
- an integer literal beside a DECIMAL counts as a DECIMAL of its own digits
  (``fare * 2`` is DECIMAL(p + 2, s), not p + 11).

Errors are ``SqlRuntimeError``: raised where Spark would raise for the data.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date, datetime
from decimal import ROUND_DOWN, ROUND_HALF_UP, Context, Decimal
from typing import Any

from ..sqlfloat import NAN
from .errors import SqlRuntimeError

MAX_PRECISION = 38
MINIMUM_ADJUSTED_SCALE = 6
"""When a DECIMAL result needs more than 38 digits, Spark keeps at least this many places (or all it had)."""

WIDE = Context(prec=200, rounding=ROUND_HALF_UP)
"""Room for any exact product or sum of two DECIMAL(38)s; rounding happens only at a result's own scale."""

INTEGRAL_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
INTEGRAL_DIGITS = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 20}
"""The DECIMAL precision each integral type widens to beside a DECIMAL."""


@dataclass(frozen=True)
class SqlType:
    """One Spark SQL type: ``name`` as Spark's ``simpleString`` spells it, and a DECIMAL's precision and scale."""

    name: str
    precision: int = 0
    scale: int = 0

    def __str__(self) -> str:
        return f"decimal({self.precision},{self.scale})" if self.name == "decimal" else self.name

    @property
    def integral(self) -> bool:
        return self.name in INTEGRAL_BITS

    @property
    def numeric(self) -> bool:
        return self.integral or self.name in ("decimal", "double")

    @property
    def decimal(self) -> SqlType:
        """This integral or DECIMAL type as a DECIMAL (INT is DECIMAL(10, 0))."""
        return self if self.name == "decimal" else SqlType("decimal", INTEGRAL_DIGITS[self.name], 0)

    @staticmethod
    def of_text(text: str) -> SqlType:
        """A table column's type from its text (``"BIGINT"``, ``"DECIMAL(8,2)"``, ``"string"``).

        Raises:
            ValueError: a type this compiler does not take (its message names the types it does).
        """
        found = re.fullmatch(r"\s*(\w+)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?\s*", text)
        name = ALIASES.get(found.group(1).lower()) if found else None
        if name is None:
            known = ", ".join(sorted(set(ALIASES.values())))
            raise ValueError(f"column type {text!r} is not one SQL here takes: {known}")
        if name == "decimal":
            precision = int(found.group(2) or 10)
            scale = int(found.group(3) or 0)
            if not 0 < precision <= MAX_PRECISION or scale > precision:
                raise ValueError(f"column type {text!r}: a DECIMAL has 1 to 38 digits and no more places than digits")
            return SqlType("decimal", precision, scale)
        return SqlType(name)


ALIASES = {
    "boolean": "boolean", "bool": "boolean", "tinyint": "tinyint", "byte": "tinyint", "smallint": "smallint",
    "short": "smallint", "int": "int", "integer": "int", "bigint": "bigint", "long": "bigint",
    "double": "double", "decimal": "decimal", "dec": "decimal", "numeric": "decimal", "string": "string",
    "varchar": "string", "timestamp": "timestamp", "date": "date",
}

BOOLEAN, INT, BIGINT, DOUBLE, STRING, NULL = (SqlType(name) for name in ("boolean", "int", "bigint", "double",
                                                                           "string", "void"))
DATE, TIMESTAMP = SqlType("date"), SqlType("timestamp")


def bounded(precision: int, scale: int) -> SqlType:
    return SqlType("decimal", min(precision, MAX_PRECISION), min(scale, MAX_PRECISION))


def adjusted(precision: int, scale: int) -> SqlType:
    """Spark's ``adjustPrecisionScale``: over 38 digits, integer digits are kept and places give way,
    down to 6 (or fewer if there were fewer)."""
    if precision <= MAX_PRECISION:
        return SqlType("decimal", precision, scale)
    digits = precision - scale
    return SqlType("decimal", MAX_PRECISION, max(MAX_PRECISION - digits, min(scale, MINIMUM_ADJUSTED_SCALE)))


def decimal_result(operator: str, left: SqlType, right: SqlType) -> SqlType:
    """The DECIMAL type of ``left operator right`` for DECIMAL operands (``+ - * / %``)."""
    p1, s1, p2, s2 = left.precision, left.scale, right.precision, right.scale
    if operator in "+-":
        scale = max(s1, s2)
        return adjusted(max(p1 - s1, p2 - s2) + scale + 1, scale)
    if operator == "*":
        return adjusted(p1 + p2 + 1, s1 + s2)
    if operator == "/":
        scale = max(MINIMUM_ADJUSTED_SCALE, s1 + p2 + 1)
        return adjusted(p1 - s1 + s2 + scale, scale)
    scale = max(s1, s2)
    return adjusted(min(p1 - s1, p2 - s2) + scale, scale)


def literal_decimal(value: int) -> SqlType:
    """The DECIMAL an integer literal counts as beside a DECIMAL: exactly its digits."""
    return SqlType("decimal", max(len(str(abs(value))), 1), 0)


def wider(left: SqlType, right: SqlType) -> SqlType | None:
    """The type both widen to (CASE branches, COALESCE, IN, set operations, comparisons), or None if none."""
    if left == right:
        return left
    if left == NULL or right == NULL:
        return right if left == NULL else left
    if {left.name, right.name} == {"date", "timestamp"}:
        return SqlType("timestamp")
    if left.integral and right.integral:
        return max(left, right, key=lambda kind: INTEGRAL_BITS[kind.name])
    if left.numeric and right.numeric:
        if DOUBLE in (left, right):
            return DOUBLE
        a, b = left.decimal, right.decimal
        scale = max(a.scale, b.scale)
        # Over 38 digits the integer digits stay and places give way, as in arithmetic (Spark 4.3 checked).
        return adjusted(max(a.precision - a.scale, b.precision - b.scale) + scale, scale)
    return None


# Values -----------------------------------------------------------------------------------------------------------


def checked_integral(value: int, kind: SqlType, what: str = "ARITHMETIC_OVERFLOW") -> int:
    """``value`` if ``kind`` holds it; otherwise Spark's overflow error."""
    bits = INTEGRAL_BITS[kind.name]
    if -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
        return value
    raise SqlRuntimeError(f"[{what}] {value} does not fit {str(kind).upper()}")


def checked_decimal(value: Decimal, kind: SqlType) -> Decimal:
    """``value`` rounded half up to ``kind``'s scale; an error if it then has more digits than ``kind`` holds."""
    rounded = value if value.as_tuple().exponent == -kind.scale else WIDE.quantize(value, _UNITS[kind.scale])
    if rounded.adjusted() >= kind.precision - kind.scale and rounded:
        raise SqlRuntimeError(f"[NUMERIC_VALUE_OUT_OF_RANGE] {value} cannot be represented as "
                              f"Decimal({kind.precision}, {kind.scale})")
    return rounded


_UNITS = [Decimal(1).scaleb(-scale) for scale in range(MAX_PRECISION + 2)]
"""``_UNITS[s]`` is 10 ** -s: what ``quantize`` rounds to, for ``s`` places."""


def decimal_quotient(a: Decimal, b: Decimal, kind: SqlType) -> Decimal:
    """``a / b`` as Spark computes it: the quotient to 39 places, then rounded to ``kind``'s scale."""
    if not b:
        raise SqlRuntimeError("[DIVIDE_BY_ZERO] Division by zero")
    return checked_decimal(WIDE.quantize(WIDE.divide(a, b), _UNITS[MAX_PRECISION + 1]), kind)


def cast(value: Any, source: SqlType, target: SqlType) -> Any:
    """``CAST(value AS target)`` for a value of ``source``, as ANSI Spark casts (errors where it raises)."""
    if value is None or (source == target and target.name != "decimal"):
        return value
    name = target.name
    if {source.name, name} & {"date", "timestamp"}:
        return _temporal(value, source.name, name)
    if name == "string":
        return _to_string(value, source)
    if name == "boolean":
        return _to_boolean(value, source)
    if target.integral:
        return checked_integral(_to_int(value, source, target), target, "CAST_OVERFLOW")
    if name == "decimal":
        if source.name == "double" and (math.isnan(value) or math.isinf(value)):
            return None  # Spark's one lenient ANSI cast: NaN and the infinities become NULL, not an error
        return checked_decimal(_to_decimal(value, source, target), target)
    if name == "double":
        return _to_double(value, source)
    if source == target:
        return value
    raise SqlRuntimeError(f"[CAST] {source} cannot be cast to {target}")


def _temporal(value: Any, source: str, target: str) -> Any:
    """A cast to or from DATE or TIMESTAMP (``dates.py`` has Spark's rules for each)."""
    from . import dates  # dates types its results with this module

    casts = {("string", "date"): dates.parse_date, ("string", "timestamp"): dates.parse_timestamp,
             ("date", "string"): dates.format_date, ("timestamp", "string"): dates.format_timestamp,
             ("timestamp", "date"): dates.timestamp_to_date, ("date", "timestamp"): dates.date_to_timestamp}
    found = casts.get((source, target))
    if found is None:
        raise SqlRuntimeError(f"[CAST] {source} cannot be cast to {target}")
    return found(value)


def _to_string(value: Any, source: SqlType) -> str:
    if source.name == "boolean":
        return "true" if value else "false"
    if source.name == "decimal":
        return format(value, "f")
    return str(value)


_TRUE, _FALSE = {"t", "true", "y", "yes", "1"}, {"f", "false", "n", "no", "0"}

def _invalid_input(value: str, target: str) -> SqlRuntimeError:
    """Spark's error for a string that does not read as a value of ``target`` (``"INT"``, ``"DOUBLE"``)."""
    return SqlRuntimeError(f"[CAST_INVALID_INPUT] The value {value!r} of the type \"STRING\" cannot be cast to "
                           f"\"{target}\"")


_SPACES = "".join(chr(code) for code in (*range(33), *range(127, 160)))
"""What Spark trims from a string before reading a number or boolean in it (``UTF8String.trimAll``): ASCII
spaces and ISO control characters (Python's ``strip`` would trim every Unicode space too)."""


def trimmed(text: str) -> str:
    return text.strip(_SPACES)


def _to_boolean(value: Any, source: SqlType) -> bool:
    if source.name == "string":
        text = trimmed(value).lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise _invalid_input(value, "BOOLEAN")
    return bool(value)


_INTEGER = re.compile(r"[+-]?[0-9]+")
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
"""Numbers as Spark reads them from strings: ASCII digits only (Python's ``\\d`` and ``int`` take any script's)."""


def _to_int(value: Any, source: SqlType, target: SqlType) -> int:
    if source.name == "string":
        text = trimmed(value)
        if not _INTEGER.fullmatch(text):
            raise _invalid_input(value, str(target).upper())
        return int(text)
    if source.name == "double":
        if math.isnan(value) or math.isinf(value):
            raise SqlRuntimeError(f"[CAST_OVERFLOW] The value {value} of the type \"DOUBLE\" cannot be cast to "
                                  f"\"{str(target).upper()}\" due to an overflow")
        return int(value)
    if source.name == "decimal":
        return int(value.to_integral_value(rounding=ROUND_DOWN))
    return int(value)


def _to_decimal(value: Any, source: SqlType, target: SqlType) -> Decimal:
    if source.name == "string":
        text = trimmed(value)
        if not _NUMBER.fullmatch(text):
            raise _invalid_input(value, str(target).upper())
        return Decimal(text)
    if source.name == "double":
        return Decimal(repr(value))
    if source.name == "boolean":
        return Decimal(int(value))
    return Decimal(value)


_SPECIAL = {"nan": NAN, "+nan": NAN, "-nan": NAN, "inf": math.inf, "+inf": math.inf, "infinity": math.inf,
            "+infinity": math.inf, "-inf": -math.inf, "-infinity": -math.inf}


def _to_double(value: Any, source: SqlType) -> float:
    if source.name == "string":
        text = trimmed(value)
        if text.lower() in _SPECIAL:
            return _SPECIAL[text.lower()]
        if not _NUMBER.fullmatch(text.rstrip("dDfF")):
            raise _invalid_input(value, "DOUBLE")
        return float(text.rstrip("dDfF"))
    return float(value)


def is_value_of(value: Any, kind: SqlType) -> bool:
    """Whether ``value`` is what a record holds for ``kind`` (``None`` for any type)."""
    if value is None:
        return True
    python = {"boolean": bool, "double": float, "decimal": Decimal, "string": str, "timestamp": datetime,
              "date": date}.get(kind.name, int)
    return type(value) is python or (isinstance(value, python) and python is not int)
