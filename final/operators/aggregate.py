"""SQL's aggregates: hierarchical MIN/MAX, COUNT(DISTINCT), GROUP BY, as 004 builds them from reductions.

Source: document 004 ("Grouping and reduction"). Two ideas from it:

- Hierarchical reduction: ``min``/``max`` reduce by ``(key, hash(value) >> shift)``
  with the shift growing by ``BITS_PER_ROUND`` each round, so no group is
  large and one update touches ``O(log n)`` records, not the whole group.
  MIN and MAX asked for together share one hierarchy, whose values are
  ``(min, max)`` pairs: half the state of two.
- Factoring: ``aggregate`` keeps each kind of aggregate apart (a count, a
  sum, the distinct values for ``COUNT(DISTINCT ...)``, the hierarchy) and
  assembles one record per key, so aggregates add their costs instead of
  multiplying them.

Two renderings. Where versions are totally ordered (outside loops) a key's
state changes in place, as ``count`` does (``final.operators.reduce``): one
operator keeps every key's ``Hierarchy``, whose rounds are as many as the
key's values need, and ``aggregate`` is one operator keeping each key's
aggregates side by side, a version's records taken in one pass. Inside
loops each round is a reduction of its own and ``aggregate`` a small
dataflow of reductions, as 004 draws them (``hierarchical``, ``factored``);
the strategy pass chooses between them when the graph is compiled
(``final.strategies``). Materialize renders SQL reductions as 004
describes, with hierarchies as deep as the expected group size.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import localcontext
from typing import Any

from ..collection import Entry, Values, incomparable, key_value, max_values, min_values
from ..errors import GraphError
from ..trace import add_presence
from .base import Place, StreamMethods
from .reduce import EXACT, NON_NULL, NOTHING, ROWS, InPlace, exact_sum, replace_output

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

    picks = [(kind, EXTREMES[kind]) for kind in kinds]

    def reduction(values: Values) -> Values:
        present = [value for value, multiplicity in values if multiplicity > 0]
        if len(present) <= 1:  # one tuple is its own extremes
            return [(present[0], 1)] if present else []
        result = []
        for (kind, pick), column in zip(picks, zip(*present, strict=True), strict=True):
            try:
                result.append(pick(column))  # a column without None, the usual case: picked in one call
            except TypeError:  # a None (or values that do not compare): pick among the others
                known = [value for value in column if value is not None]
                try:
                    result.append(pick(known) if known else None)
                except TypeError:
                    raise incomparable(kind, known) from None
        return [(tuple(result), 1)]

    return reduction


def _first_present(values: tuple) -> int:
    """The hash a tuple of extremes is bucketed by: its first value that is not ``None``'s (it has one), as a
    single value's would be."""
    return hash(next(value for value in values if value is not None))


FANOUT = 1 << BITS_PER_ROUND
"""How many values a bucket of a ``Hierarchy`` holds before it splits, and how many buckets a round merges."""
_DIGIT = FANOUT - 1
_MIXER = 0x9E3779B97F4A7C15
"""2**64 divided by the golden ratio (Knuth's multiplicative hashing): a ``Hierarchy`` takes its buckets from
the top bits of ``hash(value) * _MIXER``, which depend on every bit of the hash, so values whose hashes share
their low bits (Python hashes an int as itself: multiples of 16 share four) still spread over the buckets."""
_LOW_BITS = (1 << HASH_BITS) - 1


class _Bucket:
    """One group of a ``Hierarchy``'s round: values (a leaf), or the buckets of the next round (a node).

    Invariant: exactly one of ``values`` (``{value: non-zero multiplicity}``) and ``buckets`` (``{digit:
    non-empty _Bucket}``) is not None; unless ``dirty``, ``result`` is the reduction of what it holds. While
    dirty, ``gained`` lists the values that came to be present (a positive multiplicity) since ``result`` was
    reduced, and ``lost`` says whether any stopped being present (or the bucket split).
    """

    __slots__ = ("buckets", "dirty", "gained", "lost", "result", "values")

    def __init__(self, values: dict) -> None:
        self.values: dict | None = values
        self.buckets: dict[int, _Bucket] | None = None
        self.result: Any = NOTHING
        """The reduction of what it holds; ``NOTHING`` when no value has a positive multiplicity."""
        self.dirty = True
        self.gained: list = []
        self.lost = False


_SAME, _GREW, _CHANGED = 0, 1, 2
"""How a bucket's result moved when it was reduced again: not at all; only by values that came to be
present (the new result is the reduction of the old one and theirs); or otherwise."""


class Hierarchy:
    """One key's values reduced in rounds over hash buckets, as many rounds as they need (004, in place).

    A bucket holds up to ``FANOUT`` values and their reduction; once it
    holds more, it splits into the buckets of the next ``BITS_PER_ROUND``
    bits of each value's (mixed) hash, and keeps the reduction of their
    results. So a change re-reduces one bucket per round on its path,
    ``FANOUT`` entries each: ``O(log n)`` per update, as 004's fixed rounds,
    but a key with a dozen values has one bucket and one reduction, where
    most of 004's sixteen rounds would hold one value per bucket.

    The reduction is a semilattice's join: associative, commutative and
    idempotent (``min_values``, ``max_values``, ``extremes_of``), returning
    at most one ``(result, 1)``. So a bucket whose values only came to be
    present reduces its old result with them alone, and the rounds above it
    the same; only a value that leaves (a retracted minimum, say) costs the
    bucket's whole reduction, and a change that moves no result stops there.

    Simplification: a bucket that shrinks is not merged back into its
    parent; it goes only when it empties, so the depth follows the most
    values the key held, not the values it holds.

    Invariant: a leaf holds at most ``FANOUT`` values, unless their hashes
    agree on all 64 bits; ``add`` marks every bucket on a changed value's
    path ``dirty``, and ``settle`` brings their results up to date, bottom
    up; a bucket that is not dirty has the reduction of what it holds (equal
    to it, if not in the same representation: ``Decimal("1.5")`` for
    ``Decimal("1.50")``).
    """

    __slots__ = ("_bucket", "_reduction", "_root")

    def __init__(self, reduction: Callable[[Values], Values], bucket: Callable[[Any], int] = hash) -> None:
        self._reduction = reduction
        self._bucket = bucket
        self._root = _Bucket({})

    @property
    def result(self) -> Any:
        """The reduction of every value, as of the last ``settle`` (``NOTHING`` if there is none)."""
        return self._root.result

    def add(self, changes: dict[Any, int]) -> None:
        """Add each ``{value: multiplicity}`` of ``changes`` (a version's, for one key) in one walk down the
        buckets; the buckets it reaches are reduced again at the next ``settle``."""
        self._add(self._root, list(changes.items()), HASH_BITS - BITS_PER_ROUND)

    def _add(self, bucket: _Bucket, changes: list[tuple[Any, int]], shift: int) -> None:
        """Add ``changes`` to ``bucket``, whose values' mixed hashes agree above ``shift + BITS_PER_ROUND``;
        a leaf that could hold more than ``FANOUT`` values after them becomes a node, by the bits at ``shift``."""
        bucket.dirty = True
        values = bucket.values
        if values is not None:
            if len(values) + len(changes) <= FANOUT or shift < 0:
                gained = bucket.gained
                for value, multiplicity in changes:
                    moved = add_presence(values, value, multiplicity)
                    if moved > 0:
                        gained.append(value)
                    elif moved < 0:
                        bucket.lost = True
                return
            # Split before adding, so that a value is routed once, not put in the leaf and then moved.
            bucket.values, bucket.buckets, bucket.lost = None, {}, True
            changes = [*values.items(), *changes]
        routed: dict[int, list] = {}  # each change goes on to the bucket of its next bits
        digest = self._bucket
        for change in changes:
            digit = ((digest(change[0]) * _MIXER & _LOW_BITS) >> shift) & _DIGIT
            part = routed.get(digit)
            if part is None:
                routed[digit] = [change]
            else:
                part.append(change)
        buckets = bucket.buckets
        for digit, part in routed.items():
            below = buckets.get(digit)
            if below is None:
                below = buckets[digit] = _Bucket({})
            self._add(below, part, shift - BITS_PER_ROUND)

    @property
    def empty(self) -> bool:
        """Whether it holds no value (as of the last ``settle``)."""
        root = self._root
        return not (root.values if root.buckets is None else root.buckets)

    def settle(self) -> None:
        """Reduce again every bucket a change reached, from the deepest up."""
        if self._root.dirty:
            self._reduce(self._root)

    def _reduce(self, bucket: _Bucket) -> int:
        """Bring ``bucket``'s result up to date; how it moved (``_SAME``, ``_GREW``, ``_CHANGED``)."""
        before = bucket.result
        buckets = bucket.buckets
        if buckets is not None:  # a node gains what its buckets gained, and loses what they lost
            gained = bucket.gained
            for digit, below in list(buckets.items()):
                if below.dirty:
                    moved = self._reduce(below)
                    if moved == _GREW:
                        gained.append(below.result)
                    elif moved == _CHANGED:
                        bucket.lost = True
                    if not (below.values if below.buckets is None else below.buckets):
                        del buckets[digit]
        bucket.dirty = False
        if bucket.lost:
            if buckets is None:
                present = list(bucket.values.items())
            else:
                present = [(below.result, 1) for below in buckets.values() if below.result is not NOTHING]
            moved = _CHANGED
        elif bucket.gained:
            present = [(value, 1) for value in bucket.gained]
            if before is not NOTHING:
                present.insert(0, (before, 1))
            moved = _GREW
        else:
            return _SAME
        bucket.gained, bucket.lost = [], False
        reduced = self._reduction(present) if present else ()
        bucket.result = after = reduced[0][0] if reduced else NOTHING
        return _SAME if after is before or after == before else moved

    def depth(self) -> int:
        """How many rounds the deepest value passes: 1 for a key whose values fit one bucket."""

        def below(bucket: _Bucket) -> int:
            return 1 if bucket.buckets is None else 1 + max(map(below, bucket.buckets.values()), default=0)

        return below(self._root)


class HierarchyInPlace(InPlace):
    """``min``/``max`` in place: each key's ``Hierarchy`` of its values, and the key's result out.

    Invariant: ``_hierarchies[key]`` holds the key's values at the last finished version, for every key
    that has values, and its ``result`` is what was sent for the key (``NOTHING``: nothing).
    """

    def __init__(self, place: Place, reduction: Callable[[Values], Values]) -> None:
        super().__init__(place)
        self._reduction = reduction
        self._hierarchies: dict[Any, Hierarchy] = {}

    def state_size(self) -> int:
        return len(self._hierarchies) + self.pending.size()

    def rounds(self, key: Any) -> int:
        """How many rounds ``key``'s deepest value passes (``Hierarchy.depth``); 0 for a key with no values."""
        hierarchy = self._hierarchies.get(key)
        return 0 if hierarchy is None else hierarchy.depth()

    def apply(self, batches: list[list[Entry]]) -> list[Entry]:
        hierarchies = self._hierarchies
        staged: dict[Any, dict[Any, int]] = {}  # each touched key's changes, consolidated
        for updates in batches:
            for (key, value), multiplicity in updates:
                values = staged.get(key)
                if values is None:
                    values = staged[key] = {}
                values[value] = values.get(value, 0) + multiplicity
        changes: list[Entry] = []
        for key, values in staged.items():
            hierarchy = hierarchies.get(key)
            if hierarchy is None:
                hierarchy = hierarchies[key] = Hierarchy(self._reduction)
            old = hierarchy.result
            hierarchy.add(values)
            hierarchy.settle()
            if hierarchy.empty:
                del hierarchies[key]
            new = hierarchy.result
            if new is not old and new != old:
                replace_output(changes, key, old, new)
        return changes


class _Group:
    """A key's aggregates (``Aggregates``): one entry per aggregate of each kind, in the order of their names.

    Invariant: ``rows`` is the sum of the key's multiplicities; ``counts[i]`` that of its rows where
    the i-th count's value is not NULL; ``sums[i]`` is ``[that, the exact sum of value * multiplicity]``;
    ``distinct[i]`` maps each value to its non-zero multiplicity and ``positive[i]`` counts those above 0;
    ``extremes`` holds the tuples of the MIN/MAX values (None until a row has one); ``output`` is what
    was sent for the key (``NOTHING``: nothing).
    """

    __slots__ = ("counts", "distinct", "extremes", "output", "positive", "rows", "sums")

    def __init__(self, counts: int, sums: int, distinct: int) -> None:
        self.rows = 0
        self.counts = [0] * counts
        self.sums = [[0, 0] for _ in range(sums)]
        self.distinct: list[dict] = [{} for _ in range(distinct)]
        self.positive = [0] * distinct
        self.extremes: Hierarchy | None = None
        self.output: Any = NOTHING

    def empty(self) -> bool:
        """Whether nothing is left (its extremes settled): no rows, and no value whose multiplicities did
        not cancel."""
        return not (self.rows or any(self.counts) or any(count or total for count, total in self.sums)
                    or any(self.distinct) or (self.extremes is not None and not self.extremes.empty))


class Aggregates:
    """The per-key work of ``aggregate`` in place, apart from any operator: how a version's records change each
    key's ``_Group``, and the record a group assembles.

    ``AggregateInPlace`` runs it over every key of a version in one pass. A
    keyed operator elsewhere runs the same code on one key's group, kept in
    a state store of its own between versions (Spark's executors:
    ``final.spark.executors``), so the two cannot differ in what they
    compute. ``named`` is as ``aggregate`` takes it; its names fix the order
    of a record's values.
    """

    def __init__(self, named: Mapping[str, tuple[str, Callable[[Any], Any]]]) -> None:
        order = sorted(named)
        self._counts = list(enumerate(named[name][1] for name in order if named[name][0] == "count"))
        self._sums = list(enumerate(named[name][1] for name in order if named[name][0] == "sum"))
        self._distinct = list(enumerate(named[name][1] for name in order if named[name][0] == "count_distinct"))
        extremes = [name for name in order if named[name][0] in EXTREMES]
        self._extremes = tuple(named[name][1] for name in extremes)
        self.reduction = extremes_of(tuple(named[name][0] for name in extremes))
        """The reduction of the MIN/MAX tuples, which every group's ``Hierarchy`` holds."""
        # Where each name's value is found: (kind, position among its kind), in the record's order.
        positions = {kind: 0 for kind in AGGREGATES}
        self._layout: list[tuple[str, str, int]] = []
        for name in order:
            kind = "extremes" if named[name][0] in EXTREMES else named[name][0]
            self._layout.append((name, kind, positions.get(kind, 0)))
            positions[kind] = positions.get(kind, 0) + 1

    def apply(self, groups: dict[Any, _Group], key_of: Callable[[Any], Any], batches: list[list[Entry]]
              ) -> list[Entry]:
        """Take one finished version's updates into ``groups``, each record into the group of its ``key_of`` (made
        for a key that has none); return what replaces each touched key's output: ``((key, record), -1)`` for the
        record it had, ``((key, record), 1)`` for the one it has now. A group with nothing left is dropped."""
        counts, sums, distinct, extremes = self._counts, self._sums, self._distinct, self._extremes
        shape = (len(counts), len(sums), len(distinct))
        before: dict[Any, Any] = {}
        staged: dict[Any, dict[Any, int]] = {}  # each key's changes to its extremes, consolidated
        with localcontext(EXACT):
            for updates in batches:
                for record, multiplicity in updates:
                    if not multiplicity:
                        continue
                    key = key_of(record)
                    group = groups.get(key)
                    if group is None:
                        group = groups[key] = _Group(*shape)
                    before.setdefault(key, group.output)
                    group.rows += multiplicity
                    for position, value_of in counts:
                        if value_of(record) is not None:
                            group.counts[position] += multiplicity
                    for position, value_of in sums:
                        value = value_of(record)
                        if value is not None:
                            tally = group.sums[position]
                            tally[0] += multiplicity
                            tally[1] = exact_sum(tally[1], value, multiplicity, record)
                    for position, value_of in distinct:
                        value = value_of(record)
                        if value is not None:
                            group.positive[position] += add_presence(group.distinct[position], value, multiplicity)
                    if extremes:
                        values = tuple([value_of(record) for value_of in extremes])
                        for value in values:
                            if value is not None:  # a row with no MIN/MAX value is not in the hierarchy
                                tuples = staged.get(key)
                                if tuples is None:
                                    tuples = staged[key] = {}
                                tuples[values] = tuples.get(values, 0) + multiplicity
                                break
        for key, tuples in staged.items():
            group = groups[key]
            if group.extremes is None:
                group.extremes = Hierarchy(self.reduction)
            group.extremes.add(tuples)
        changes: list[Entry] = []
        for key, old in before.items():
            group = groups[key]
            if group.extremes is not None:
                group.extremes.settle()
            new = group.output = self._assembled(group)
            if new is NOTHING and group.empty():
                del groups[key]
            if new is not old and new != old:
                replace_output(changes, key, old, new)
        return changes

    def _assembled(self, group: _Group) -> Any:
        """The key's record: ``((name, value), ...)`` by name, or ``NOTHING`` if its rows cancel out."""
        if not group.rows:
            return NOTHING
        extremes = group.extremes.result if group.extremes is not None else NOTHING
        record = []
        for name, kind, position in self._layout:
            if kind == "count":
                value = group.counts[position]
            elif kind == "count_distinct":
                value = group.positive[position]
            elif kind == "sum":
                count, total = group.sums[position]
                value = total if count else None
            else:
                value = None if extremes is NOTHING else extremes[position]
            record.append((name, value))
        return tuple(record)


class AggregateInPlace(InPlace):
    """``aggregate`` in place: every key's aggregates kept side by side, a version's records in one pass.

    Each record is taken once: its key, then each aggregate's value, added
    to the key's ``_Group``; then each touched key's record is assembled
    again and sent if it changed (``Aggregates``). The same answers as the
    dataflow of reductions ``aggregate`` builds inside loops (004,
    'Factoring reductions'), with no record per aggregate in between.

    Invariant: ``_groups[key]`` is the key's ``_Group`` as of the last finished version, for every key
    with something left in it.
    """

    needs_pairs = False  # records of any shape: ``key`` picks the group

    def __init__(
        self, place: Place, key: Callable[[Any], Any], named: Mapping[str, tuple[str, Callable[[Any], Any]]],
    ) -> None:
        super().__init__(place)
        self._key = key
        self._aggregates = Aggregates(named)
        self._groups: dict[Any, _Group] = {}

    def state_size(self) -> int:
        return len(self._groups) + self.pending.size()

    def apply(self, batches: list[list[Entry]]) -> list[Entry]:
        return self._aggregates.apply(self._groups, self._key, batches)


class AggregateMethods(StreamMethods):
    """The stream methods of 004's aggregates: ``min``, ``max``, ``count_distinct`` and ``aggregate``."""

    def min(self) -> Any:
        """``(key, least value)``, by hierarchical reduction: an update touches O(log n) records (004)."""
        return self._extreme(min_values, "min")

    def max(self) -> Any:
        """``(key, greatest value)``, by hierarchical reduction: an update touches O(log n) records (004)."""
        return self._extreme(max_values, "max")

    def _extreme(self, reduction: Callable[[Values], Values], name: str) -> Any:
        """A ``HierarchyInPlace`` of ``reduction`` where versions are totally ordered, else 004's rounds."""
        return self.add_operator(HierarchyInPlace, name, arguments=(reduction,),
                                 general=lambda stream: hierarchical(stream, reduction, name))

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
        ``AGGREGATES``. Each count, count_distinct and sum is kept apart over
        just ``(key, value)``; every min and max together are one hierarchy
        over tuples of values; the results are assembled by key (004,
        'Factoring reductions'). Outside loops that is one operator,
        ``AggregateInPlace``; inside them each part is a reduction of its own
        and a last one assembles them. A key with rows gets a record;
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
        return self.add_operator(AggregateInPlace, "aggregate", arguments=(key, named),
                                 general=lambda stream: factored(stream, key, named))


def factored(stream: Any, key: Callable[[Any], Any], named: Mapping[str, tuple[str, Callable[[Any], Any]]]) -> Any:
    """``aggregate`` as 004's dataflow of reductions: each count, count_distinct and sum a reduction over just
    ``(key, value)``, every min and max one hierarchy over tuples of values, and a last reduction that assembles
    a key's record from the parts (its rendering where versions are partially ordered)."""
    parts = [stream.map(lambda record: (key(record), ())).count_total().map(lambda pair: (pair[0], (None, pair[1])))]
    extremes = sorted((name, kind, value_of) for name, (kind, value_of) in named.items() if kind in EXTREMES)
    for name, (kind, value_of) in sorted(named.items()):
        if kind in EXTREMES:
            continue
        values = stream.map(lambda record, value_of=value_of: (key(record), value_of(record)))
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
        rows = stream.map(lambda record: (key(record), tuple(value_of(record) for value_of in value_ofs)))
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
