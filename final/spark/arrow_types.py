"""Spark SQL's column types as Arrow's, and back: the pipeline's one map between the two.

The catalog types a table's columns in Spark SQL's words (``BIGINT``,
``DECIMAL(8,2)``, ``TIMESTAMP``); the change logs, Delta tables and a
follow's outputs hold them as Arrow (Parquet, ``deltalake``). ``arrow_type``
is the Arrow type a column of a SQL type is held in (a TIMESTAMP in
microseconds, UTC, as Spark keeps it); ``sql_type`` the SQL type of an Arrow
column, as the catalog spells it (a table bound with ``--table`` takes its
columns' types from it), or None for a type with no place here;
``sql_words`` any Arrow type in SQL's words, for messages.

>>> import pyarrow
>>> sql_type(arrow_type("DECIMAL(8,2)")), sql_type(arrow_type("timestamp")), sql_type(pyarrow.float32())
('DECIMAL(8,2)', 'TIMESTAMP', None)
>>> sql_words(pyarrow.float32()), sql_words(pyarrow.large_string())
('FLOAT', 'STRING')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow

ARROW_TYPES = {"BIGINT": "int64", "INT": "int32", "SMALLINT": "int16", "TINYINT": "int8", "DOUBLE": "double",
               "STRING": "string", "BOOLEAN": "bool", "DATE": "date32"}
"""Each SQL type without parameters and the Arrow type (by its ``pyarrow.type_for_alias`` name) that holds it;
DECIMAL(p,s) is Arrow's ``decimal128(p, s)``, and TIMESTAMP microseconds in UTC."""

TYPES_LISTED = "BIGINT, INT, SMALLINT, TINYINT, DOUBLE, DECIMAL(p,s), STRING, BOOLEAN, TIMESTAMP, DATE"
"""The SQL types a column may have here (every type ``sql_type`` names), listed for messages."""

PANDAS_TYPES = {"BIGINT": "Int64", "INT": "Int32", "SMALLINT": "Int16", "TINYINT": "Int8", "DOUBLE": "float64",
                "STRING": "string", "BOOLEAN": "boolean"}
"""The pandas dtype that writes each SQL type's Arrow type (nullable), for a message that says how to fix a
column written with another type."""


def arrow_type(kind: str) -> pyarrow.DataType:
    """The Arrow type of a column of SQL type ``kind``, spelt as the catalog or Spark's ``simpleString`` spells it.

    Raises:
        ValueError: ``kind`` is not a type of ``TYPES_LISTED``.
    """
    import pyarrow

    name = kind.strip().upper()
    if name.startswith("DECIMAL(") and name.endswith(")"):
        precision, scale = (int(part) for part in name[len("DECIMAL("):-1].split(","))
        return pyarrow.decimal128(precision, scale)
    if name == "TIMESTAMP":
        return pyarrow.timestamp("us", tz="UTC")
    if name not in ARROW_TYPES:
        raise ValueError(f"SQL type {kind!r} has no Arrow type here; the types are {TYPES_LISTED}")
    return pyarrow.type_for_alias(ARROW_TYPES[name])


def sql_type(kind: pyarrow.DataType) -> str | None:
    """The SQL type of an Arrow column of type ``kind``, as the catalog spells it; None for a type no column here
    has (the SQL compiler's types: ``sql.types``). A timestamp of any unit or zone is a TIMESTAMP: its values
    are read as microseconds in UTC (``sources``)."""
    import pyarrow

    if pyarrow.types.is_decimal128(kind):
        return f"DECIMAL({kind.precision},{kind.scale})"
    if pyarrow.types.is_timestamp(kind):
        return "TIMESTAMP"
    if is_text(kind):
        return "STRING"
    for name, alias in ARROW_TYPES.items():
        if kind == pyarrow.type_for_alias(alias):
            return name
    return None


def sql_words(kind: pyarrow.DataType) -> str:
    """An Arrow type in Spark SQL's words, for messages: its ``sql_type``, FLOAT for a 32-bit float (pandas and
    Arrow infer one from some values), else Arrow's own name for it."""
    import pyarrow

    return sql_type(kind) or ("FLOAT" if pyarrow.types.is_float32(kind) else str(kind))


def is_text(kind: pyarrow.DataType) -> bool:
    """True for each of Arrow's string types (``deltalake`` hands text over as ``string_view``)."""
    import pyarrow

    return pyarrow.types.is_string(kind) or pyarrow.types.is_large_string(kind) or pyarrow.types.is_string_view(kind)


def pandas_type(kind: str) -> str:
    """The pandas dtype that writes SQL type ``kind`` (``object`` for one that has none of its own)."""
    return PANDAS_TYPES.get(kind.strip().upper(), "object")
