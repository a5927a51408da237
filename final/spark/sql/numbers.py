"""Binding SQL's numeric functions and the comparisons of several values: ``round``, ``bround``, ``floor``,
``ceil``, ``greatest``, ``least`` and ``nullif``, typed as Spark 4.3 types them (ANSI mode on).

``round(x, d)`` rounds half up and ``bround(x, d)`` half to even, to ``d``
places (a literal, as Spark requires; negative: to tens, hundreds, ...).
Each keeps its argument's type, except a DECIMAL(p, s), which becomes
DECIMAL(p - s + 1 + min(s, d), min(s, d)) (one more integer digit, for 9.9
rounding to 10), or DECIMAL(max(p - s + 1, 1 - d), 0) for a negative ``d``,
at most 38 digits: a value that no longer fits is Spark's
``NUMERIC_VALUE_OUT_OF_RANGE``, an integer that overflows its type
``ARITHMETIC_OVERFLOW``. A DOUBLE is rounded as Spark rounds it: through
its shortest decimal text (``BigDecimal(d)`` in Scala reads
``Double.toString``), so ``round(2.675, 2)`` is 2.68 although the double is a
little below 2.675. (Java 17's ``Double.toString`` is not always the shortest
text, where Python's ``repr`` is; for such a double a tie may round here
where Spark's longer text has no tie.)

``floor`` and ``ceil`` make a DOUBLE or an integer a BIGINT (NaN is 0, a
value outside BIGINT ``ARITHMETIC_OVERFLOW``) and a DECIMAL(p, s)
DECIMAL(p - s + 1, 0). ``greatest`` and ``least`` widen their arguments to
one type (``types.wider``) and skip NULLs; ``nullif(a, b)`` is NULL when
``a = b``, else ``a``.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from ..sqlfloat import sql_value
from .errors import SqlRuntimeError, refuse
from .scalar import VALUES, Call, Literal, Scalar
from .types import BIGINT, DOUBLE, MAX_PRECISION, NULL, STRING, WIDE, SqlType, checked_decimal, checked_integral

if TYPE_CHECKING:
    from .expressions import Expressions

ROUNDINGS = {"round": ROUND_HALF_UP, "bround": ROUND_HALF_EVEN}
"""Each rounding function's mode, as Java's ``RoundingMode`` names Spark's ``HALF_UP`` and ``HALF_EVEN``."""
FLOORS = {exp.Floor: ("floor", ROUND_FLOOR, math.floor), exp.Ceil: ("ceil", ROUND_CEILING, math.ceil)}
"""``floor`` and ``ceil``: the name, the mode that rounds a DECIMAL, the function that rounds a DOUBLE."""
BIGINT_RANGE = (-(2**63), 2**63)
"""The integers a BIGINT holds, from the first to before the second."""


def binds(node: exp.Expression) -> bool:
    """Whether ``node`` is a call this module binds."""
    return isinstance(node, (exp.Round, exp.Floor, exp.Ceil, exp.Greatest, exp.Least, exp.Nullif)) or (
        isinstance(node, exp.Anonymous) and node.name.lower() == "bround")


def bind(binder: Expressions, node: exp.Expression) -> Scalar:
    """The call ``node`` as a typed ``Scalar``.

    Raises:
        SqlError: an argument that is no number (or one of the others' type), a scale that is not an integer
            literal, or a form of the function outside the subset.
    """
    if isinstance(node, (exp.Greatest, exp.Least)):
        return _extreme(binder, node)
    if isinstance(node, exp.Nullif):
        return _null_if(binder, node)
    if isinstance(node, (exp.Floor, exp.Ceil)):
        return _floor(binder, node)
    if isinstance(node, exp.Anonymous):
        if not 1 <= len(node.expressions) <= 2:
            raise refuse(node, f"bround() takes a number and a scale, not {len(node.expressions)} arguments")
        value, scale = node.expressions[0], node.expressions[1] if len(node.expressions) == 2 else None
        return _rounded(binder, "bround", value, scale, node)
    return _rounded(binder, "round", node.this, node.args.get("decimals"), node)


def _number(binder: Expressions, node: exp.Expression, call: str) -> Scalar:
    """A numeric argument: a STRING read as a DOUBLE (Spark's implicit cast, its errors included), NULL as a
    DOUBLE's NULL."""
    from .expressions import converted  # expressions binds through this module: imported when first needed

    value = binder.bind(node)
    if value.type in (STRING, NULL):
        return converted(value, DOUBLE)
    if not value.type.numeric:
        raise refuse(node, f"{call}() needs a number, not {value.type} ({node.sql(dialect='spark')})")
    return value


# round and bround -------------------------------------------------------------------------------------------------


def _rounded(binder: Expressions, name: str, value_node: exp.Expression, scale_node: exp.Expression | None,
             node: exp.Expression) -> Scalar:
    from .expressions import computed  # expressions binds through this module: imported when first needed

    value = _number(binder, value_node, name)
    scale = 0 if scale_node is None else _scale(binder, scale_node, name, node)
    mode = ROUNDINGS[name]
    kind = value.type
    if kind == DOUBLE:
        return Call(name, (value,), DOUBLE, lambda v: _round_double(v, scale, mode))
    if kind.integral:
        if scale >= 0:
            return computed(value)  # an integer already has no places to round
        return Call(name, (value,), kind, lambda v: checked_integral(int(_round_decimal(Decimal(v), scale, mode)),
                                                                     kind))
    result = round_type(kind, scale)
    return Call(name, (value,), result, lambda v: checked_decimal(_round_decimal(v, scale, mode), result))


def _scale(binder: Expressions, node: exp.Expression, name: str, call: exp.Expression) -> int:
    """The scale of ``round``: an integer literal, as Spark requires it be a constant."""
    found = binder.bind(node)
    if not (isinstance(found, Literal) and found.type.integral and found.value is not None):
        raise refuse(call, f"{name}()'s scale is an integer literal here, not {node.sql(dialect='spark')}")
    return found.value


def round_type(kind: SqlType, scale: int) -> SqlType:
    """The type of ``round(x, scale)`` for a DECIMAL ``x`` (Spark's ``RoundBase.dataType``): one more integer
    digit, for a carry; the places kept, or none for a negative scale; at most 38 digits, the risk of overflow
    taken as Spark takes it."""
    integral = kind.precision - kind.scale + 1
    if scale < 0:
        return SqlType("decimal", min(max(integral, 1 - scale), MAX_PRECISION), 0)
    places = min(kind.scale, scale)
    return SqlType("decimal", min(integral + places, MAX_PRECISION), places)


def _round_decimal(value: Decimal, scale: int, mode: str) -> Decimal:
    """``value`` rounded to ``scale`` places, written with ``max(scale, 0)`` places (a DECIMAL of scale 0 has
    none: 1200, not 1.2E+3)."""
    if -value.as_tuple().exponent <= scale:
        return value
    rounded = value.quantize(Decimal(1).scaleb(-scale), rounding=mode, context=WIDE)
    return rounded if scale >= 0 else Decimal(int(rounded))


def _round_double(value: float, scale: int, mode: str) -> float:
    """A DOUBLE rounded through its shortest decimal text, as Scala's ``BigDecimal(d).setScale`` does; NaN and
    the infinities as they are; never -0.0 (a ``BigDecimal`` has no negative zero)."""
    if math.isnan(value) or math.isinf(value):
        return value
    exact = Decimal(repr(value))
    return sql_value(float(_round_decimal(exact, scale, mode)) + 0.0)


# floor and ceil ---------------------------------------------------------------------------------------------------


def _floor(binder: Expressions, node: exp.Expression) -> Scalar:
    name, mode, whole = FLOORS[type(node)]
    if node.args.get("decimals") is not None:
        raise refuse(node, f"{name}() with a scale is not in the subset; {name}(x) and round(x, d) are")
    from .expressions import computed, converted  # expressions binds through this module

    value = _number(binder, node.this, name)
    kind = value.type
    if kind.integral:
        return computed(converted(value, BIGINT))
    if kind == DOUBLE:
        return Call(name, (value,), BIGINT, lambda v: _whole_double(v, whole))
    if kind.scale == 0:
        return computed(value)
    result = SqlType("decimal", kind.precision - kind.scale + 1, 0)
    return Call(name, (value,), result, lambda v: checked_decimal(v.to_integral_value(rounding=mode), result))


def _whole_double(value: float, whole: Callable[[float], int]) -> int:
    """``floor`` or ``ceil`` of a DOUBLE as a BIGINT: NaN is 0 (Java's cast of NaN to a long), an infinity or a
    value past BIGINT's range Spark's overflow error."""
    if math.isnan(value):
        return 0
    if math.isinf(value) or not BIGINT_RANGE[0] <= whole(value) < BIGINT_RANGE[1]:
        raise SqlRuntimeError(f"[ARITHMETIC_OVERFLOW] {value} is outside BIGINT's range after rounding")
    return whole(value)


# greatest, least, nullif ------------------------------------------------------------------------------------------


def _extreme(binder: Expressions, node: exp.Expression) -> Scalar:
    """``greatest(...)`` and ``least(...)``: the largest (smallest) argument that is not NULL, NULL when all
    are; the arguments widened to one type (a DOUBLE's NaN is above every number, as Spark orders it)."""
    from .expressions import common_type, converted  # expressions binds through this module

    name = "greatest" if isinstance(node, exp.Greatest) else "least"
    parts = [binder.bind(node.this), *(binder.bind(item) for item in node.expressions)]
    if len(parts) < 2:
        raise refuse(node, f"{name}() takes two or more arguments, as in Spark")
    common = common_type([part.type for part in parts], node)
    pick = max if name == "greatest" else min
    return Call(name, tuple(converted(part, common) for part in parts), common, lambda *values: _pick(pick, values),
                VALUES)


def _pick(pick: Callable[..., Any], values: tuple) -> Any:
    present = [value for value in values if value is not None]
    return pick(present) if present else None


def _null_if(binder: Expressions, node: exp.Nullif) -> Scalar:
    """``nullif(a, b)``: NULL when ``a = b`` is true, else ``a``, of ``a``'s type (Spark's
    ``IF(a = b, NULL, a)``)."""
    from .expressions import comparison  # expressions binds through this module: imported when first needed

    value = binder.bind(node.this)
    equal = comparison("=", operator.eq, value, binder.bind(node.expression), node)
    return Call("nullif", (value, equal), value.type, _unless_equal, VALUES)


def _unless_equal(value: Any, equal: bool | None) -> Any:
    return None if equal is True else value
