"""Reductions built from smaller dataflows: in-place totals, hierarchical MIN/MAX, and SQL aggregates.

Source: document 004 ("Grouping and reduction").
Three ideas from it, each a function that builds a small dataflow out of the
operators a stream already has:

- In-place totals: a sum needs no list of values. ``explode`` turns each
  value into multiplicity (000's intended use of it), so the index of the
  ``reduce`` behind ``count_total``/``sum_total`` holds at most three entries
  per key and version, the number of rows, of non-NULL values, and their sum,
  however many records the group has.
- Hierarchical reduction: ``min``/``max`` reduce by ``(key, hash(value) >> shift)``
  with the shift growing by ``BITS_PER_ROUND`` each round, so no group is
  large and one update touches ``O(log n)`` records, not the whole group.
- Factoring: ``aggregate`` runs each aggregate as its own reduction (with a
  ``distinct`` in front for ``COUNT(DISTINCT ...)``) and reassembles one record
  per key, so aggregates add their costs instead of multiplying them.

Rust DD's ``count_total``/``threshold_total`` are the in-place operators;
Materialize renders SQL reductions as described in 004.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from .collection import Values
from .errors import RecordError

if TYPE_CHECKING:
    from .graph import DifferenceStreamBuilder

BITS_PER_ROUND = 4
"""004: 'we currently increase shift by 4 each round': groups of about 16 values per round."""
HASH_BITS = 64
"""Values are bucketed by a 64-bit hash, so there are HASH_BITS / BITS_PER_ROUND = 16 rounds."""

_ROWS, _NON_NULL, _SUM = "rows", "non-null", "sum"
EXACT_NUMBERS = (int, Fraction, Decimal)
"""What ``sum_total`` adds: sums become multiplicities, which must cancel exactly (floats would not)."""


def threshold(stream: DifferenceStreamBuilder, f: Callable[[int], int]) -> DifferenceStreamBuilder:
    """Each record with multiplicity ``f(m)``, where ``m`` is its accumulated multiplicity (Rust DD's ``threshold``).

    ``distinct`` is ``threshold(lambda m: 1 if m > 0 else 0)``. Records whose
    multiplicity cancels to zero are not passed to ``f``.
    """

    def apply(values: Values) -> Values:
        ((_, multiplicity),) = values
        result = f(multiplicity)
        return [((), result)] if result else []

    return stream.map(lambda record: (record, ())).reduce(apply).map(lambda pair: pair[0])


def count_total(stream: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
    """``(key, number of rows)`` per key, kept in place: the index holds one count per key and version.

    Like SQL's ``COUNT(*) GROUP BY key``: a key whose rows cancel out has no
    output. Equal to ``count()`` whenever multiplicities are not negative.
    """
    rows = stream.explode(lambda record: [((_key_of(record, "count_total"), _ROWS), 1)])
    return _totals(rows, lambda totals: totals.get(_ROWS, 0) or None)


def sum_total(stream: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
    """``(key, SUM(value))`` per key, in place and NULL-aware, as 004 describes.

    Three totals per key: rows, non-NULL values, and their sum. No rows: no
    output; rows but every value NULL (``None``): ``(key, None)``; otherwise
    the sum. Values must be exact numbers (int, Fraction, Decimal).

    Raises:
        RecordError: (while stepping) a value is not an exact number or None.
    """

    def parts(record: Any) -> list:
        key, value = _key_of(record, "sum_total"), record[1]
        if value is None:
            return [((key, _ROWS), 1)]
        if isinstance(value, bool) or not isinstance(value, EXACT_NUMBERS):
            raise RecordError(
                f"sum_total adds exact numbers, but got {value!r} in {record!r}; use int, Fraction or "
                f"Decimal (for money, whole cents), or None for NULL"
            )
        return [((key, _ROWS), 1), ((key, _NON_NULL), 1), ((key, _SUM), value)]

    def result(totals: dict) -> Any:
        if not totals.get(_ROWS):
            return None
        return totals.get(_SUM, 0) if totals.get(_NON_NULL) else _NULL

    return _totals(stream.explode(parts), result)


class _Null:
    """SQL's NULL as an aggregate result, told apart from 'no output' inside ``_totals``."""


_NULL = _Null()


def _totals(parts: DifferenceStreamBuilder, result: Callable[[dict], Any]) -> DifferenceStreamBuilder:
    """Reduce ``(key, part)`` records, whose multiplicity is that part's total, to ``(key, result)``.

    ``result`` returns None for no output, ``_NULL`` for a NULL output.
    """

    def reduce_totals(values: Values) -> Values:
        totals = dict(values)
        value = result(totals)
        if value is None:
            return []
        return [(None if value is _NULL else value, 1)]

    return parts.reduce(reduce_totals)


def hierarchical(
    stream: DifferenceStreamBuilder, reduction: Callable[[Values], Values], name: str
) -> DifferenceStreamBuilder:
    """Reduce ``(key, value)`` records with an associative ``reduction`` in rounds over hash buckets.

    Round ``r`` groups by ``(key, hash(value) >> (BITS_PER_ROUND * r))``; the
    last round groups by key alone. Every round's groups hold about
    ``2 ** BITS_PER_ROUND`` values, so an update re-reduces ``O(log n)``
    records. Right for reductions where reducing partial results gives the
    result of the whole (``min``, ``max``).
    """
    mask = (1 << HASH_BITS) - 1
    buckets = stream.map(lambda record: ((_key_of(record, name), hash(record[1]) & mask), record[1]))
    for _ in range(HASH_BITS // BITS_PER_ROUND - 1):
        buckets = buckets.reduce(reduction).map(lambda pair: ((pair[0][0], pair[0][1] >> BITS_PER_ROUND), pair[1]))
    return buckets.reduce(reduction).map(lambda pair: (pair[0][0], pair[1])).reduce(reduction)


def count_distinct(stream: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
    """``(key, COUNT(DISTINCT value))``: a ``distinct`` in front of an in-place count (004, 'Distinctness')."""
    return count_total(stream.distinct())


AGGREGATES = ("count", "count_distinct", "sum", "min", "max")
"""What ``aggregate`` can compute; NULLs (``None`` values) are skipped, as in SQL."""


def aggregate(
    stream: DifferenceStreamBuilder,
    key: Callable[[Any], Any],
    aggregates: Mapping[str, tuple[str, Callable[[Any], Any]]],
) -> DifferenceStreamBuilder:
    """``(key, ((name, value), ...))``: one record per key with every named aggregate, like SQL's GROUP BY.

    ``aggregates`` maps a name to ``(kind, value_of_record)`` with ``kind`` in
    ``AGGREGATES``. Each runs as its own reduction over just ``(key, value)``
    and the results are reassembled by key (004, 'Factoring reductions'). A
    key with rows gets a record; an aggregate with no non-NULL values there is
    ``None`` (``0`` for the counts). The key may itself be ``None``: NULL is a group.

    Raises:
        ValueError: a kind is not one of ``AGGREGATES``.
    """
    unknown = {kind for kind, _ in aggregates.values()} - set(AGGREGATES)
    if unknown:
        raise ValueError(f"aggregate kinds {sorted(unknown)} are not known; use some of {', '.join(AGGREGATES)}")
    parts = [count_total(stream.map(lambda record: (key(record), ()))).map(lambda pair: (pair[0], (None, pair[1])))]
    for name, (kind, value_of) in sorted(aggregates.items()):
        values = stream.map(lambda record, value_of=value_of: (key(record), value_of(record)))
        non_null = values.filter(lambda pair: pair[1] is not None)
        if kind == "count":
            result = count_total(non_null)
        elif kind == "count_distinct":
            result = count_distinct(non_null)
        elif kind == "sum":
            result = sum_total(non_null)
        else:
            result = non_null.min() if kind == "min" else non_null.max()
        parts.append(result.map(lambda pair, name=name: (pair[0], (name, pair[1]))))
    combined = parts[0]
    for part in parts[1:]:
        combined = combined.concat(part)
    defaults = {name: 0 if kind in ("count", "count_distinct") else None for name, (kind, _) in aggregates.items()}

    def assemble(values: Values) -> Values:
        found = dict(value for value, _ in values)
        if None not in found:  # no rows: the key is gone
            return []
        return [(tuple((name, found.get(name, default)) for name, default in sorted(defaults.items())), 1)]

    return combined.reduce(assemble)


def _key_of(record: Any, operator: str) -> Any:
    if type(record) is not tuple or len(record) != 2:
        raise RecordError(
            f"{operator} needs (key, value) pairs, but got the record {record!r}; map each record to a pair first"
        )
    return record[0]
