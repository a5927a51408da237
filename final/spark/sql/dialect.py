"""Spark SQL 4.3 as sqlglot reads it, where sqlglot's Spark dialect reads otherwise.

Spark 4.3 reads a doubled quote inside a string as the quote itself
(``'it''s'`` is ``it's``, ``"a""b"`` is ``a"b``), as ANSI SQL does;
sqlglot's Spark dialect reads the same text as two strings side by side,
which Spark concatenates (``'it' 's'`` is ``its``): a query with an
apostrophe would compute another value. Every query text the compiler and
the fuzzer read is parsed with ``SPARK``.
"""

from __future__ import annotations

from typing import ClassVar

from sqlglot.dialects.spark import Spark


class Spark43(Spark):
    """sqlglot's Spark dialect, with a doubled quote escaping itself inside a string."""

    class Tokenizer(Spark.Tokenizer):
        STRING_ESCAPES: ClassVar[list[str]] = ["\\", "'", '"']


SPARK = Spark43
"""The dialect to parse Spark SQL with: ``sqlglot.parse_one(text, read=SPARK)``."""
