"""The SQL compiler's two errors: a query it refuses, and a value Spark SQL would refuse too."""

from __future__ import annotations

from typing import Any


class SqlError(ValueError):
    """A query outside the subset (or wrong in itself), refused before any work: the construct and where it is.

    ``line`` and ``column`` are 1-based positions in the query's text (0 when
    no position is known); ``str(error)`` reads ``line L, column C: ...``, or
    ``FILE.sql:L:C: ...`` when the query came from a file (``path``).
    """

    def __init__(self, message: str, line: int = 0, column: int = 0, path: str | None = None) -> None:
        self.line, self.column, self.message, self.path = line, column, message, path
        where = f"line {line}, column {column}" if line else ""
        if path is not None:
            where = f"{path}:{line}:{column}" if line else path
        super().__init__(f"{where}: {message}" if where else message)


def refuse(node: Any, message: str) -> SqlError:
    """A ``SqlError`` at ``node``'s place in the text: the first token under it that sqlglot located."""
    line = column = 0
    for inner in node.walk() if node is not None else ():
        meta = getattr(inner, "meta", None) or {}
        if "line" in meta:
            # sqlglot records where a token ends; its first character is (end - start) columns before.
            line, column = meta["line"], meta["col"] - (meta.get("end", 0) - meta.get("start", 0))
            break
    return SqlError(message, line, column)


class SqlRuntimeError(ArithmeticError):
    """A value Spark SQL (ANSI mode) raises an error for: overflow, division by zero, an invalid cast.

    Raised inside the dataflow, it fails the query at that version, as
    Spark's query fails there; the message starts with Spark's error class.
    """
