"""Spark's names for the SELECT items a query does not name: ``count(1)``, ``(a + b)``, ``round(x, 0)``.

Spark SQL names an item without ``AS`` after the expression as its
analyzer resolved it, written back as SQL with its literals bare: a column
is its name as written (without its table); ``CAST(column AS T)`` is the
column's name; any other expression is its ``toPrettySQL`` text, in which
every operator is parenthesized (``((a * 2) - b)``), ``<>`` is ``(NOT (a =
b))``, a function is named as written in lower case with the arguments
Spark fills in for it (``substring(s, 1, 2147483647)``, ``lag(x, 1,
NULL)``), a window spells out its order's NULLs and its frame, and a few
functions keep a name of their own (``FLOOR``, ``CEIL``, ``RLIKE``,
``RANK``, ``TRIM(BOTH x FROM s)``). ``item_name`` gives that text for the
subset's expressions; ``tests/test_sql_names.py`` checks it against the
names in Spark's own schema.

sqlglot rewrites some calls as it parses them (``position(x IN s)`` is a
``StrPosition``, ``date_trunc('month', t)``'s unit an upper-case ``MONTH``),
so a call is read from the query's text: its name as written, and each
argument as written, in order, named as the expression parsed there. Where
the name depends on a type (``d + INTERVAL 1 DAY`` is ``date_add(d,
extractansiintervaldays(INTERVAL '1' DAY))`` for a DATE, ``ts + INTERVAL
'1' DAY`` for a TIMESTAMP), the expression as bound says it. One form is
named otherwise: a unary plus, which sqlglot drops as it parses (``+a`` is
``a`` here, ``(+ a)`` in Spark).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal

import sqlglot
from sqlglot import exp

from .dates import Interval
from .dialect import SPARK
from .expressions import TYPED_LITERALS, literal
from .functions import interval, is_interval, spelled
from .scalar import Field, Scalar, Subquery
from .types import DATE

Bound = Callable[[exp.Expression], Scalar | None]
"""What an expression was bound to, if it was (by the binder's ``Expressions.bound``)."""

OPERATORS = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.Mod: "%", exp.IntDiv: "div",
             exp.EQ: "=", exp.NullSafeEQ: "<=>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">=",
             exp.And: "AND", exp.Or: "OR"}
"""The binary operators Spark writes between their operands, in parentheses."""

DEFAULTS = {"substring": ("2147483647",), "substr": ("2147483647",), "round": ("0",), "bround": ("0",),
            "locate": ("1",), "lpad": (" ",), "rpad": (" ",), "replace": ("",), "regexp_replace": ("1",),
            "regexp_extract": ("1",), "lag": ("1", "NULL"), "lead": ("1", "NULL")}
"""The trailing arguments Spark fills in when a call leaves them out, by function."""

ARITY = {"substring": 3, "substr": 3, "round": 2, "bround": 2, "locate": 3, "lpad": 3, "rpad": 3, "replace": 3,
         "regexp_replace": 4, "regexp_extract": 3, "lag": 3, "lead": 3}
"""How many arguments each function of ``DEFAULTS`` has once they are filled in."""

OWN_NAMES = {"floor": "FLOOR", "ceil": "CEIL", "rank": "RANK", "dense_rank": "DENSE_RANK",
             "regexp_like": "REGEXP_LIKE", "rlike": "RLIKE", "regexp": "RLIKE", "position": "locate",
             "nvl2": "nvl2"}
"""Functions Spark names otherwise than as written (``floor`` is ``FLOOR``; ``position`` is ``locate``)."""

RANKINGS = ("row_number", "rank", "dense_rank")
WHOLE_PARTITION = "ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"
TO_CURRENT = "BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"


def item_name(node: exp.Expression, text: str, bound: Bound) -> str:
    """The name Spark SQL gives the SELECT item ``node`` (written without an alias) in the query ``text``."""
    node = _bare(node)
    if isinstance(node, exp.Column):
        return node.name
    if isinstance(node, (exp.Cast, exp.TryCast)) and not _typed_literal(node) and \
            isinstance(_bare(node.this), exp.Column):
        return _bare(node.this).name
    return _Namer(text, bound).name(node)


@dataclass(frozen=True)
class _Namer:
    text: str
    bound: Bound

    def name(self, node: exp.Expression) -> str:
        """``node`` as Spark's ``toPrettySQL`` writes it."""
        node = _bare(node)
        if node.args.get("negate"):  # ``s NOT LIKE p``, ``s NOT RLIKE p``
            positive = node.copy()
            positive.set("negate", None)
            return f"(NOT {self.name(positive)})"
        kind = type(node)
        if kind is exp.Column:
            return node.name
        if kind is exp.Star:
            return "1"
        if kind is exp.Var:  # a keyword argument: EXTRACT's field
            return node.name
        if kind is exp.Null:
            return "NULL"
        if kind is exp.Boolean:
            return "true" if node.this else "false"
        if kind is exp.Literal:
            return self._literal(node)
        if kind is exp.Neg:
            if isinstance(node.this, exp.Literal) and not node.this.is_string:
                return f"-{self._literal(node.this)}"
            return f"(- {self.name(node.this)})"
        if kind in (exp.Add, exp.Sub):
            dated = self._dated(node)
            if dated is not None:
                return dated
        if kind in OPERATORS:
            return f"({self.name(node.this)} {OPERATORS[kind]} {self.name(node.expression)})"
        if kind is exp.NEQ:
            return f"(NOT ({self.name(node.this)} = {self.name(node.expression)}))"
        if kind is exp.NullSafeNEQ:
            return f"(NOT ({self.name(node.this)} <=> {self.name(node.expression)}))"
        if kind is exp.DPipe:
            return f"concat({self.name(node.this)}, {self.name(node.expression)})"
        if kind is exp.Not:
            inner = _bare(node.this)
            if isinstance(inner, exp.Is):
                return f"({self.name(inner.this)} IS NOT NULL)"
            return f"(NOT {self.name(inner)})"
        if kind is exp.Is:
            return f"({self.name(node.this)} IS NULL)"
        if kind is exp.In:
            return self._in(node)
        if kind is exp.Between:
            parts = (node.this, node.args["low"], node.args["high"])
            return f"between({', '.join(self.name(part) for part in parts)})"
        if kind is exp.Like:
            return f"{self.name(node.this)} LIKE {self.name(node.expression)}"
        if kind is exp.Escape:
            escape = node.expression.this
            suffix = "" if escape == "\\" else f" ESCAPE '{escape}'"
            return f"{self.name(node.this)}{suffix}"
        if kind is exp.Case:
            return self._case(node)
        if kind in (exp.Cast, exp.TryCast):
            return self._cast(node)
        if kind is exp.Window:
            return self._window(node)
        if kind is exp.Subquery:
            return f"scalarsubquery({self._outer(node)})"
        if kind is exp.Exists:
            return f"exists({self._outer(node)})"
        if kind is exp.Extract:
            field, value = self._arguments(node, " FROM ")
            return f"extract({field} FROM {value})"
        if kind is exp.Trim:
            return self._trim(node)
        if kind is exp.Concat and all(isinstance(part, exp.Literal) for part in node.expressions) and \
                self.text[_start(node)] in "'\"":
            return "".join(part.this for part in node.expressions)  # 'a' 'b': Spark reads one literal, ab
        return self._call(node)

    # Literals, casts and operators

    def _literal(self, node: exp.Literal) -> str:
        if node.is_string:
            return node.this
        value = literal(node).value
        return java_double(value) if isinstance(value, float) else str(value)

    def _cast(self, node: exp.Expression) -> str:
        if _typed_literal(node):
            target, read = TYPED_LITERALS[node.to.this]
            text = str(read(node.this.this))
            return f"{'DATE' if target == DATE else 'TIMESTAMP'} '{text.rstrip('0') if '.' in text else text}'"
        value = self.bound(node)
        type_text = str(value.type).upper() if value is not None else node.to.sql(dialect="spark").upper()
        return f"CAST({self.name(node.this)} AS {type_text})"

    def _dated(self, node: exp.Expression) -> str | None:
        """A DATE or TIMESTAMP plus or minus an INTERVAL, as Spark rewrites it; None for other sums."""
        sign = "+" if isinstance(node, exp.Add) else "-"
        value, amount = node.this, node.expression
        if sign == "+" and is_interval(value):
            value, amount = amount, value
        if not is_interval(amount):
            return None
        shift = interval(amount)
        result = self.bound(node)
        if result is not None and result.type == DATE and not shift.year_month:  # whole days: date_add
            days = f"extractansiintervaldays({interval_text(shift)})"
            return f"date_add({self.name(value)}, {days if sign == '+' else f'(- {days})'})"
        return f"{self.name(value)} {sign} {interval_text(shift)}"

    def _in(self, node: exp.In) -> str:
        query = node.args.get("query")
        if query is not None:
            return f"({self.name(node.this)} IN (listquery({self._outer(node)})))"
        return f"({self.name(node.this)} IN ({', '.join(self.name(item) for item in node.expressions)}))"

    def _outer(self, node: exp.Expression) -> str:
        """The outer columns a subquery reads, which Spark names it by."""
        bound = self.bound(node)
        correlated = bound.correlated if isinstance(bound, Subquery) else ()
        columns = [column for column in node.find_all(exp.Column) if _start(column) is not None]

        def first_read(field: Field) -> int:
            return min((_start(column) for column in columns if column.name.lower() == field.name.lower() and
                        column.table.lower() in ("", (field.qualifier or "").lower())), default=len(self.text))

        return ", ".join(found.name for found in sorted(correlated, key=first_read))

    def _case(self, node: exp.Case) -> str:
        subject = node.this
        parts = ["CASE"]
        for branch in node.args.get("ifs") or []:
            condition = self.name(branch.this)
            if subject is not None:
                condition = f"({self.name(subject)} = {self.name(branch.this)})"
            parts.append(f"WHEN {condition} THEN {self.name(branch.args['true'])}")
        if node.args.get("default") is not None:
            parts.append(f"ELSE {self.name(node.args['default'])}")
        return " ".join([*parts, "END"])

    # Calls

    def _call(self, node: exp.Expression) -> str:
        """A function call: its name as written, lower case, and its arguments as written, with Spark's defaults."""
        if isinstance(node, exp.RegexpLike):  # the function, or the operator RLIKE (REGEXP), which has no meta
            return f"{'REGEXP_LIKE' if 'start' in node.meta else 'RLIKE'}({self.name(node.this)}, " \
                   f"{self.name(node.expression)})"
        spelled = self._spelled(node)
        if isinstance(node, exp.Count) and isinstance(node.this, exp.Star):
            return "count(1)"
        if isinstance(node, exp.StrPosition) and spelled == "position":
            needle, haystack = self._arguments(node, " IN ")
            return f"locate({needle}, {haystack}, 1)"
        separator = " FROM " if isinstance(node, exp.Substring) and " FROM " in self._inside(node).upper() else ","
        arguments = list(self._arguments(node, separator, " FOR "))
        name = OWN_NAMES.get(spelled, spelled)
        arguments += DEFAULTS.get(name, ())[max(0, len(arguments) + len(DEFAULTS.get(name, ())) - ARITY.get(name, 0)):]
        distinct = "DISTINCT " if isinstance(node.this, exp.Distinct) else ""
        if isinstance(node, exp.If) or spelled == "if":
            return f"(IF({', '.join(arguments)}))"
        return f"{name}({distinct}{', '.join(arguments)})"

    def _trim(self, node: exp.Trim) -> str:
        spelled = self._spelled(node)
        position = (node.args.get("position") or "").upper()
        if spelled in ("ltrim", "rtrim"):
            position = "LEADING" if spelled == "ltrim" else "TRAILING"
        chars = node.expression
        if chars is None:
            return f"{ {'LEADING': 'ltrim', 'TRAILING': 'rtrim'}.get(position, 'trim')}({self.name(node.this)})"
        return f"TRIM({position or 'BOTH'} {self.name(chars)} FROM {self.name(node.this)})"

    def _window(self, node: exp.Window) -> str:
        function = _bare(node.this)
        spelled = self._spelled(function) if not isinstance(function, exp.Count) else "count"
        call = f"{OWN_NAMES.get(spelled, spelled)}()" if spelled in RANKINGS else self._call(function)
        parts = []
        partition = node.args.get("partition_by") or []
        if partition:
            parts.append(f"PARTITION BY {', '.join(self.name(part) for part in partition)}")
        order = node.args.get("order")
        keys = order.expressions if order is not None else []
        if keys:
            parts.append(f"ORDER BY {', '.join(self._key(key) for key in keys)}")
        parts.append(self._frame(node, spelled, function, bool(keys)))
        return f"{call} OVER ({' '.join(parts)})"

    def _key(self, key: exp.Ordered) -> str:
        descending = bool(key.args.get("desc"))
        nulls_first = key.args.get("nulls_first")
        if nulls_first is None:
            nulls_first = not descending
        return f"{self.name(key.this)} {'DESC' if descending else 'ASC'} NULLS {'FIRST' if nulls_first else 'LAST'}"

    def _frame(self, node: exp.Window, spelled: str, function: exp.Expression, ordered: bool) -> str:
        spec = node.args.get("spec")
        if spec is not None:
            end = "CURRENT ROW" if str(spec.args.get("end")).upper() == "CURRENT ROW" else "UNBOUNDED FOLLOWING"
            return f"{spec.args['kind'].upper()} BETWEEN UNBOUNDED PRECEDING AND {end}"
        if spelled in RANKINGS:
            return f"ROWS {TO_CURRENT}"
        if spelled in ("lag", "lead"):
            offset = function.args.get("offset")
            steps = int(self.name(offset)) if offset is not None else 1
            steps = -steps if spelled == "lag" else steps
            return f"ROWS BETWEEN {steps} FOLLOWING AND {steps} FOLLOWING"
        return f"RANGE {TO_CURRENT}" if ordered else WHOLE_PARTITION

    # The query's text

    def _spelled(self, node: exp.Expression) -> str:
        """The function's name as the query writes it, in lower case."""
        start = node.meta.get("start")
        if start is None:
            opening = self._opening(node)
            return self._name_before(opening).lower() if opening is not None else spelled(node)
        return self.text[start:node.meta["end"] + 1].lower()

    def _name_before(self, opening: int) -> str:
        """The word just before the parenthesis at ``opening``."""
        before = self.text[:opening].rstrip()
        start = len(before)
        while start > 0 and (before[start - 1].isalnum() or before[start - 1] == "_"):
            start -= 1
        return before[start:]

    def _opening(self, node: exp.Expression) -> int | None:
        """Where the call's opening parenthesis is in the text; None where sqlglot placed neither the call nor
        any of its arguments (``EXTRACT(DOW FROM CAST(NULL AS DATE))``: keywords all)."""
        start = node.meta.get("start")
        if start is not None:
            return self.text.index("(", node.meta["end"] + 1)
        starts = [_start(part) for part in node.iter_expressions() if _start(part) is not None]
        # The nearest parenthesis before the first argument may open the argument itself (CAST(...), (x + 1)):
        # the call's is the one whose call, read again, is this node.
        position = min(starts) if starts else -1
        while position > 0:
            position = self.text.rfind("(", 0, position)
            if position < 0:
                break
            try:
                call = self._name_before(position) + self.text[position:_closing(self.text, position) + 1]
                if sqlglot.parse_one(call, read=SPARK) == node:
                    return position
            except (ValueError, sqlglot.errors.SqlglotError):
                continue
        return None

    def _inside(self, node: exp.Expression) -> str:
        opening = self._opening(node)
        return self.text[opening + 1:_closing(self.text, opening)] if opening is not None else ""

    def _arguments(self, node: exp.Expression, *separators: str) -> list[str]:
        """The call's arguments, in the order written, each named as the expression written there (a quoted
        one as its text, as Spark reads it)."""
        opening = self._opening(node)
        if opening is None:  # not placed in the text: sqlglot's arguments, which it keeps in the order written
            return [self.name(part) for part in node.iter_expressions()]
        pieces = _split(self.text, opening + 1, _closing(self.text, opening), separators)
        children = [child for child in node.walk() if child is not node and _start(child) is not None]
        names = []
        for begin, end in pieces:
            written = self.text[begin:end].strip()
            if written[:9].upper() == "DISTINCT ":
                written = written[9:].strip()
                begin = self.text.index(written, begin)
            # The node parsed from this argument, where sqlglot has not rewritten it (it wraps some arguments in
            # nodes of its own: date_sub's days are multiplied by -1), so that the binder's types reach it.
            parsed = sqlglot.parse_one(written, read=SPARK)
            same = [child for child in children if begin <= _start(child) < end and child == parsed]
            names.append(self.name(same[0] if same else parsed))
        return names


def _bare(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _typed_literal(node: exp.Expression) -> bool:
    """``DATE '...'`` and ``TIMESTAMP '...'``, which sqlglot parses as a Cast (an explicit CAST is a TryCast)."""
    return type(node) is exp.Cast and isinstance(node.this, exp.Literal) and node.this.is_string


def _start(node: exp.Expression) -> int | None:
    """Where ``node`` starts in the query's text (its first token that sqlglot placed), or None."""
    starts = [inner.meta["start"] for inner in node.walk() if "start" in inner.meta]
    return min(starts) if starts else None


def _closing(text: str, opening: int) -> int:
    """The position of the parenthesis that closes the one at ``opening``, skipping quoted text."""
    depth, quote, position = 0, "", opening
    while position < len(text):
        char = text[position]
        if quote:
            if char == "\\":
                position += 1
            elif char == quote:
                quote = ""
        elif char in "'\"`":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return position
        position += 1
    raise ValueError(f"no closing parenthesis for the one at {opening}")


def _split(text: str, begin: int, end: int, separators: Sequence[str]) -> list[tuple[int, int]]:
    """The ranges of ``text[begin:end]`` between top-level ``separators`` (``,``, or `` FROM `` and `` FOR ``)."""
    pieces, depth, quote, start, position = [], 0, "", begin, begin
    while position < end:
        char = text[position]
        if quote:
            if char == "\\":
                position += 1
            elif char == quote:
                quote = ""
        elif char in "'\"`":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif depth == 0:
            # Compared a slice at a time: text.upper() may be longer than text ('ß' is 'SS').
            found = next((s for s in separators if text[position:position + len(s)].upper() == s), None)
            if found is not None:
                pieces.append((start, position))
                start = position = position + len(found)
                continue
        position += 1
    if text[start:end].strip():
        pieces.append((start, end))
    return pieces


def java_double(value: float) -> str:
    """A DOUBLE as Java's ``Double.toString`` writes it: ``1.5``, ``1000.0``, ``1.0E10``, ``1.0E-5``."""
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        return repr(value)  # Python writes these without an exponent, with at least one place, as Java does
    shortest = Decimal(repr(value)).normalize()
    negative, digits, _ = shortest.as_tuple()
    text = "".join(map(str, digits))
    return f"{'-' if negative else ''}{text[0]}.{text[1:] or '0'}E{shortest.adjusted()}"


def interval_text(amount: Interval) -> str:
    """An ANSI interval literal as Spark writes it: ``INTERVAL '1' DAY``, ``INTERVAL '02' HOUR``,
    ``INTERVAL '1-2' YEAR TO MONTH``, ``INTERVAL '1 02' DAY TO HOUR``."""
    fields = amount.start.upper() if amount.start == amount.end else f"{amount.start} TO {amount.end}".upper()
    if amount.year_month:
        sign = "-" if amount.months < 0 else ""
        years, months = divmod(abs(amount.months), 12)
        value = {"year": f"{years}", "month": f"{abs(amount.months)}"}.get(amount.start) \
            if amount.start == amount.end else f"{years}-{months}"
        return f"INTERVAL '{sign}{value}' {fields}"
    total = amount.total_microseconds
    sign, total = ("-" if total < 0 else ""), abs(total)
    seconds, micros = divmod(total, 1_000_000)
    units = {"day": seconds // 86400, "hour": seconds // 3600, "minute": seconds // 60, "second": seconds}
    order = ("day", "hour", "minute", "second")
    first = order.index(amount.start)
    parts = [f"{units[amount.start]}" if amount.start == "day" else f"{units[amount.start]:02d}"]
    within = {"hour": (seconds // 3600) % 24, "minute": (seconds // 60) % 60, "second": seconds % 60}
    for field in order[first + 1:order.index(amount.end) + 1]:
        parts.append((" " if field == "hour" else ":") + f"{within[field]:02d}")
    text = "".join(parts)
    if amount.end == "second" and micros:
        text += f".{micros:06d}".rstrip("0")
    return f"INTERVAL '{sign}{text}' {fields}"
