"""Binding SQL expressions: a sqlglot expression as a typed ``Scalar`` tree, with Spark SQL's types and values.

``Expressions(scope).bind(node)`` resolves every column of one sqlglot
expression to the ``Field`` it reads and types every operation as Spark's
analyzer does, refusing what is outside the subset with the construct's line
and column. The result is symbolic (``scalar.py``): each operation is a
``Call`` holding its kernel, the operation's semantics on values, written
here. NULL is ``None`` and logic is three-valued: ``AND`` is false if either
side is, NULL if either is NULL, else true; a comparison with NULL is NULL; a
WHERE keeps a row only when its condition is true. Evaluation is lazy where
Spark's is (``AND``, ``OR``, ``CASE``, ``COALESCE``), so a branch Spark
never evaluates cannot raise here either.

Calls of functions are bound next to this module, each family in its own:
string functions in ``strings.py`` (Java's regular expressions read by
``regex.py``), ``round``, ``floor``, ``greatest`` and ``nullif`` in
``numbers.py``, dates and times in ``functions.py``; aggregates in the
binder.

A scope is the fields of the rows an expression reads, and the scopes of the
queries around it (a correlated subquery reads the outer query's columns).
``Expressions`` can be given a ``replace`` hook that binds some nodes first
(the binder's way to make a GROUP BY key or an aggregate a field of the
aggregated rows) and a ``subquery`` hook that binds a subquery's plan.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Sequence
from decimal import Decimal, localcontext
from typing import Any

from sqlglot import exp

from ..sqlfloat import NAN, sql_value
from . import dates, functions, numbers, strings
from .errors import SqlRuntimeError, refuse
from .scalar import LAZY, VALUES, Call, Field, Literal, Ref, Scalar, Subquery
from .types import (
    BIGINT,
    BOOLEAN,
    DATE,
    DOUBLE,
    INT,
    NULL,
    STRING,
    TIMESTAMP,
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

__all__ = ["Expressions", "Field", "field_at"]

_MISSING = object()


def field_at(fields: Sequence[Field], node: exp.Column) -> int:
    """The position of the column ``node`` names among ``fields`` (names are case-insensitive, as in Spark).

    Raises:
        SqlError: no field, or more than one, has that name (and qualifier, if given).
    """
    found = _matches(fields, node)
    if len(found) == 1:
        return found[0]
    shown = f"{node.table}.{node.name}" if node.table else node.name
    if not found:
        known = ", ".join(sorted({f"{f.qualifier}.{f.name}" if f.qualifier else f.name for f in fields}))
        raise refuse(node, f"column {shown} is not found; the columns here are {known}")
    raise refuse(node, f"column {shown} is ambiguous: qualify it with its table's name or alias")


def _matches(fields: Sequence[Field], node: exp.Column) -> list[int]:
    name, qualifier = node.name.lower(), node.table.lower() or None
    return [position for position, field in enumerate(fields)
            if field.name.lower() == name and (qualifier is None or (field.qualifier or "").lower() == qualifier)]


NAMES = {
    exp.Exists: "EXISTS (subquery)",
    exp.Subquery: "a subquery in an expression",
    exp.Rollup: "GROUP BY ROLLUP", exp.Cube: "GROUP BY CUBE", exp.GroupingSets: "GROUP BY GROUPING SETS",
    exp.ILike: "ILIKE", exp.Anonymous: "this function",
}


AGGREGATE_NAMES = {"every": "bool_and", "some": "bool_or", "any": "bool_or", "std": "stddev_samp"}
"""Spark's aggregates that sqlglot parses as calls of unknown functions (or ``any(x)`` as ``ANY``), and the
aggregate each is."""


def is_aggregate(node: exp.Expression) -> bool:
    """Whether ``node`` is an aggregate call: sqlglot's aggregate nodes, and ``every``, ``some``, ``std`` and
    ``any(x)``, which it does not parse as such (``x = ANY (subquery)`` is no aggregate)."""
    if isinstance(node, exp.AggFunc):
        return True
    if isinstance(node, exp.Anonymous):
        return node.name.lower() in AGGREGATE_NAMES
    return isinstance(node, exp.Any) and isinstance(node.this, exp.Paren)


def construct(node: exp.Expression) -> str:
    """What ``node`` is, in words a refusal can name."""
    if isinstance(node, exp.Anonymous):
        return f"the function {node.name}()"
    if isinstance(node, exp.Func) and type(node) not in NAMES:
        return f"the function {functions.spelled(node)}()"
    return NAMES.get(type(node), f"{type(node).__name__} ({node.sql(dialect='spark')[:40]})")


COMPARISONS = {exp.EQ: ("=", operator.eq), exp.NEQ: ("<>", operator.ne), exp.LT: ("<", operator.lt),
               exp.LTE: ("<=", operator.le), exp.GT: (">", operator.gt), exp.GTE: (">=", operator.ge)}
ARITHMETIC = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.Mod: "%", exp.IntDiv: "div"}

SubqueryBinder = Callable[[exp.Expression, "Expressions"], tuple[Any, tuple[Field, ...]]]
"""Binds a subquery's query node in an expression's scope: its plan and the outer fields it reads."""


class Expressions:
    """Binds expressions over one scope: ``fields``, then the ``outer`` scopes around it (innermost first).

    ``replace(node)`` may bind a node first, or return None; ``subquery``
    binds a subquery's plan; ``correlated`` collects the outer fields read.
    """

    def __init__(self, fields: Sequence[Field], replace: Callable[[exp.Expression], Scalar | None] | None = None,
                 where: str = "here", outer: Sequence[Sequence[Field]] = (),
                 subquery: SubqueryBinder | None = None) -> None:
        self.fields = fields
        self.replace = replace
        self.where = where
        self.outer = outer
        self.subquery = subquery
        self.correlated: list[Field] = []
        self.seen: dict[int, Scalar] = {}  # by the id of each node bound, which the query's tree keeps alive

    def scopes(self) -> list[Sequence[Field]]:
        """This scope and the outer ones, innermost first: what a subquery here sees around it."""
        return [self.fields, *self.outer]

    def bind(self, node: exp.Expression) -> Scalar:
        """``node`` as a typed ``Scalar``.

        Raises:
            SqlError: a construct outside the subset, an unknown column, or types Spark would not combine.
        """
        scalar = self._bind(node)
        self.seen[id(node)] = scalar
        return scalar

    def bound(self, node: exp.Expression) -> Scalar | None:
        """What ``node`` was bound to here, if it was: where Spark's name for an item depends on its type
        (``names``)."""
        return self.seen.get(id(node))

    def _bind(self, node: exp.Expression) -> Scalar:
        if self.replace is not None:
            found = self.replace(node)
            if found is not None:
                return found
        kind = type(node)
        if kind is exp.Paren:
            return self.bind(node.this)
        if kind is exp.Column:
            return self._column(node)
        if kind in (exp.Literal, exp.Boolean, exp.Null):
            return literal(node)
        if kind is exp.Neg:
            return self._negate(node)
        if kind in (exp.Add, exp.Sub) and functions.is_interval(node.expression):
            sign = 1 if kind is exp.Add else -1
            return functions.shifted(self.bind(node.this), functions.interval(node.expression), sign, node)
        if kind is exp.Add and functions.is_interval(node.this):
            return functions.shifted(self.bind(node.expression), functions.interval(node.this), 1, node)
        if kind is exp.Interval or functions.is_interval(node):
            raise refuse(node, "an INTERVAL is added to or subtracted from a DATE or TIMESTAMP here; it is no value "
                               "of its own in this subset")
        if kind in ARITHMETIC:
            return arithmetic(ARITHMETIC[kind], self.bind(node.this), self.bind(node.expression), node)
        if kind in COMPARISONS:
            symbol, compare = COMPARISONS[kind]
            return comparison(symbol, compare, self.bind(node.this), self.bind(node.expression), node)
        if kind is exp.NullSafeEQ:
            return null_safe_equal(self.bind(node.this), self.bind(node.expression), node)
        if kind in (exp.And, exp.Or):
            return logic(kind is exp.And, self.boolean(node.this), self.boolean(node.expression))
        if kind is exp.Not:
            return negation(self.boolean(node.this))
        if kind is exp.Is:
            if not isinstance(node.expression, exp.Null):
                raise refuse(node, f"IS {node.expression.sql()} is not in the subset; IS [NOT] NULL is")
            return Call("isnull", (self.bind(node.this),), BOOLEAN, _is_null, VALUES)
        if kind is exp.In:
            return self._in(node)
        if kind is exp.Exists:
            return self._subquery("exists", node.this, None, node)
        if kind is exp.Subquery:
            return self._subquery("scalar", node, None, node)
        if kind is exp.Between:
            value = self.bind(node.this)
            low = comparison(">=", operator.ge, value, self.bind(node.args["low"]), node)
            high = comparison("<=", operator.le, value, self.bind(node.args["high"]), node)
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
            parts = [self.bind(node.this), *(self.bind(item) for item in node.expressions)]
            common = common_type([part.type for part in parts], node)
            return Call("coalesce", tuple(converted(part, common) for part in parts), common, _first_present, LAZY)
        if kind in (exp.Cast, exp.TryCast):
            return self._cast(node)
        if kind in (exp.Lower, exp.Upper):
            change = str.lower if kind is exp.Lower else str.upper
            return Call(change.__name__, (self.string(node.this),), STRING, change)
        if kind is exp.Length:
            return Call("length", (self.string(node.this),), INT, len)
        if kind is exp.Substring:
            return self._substring(node)
        if kind in (exp.Concat, exp.DPipe):
            parts = [node.this, node.expression] if kind is exp.DPipe else node.expressions
            return Call("concat", tuple(self.string(part) for part in parts), STRING, _concat)
        if kind is exp.Abs:
            return self._abs(node)
        if kind in (exp.IgnoreNulls, exp.RespectNulls) and isinstance(node.this, exp.AnyValue):
            return self.bind(node.this)  # any_value(x, true): the same value where any_value is deterministic
        if strings.binds(node):
            return strings.bind(self, node)
        if numbers.binds(node):
            return numbers.bind(self, node)
        if functions.binds(node):
            return functions.bind(self, node)
        if is_aggregate(node):
            raise refuse(node, f"{functions.spelled(node)}() is an aggregate: it belongs in a SELECT list or HAVING "
                               f"with GROUP BY, not {self.where}")
        if kind is exp.Window:
            raise refuse(node, f"a window function is not allowed {self.where}: Spark computes them after WHERE, "
                               f"GROUP BY and HAVING; filter on one with QUALIFY, or in a query around this one")
        raise refuse(node, f"{construct(node)} is not in the SQL subset final/ compiles (see the README's "
                           f"'Your own SQL')")

    def boolean(self, node: exp.Expression) -> Scalar:
        """``node`` bound, which must be a BOOLEAN (or NULL)."""
        bound = self.bind(node)
        if bound.type not in (BOOLEAN, NULL):
            raise refuse(node, f"{node.sql(dialect='spark')} is {bound.type}, where a BOOLEAN condition is needed")
        return bound

    def string(self, node: exp.Expression) -> Scalar:
        """``node`` as a STRING: a number or boolean is cast as Spark casts it; a DOUBLE or TIMESTAMP is refused."""
        bound = self.bind(node)
        if bound.type in (STRING, NULL):
            return bound
        if bound.type == DOUBLE:
            raise refuse(node, f"{node.sql(dialect='spark')} is {bound.type}: Spark prints it as text its own "
                               f"(Java's) way, which this subset does not copy; leave it out of string functions")
        return converted(bound, STRING)

    def _column(self, node: exp.Column) -> Scalar:
        if isinstance(node.this, exp.Star):
            raise refuse(node, f"{node.sql()} is not an expression here")
        if _matches(self.fields, node) or not self.outer:
            return Ref(self.fields[field_at(self.fields, node)])
        for scope in self.outer:
            if _matches(scope, node):
                found = scope[field_at(scope, node)]
                if found not in self.correlated:
                    self.correlated.append(found)
                return Ref(found)
        return Ref(self.fields[field_at(self.fields, node)])  # not found anywhere: report it against this scope

    def _subquery(self, kind: str, query: exp.Expression, value: Scalar | None, node: exp.Expression) -> Scalar:
        if self.subquery is None:
            raise refuse(node, f"{construct(node) if kind != 'in' else 'IN (subquery)'} is not in the subset "
                               f"{self.where}")
        plan, correlated = self.subquery(query, self)
        for found in correlated:
            if found not in self.correlated and found not in self.fields:
                self.correlated.append(found)
        columns = plan.fields
        if kind != "exists" and len(columns) != 1:
            raise refuse(node, f"the subquery returns {len(columns)} columns where one is needed")
        if kind == "in":
            common = common_type([value.type, columns[0].type], node)
            if value.type != NULL and not (value.type.numeric and columns[0].type.numeric) and \
                    value.type != columns[0].type:
                raise refuse(node, f"comparing {value.type} with {columns[0].type} needs an explicit CAST")
            value = converted(value, common) if common == DOUBLE else value
        result = columns[0].type if kind == "scalar" else BOOLEAN
        return Subquery(kind, plan, value, False, result, tuple(correlated), node)

    def _in(self, node: exp.In) -> Scalar:
        query = node.args.get("query")
        if query is not None:
            return self._subquery("in", query.this if isinstance(query, exp.Subquery) else query,
                                  self.bind(node.this), node)
        value = self.bind(node.this)
        items = [self.bind(item) for item in node.expressions]
        common = common_type([value.type, *(item.type for item in items)], node)
        target = DOUBLE if common == DOUBLE else rounding_common([value.type, *(item.type for item in items)])
        parts = [converted(part, target) if target else part for part in (value, *items)]
        return Call("in", tuple(parts), BOOLEAN, _member, LAZY)

    def _negate(self, node: exp.Neg) -> Scalar:
        inner = self.bind(node.this)
        kind = inner.type
        if not kind.numeric and kind != NULL:
            raise refuse(node, f"- needs a number, not {kind}")
        if isinstance(node.this, exp.Literal):
            return literal(node)  # -5 is the literal -5 (an INT even for -2147483648), as Spark's parser reads it
        if kind == NULL:
            return Literal(None, DOUBLE)  # Spark types -NULL as a DOUBLE
        if kind.integral:
            return Call("-", (inner,), kind, lambda v: checked_integral(-v, kind))
        if kind == DOUBLE:  # -NaN is a new NaN: made Spark's one NaN again, as every DOUBLE result is
            return Call("-", (inner,), kind, _negative_double)
        return Call("-", (inner,), kind, operator.neg)

    def _abs(self, node: exp.Abs) -> Scalar:
        inner = self.bind(node.this)
        kind = inner.type
        if not kind.numeric:
            raise refuse(node, f"abs() needs a number, not {kind}")
        if kind.integral:
            return Call("abs", (inner,), kind, lambda v: checked_integral(abs(v), kind))
        if kind == DOUBLE:
            return Call("abs", (inner,), kind, _absolute_double)
        return Call("abs", (inner,), kind, abs)

    def _like(self, node: exp.Like, escape: str | None) -> Scalar:
        value = self.string(node.this)
        pattern = self.bind(node.expression)
        if pattern.type not in (STRING, NULL):
            raise refuse(node, f"LIKE takes a STRING pattern, not {pattern.type}")
        negate = bool(node.args.get("negate"))
        escape = "\\" if escape is None else escape
        name = "NOT LIKE" if negate else "LIKE"
        if isinstance(pattern, Literal):
            if pattern.value is None:
                return Literal(None, BOOLEAN)
            compiled = like_regex(pattern.value, escape, node)
            return Call(name, (value, pattern), BOOLEAN,
                        lambda text, _: (compiled.fullmatch(text) is not None) != negate)
        return Call(name, (value, pattern), BOOLEAN,
                    lambda text, found: (like_regex(found, escape, node).fullmatch(text) is not None) != negate)

    def _case(self, node: exp.Expression) -> Scalar:
        if isinstance(node, exp.If):
            branches = [(node.this, node.args["true"])]
            default = node.args.get("false")
            subject = None
        else:
            branches = [(branch.this, branch.args["true"]) for branch in node.args["ifs"]]
            default = node.args.get("default")
            subject = node.this
        results = [self.bind(result) for _, result in branches]
        otherwise = self.bind(default) if default is not None else Literal(None, NULL)
        common = common_type([result.type for result in [*results, otherwise]], node)
        if subject is not None:
            compared = self.bind(subject)
            conditions = [comparison("=", operator.eq, compared, self.bind(when), when) for when, _ in branches]
        else:
            conditions = [self.boolean(when) for when, _ in branches]
        parts: list[Scalar] = []
        for condition, result in zip(conditions, results, strict=True):
            parts += [condition, converted(result, common)]
        parts.append(converted(otherwise, common))
        return Call("case", tuple(parts), common, _choose, LAZY)

    def _cast(self, node: exp.Expression) -> Scalar:
        if type(node) is exp.Cast and isinstance(node.this, exp.Literal) and node.this.is_string and \
                node.to.this in TYPED_LITERALS:
            return self._typed_literal(node)
        inner = self.bind(node.this)
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
        temporal = {"date", "timestamp"}
        numbers_and_text = source.name in allowed and target.name in allowed and not (
            source == DOUBLE and target == STRING)
        dates_and_text = {source.name, target.name} <= temporal | {"string"} and {source.name, target.name} & temporal
        if source != target and source != NULL and not (numbers_and_text or dates_and_text):
            raise refuse(node, f"CAST from {source} to {target} is not in the subset (casts between numbers, "
                               f"booleans and strings are, except DOUBLE to STRING, and between dates, timestamps "
                               f"and strings)")
        if source == NULL:
            return Literal(None, target)
        return computed(converted(inner, target))

    def _typed_literal(self, node: exp.Cast) -> Scalar:
        """``DATE '...'`` or ``TIMESTAMP '...'`` (sqlglot parses both as a cast, where an explicit CAST is a
        TryCast): text Spark's parser refuses is refused here, before any work."""
        text = node.this.this
        target, read = TYPED_LITERALS[node.to.this]
        try:
            return Literal(read(text), target)
        except ValueError as error:
            raise refuse(node, str(error)) from None

    def _substring(self, node: exp.Substring) -> Scalar:
        parts = [self.string(node.this), self._integer(node.args["start"])]
        if node.args.get("length") is not None:
            parts.append(self._integer(node.args["length"]))
        return Call("substring", tuple(parts), STRING, _cut)

    def _integer(self, node: exp.Expression) -> Scalar:
        bound = self.bind(node)
        if not (bound.type.integral or bound.type == NULL):
            raise refuse(node, f"{node.sql(dialect='spark')} must be an integer here, not {bound.type}")
        return bound


TYPED_LITERALS = {exp.DataType.Type.DATE: (DATE, dates.date_literal),
                  exp.DataType.Type.TIMESTAMPTZ: (TIMESTAMP, dates.timestamp_literal),
                  exp.DataType.Type.TIMESTAMP: (TIMESTAMP, dates.timestamp_literal)}
"""The typed literals sqlglot parses as a cast: the type each gives, and how Spark reads its text."""


def literal(node: exp.Expression) -> Literal:
    """A literal: integers are INT, then BIGINT, then DECIMAL as they grow; ``1.5`` is DECIMAL(2, 1); ``1e3`` is
    DOUBLE."""
    if isinstance(node, exp.Null):
        return Literal(None, NULL)
    if isinstance(node, exp.Boolean):
        return Literal(bool(node.this), BOOLEAN)
    sign = 1
    if isinstance(node, exp.Neg):
        sign, node = -1, node.this
    if node.is_string:
        return Literal(node.this, STRING)
    text = node.this
    if "e" in text.lower():
        return Literal(sql_value(sign * float(text)), DOUBLE)
    if "." in text:
        value = Decimal(text) if sign > 0 else Decimal(text).copy_negate()  # exact: no context's 28 digits
        digits, exponent = len(value.as_tuple().digits), -value.as_tuple().exponent
        return Literal(value, SqlType("decimal", max(digits, exponent), exponent))
    number = sign * int(text)
    if -(2**31) <= number < 2**31:
        return Literal(number, INT)
    if -(2**63) <= number < 2**63:
        return Literal(number, BIGINT)
    return Literal(Decimal(number), literal_decimal(number))


def converted(scalar: Scalar, target: SqlType) -> Scalar:
    """``scalar`` cast to ``target`` (the implicit casts of CASE, COALESCE and set operations, and CAST itself)."""
    source = scalar.type
    if source == target:
        return scalar
    if source == NULL:
        return Literal(None, target) if isinstance(scalar, Literal) else Call(
            f"cast as {target}", (scalar,), target, _identity)
    if isinstance(scalar, Literal):
        try:
            value = cast(scalar.value, source, target)
        except SqlRuntimeError:
            value = _MISSING  # Spark raises only where the value is computed: keep the cast for then
        if value is not _MISSING:
            return Literal(sql_value(value) if target == DOUBLE else value, target, folded=True)
    if target == DOUBLE:
        return Call(f"cast as {target}", (scalar,), target, lambda v: sql_value(cast(v, source, target)))
    return Call(f"cast as {target}", (scalar,), target, lambda v: cast(v, source, target))


def computed(scalar: Scalar) -> Scalar:
    """``scalar`` as what a cast or a function gives back unchanged (``CAST(5 AS INT)``, ``floor(5000000000)``):
    an integer literal so given is no longer one as written, so beside a DECIMAL Spark types it by its type, not
    by its digits (its type coercion runs before constants are folded)."""
    if isinstance(scalar, Literal) and not scalar.folded:
        return Literal(scalar.value, scalar.type, folded=True)
    return scalar


def common_type(types: Sequence[SqlType], node: exp.Expression) -> SqlType:
    """The type every one of ``types`` widens to; a SqlError at ``node`` when there is none."""
    common = types[0]
    for kind in types[1:]:
        widened = wider(common, kind)
        if widened is None:
            raise refuse(node, f"{common} and {kind} have no common type here; CAST one of them")
        common = widened
    return common


def arithmetic(symbol: str, left: Scalar, right: Scalar, node: exp.Expression) -> Scalar:
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
        return Call(symbol, (left, right), BIGINT, _integral_divide)
    if DOUBLE in (lt, rt):
        return Call(symbol, (left, right), DOUBLE, _DOUBLE_OPERATIONS[symbol])
    if lt.integral and rt.integral:
        if symbol == "/":
            return Call(symbol, (left, right), DOUBLE, _DOUBLE_OPERATIONS["/"])
        kind = wider(lt, rt)
        operation = _INTEGRAL_OPERATIONS[symbol]
        return Call(symbol, (left, right), kind, lambda a, b: checked_integral(operation(a, b), kind))
    ld = literal_decimal(left.value) if lt.integral and _integer_literal(left) else lt.decimal
    rd = literal_decimal(right.value) if rt.integral and _integer_literal(right) else rt.decimal
    kind = decimal_result(symbol, ld, rd)
    if symbol == "/":
        return Call(symbol, (left, right), kind, lambda a, b: decimal_quotient(Decimal(a), Decimal(b), kind))
    exact = {"+": max(ld.scale, rd.scale), "-": max(ld.scale, rd.scale), "*": ld.scale + rd.scale}.get(symbol)
    if exact == kind.scale and not (lt.integral and rt.integral):
        # The exact result already has the type's places (a DECIMAL value holds exactly its type's, an integer
        # none): only its size is checked, with no rounding to do. This is most arithmetic (TPC-H's
        # l_extendedprice * (1 - l_discount)), and rounding is what costs.
        operation = _EXACT_OPERATIONS[symbol]
        bound = Decimal(10) ** (kind.precision - kind.scale)

        def exact_decimal(a: Any, b: Any) -> Decimal:
            result = operation(a if type(a) is Decimal else Decimal(a), b if type(b) is Decimal else Decimal(b))
            if -bound < result < bound:
                return result
            return checked_decimal(result, kind)  # raises Spark's NUMERIC_VALUE_OUT_OF_RANGE

        return Call(symbol, (left, right), kind, exact_decimal)
    operation = _DECIMAL_OPERATIONS[symbol]

    def decimal(a: Any, b: Any) -> Decimal:
        with localcontext(WIDE):
            return checked_decimal(operation(Decimal(a), Decimal(b)), kind)

    return Call(symbol, (left, right), kind, decimal)


def _integer_literal(scalar: Scalar) -> bool:
    """Whether ``scalar`` is an integer literal as written (Spark types one beside a DECIMAL by its own digits,
    a cast of one by its type)."""
    return isinstance(scalar, Literal) and not scalar.folded and isinstance(scalar.value, int) \
        and not isinstance(scalar.value, bool)


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
_EXACT_OPERATIONS = {"+": WIDE.add, "-": WIDE.subtract, "*": WIDE.multiply}
"""Exact sums, differences and products of two DECIMAL(38)s (WIDE has room for every digit)."""


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


def _negative_double(value: float) -> float:
    return sql_value(-value)


def _absolute_double(value: float) -> float:
    return sql_value(abs(value))


def comparable(left: Scalar, right: Scalar, node: exp.Expression) -> tuple[Scalar, Scalar]:
    """The two sides as expressions whose values Python compares as Spark does: both DOUBLE beside a DOUBLE.

    Raises:
        SqlError: the types are ones Spark compares only after an implicit cast this subset leaves out.
    """
    lt, rt = left.type, right.type
    temporal = (DATE, TIMESTAMP)
    if lt in temporal and rt in temporal and lt != rt:
        return converted(left, TIMESTAMP), converted(right, TIMESTAMP)  # a DATE compares as its midnight
    if lt in temporal and rt == STRING and isinstance(right, Literal):
        return left, converted(right, lt)  # d >= '2024-01-01': Spark reads the string as a date
    if rt in temporal and lt == STRING and isinstance(left, Literal):
        return converted(left, rt), right
    if NULL not in (lt, rt) and not (lt.numeric and rt.numeric) and lt != rt:
        raise refuse(node, f"comparing {lt} with {rt} needs an explicit CAST (Spark would cast the string)")
    if DOUBLE in (lt, rt):
        return converted(left, DOUBLE), converted(right, DOUBLE)
    rounded = rounding_common((lt, rt))
    if rounded is not None:
        return converted(left, rounded), converted(right, rounded)
    return left, right


def rounding_common(types: Sequence[SqlType]) -> SqlType | None:
    """The DECIMAL that numbers of ``types`` meet in to be compared, when it has fewer places than one of them
    (over 38 digits, places give way to integer digits): Spark casts each side to it, rounding, before it
    compares, so 1.1234567891 as DECIMAL(32,10) equals 1.12345679 as DECIMAL(38,8). None when no side rounds."""
    kinds = [kind for kind in types if kind != NULL]
    if not kinds or not all(kind.numeric and kind != DOUBLE for kind in kinds):
        return None
    common = kinds[0]
    for kind in kinds[1:]:
        common = wider(common, kind)
    return common if any(kind.decimal.scale > common.scale for kind in kinds) else None


def comparison(symbol: str, compare: Callable[[Any, Any], bool], left: Scalar, right: Scalar,
               node: exp.Expression) -> Scalar:
    """``left symbol right``: NULL if either side is NULL."""
    a, b = comparable(left, right, node)
    return Call(symbol, (a, b), BOOLEAN, compare)


def null_safe_equal(left: Scalar, right: Scalar, node: exp.Expression) -> Scalar:
    """``left <=> right``: true when both are NULL, false when one is, else ``=``."""
    a, b = comparable(left, right, node)
    return Call("<=>", (a, b), BOOLEAN, _null_safe_equal, VALUES)


def _null_safe_equal(x: Any, y: Any) -> bool:
    return x is None and y is None if x is None or y is None else x == y


def logic(conjunction: bool, left: Scalar, right: Scalar) -> Scalar:
    """``AND`` (``conjunction``) or ``OR`` in three-valued logic; the right side is not evaluated when the left
    decides."""
    return Call("AND" if conjunction else "OR", (left, right), BOOLEAN, _and if conjunction else _or, LAZY)


def conjunction(parts: Sequence[Scalar]) -> Scalar | None:
    """The ``AND`` of ``parts`` (None for no part)."""
    result = None
    for part in parts:
        result = part if result is None else logic(True, result, part)
    return result


def negation(inner: Scalar) -> Scalar:
    return Call("NOT", (inner,), BOOLEAN, operator.not_)


def _and(row: tuple, fns: Sequence[Callable]) -> bool | None:
    x = fns[0](row)
    if x is False:
        return False
    y = fns[1](row)
    if y is False:
        return False
    return None if x is None or y is None else True


def _or(row: tuple, fns: Sequence[Callable]) -> bool | None:
    x = fns[0](row)
    if x is True:
        return True
    y = fns[1](row)
    if y is True:
        return True
    return None if x is None or y is None else False


def _is_null(value: Any) -> bool:
    return value is None


def _identity(value: Any) -> Any:
    return value


def _member(row: tuple, fns: Sequence[Callable]) -> bool | None:
    """``value IN (items)``: true if an item equals it; else NULL if it or an item is NULL; else false."""
    x = fns[0](row)
    if x is None:
        return None
    unknown = False
    for option in fns[1:]:
        y = option(row)
        if y is None:
            unknown = True
        elif x == y:
            return True
    return None if unknown else False


def _first_present(row: tuple, fns: Sequence[Callable]) -> Any:
    for fn in fns:
        value = fn(row)
        if value is not None:
            return value
    return None


def _choose(row: tuple, fns: Sequence[Callable]) -> Any:
    """CASE: ``fns`` are condition, result pairs and the default last; the first true condition's result."""
    for position in range(0, len(fns) - 1, 2):
        if fns[position](row) is True:
            return fns[position + 1](row)
    return fns[-1](row)


def _concat(*values: str) -> str:
    """``concat(...)`` and ``||`` (NULL if any part is NULL: the call is strict)."""
    return "".join(values)


def _cut(value: str, position: int, size: int = 2**31 - 1) -> str:
    """``substring(value, position, size)``: positions count from 1, negative ones from the end."""
    begin = position - 1 if position > 0 else (len(value) + position if position < 0 else 0)
    end = begin + size
    begin = max(begin, 0)
    return value[begin:end] if begin < end else ""


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
