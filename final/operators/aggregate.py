"""SQL's aggregates as small dataflows of reductions: hierarchical MIN/MAX, COUNT(DISTINCT), GROUP BY.

Source: document 004 ("Grouping and reduction"). Two ideas from it, each a
stream method that builds a few operators out of the reductions
(``final.operators.reduce``) and linear operators a stream already has:

- Hierarchical reduction: ``min``/``max`` reduce by ``(key, hash(value) >> shift)``
  with the shift growing by ``BITS_PER_ROUND`` each round, so no group is
  large and one update touches ``O(log n)`` records, not the whole group.
  MIN and MAX asked for together share one hierarchy, whose values are
  ``(min, max)`` pairs: half the state of two.
- Factoring: ``aggregate`` runs each kind of aggregate as its own reduction
  (with a ``distinct`` in front for ``COUNT(DISTINCT ...)``) and reassembles
  one record per key, so aggregates add their costs instead of multiplying
  them.

Materialize renders SQL reductions as 004 describes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..collection import Values, incomparable, key_value, max_values, min_values
from ..errors import GraphError
from .base import StreamMethods
from .reduce import NON_NULL, ROWS

BITS_PER_ROUND = 4
"""004: 'we currently increase shift by 4 each round': groups of about 16 values per round."""
HASH_BITS = 64
"""Values are bucketed by a 64-bit hash, so there are HASH_BITS / BITS_PER_ROUND = 16 rounds, the last by key."""

AGGREGATES = ("count", "count_distinct", "sum", "min", "max")
"""What ``aggregate`` can compute; NULLs (``None`` values) are skipped, as in SQL."""

EXTREMES = {"min": min, "max": max}
"""The aggregates one hierarchy computes together, and how each picks from a group."""


def hierarchical(
    stream: Any, reduction: Callable[[Values], Values], name: str, bucket: Callable[[Any], Any] = hash
) -> Any:
    """Reduce ``(key, value)`` records with an associative ``reduction`` in rounds over hash buckets.

    Round ``r`` groups by ``(key, bucket(value) >> (BITS_PER_ROUND * r))``,
    ``bucket`` a 64-bit hash; the last round groups by key alone. Every
    round's groups hold about ``2 ** BITS_PER_ROUND`` values, so an update
    re-reduces ``O(log n)`` records. Right for reductions where reducing
    partial results gives the result of the whole (``min``, ``max``, and
    tuples of them).

    Simplification: 004's first round, at shift 0, groups only equal
    values, which a reduction's input holds as one value with its
    multiplicity already: it would change nothing, so the rounds start at
    shift ``BITS_PER_ROUND``, and the round by key is the sixteenth.
    """
    mask = (1 << HASH_BITS) - 1
    buckets = stream.map(
        lambda record: ((key_value(record, name)[0], (bucket(record[1]) & mask) >> BITS_PER_ROUND), record[1]))
    for _ in range(HASH_BITS // BITS_PER_ROUND - 2):
        rounded = buckets.reduction(reduction, name)
        buckets = rounded.map(lambda pair: ((pair[0][0], pair[0][1] >> BITS_PER_ROUND), pair[1]))
    return buckets.reduction(reduction, name).map(lambda pair: (pair[0][0], pair[1])).reduction(reduction, name)


def extremes_of(kinds: tuple[str, ...]) -> Callable[[Values], Values]:
    """The reduction of tuples holding one value per kind in ``kinds`` (``min`` or ``max``; ``None`` where a
    row has none): the tuple of each kind's extreme over the values present, ``None`` where there are none."""

    def reduction(values: Values) -> Values:
        present = [value for value, multiplicity in values if multiplicity > 0]
        if not present:
            return []
        result = []
        for position, kind in enumerate(kinds):
            column = [value[position] for value in present if value[position] is not None]
            try:
                result.append(EXTREMES[kind](column) if column else None)
            except TypeError:
                raise incomparable(kind, column) from None
        return [(tuple(result), 1)]

    return reduction


def _first_present(values: tuple) -> int:
    """The hash a tuple of extremes is bucketed by: its first value that is not ``None``'s (it has one), as a
    single value's would be."""
    return hash(next(value for value in values if value is not None))


class AggregateMethods(StreamMethods):
    """The stream methods of 004's aggregates: ``min``, ``max``, ``count_distinct`` and ``aggregate``."""

    def min(self) -> Any:
        """``(key, least value)``, by hierarchical reduction: an update touches O(log n) records (004)."""
        return hierarchical(self, min_values, "min")

    def max(self) -> Any:
        """``(key, greatest value)``, by hierarchical reduction: an update touches O(log n) records (004)."""
        return hierarchical(self, max_values, "max")

    def count_distinct(self) -> Any:
        """``(key, COUNT(DISTINCT value))``: a ``distinct`` in front of an in-place count (004, 'Distinctness').

        As in SQL, NULL (``None``) is not a value: a key whose values are all
        NULL counts 0, and a key with no rows has no output.
        """

        def parts(record: Any) -> list:
            key, value = record
            return [((key, ROWS), 1)] if value is None else [((key, ROWS), 1), ((key, NON_NULL), 1)]

        counted = self.distinct().explode(parts)
        return counted.totals(lambda totals: totals.get(NON_NULL, 0) if totals.get(ROWS) else None, "count_distinct")

    def aggregate(self, key: Callable[[Any], Any], named: Mapping[str, tuple[str, Callable[[Any], Any]]]) -> Any:
        """``(key, ((name, value), ...))``: one record per key with every named aggregate, like SQL's GROUP BY.

        ``named`` maps a name to ``(kind, value_of_record)`` with ``kind`` in
        ``AGGREGATES``. Each count, count_distinct and sum runs as its own
        reduction over just ``(key, value)``; every min and max together run
        as one hierarchy over tuples of values; the results are reassembled
        by key (004, 'Factoring reductions'). A key with rows gets a record;
        an aggregate with no non-NULL values there is ``None`` (``0`` for the
        counts). The key may itself be ``None``: NULL is a group.

        Raises:
            GraphError: ``named`` is not such a mapping, or a kind is not one of ``AGGREGATES``.
        """
        if not callable(key) or not isinstance(named, Mapping) or not all(
            isinstance(spec, tuple) and len(spec) == 2 and callable(spec[1]) for spec in named.values()
        ):
            raise GraphError(
                f"aggregate takes a key function and a dict of name -> (kind, value function), not {key!r} and "
                f"{named!r}; e.g. aggregate(lambda r: r[0], {{'lowest': ('min', lambda r: r[1])}})"
            )
        unknown = {kind for kind, _ in named.values()} - set(AGGREGATES)
        if unknown:
            raise GraphError(f"aggregate kinds {sorted(unknown)} are not known; use some of {', '.join(AGGREGATES)}")
        parts = [self.map(lambda record: (key(record), ())).count_total().map(lambda pair: (pair[0], (None, pair[1])))]
        extremes = sorted((name, kind, value_of) for name, (kind, value_of) in named.items() if kind in EXTREMES)
        for name, (kind, value_of) in sorted(named.items()):
            if kind in EXTREMES:
                continue
            values = self.map(lambda record, value_of=value_of: (key(record), value_of(record)))
            non_null = values.filter(lambda pair: pair[1] is not None)
            if kind == "count":
                result = non_null.count_total()
            elif kind == "count_distinct":
                result = non_null.count_distinct()
            else:
                result = non_null.sum_total()
            parts.append(result.map(lambda pair, name=name: (pair[0], (name, pair[1]))))
        if extremes:
            value_ofs = tuple(value_of for _, _, value_of in extremes)
            rows = self.map(lambda record: (key(record), tuple(value_of(record) for value_of in value_ofs)))
            present = rows.filter(lambda pair: any(value is not None for value in pair[1]))
            kinds = tuple(kind for _, kind, _ in extremes)
            result = hierarchical(present, extremes_of(kinds), "+".join(kinds), _first_present)
            names = tuple(name for name, _, _ in extremes)
            parts.append(result.flat_map(lambda pair: [(pair[0], item) for item in zip(names, pair[1], strict=True)]))
        combined = parts[0]
        for part in parts[1:]:
            combined = combined.concat(part)
        defaults = {name: 0 if kind in ("count", "count_distinct") else None for name, (kind, _) in named.items()}

        def assemble(values: Values) -> Values:
            found = dict(value for value, _ in values)
            if None not in found:  # no rows: the key is gone
                return []
            return [(tuple((name, found.get(name, default)) for name, default in sorted(defaults.items())), 1)]

        return combined.reduction(assemble, "aggregate")
