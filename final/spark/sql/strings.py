"""Binding SQL's string functions: each call typed as Spark 4.3 types it, with Spark's values at the edges.

``expressions.Expressions`` hands here ``trim``/``ltrim``/``rtrim`` (also
``trim(BOTH|LEADING|TRAILING chars FROM s)``), ``replace``, ``instr``,
``locate``, ``lpad``/``rpad``, ``split_part``, and the regular expressions:
``RLIKE``/``regexp_like``, ``regexp_extract``, ``regexp_replace``. Every
argument that is text is cast to a STRING as Spark casts it (a DOUBLE is
refused: Spark prints it Java's way); positions and counts are INTs, counted
in characters (code points, as Spark's ``UTF8String`` counts them).

Where Spark's edges are not Python's, the kernels here follow Spark: ``trim``
takes off spaces only (not tabs or newlines), ``replace`` with an empty
search string changes nothing, ``instr`` and ``locate`` find the empty string
at position 1 whatever the start, ``locate`` with a NULL start is 0, not
NULL, and ``split_part`` with the index 0 is Spark's ``INVALID_INDEX_OF_ZERO``.

A pattern is Java's regular expression, read into Python's ``re`` by
``regex.java_regex`` or refused where the two differ, so it must be a literal
here: a pattern read from the data could not be checked before any work.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from sqlglot import exp

from .errors import SqlRuntimeError, refuse
from .regex import java_regex, java_replacement, replace_all
from .scalar import VALUES, Call, Literal, Scalar
from .types import BOOLEAN, INT, NULL, STRING

if TYPE_CHECKING:
    from .expressions import Expressions

FUNCTIONS = (exp.Trim, exp.Replace, exp.StrPosition, exp.Pad, exp.SplitPart, exp.RegexpLike, exp.RegexpExtract,
             exp.RegexpReplace)
"""The sqlglot nodes of the functions bound here."""

SPACE = " "
"""What ``trim`` takes off without a character list: spaces only (``UTF8String.trim``), not other whitespace."""


def binds(node: exp.Expression) -> bool:
    """Whether ``node`` is a string function this module binds."""
    return isinstance(node, FUNCTIONS)


def bind(binder: Expressions, node: exp.Expression) -> Scalar:
    """The call ``node`` as a typed ``Scalar``.

    Raises:
        SqlError: an argument of a type Spark would not take, a pattern that is not a literal string, or one
            using a construct Python's ``re`` reads otherwise than Java (named, with where it is).
    """
    if isinstance(node, exp.Trim):
        return _trim(binder, node)
    if isinstance(node, exp.Replace):
        search = binder.string(node.expression)
        given = node.args.get("replacement")
        replacement = binder.string(given) if given is not None else Literal("", STRING)
        return Call("replace", (binder.string(node.this), search, replacement), STRING, _replace)
    if isinstance(node, exp.StrPosition):
        return _locate(binder, node)
    if isinstance(node, exp.Pad):
        left = bool(node.args.get("is_left"))
        fill = binder.string(node.args["fill_pattern"]) if node.args.get("fill_pattern") else Literal(SPACE, STRING)
        parts = (binder.string(node.this), _integer(binder, node.expression, node), fill)
        return Call("lpad" if left else "rpad", parts, STRING, _left_pad if left else _right_pad)
    if isinstance(node, exp.SplitPart):
        parts = (binder.string(node.this), binder.string(node.args["delimiter"]),
                 _integer(binder, node.args["part_index"], node))
        return Call("split_part", parts, STRING, _split_part)
    return _regular_expression(binder, node)


def _integer(binder: Expressions, node: exp.Expression, call: exp.Expression) -> Scalar:
    """An INT argument: any integer type, cast to INT as Spark casts it (a BIGINT too large is its
    ``CAST_OVERFLOW``)."""
    from .expressions import converted  # expressions binds through this module: imported when first needed

    value = binder.bind(node)
    if not (value.type.integral or value.type == NULL):
        raise refuse(call, f"{_name(call)}() takes an integer here, not {value.type} ({node.sql(dialect='spark')})")
    return converted(value, INT)


def _name(node: exp.Expression) -> str:
    if isinstance(node, exp.Trim):
        return {"LEADING": "ltrim", "TRAILING": "rtrim"}.get((node.args.get("position") or "").upper(), "trim")
    if isinstance(node, exp.Pad):
        return "lpad" if node.args.get("is_left") else "rpad"
    return {exp.StrPosition: "locate", exp.RegexpLike: "rlike"}.get(type(node), node.sql_name().lower())


# Trimming, replacing, finding, padding, splitting ------------------------------------------------------------------


def _trim(binder: Expressions, node: exp.Trim) -> Scalar:
    """``trim(s)``, ``ltrim(s)``, ``rtrim(s)`` and ``trim(BOTH|LEADING|TRAILING chars FROM s)``: each character
    of ``chars`` (spaces without them) taken off that end, as often as it is there."""
    name = _name(node)
    strip = {"trim": str.strip, "ltrim": str.lstrip, "rtrim": str.rstrip}[name]
    text = binder.string(node.this)
    if node.expression is None:
        return Call(name, (text,), STRING, lambda value: strip(value, SPACE))
    return Call(name, (text, binder.string(node.expression)), STRING, strip)


def _replace(text: str, search: str, replacement: str) -> str:
    """``replace(s, search, replacement)``: every occurrence; an empty ``search`` changes nothing (Python's
    would insert ``replacement`` between every two characters)."""
    return text.replace(search, replacement) if search else text


def _locate(binder: Expressions, node: exp.StrPosition) -> Scalar:
    """``instr(s, sub)`` and ``locate(sub, s[, start])``: the 1-based position of ``sub`` in ``s`` from ``start``,
    0 when it is not there."""
    text, part = binder.string(node.this), binder.string(node.args["substr"])
    if node.args.get("position") is None:
        return Call("instr", (text, part), INT, _position)
    start = _integer(binder, node.args["position"], node)
    return Call("locate", (part, text, start), INT, _locate_from, VALUES)


def _position(text: str, part: str) -> int:
    return text.find(part) + 1


def _locate_from(part: str | None, text: str | None, start: int | None) -> int | None:
    """Spark's ``locate``: a NULL start is 0 (not NULL, as Hive has it), a start below 1 is 0, and the empty
    string is at 1 whatever the start."""
    if start is None:
        return 0
    if part is None or text is None:
        return None
    if start < 1:
        return 0
    return 1 if not part else text.find(part, start - 1) + 1


def _left_pad(text: str, size: int, fill: str) -> str:
    missing = size - len(text)
    if missing <= 0 or not fill:
        return text[:max(size, 0)]  # too long, or nothing to pad with: cut to ``size``
    return (fill * (missing // len(fill) + 1))[:missing] + text


def _right_pad(text: str, size: int, fill: str) -> str:
    missing = size - len(text)
    if missing <= 0 or not fill:
        return text[:max(size, 0)]
    return text + (fill * (missing // len(fill) + 1))[:missing]


def _split_part(text: str, delimiter: str, index: int) -> str:
    """The ``index``-th part of ``text`` split at ``delimiter`` (1-based, negative from the end), ``''`` past
    either end; an empty delimiter leaves ``text`` one part."""
    if index == 0:
        raise SqlRuntimeError("[INVALID_INDEX_OF_ZERO] The index 0 is invalid. An index shall be either < 0 or > 0 "
                              "(the first element has index 1).")
    parts = text.split(delimiter) if delimiter else [text]
    if index > len(parts) or -index > len(parts):
        return ""
    return parts[index - 1] if index > 0 else parts[index]


# Regular expressions -----------------------------------------------------------------------------------------------


def _regular_expression(binder: Expressions, node: exp.Expression) -> Scalar:
    """``s RLIKE p``, ``regexp_extract(s, p[, idx])`` and ``regexp_replace(s, p, r)`` with ``p`` a literal."""
    name = _name(node)
    result = BOOLEAN if isinstance(node, exp.RegexpLike) else STRING
    text = binder.string(node.this)
    found = binder.bind(node.expression)
    if not (isinstance(found, Literal) and found.type in (STRING, NULL)):
        raise refuse(node, f"{name}() takes its pattern as a literal string here: a pattern is Java's regular "
                           f"expression, read into Python's only after checking it, before any work")
    if isinstance(node, exp.RegexpReplace) and node.args.get("position") is not None:
        raise refuse(node, "regexp_replace's fourth argument (the position to start at) is not in the subset")
    if found.value is None:
        return Literal(None, result)  # a NULL pattern: NULL for every row, as in Spark
    try:
        pattern = java_regex(found.value)
    except ValueError as error:
        raise refuse(node, f"{name}()'s pattern {found.value!r}: {error}") from None
    if isinstance(node, exp.RegexpLike):
        return Call("rlike", (text,), BOOLEAN, lambda value: pattern.search(value) is not None)
    if isinstance(node, exp.RegexpExtract):
        index = _integer(binder, node.args["group"], node)
        return Call("regexp_extract", (text, index), STRING, _extracting(pattern))
    template = binder.string(node.args["replacement"])
    if not isinstance(template, Literal):
        return Call("regexp_replace", (text, template), STRING, _replacing(pattern, found.value))
    if template.value is None:
        return Literal(None, STRING)
    if "${" in template.value:
        raise refuse(node, "regexp_replace's replacement names a group as ${name}, which Spark SQL reads as a "
                           "variable and substitutes in the query's text before it runs (spark.sql.variable."
                           "substitute; an unknown one is empty); refer to the group by its number, $n")
    return Call("regexp_replace", (text,), STRING, _replacing(pattern, found.value, template.value))


def _extracting(pattern: re.Pattern) -> Callable[[str, int], str]:
    """``regexp_extract``: group ``index`` of the first match, ``''`` with no match or an unmatched group; an
    index the pattern has no group for is Spark's error, raised only when there is a match (as Spark's is)."""

    def extract(text: str, index: int) -> str:
        match = pattern.search(text)
        if match is None:
            return ""
        if not 0 <= index <= pattern.groups:
            raise SqlRuntimeError(f"[INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX] The value of parameter(s) `idx` in "
                                  f"`regexp_extract` is invalid: Expects group index between 0 and "
                                  f"{pattern.groups}, but got {index}.")
        return match.group(index) or ""

    return extract


def _replacing(pattern: re.Pattern, source: str, fixed: str | None = None) -> Callable[..., str]:
    """``regexp_replace``: every match replaced by the replacement ``fixed`` (a literal) or given with the text;
    one Java cannot read fails at the first match, with Spark's ``INVALID_REGEXP_REPLACE``."""

    def replace(text: str, template: str | None = fixed) -> str:
        try:
            return replace_all(pattern, text, java_replacement(template, pattern))
        except ValueError as error:
            raise SqlRuntimeError(f"[INVALID_REGEXP_REPLACE] Could not perform regexp_replace for source = "
                                  f"{text!r}, pattern = {source!r}, replacement = {template!r} and position = 1 "
                                  f"({error}).") from None

    return replace
