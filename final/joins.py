"""Joins built from ``join``: semijoins, antijoins, and left outer joins as sums of inner joins.

Source: document 003 ("Computing and Maintaining
Weird (Outer) Joins"). A left join is an inner join plus two more terms: the
left records whose key the right side lacks, padded with ``None`` (SQL's
NULL), and the left records whose key is ``None``, which never match
anything (NULL is not equal to itself in SQL):

    left ⟕ right = left ⋈ right + left ⋈ absent(right) + left ⋈ NULL

A chain of left joins is planned one step at a time, each step that sum of
three terms ('Rendering JOINs of UNIONs': step1 = step0 ⋈ users + step0 ⋈
absent(users) + step0 ⋈ NULL). The NULL term is a filter, not a join, so
no NULL keys are ever gathered in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .graph import DifferenceStreamBuilder


def semijoin(stream: DifferenceStreamBuilder, keys: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
    """The ``(key, value)`` records whose key is in ``keys``, a collection of keys.

    Each record's multiplicity is multiplied by its key's in ``keys`` (Rust DD's
    ``semijoin``), so keys present once keep records as they are.
    """
    return stream.join(keys.map(lambda key: (key, ()))).map(lambda pair: (pair[0], pair[1][0]))


def antijoin(stream: DifferenceStreamBuilder, keys: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
    """The ``(key, value)`` records whose key is not in ``keys``: the stream minus its ``semijoin``.

    ``keys`` should hold each key at most once (``distinct`` it first) for the
    usual meaning.
    """
    return stream.concat(semijoin(stream, keys).negate())


def left_join(stream: DifferenceStreamBuilder, other: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
    """SQL's ``LEFT JOIN`` on the key: ``(key, (value, other_value))``, with ``None`` where nothing matches.

    The three terms of 003: the inner join of the records whose key is not
    ``None``; the left records whose key no right record has, padded with
    ``None``; the left records whose key is ``None``, padded with ``None``.
    """
    left = stream.filter(lambda pair: pair[0] is not None)
    right = other.filter(lambda pair: pair[0] is not None)
    inner = left.join(right)
    left_keys = left.map(lambda pair: pair[0]).distinct_keys()
    absent = antijoin(left_keys.map(lambda key: (key, ())), right.map(lambda pair: pair[0]).distinct_keys())
    missing = semijoin(left, absent.map(lambda pair: pair[0])).map(lambda pair: (pair[0], (pair[1], None)))
    nulls = stream.filter(lambda pair: pair[0] is None).map(lambda pair: (None, (pair[1], None)))
    return inner.concat(missing).concat(nulls)


def left_join_chain(
    stream: DifferenceStreamBuilder,
    steps: Sequence[tuple[DifferenceStreamBuilder, Callable[[Any], Any]]],
) -> DifferenceStreamBuilder:
    """A multi-way ``LEFT JOIN``: each step left-joins the rows so far with one more collection.

    ``stream`` holds rows (tuples); each step is ``(other, key_of)``, where
    ``other`` holds ``(key, row)`` pairs and ``key_of(row so far)`` picks the
    join key from the row built so far (``None`` if it is NULL). Each step
    appends the matched row (or ``None``) to the row: the result holds tuples
    ``(row, match1, match2, ...)``.
    """
    rows = stream.map(lambda row: (row,))
    for other, key_of in steps:
        keyed = rows.map(lambda row, key_of=key_of: (key_of(row), row))
        rows = left_join(keyed, other).map(lambda pair: (*pair[1][0], pair[1][1]))
    return rows
