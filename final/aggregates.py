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

from .collection import Values, key_value
from .errors import GraphError, RecordError

if TYPE_CHECKING:
    from .graph import DifferenceStreamBuilder

BITS_PER_ROUND = 4
"""004: 'we currently increase shift by 4 each round': groups of about 16 values per round."""
HASH_BITS = 64
"""Values are bucketed by a 64-bit hash, so there are HASH_BITS / BITS_PER_ROUND = 16 rounds."""

_ROWS, _NON_NULL, _SUM = "rows", "non-null", "sum"


def threshold(stream: DifferenceStreamBuilder, f: Callable[[int], int]) -> DifferenceStreamBuilder:
    """Each record with multiplicity ``f(m)``, where ``m`` is its accumulated multiplicity (Rust DD's ``threshold``).

    ``distinct`` is ``threshold(lambda m: 1 if m > 0 else 0)``. Records whose
    multiplicity cancels to zero are not passed to ``f``.
    """

    def apply(values: Values) -> Values:
        ((_, multiplicity),) = values
        result = f(multiplicity)
        if type(result) is not int:
            raise RecordError(
                f"threshold's function must return an int multiplicity, but returned {result!r} for {multiplicity}"
            )
        return [((), result)] if result else []

    return stream.map(lambda record: (record, ()))._reduce(apply, "threshold").map(lambda pair: pair[0])


def count_total(stream: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
    """``(key, number of rows)`` per key, kept in place: the index holds one count per key and version.

    Like SQL's ``COUNT(*) GROUP BY key``: a key whose rows cancel out has no
    output. Equal to ``count()`` whenever multiplicities are not negative.
    """
    rows = stream.explode(lambda record: [((key_value(record, "count_total")[0], _ROWS), 1)])
    return _totals(rows, lambda totals: totals.get(_ROWS, 0) or None, "count_total")


def sum_total(stream: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
    """``(key, SUM(value))`` per key, in place and NULL-aware, as 004 describes.

    Three kinds of totals per key: rows, non-NULL values, and their sum. No
    rows: no output; rows but every value NULL (``None``): ``(key, None)``;
    otherwise the sum. Values must be exact numbers (int, Fraction, Decimal),
    so that sums cancel exactly when values are retracted.

    Multiplicities are ints, so a value becomes an int multiplicity of a part
    that says how to read it back (``_summand``): an int is itself; a Decimal
    its digits, in a part per exponent (``3.95`` is 395 at exponent -2); a
    Fraction its numerator, in a part per denominator.

    Raises:
        RecordError: (while stepping) a value is not an exact number or None,
            or one key's values mix Fraction and Decimal (Python cannot add them).
    """

    def parts(record: Any) -> list:
        key, value = key_value(record, "sum_total")
        if value is None:
            return [((key, _ROWS), 1)]
        part, amount = _summand(value, record)
        return [((key, _ROWS), 1), ((key, _NON_NULL), 1), ((key, part), amount)]

    def result(totals: dict) -> Any:
        if not totals.get(_ROWS):
            return None
        if not totals.get(_NON_NULL):
            return _NULL
        summands = [_SUMMANDS[part[1]](amount, part[2]) for part, amount in totals.items() if type(part) is tuple]
        kinds = {type(summand) for summand in summands}
        if Fraction in kinds and Decimal in kinds:
            raise RecordError(
                f"sum_total cannot add Fractions and Decimals in one group (here {summands!r}); use one of them"
            )
        return sum(summands)

    return _totals(stream.explode(parts), result, "sum_total")


_SUMMANDS: dict[str, Callable[[int, int], Any]] = {
    "int": lambda amount, _: amount,
    "decimal": lambda digits, exponent: Decimal(digits).scaleb(exponent),
    "fraction": lambda numerator, denominator: Fraction(numerator, denominator),
}
"""How ``sum_total`` reads a part's total back as a number: by kind, from the part's exponent or denominator."""


def _summand(value: Any, record: Any) -> tuple[tuple[str, str, int], int]:
    """``value`` as ``(part, int amount)``: the part is ``(_SUM, kind, exponent or denominator)``."""
    if type(value) is int:
        return (_SUM, "int", 0), value
    if isinstance(value, Decimal) and value.is_finite():
        exponent = value.as_tuple().exponent
        return (_SUM, "decimal", exponent), int(value.scaleb(-exponent))
    if isinstance(value, Fraction):
        return (_SUM, "fraction", value.denominator), value.numerator
    raise RecordError(
        f"sum_total adds exact numbers, but got {value!r} in {record!r}; use int, Fraction or "
        f"Decimal (for money, whole cents), or None for NULL"
    )


class _Null:
    """SQL's NULL as an aggregate result, told apart from 'no output' inside ``_totals``."""


_NULL = _Null()


def _totals(parts: DifferenceStreamBuilder, result: Callable[[dict], Any], name: str) -> DifferenceStreamBuilder:
    """Reduce ``(key, part)`` records, whose multiplicity is that part's total, to ``(key, result)``.

    ``result`` returns None for no output, ``_NULL`` for a NULL output.
    """

    def reduce_totals(values: Values) -> Values:
        totals = dict(values)
        value = result(totals)
        if value is None:
            return []
        return [(None if value is _NULL else value, 1)]

    return parts._reduce(reduce_totals, name)


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
    buckets = stream.map(lambda record: ((key_value(record, name)[0], hash(record[1]) & mask), record[1]))
    for _ in range(HASH_BITS // BITS_PER_ROUND - 1):
        rounded = buckets._reduce(reduction, name)
        buckets = rounded.map(lambda pair: ((pair[0][0], pair[0][1] >> BITS_PER_ROUND), pair[1]))
    return buckets._reduce(reduction, name).map(lambda pair: (pair[0][0], pair[1]))._reduce(reduction, name)


def count_distinct(stream: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
    """``(key, COUNT(DISTINCT value))``: a ``distinct`` in front of an in-place count (004, 'Distinctness').

    As in SQL, NULL (``None``) is not a value: a key whose values are all
    NULL counts 0, and a key with no rows has no output.
    """

    def parts(record: Any) -> list:
        key, value = record
        return [((key, _ROWS), 1)] if value is None else [((key, _ROWS), 1), ((key, _NON_NULL), 1)]

    distinct = stream.distinct().explode(parts)
    return _totals(distinct, lambda totals: totals.get(_NON_NULL, 0) if totals.get(_ROWS) else None, "count_distinct")


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
        GraphError: ``aggregates`` is not such a mapping, or a kind is not one of ``AGGREGATES``.
    """
    if not callable(key) or not isinstance(aggregates, Mapping) or not all(
        isinstance(spec, tuple) and len(spec) == 2 and callable(spec[1]) for spec in aggregates.values()
    ):
        raise GraphError(
            f"aggregate takes a key function and a dict of name -> (kind, value function), not {key!r} and "
            f"{aggregates!r}; e.g. aggregate(lambda r: r[0], {{'lowest': ('min', lambda r: r[1])}})"
        )
    unknown = {kind for kind, _ in aggregates.values()} - set(AGGREGATES)
    if unknown:
        raise GraphError(f"aggregate kinds {sorted(unknown)} are not known; use some of {', '.join(AGGREGATES)}")
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

    return combined._reduce(assemble, "aggregate")
