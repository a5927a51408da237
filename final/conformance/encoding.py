"""How records, versions and collections are written in JSON, and read back.

The one rule (the README's 'Encoding'): a record is a JSON value in which
every array stands for a tuple and ``null`` for SQL's NULL (``None``);
strings, integers and ``true``/``false`` are themselves. Records never hold
lists or floats, so the rule is its own inverse: ``decode(encode(r)) == r``.
A version is an integer (totally ordered versions) or an array of integers
(partially ordered ones, compared coordinate by coordinate). A collection is
an array of ``[record, multiplicity]`` pairs, sorted by their JSON text so
that equal collections are equal files.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterable
from typing import Any

from ..trace import add_multiplicity as add

Record = Hashable
PlainVersion = int | tuple[int, ...]
"""A version as the oracle keeps it: an int, or a tuple of ints."""


class EncodingError(ValueError):
    """A value that the encoding rule cannot carry (a float, a list inside a record, a dict)."""


def encode(record: Record) -> Any:
    """``record`` as a JSON-ready value: tuples become lists.

    Raises:
        EncodingError: the record holds something other than tuples, str, int, bool and None.
    """
    if isinstance(record, tuple):
        return [encode(item) for item in record]
    if record is None or isinstance(record, (str, int)):
        return record
    raise EncodingError(
        f"{record!r} ({type(record).__name__}) has no JSON encoding here: records are built from tuples, "
        "strings, ints, booleans and None"
    )


def decode(value: Any) -> Record:
    """The record a JSON value stands for: lists become tuples, all the way down.

    Raises:
        EncodingError: the value holds a float or an object, which no record is.
    """
    if isinstance(value, list):
        return tuple(decode(item) for item in value)
    if value is None or isinstance(value, (str, int)):
        return value
    raise EncodingError(f"{value!r} is not an encoded record: use arrays, strings, integers, booleans and null")


def encode_version(version: PlainVersion) -> Any:
    return list(version) if isinstance(version, tuple) else version


def decode_version(value: Any) -> PlainVersion:
    """An int, or a tuple of ints from a JSON array.

    Raises:
        EncodingError: anything else (a negative number, a float, an empty array).
    """
    if isinstance(value, bool) or not (
        (isinstance(value, int) and value >= 0)
        or (isinstance(value, list) and value and all(type(c) is int and c >= 0 for c in value))
    ):
        raise EncodingError(f"{value!r} is not a version: a version is a non-negative integer or an array of them")
    return tuple(value) if isinstance(value, list) else value


def sort_text(value: Any) -> str:
    """The canonical JSON text of an encoded value, the order collections and reports are written in."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def encode_collection(collection: dict[Record, int]) -> list:
    """``{record: multiplicity}`` as a sorted array of ``[record, multiplicity]`` pairs, zeros left out."""
    pairs = [[encode(record), multiplicity] for record, multiplicity in collection.items() if multiplicity]
    return sorted(pairs, key=lambda pair: sort_text(pair[0]))


def decode_collection(pairs: Iterable[Any]) -> dict[Record, int]:
    """``[[record, multiplicity], ...]`` as a consolidated ``{record: multiplicity}``."""
    totals: dict[Record, int] = {}
    for record, multiplicity in pairs:
        add(totals, decode(record), multiplicity)
    return totals

