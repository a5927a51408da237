"""How records, versions and collections are written in JSON, and read back.

The one rule (the README's 'Encoding'): a record is a JSON value in which
every array stands for a tuple and ``null`` for SQL's NULL (``None``);
strings and integers are themselves, and ``true``/``false`` are ``TRUE`` and
``FALSE`` (``Boolean``): Python's ``True == 1`` would otherwise make the
records ``true`` and ``1`` one record, which in JSON, SQL and every engine
they are not. Records never hold lists or floats, so the rule is its own
inverse: ``decode(encode(r)) == r``.
A version is an integer (totally ordered versions) or an array of integers
(partially ordered ones, compared coordinate by coordinate). A collection is
an array of ``[record, multiplicity]`` pairs, sorted by their JSON text so
that equal collections are equal files.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterable
from typing import Any

from .. import add_multiplicity as add

Record = Hashable
PlainVersion = int | tuple[int, ...]
"""A version as the oracle keeps it: an int, or a tuple of ints."""


class Boolean:
    """JSON's ``true`` or ``false`` inside a record: equal to itself only, so that ``TRUE`` is neither ``1`` nor
    ``True`` (which equal ``1`` in Python, and hash alike). It is truthy as its value is; ``TRUE`` and
    ``FALSE`` are the only two."""

    __slots__ = ("value",)
    value: bool

    def __new__(cls, value: bool) -> Boolean:
        existing = _BOOLEANS.get(bool(value))
        if existing is not None:
            return existing
        made = super().__new__(cls)
        object.__setattr__(made, "value", bool(value))
        _BOOLEANS[made.value] = made
        return made

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a Boolean cannot change")

    def __reduce__(self) -> tuple:
        return Boolean, (self.value,)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return hash((Boolean, self.value))

    def __bool__(self) -> bool:
        return self.value

    def __repr__(self) -> str:
        return "TRUE" if self.value else "FALSE"


_BOOLEANS: dict[bool, Boolean] = {}
TRUE, FALSE = Boolean(True), Boolean(False)


class EncodingError(ValueError):
    """A value that the encoding rule cannot carry (a float, a list inside a record, a dict)."""


def encode(record: Record) -> Any:
    """``record`` as a JSON-ready value: tuples become lists, ``TRUE`` and ``FALSE`` JSON's booleans.

    Raises:
        EncodingError: the record holds something other than tuples, str, int, Boolean and None.
    """
    if isinstance(record, tuple):
        return [encode(item) for item in record]
    if isinstance(record, Boolean):
        return record.value
    if isinstance(record, bool):
        raise EncodingError(
            f"{record!r} is Python's bool, which equals 1 and so cannot stand beside 1 in a collection: write "
            "the record's booleans as final.conformance.encoding.TRUE and FALSE"
        )
    if record is None or isinstance(record, (str, int)):
        return record
    raise EncodingError(
        f"{record!r} ({type(record).__name__}) has no JSON encoding here: records are built from tuples, "
        "strings, ints, booleans and None"
    )


def decode(value: Any) -> Record:
    """The record a JSON value stands for: lists become tuples and booleans ``TRUE`` or ``FALSE``, all the
    way down.

    Raises:
        EncodingError: the value holds a float or an object, which no record is.
    """
    if isinstance(value, list):
        return tuple(decode(item) for item in value)
    if isinstance(value, bool):
        return Boolean(value)
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

