"""SQL expressions as Python functions of a record, typed and valued as Spark SQL's.

``Expressions(scope).compile(node)`` turns one sqlglot expression into an
``Expr``: ``fn(record)`` computes the value and ``type`` is its Spark type.
NULL is ``None`` and logic is three-valued: ``AND`` is false if either side
is, NULL if either is NULL, else true; a comparison with NULL is NULL; a
WHERE keeps a row only when its condition is true. Evaluation is lazy where
Spark's is (``AND``, ``OR``, ``CASE``, ``COALESCE``), so a branch Spark
never evaluates cannot raise here either.

A scope is the record's fields, in order; ``Expressions`` can be given a
``replace`` hook that compiles some nodes first (the planner's way to make
a GROUP BY key or an aggregate a field of the aggregated record).
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal, localcontext
from typing import Any

from sqlglot import exp

from ..sqlfloat import NAN, sql_value
from .errors import SqlRuntimeError, refuse
from .types import (
    BIGINT,
    BOOLEAN,
    DOUBLE,
    INT,
    NULL,
    STRING,
    WIDE,
    SqlType,
    cast,
    checked_decimal,
    checked_integral,
    decimal_quotient,
    decimal_result,
    literal_decimal,
    wider,
)

_MISSING = object()


@dataclass(frozen=True)
class Expr:
    """A compiled expression: ``fn(record)`` is its value, ``type`` its Spark type; ``literal`` its value if it is
    a literal (Spark treats an integer literal beside a DECIMAL by its own digits); ``position`` the column's
    place if it just reads a column."""

    fn: Callable[[tuple], Any]
    type: SqlType
    literal: Any = _MISSING
    position: int | None = None


@dataclass(frozen=True)
class Field:
    """A column of a relation: the table name or alias that qualifies it (if any), its name, its type."""

    qualifier: str | None
    name: str
    type: SqlType


def field_at(fields: Sequence[Field], node: exp.Column) -> int:
    """The position of the column ``node`` names among ``fields`` (names are case-insensitive, as in Spark).

    Raises:
        SqlError: no field, or more than one, has that name (and qualifier, if given).
    """
    name, qualifier = node.name.lower(), node.table.lower() or None
    found = [position for position, field in enumerate(fields)
             if field.name.lower() == name and (qualifier is None or (field.qualifier or "").lower() == qualifier)]
    if len(found) == 1:
        return found[0]
    shown = f"{node.table}.{node.name}" if qualifier else node.name
    if not found:
        known = ", ".join(sorted({f"{f.qualifier}.{f.name}" if f.qualifier else f.name for f in fields}))
        raise refuse(node, f"column {shown} is not found; the columns here are {known}")
    raise refuse(node, f"column {shown} is ambiguous: qualify it with its table's name or alias")


NAMES = {
    exp.Window: "a window function (OVER)", exp.Exists: "EXISTS (subquery)",
    exp.Subquery: "a subquery in an expression",
    exp.Rollup: "GROUP BY ROLLUP", exp.Cube: "GROUP BY CUBE", exp.GroupingSets: "GROUP BY GROUPING SETS",
    exp.ILike: "ILIKE", exp.Nullif: "NULLIF", exp.RegexpLike: "RLIKE", exp.Anonymous: "this function",
}


def construct(node: exp.Expression) -> str:
    """What ``node`` is, in words a refusal can name."""
    if isinstance(node, exp.Anonymous):
        return f"the function {node.name}()"
    if isinstance(node, exp.Func) and type(node) not in NAMES:
        return f"the function {node.sql_name()}()"
    return NAMES.get(type(node), f"{type(node).__name__} ({node.sql(dialect='spark')[:40]})")


COMPARISONS = {exp.EQ: operator.eq, exp.NEQ: operator.ne, exp.LT: operator.lt, exp.LTE: operator.le,
               exp.GT: operator.gt, exp.GTE: operator.ge}
ARITHMETIC = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.Mod: "%", exp.IntDiv: "div"}


class Expressions:
    """Compiles expressions over one scope (``fields``); ``replace(node)`` may compile a node first, or return None."""

    def __init__(self, fields: Sequence[Field], replace: Callable[[exp.Expression], Expr | None] | None = None,
                 where: str = "here") -> None:
        self.fields = fields
        self.replace = replace
        self.where = where

    def compile(self, node: exp.Expression) -> Expr:
        """``node`` as an ``Expr``.

        Raises:
            SqlError: a construct outside the subset, an unknown column, or types Spark would not combine.
        """
        if self.replace is not None:
            found = self.replace(node)
            if found is not None:
                return found
        if isinstance(node, exp.Paren):
            return self.compile(node.this)
        if isinstance(node, exp.Column):
            position = field_at(self.fields, node)
            return Expr(operator.itemgetter(position), self.fields[position].type, position=position)
        if isinstance(node, (exp.Literal, exp.Boolean, exp.Null)):
            return literal(node)
        if isinstance(node, exp.Neg):
            return self._negate(node)
        kind = type(node)
        if kind in ARITHMETIC:
            return arithmetic(ARITHMETIC[kind], self.compile(node.this), self.compile(node.expression), node)
        if kind in COMPARISONS:
            return comparison(COMPARISONS[kind], self.compile(node.this), self.compile(node.expression), node)
        if kind is exp.NullSafeEQ:
            return null_safe_equal(self.compile(node.this), self.compile(node.expression), node)
        if kind in (exp.And, exp.Or):
            return logic(kind is exp.And, self.boolean(node.this), self.boolean(node.expression))
        if kind is exp.Not:
            inner = self.boolean(node.this).fn
            return Expr(lambda row: None if (value := inner(row)) is None else not value, BOOLEAN)
        if kind is exp.Is:
            if not isinstance(node.expression, exp.Null):
                raise refuse(node, f"IS {node.expression.sql()} is not in the subset; IS [NOT] NULL is")
            inner = self.compile(node.this).fn
            return Expr(lambda row: inner(row) is None, BOOLEAN)
        if kind is exp.In:
            if node.args.get("query") is not None:
                raise refuse(node, "IN (subquery) is not in the subset; IN takes a list of values, or use a JOIN")
            return membership(self.compile(node.this), [self.compile(item) for item in node.expressions], node)
        if kind is exp.Between:
            value = self.compile(node.this)
            low = comparison(operator.ge, value, self.compile(node.args["low"]), node)
            high = comparison(operator.le, value, self.compile(node.args["high"]), node)
            return logic(True, low, high)
        if kind is exp.Like:
            return self._like(node, None)
        if kind is exp.Escape and isinstance(node.this, exp.Like):
            escape = node.expression
            if not (isinstance(escape, exp.Literal) and escape.is_string and len(escape.this) == 1):
                raise refuse(node, "LIKE ... ESCAPE takes one character in quotes")
            return self._like(node.this, escape.this)
        if kind in (exp.Case, exp.If):
            return self._case(node)
        if kind is exp.Coalesce:
            parts = [self.compile(node.this), *(self.compile(item) for item in node.expressions)]
            common = common_type([part.type for part in parts], node)
            return coalesce([converted(part, common) for part in parts], common)
        if kind in (exp.Cast, exp.TryCast):
            return self._cast(node)
        if kind in (exp.Lower, exp.Upper):
            inner = self.string(node.this)
            change = str.lower if kind is exp.Lower else str.upper
            return Expr(lambda row: None if (value := inner(row)) is None else change(value), STRING)
        if kind is exp.Length:
            inner = self.string(node.this)
            return Expr(lambda row: None if (value := inner(row)) is None else len(value), INT)
        if kind is exp.Substring:
            return self._substring(node)
        if kind in (exp.Concat, exp.DPipe):
            parts = [node.this, node.expression] if kind is exp.DPipe else node.expressions
            return concat([self.string(part) for part in parts])
        if kind is exp.Abs:
            return self._abs(node)
        if isinstance(node, exp.AggFunc):
            raise refuse(node, f"{node.sql_name()}() is an aggregate: it belongs in a SELECT list or HAVING with "
                               f"GROUP BY, not {self.where}")
        raise refuse(node, f"{construct(node)} is not in the SQL subset final/ compiles (see the README's "
                           f"'Your own SQL')")

    def boolean(self, node: exp.Expression) -> Expr:
        """``node`` compiled, which must be a BOOLEAN (or NULL)."""
        compiled = self.compile(node)
        if compiled.type not in (BOOLEAN, NULL):
            raise refuse(node, f"{node.sql(dialect='spark')} is {compiled.type}, where a BOOLEAN condition is needed")
        return compiled

    def string(self, node: exp.Expression) -> Callable[[tuple], Any]:
        """``node`` as a STRING: a number or boolean is cast as Spark casts it; a DOUBLE or TIMESTAMP is refused."""
        compiled = self.compile(node)
        if compiled.type in (STRING, NULL):
            return compiled.fn
        if compiled.type.name in ("double", "timestamp", "date"):
            raise refuse(node, f"{node.sql(dialect='spark')} is {compiled.type}: Spark prints it as text its own "
                               f"(Java's) way, which this subset does not copy; leave it out of string functions")
        return converted(compiled, STRING).fn

    def _negate(self, node: exp.Neg) -> Expr:
        inner = self.compile(node.this)
        kind = inner.type
        if not kind.numeric and kind != NULL:
            raise refuse(node, f"- needs a number, not {kind}")
        if isinstance(node.this, exp.Literal):
            return literal(node)  # -5 is the literal -5 (an INT even for -2147483648), as Spark's parser reads it
        if kind == NULL:
            return Expr(lambda row: None, DOUBLE)  # Spark types -NULL as a DOUBLE
        fn = inner.fn
        if kind.integral:
            return Expr(lambda row: None if (v := fn(row)) is None else checked_integral(-v, kind), kind)
        if kind == DOUBLE:  # -NaN is a new NaN: made Spark's one NaN again, as every DOUBLE result is
            return Expr(lambda row: None if (v := fn(row)) is None else sql_value(-v), kind)
        return Expr(lambda row: None if (v := fn(row)) is None else -v, kind)

    def _abs(self, node: exp.Abs) -> Expr:
        inner = self.compile(node.this)
        kind, fn = inner.type, inner.fn
        if not kind.numeric:
            raise refuse(node, f"abs() needs a number, not {kind}")
        if kind.integral:
            return Expr(lambda row: None if (v := fn(row)) is None else checked_integral(abs(v), kind), kind)
        if kind == DOUBLE:
            return Expr(lambda row: None if (v := fn(row)) is None else sql_value(abs(v)), kind)
        return Expr(lambda row: None if (v := fn(row)) is None else abs(v), kind)

    def _like(self, node: exp.Like, escape: str | None) -> Expr:
        value = self.string(node.this)
        pattern = self.compile(node.expression)
        if pattern.type not in (STRING, NULL):
            raise refuse(node, f"LIKE takes a STRING pattern, not {pattern.type}")
        negate = bool(node.args.get("negate"))
        escape = "\\" if escape is None else escape
        if pattern.literal is not _MISSING:
            compiled = None if pattern.literal is None else like_regex(pattern.literal, escape, node)

            def match(row: tuple) -> bool | None:
                text = value(row)
                if text is None or compiled is None:
                    return None
                return (compiled.fullmatch(text) is not None) != negate
        else:
            patterns = pattern.fn

            def match(row: tuple) -> bool | None:
                text, found = value(row), patterns(row)
                if text is None or found is None:
                    return None
                return (like_regex(found, escape, node).fullmatch(text) is not None) != negate
        return Expr(match, BOOLEAN)

    def _case(self, node: exp.Expression) -> Expr:
        if isinstance(node, exp.If):
            branches = [(node.this, node.args["true"])]
            default = node.args.get("false")
            subject = None
        else:
            branches = [(branch.this, branch.args["true"]) for branch in node.args["ifs"]]
            default = node.args.get("default")
            subject = node.this
        results = [self.compile(result) for _, result in branches]
        otherwise = self.compile(default) if default is not None else Expr(lambda row: None, NULL, None)
        common = common_type([result.type for result in [*results, otherwise]], node)
        if subject is not None:
            compared = self.compile(subject)
            conditions = [comparison(operator.eq, compared, self.compile(when), when).fn for when, _ in branches]
        else:
            conditions = [self.boolean(when).fn for when, _ in branches]
        arms = [(condition, converted(result, common).fn)
                for condition, result in zip(conditions, results, strict=True)]
        fallback = converted(otherwise, common).fn

        def choose(row: tuple) -> Any:
            for condition, result in arms:
                if condition(row) is True:
                    return result(row)
            return fallback(row)

        return Expr(choose, common)

    def _cast(self, node: exp.Expression) -> Expr:
        inner = self.compile(node.this)
        target_text = node.to.sql(dialect="spark")
        if node.to.this == exp.DataType.Type.TEXT or target_text.upper().startswith("VARCHAR"):
            target = STRING
        else:
            try:
                target = SqlType.of_text(target_text)
            except ValueError:
                raise refuse(node, f"CAST to {target_text} is not in the subset") from None
        source = inner.type
        allowed = {"boolean", "tinyint", "smallint", "int", "bigint", "decimal", "double", "string"}
        if source != target and source != NULL and not (
            source.name in allowed and target.name in allowed and not (source == DOUBLE and target == STRING)
        ):
            raise refuse(node, f"CAST from {source} to {target} is not in the subset (casts between numbers, "
                               f"booleans and strings are, except DOUBLE to STRING)")
        if source == NULL:
            return Expr(lambda row: None, target, None)
        return converted(inner, target)

    def _substring(self, node: exp.Substring) -> Expr:
        text = self.string(node.this)
        start = self._integer(node.args["start"])
        length = self._integer(node.args["length"]) if node.args.get("length") is not None else None

        def cut(row: tuple) -> str | None:
            value, position = text(row), start(row)
            size = length(row) if length is not None else 2**31 - 1
            if value is None or position is None or size is None:
                return None
            begin = position - 1 if position > 0 else (len(value) + position if position < 0 else 0)
            end = begin + size
            begin = max(begin, 0)
            return value[begin:end] if begin < end else ""

        return Expr(cut, STRING)

    def _integer(self, node: exp.Expression) -> Callable[[tuple], Any]:
        compiled = self.compile(node)
        if not (compiled.type.integral or compiled.type == NULL):
            raise refuse(node, f"{node.sql(dialect='spark')} must be an integer here, not {compiled.type}")
        return compiled.fn


def literal(node: exp.Expression) -> Expr:
    """A literal's ``Expr``: integers are INT, then BIGINT, then DECIMAL as they grow; ``1.5`` is DECIMAL(2, 1);
    ``1e3`` is DOUBLE."""
    if isinstance(node, exp.Null):
        return Expr(lambda row: None, NULL, None)
    if isinstance(node, exp.Boolean):
        value = bool(node.this)
        return Expr(lambda row: value, BOOLEAN, value)
    sign = 1
    if isinstance(node, exp.Neg):
        sign, node = -1, node.this
    if node.is_string:
        text = node.this
        return Expr(lambda row: text, STRING, text)
    text = node.this
    if "e" in text.lower():
        value = sql_value(sign * float(text))
        return Expr(lambda row: value, DOUBLE, value)
    if "." in text:
        value = sign * Decimal(text)
        digits, exponent = len(value.as_tuple().digits), -value.as_tuple().exponent
        kind = SqlType("decimal", max(digits, exponent), exponent)
        return Expr(lambda row: value, kind, value)
    value = sign * int(text)
    if -(2**31) <= value < 2**31:
        kind = INT
    elif -(2**63) <= value < 2**63:
        kind = BIGINT
    else:
        kind = literal_decimal(value)
        value = Decimal(value)
    return Expr(lambda row: value, kind, value)


def converted(expr: Expr, target: SqlType) -> Expr:
    """``expr`` cast to ``target`` (the implicit casts of CASE, COALESCE and set operations, and CAST itself)."""
    source = expr.type
    if source == target or source == NULL:
        return Expr(expr.fn, target, expr.literal, expr.position)
    fn = expr.fn
    if target == DOUBLE:
        return Expr(lambda row: None if (v := fn(row)) is None else sql_value(cast(v, source, target)), target)
    return Expr(lambda row: cast(fn(row), source, target), target)


def common_type(types: Sequence[SqlType], node: exp.Expression) -> SqlType:
    """The type every one of ``types`` widens to; a SqlError at ``node`` when there is none."""
    common = types[0]
    for kind in types[1:]:
        widened = wider(common, kind)
        if widened is None:
            raise refuse(node, f"{common} and {kind} have no common type here; CAST one of them")
        common = widened
    return common


def arithmetic(symbol: str, left: Expr, right: Expr, node: exp.Expression) -> Expr:
    """``left symbol right`` with Spark's result type and its errors (overflow, division by zero)."""
    lt, rt = left.type, right.type
    if lt == NULL and rt == NULL:
        raise refuse(node, "arithmetic on two NULLs has no type; CAST one of them")
    lt, rt = lt if lt != NULL else rt, rt if rt != NULL else lt
    if not (lt.numeric and rt.numeric):
        raise refuse(node, f"{symbol} needs numbers, not {lt} and {rt}")
    if symbol == "div":
        if DOUBLE in (lt, rt):
            raise refuse(node, "div takes integers or decimals, not DOUBLE")
        return _binary(left.fn, right.fn, lambda a, b: _integral_divide(a, b), BIGINT)
    if DOUBLE in (lt, rt):
        return _binary(left.fn, right.fn, _DOUBLE_OPERATIONS[symbol], DOUBLE)
    if lt.integral and rt.integral:
        if symbol == "/":
            return _binary(left.fn, right.fn, _DOUBLE_OPERATIONS["/"], DOUBLE)
        kind = wider(lt, rt)
        operation = _INTEGRAL_OPERATIONS[symbol]
        return _binary(left.fn, right.fn, lambda a, b: checked_integral(operation(a, b), kind), kind)
    ld = literal_decimal(left.literal) if lt.integral and isinstance(left.literal, int) else lt.decimal
    rd = literal_decimal(right.literal) if rt.integral and isinstance(right.literal, int) else rt.decimal
    kind = decimal_result(symbol, ld, rd)
    if symbol == "/":
        return _binary(left.fn, right.fn, lambda a, b: decimal_quotient(Decimal(a), Decimal(b), kind), kind)
    operation = _DECIMAL_OPERATIONS[symbol]

    def decimal(a: Any, b: Any) -> Decimal:
        with localcontext(WIDE):
            return checked_decimal(operation(Decimal(a), Decimal(b)), kind)

    return _binary(left.fn, right.fn, decimal, kind)


def _binary(left: Callable, right: Callable, operation: Callable[[Any, Any], Any], kind: SqlType) -> Expr:
    def apply(row: tuple) -> Any:
        a = left(row)
        if a is None:
            return None
        b = right(row)
        return None if b is None else operation(a, b)

    return Expr(apply, kind)


def _java_remainder(a: int, b: int) -> int:
    """``a % b`` with the dividend's sign (Java's, so Spark's): ``-7 % 3 = -1``."""
    if b == 0:
        raise SqlRuntimeError("[REMAINDER_BY_ZERO] Remainder by zero")
    result = abs(a) % abs(b)
    return -result if a < 0 else result


def _integral_divide(a: Any, b: Any) -> int:
    """``a div b``: the quotient truncated toward zero, a BIGINT."""
    if b == 0:
        raise SqlRuntimeError("[DIVIDE_BY_ZERO] Division by zero")
    if isinstance(a, int) and isinstance(b, int):
        quotient = abs(a) // abs(b)
        quotient = -quotient if (a < 0) != (b < 0) else quotient
    else:
        with localcontext(WIDE):
            quotient = int(Decimal(a) / Decimal(b))
    return checked_integral(quotient, BIGINT)


_INTEGRAL_OPERATIONS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "%": _java_remainder}


def _decimal_remainder(a: Decimal, b: Decimal) -> Decimal:
    if not b:
        raise SqlRuntimeError("[REMAINDER_BY_ZERO] Remainder by zero")
    return a % b  # Decimal's % keeps the dividend's sign, as Java's BigDecimal.remainder does


_DECIMAL_OPERATIONS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "%": _decimal_remainder}


def _double_divide(a: Any, b: Any) -> float:
    if b == 0:
        raise SqlRuntimeError("[DIVIDE_BY_ZERO] Division by zero")
    return sql_value(float(a) / float(b))


def _double_remainder(a: Any, b: Any) -> float:
    """Java's ``%`` on doubles: ``fmod``, NaN for an infinite dividend or a NaN operand."""
    if b == 0:
        raise SqlRuntimeError("[REMAINDER_BY_ZERO] Remainder by zero")
    a, b = float(a), float(b)
    if math.isinf(a) or math.isnan(a) or math.isnan(b):
        return NAN
    return math.fmod(a, b)


_DOUBLE_OPERATIONS = {
    "+": lambda a, b: sql_value(float(a) + float(b)), "-": lambda a, b: sql_value(float(a) - float(b)),
    "*": lambda a, b: sql_value(float(a) * float(b)), "/": _double_divide, "%": _double_remainder,
}


def comparable(left: Expr, right: Expr, node: exp.Expression) -> tuple[Callable, Callable]:
    """The two sides as functions whose values Python compares as Spark does: both as floats beside a DOUBLE."""
    lt, rt = left.type, right.type
    if NULL not in (lt, rt) and not (lt.numeric and rt.numeric) and lt != rt:
        raise refuse(node, f"comparing {lt} with {rt} needs an explicit CAST (Spark would cast the string)")
    if DOUBLE in (lt, rt):
        return converted(left, DOUBLE).fn, converted(right, DOUBLE).fn
    return left.fn, right.fn


def comparison(compare: Callable[[Any, Any], bool], left: Expr, right: Expr, node: exp.Expression) -> Expr:
    """``left compare right``: NULL if either side is NULL."""
    a, b = comparable(left, right, node)
    return _binary(a, b, compare, BOOLEAN)


def null_safe_equal(left: Expr, right: Expr, node: exp.Expression) -> Expr:
    """``left <=> right``: true when both are NULL, false when one is, else ``=``."""
    a, b = comparable(left, right, node)

    def equal(row: tuple) -> bool:
        x, y = a(row), b(row)
        return x is None and y is None if x is None or y is None else x == y

    return Expr(equal, BOOLEAN)


def logic(conjunction: bool, left: Expr, right: Expr) -> Expr:
    """``AND`` (``conjunction``) or ``OR`` in three-valued logic; the right side is not evaluated when the left
    decides."""
    a, b = left.fn, right.fn
    decisive = not conjunction

    def combine(row: tuple) -> bool | None:
        x = a(row)
        if x is decisive:
            return decisive
        y = b(row)
        if y is decisive:
            return decisive
        return None if x is None or y is None else conjunction

    return Expr(combine, BOOLEAN)


def membership(value: Expr, items: list[Expr], node: exp.Expression) -> Expr:
    """``value IN (items)``: true if an item equals it; else NULL if it or an item is NULL; else false."""
    common = common_type([value.type, *(item.type for item in items)], node)
    target = DOUBLE if common == DOUBLE else None
    subject = converted(value, target).fn if target else value.fn
    options = [converted(item, target).fn if target else item.fn for item in items]

    def member(row: tuple) -> bool | None:
        x = subject(row)
        if x is None:
            return None
        unknown = False
        for option in options:
            y = option(row)
            if y is None:
                unknown = True
            elif x == y:
                return True
        return None if unknown else False

    return Expr(member, BOOLEAN)


def coalesce(parts: list[Expr], kind: SqlType) -> Expr:
    fns = [part.fn for part in parts]

    def first(row: tuple) -> Any:
        for fn in fns:
            value = fn(row)
            if value is not None:
                return value
        return None

    return Expr(first, kind)


def concat(parts: list[Callable[[tuple], Any]]) -> Expr:
    """``concat(...)`` and ``||``: NULL if any part is NULL."""

    def joined(row: tuple) -> str | None:
        values = [part(row) for part in parts]
        return None if any(value is None for value in values) else "".join(values)

    return Expr(joined, STRING)


_LIKE_CACHE: dict[tuple[str, str], re.Pattern] = {}


def like_regex(pattern: str, escape: str, node: exp.Expression) -> re.Pattern:
    """A LIKE pattern as a regular expression: ``%`` any run of characters, ``_`` one, ``escape`` quotes the next."""
    found = _LIKE_CACHE.get((pattern, escape))
    if found is not None:
        return found
    parts, characters = [], iter(pattern)
    for character in characters:
        if character == escape:
            quoted = next(characters, None)
            if quoted is None:
                raise SqlRuntimeError(f"[INVALID_FORMAT.ESC_AT_THE_END] the LIKE pattern {pattern!r} ends with its "
                                      f"escape character")
            parts.append(re.escape(quoted))
        elif character == "%":
            parts.append(".*")
        elif character == "_":
            parts.append(".")
        else:
            parts.append(re.escape(character))
    compiled = _LIKE_CACHE[(pattern, escape)] = re.compile("".join(parts), re.DOTALL)
    return compiled
