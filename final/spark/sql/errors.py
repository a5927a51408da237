"""The SQL compiler's two errors: a query it refuses, and a value Spark SQL would refuse too."""

from __future__ import annotations

import re
from typing import Any


class SqlError(ValueError):
    """A query outside the subset (or wrong in itself), refused before any work: the construct and where it is.

    ``line`` and ``column`` are 1-based positions in the query's text (0 when
    no position is known); ``str(error)`` reads ``line L, column C: ...``, or
    ``FILE.sql:L:C: ...`` when the query came from a file (``path``).
    """

    def __init__(self, message: str, line: int = 0, column: int = 0, path: str | None = None) -> None:
        self.line, self.column, self.message, self.path = line, column, message, path
        self.offset: int | None = None
        self.lead = ""
        where = f"line {line}, column {column}" if line else ""
        if path is not None:
            where = f"{path}:{line}:{column}" if line else path
        super().__init__(f"{where}: {message}" if where else message)


def refuse(node: Any, message: str) -> SqlError:
    """A ``SqlError`` at ``node``'s place in the text: the first token under it that sqlglot located.

    sqlglot locates names and literals, not keywords: the error also keeps
    that token's offset and the first word of ``node``'s SQL, so ``located``
    can move it back to the keyword the construct starts with (``EXISTS``,
    ``ORDER``, a function's name).
    """
    line = column = 0
    offset = None
    for inner in node.walk() if node is not None else ():
        meta = getattr(inner, "meta", None) or {}
        if "line" in meta:
            # sqlglot records where a token ends; its first character is (end - start) columns before.
            line, column = meta["line"], meta["col"] - (meta.get("end", 0) - meta.get("start", 0))
            offset = meta.get("start")
            break
    error = SqlError(message, line, column)
    error.offset = offset
    if node is not None:
        words = node.sql(dialect="spark").replace("(", " ").split()
        error.lead = words[0] if words else ""
    return error


def located(error: SqlError, text: str) -> SqlError:
    """``error`` placed at the keyword its construct starts with, when that comes before the located token, and
    that word in the message spelled as the query's text spells it (``NTILE``, ``date_trunc``)."""
    if error.offset is None or not error.lead:
        return error
    found = text.upper().rfind(error.lead.upper(), 0, error.offset + len(error.lead))
    if found < 0:
        return error
    line = text.count("\n", 0, found) + 1
    column = found - (text.rfind("\n", 0, found) + 1) + 1
    written = text[found:found + len(error.lead)]
    message = re.sub(rf"\b{re.escape(error.lead)}\b", lambda _: written, error.message, count=1, flags=re.IGNORECASE)
    return SqlError(message, line, column, error.path)


class SqlRuntimeError(ArithmeticError):
    """A value Spark SQL (ANSI mode) raises an error for: overflow, division by zero, an invalid cast.

    Raised inside the dataflow, it fails the query at that version, as
    Spark's query fails there; the message starts with Spark's error class.
    """


def runtime_cause(error: BaseException) -> SqlRuntimeError | None:
    """The ``SqlRuntimeError`` that caused ``error`` (``final/`` wraps it in a ``FunctionError``), if one did."""
    cause: BaseException | None = error
    while cause is not None and not isinstance(cause, SqlRuntimeError):
        cause = cause.__cause__
    return cause
