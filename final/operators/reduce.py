"""Reductions: operators that need a key's values at a finished version, and their stream methods.

``reduce(f)`` is the general one: ``f`` of a key's consolidated values, kept
up to date. Where versions are totally ordered (outside loops) a version
finishes after every version before it, so a reduction can keep each key's
state as of the last finished version and change it in place: no history of
versions. ``count``, ``sum``, ``distinct`` and ``threshold`` then keep a
running total per key (or a multiplicity per record) and touch only what a
change touches, however large the group (004, "In-place aggregations");
``count_total`` and ``sum_total`` keep nothing but the totals, 004's
NULL-aware three per key. Inside loops the general ``Reduce`` corrects keys
at joins of versions (002, "v5/vFinal"). A reduction is recorded with both
renderings, and which one runs is chosen when the graph is compiled
(``final.strategies``).

Every reduction runs only on keys whose values do not cancel out, so a
group that empties produces no output. Source: document 002, "v1" (reduce
on touched keys), "v3" (finished versions in order), "v5/vFinal" (the couch:
corrections at joins of versions), and document 004.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from decimal import (
    MAX_EMAX,
    MAX_PREC,
    MIN_EMIN,
    Context,
    Decimal,
    DivisionByZero,
    InvalidOperation,
    Overflow,
    localcontext,
)
from fractions import Fraction
from typing import Any

from ..collection import (
    Collection,
    Entry,
    Multiplicity,
    Values,
    count_values,
    distinct_values,
    key_value,
    sum_values,
)
from ..errors import RecordError
from ..order import Antichain, Version
from ..trace import Index, add_multiplicity
from .base import Operator, Pending, Place, StreamMethods, checked_function


class Reduce(Operator):
    """``(key, output)`` for ``output`` in ``f(values of key)``, one finished version at a time.

    ``f`` needs all of a key's values at a version, so nothing is sent at a
    version until the frontier has passed it; then the versions that finished
    are computed in version order, each on the keys that may have changed at it.

    In a total order (one coordinate) each key's input and output are kept
    as of the last finished version and changed in place. With partially
    ordered versions a key's output can change at a version where its input
    did not: with input at ``(1, 0)`` and at ``(0, 1)``, the input at
    ``(1, 1)`` holds both, and ``distinct`` must emit ``(couch, -1)`` there
    (002, "v5/vFinal"). The output can change only at joins of the versions
    at which the input changed, so each key keeps ``_times``, closed under
    join: new data at ``v`` makes ``v`` and ``v.join(t)`` for every kept ``t``
    pending. A key's kept times are advanced by the frontier when it next
    gets data, just before they are joined: advancing changes none of those
    joins for a version the frontier still allows, and merges times the
    frontier has passed, so the set stays small.

    Invariant: in a total order, ``_groups[key]`` is the key's consolidated
    input, and ``_current[key]`` its output, at the last finished version,
    and ``pending`` holds each unfinished version's updates; otherwise
    ``_inputs`` holds every difference received, ``_outputs`` every
    difference sent, and ``pending`` maps each unfinished version to the keys
    whose output may change at it.
    """

    needs_pairs = True
    kind = "reduce"

    def __init__(self, place: Place, f: Callable[[Values], Iterable[tuple[Any, Multiplicity]]]) -> None:
        super().__init__(place)
        self._f = f
        self._totally_ordered = place.output.dimension == 1
        if self._totally_ordered:
            self.pending = Pending(self, list)
            self._groups: dict[Any, dict[Any, Multiplicity]] = {}
            self._current: dict[Any, dict[Any, Multiplicity]] = {}
        else:
            self.pending = Pending(self, set)
            self._inputs = Index()
            self._outputs = Index()
            self._times: defaultdict[Any, set[Version]] = defaultdict(set)

    def state_size(self) -> int:
        if self._totally_ordered:
            kept = sum(map(len, self._groups.values())) + sum(map(len, self._current.values()))
        else:
            kept = self._inputs.size() + self._outputs.size() + sum(len(times) for times in self._times.values())
        return kept + self.pending.size()

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        if self._totally_ordered:
            self.pending.at(version).append(collection.updates)
            return
        self._inputs.add_trusted(version, collection.updates)
        keys = {record[0] for record, _ in collection.updates}
        advance = self.input_frontier.advance
        for key in keys:
            times = {advance(time) for time in self._times[key]}
            new_times = {version, *(version.join(time) for time in times)}
            for time in new_times:
                self.pending.at(time).add(key)
            self._times[key] = times | new_times

    def on_frontier(self, frontier: Antichain) -> None:
        if self._totally_ordered:
            self._run_in_order(frontier)
        else:
            self._run_at_joins(frontier)

    def _run_in_order(self, frontier: Antichain) -> None:
        """Finished versions in order, each key's input and output changed in place."""
        groups, current = self._groups, self._current
        for version, batches in self.pending.pop_finished(frontier):
            touched: dict[Any, None] = {}
            for updates in batches:
                for (key, value), multiplicity in updates:
                    group = groups.get(key)
                    if group is None:
                        group = groups[key] = {}
                    touched[key] = None
                    add_multiplicity(group, value, multiplicity)
            changes: list[Entry] = []
            for key in touched:
                group = groups[key]
                if not group:
                    del groups[key]
                output = current.get(key)
                differences = self._changes(group, output, version, key)
                if not differences:
                    continue
                changes += [((key, value), multiplicity) for value, multiplicity in differences]
                if output is None:  # a key with no output yet: the changes are all of it
                    current[key] = dict(differences)
                    continue
                for value, multiplicity in differences:
                    add_multiplicity(output, value, multiplicity)
                if not output:
                    del current[key]
            self.send(version, changes)

    def _run_at_joins(self, frontier: Antichain) -> None:
        """Finished versions in order, each key's input and output reconstructed at it."""
        inputs, outputs = self._inputs, self._outputs
        touched: set = set()
        for version, keys in self.pending.pop_finished(frontier):
            updates = []
            for key in keys:
                output = dict(outputs.reconstruct_at(key, version))
                changes = self._changes(dict(inputs.reconstruct_at(key, version)), output, version, key)
                for value, multiplicity in changes:
                    outputs.add_value(key, version, (value, multiplicity))
                    updates.append(((key, value), multiplicity))
            self.send(version, updates)
            touched |= keys
        touched.update(inputs.compact(frontier), outputs.compact(frontier))
        times = self._times
        for key in touched:  # a key with nothing left in either index is as good as never seen
            if key not in inputs and key not in outputs:
                times.pop(key, None)

    def _changes(
        self, values: dict[Any, Multiplicity], output: dict[Any, Multiplicity] | None, version: Version, key: Any
    ) -> Values:
        """What to add to a key's ``output`` (None: it has none) to make it ``f`` of its ``values`` (both
        ``{value: multiplicity}``) at ``version``."""
        changes = {value: -multiplicity for value, multiplicity in output.items()} if output else {}
        for pair in self._applied(values, version, key) if values else ():
            # f's output is checked here, in the one pass that adds it up.
            if type(pair) is not tuple or len(pair) != 2 or type(pair[1]) is not int:
                self._fail(RecordError(
                    f"a reduction returns (value, multiplicity) pairs with int multiplicities, but returned "
                    f"{pair!r}; return e.g. [(value, 1)]"
                ), f"at version {version}, key {key!r}")
            value, multiplicity = pair
            try:
                total = changes.get(value, 0) + multiplicity  # add_multiplicity, inlined: once per key and version
            except TypeError:
                self._fail(RecordError(
                    f"the reduction returned the unhashable value {value!r}; return tuples and frozensets "
                    f"instead of lists, sets and dicts"
                ), f"at version {version}, key {key!r}")
            if total:
                changes[value] = total
            else:
                changes.pop(value, None)
        return list(changes.items())

    def _applied(self, values: dict[Any, Multiplicity], version: Version, key: Any) -> list:
        """``f`` of ``key``'s ``values`` at ``version``.

        Raises:
            FunctionError: ``f`` raised (a DataflowError it raised, such as ``min``'s, keeps its type).
        """
        try:
            return list(self._f(list(values.items())))
        except Exception as error:
            self._fail(error, f"at version {version}, key {key!r}")


class InPlace(Operator):
    """A reduction over totally ordered versions whose state changes in place: what versions finishing
    does is ``apply``, on the updates that arrived at each, in version order.

    Invariant: ``pending`` holds, per unfinished version, the lists of updates that arrived at it.
    """

    needs_pairs = True
    kind = "reduce"

    def __init__(self, place: Place) -> None:
        super().__init__(place)
        self.pending = Pending(self, list)

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self.pending.at(version).append(collection.updates)

    def on_frontier(self, frontier: Antichain) -> None:
        for version, batches in self.pending.pop_finished(frontier):
            self.send(version, self.apply(batches))

    def apply(self, batches: list[list[Entry]]) -> list[Entry]:
        """Take in one finished version's updates; return the output's change."""
        raise NotImplementedError


class CountInPlace(InPlace):
    """``count()`` in place: each key's values (to know when it empties) and their total multiplicity.

    Invariant: ``_groups[key]`` is the key's consolidated values and ``_totals[key]`` the sum of their
    multiplicities, for every key whose values do not cancel out.
    """

    def __init__(self, place: Place) -> None:
        super().__init__(place)
        self._groups: dict[Any, dict[Any, Multiplicity]] = {}
        self._totals: dict[Any, int] = {}

    def state_size(self) -> int:
        return sum(map(len, self._groups.values())) + len(self._totals) + self.pending.size()

    def apply(self, batches: list[list[Entry]]) -> list[Entry]:
        groups, totals = self._groups, self._totals
        before: dict[Any, Any] = {}  # each touched key's count as it was, NOTHING if it had no output
        for updates in batches:
            for (key, value), multiplicity in updates:
                group = groups.get(key)
                if group is None:
                    if not multiplicity:
                        continue
                    before.setdefault(key, NOTHING)
                    groups[key] = {value: multiplicity}
                    totals[key] = multiplicity
                    continue
                if key not in before:
                    before[key] = totals[key]
                total = group.get(value, 0) + multiplicity
                if total:
                    group[value] = total
                else:
                    group.pop(value, None)
                totals[key] += multiplicity
        changes: list[Entry] = []
        for key, old in before.items():
            if groups[key]:
                new = totals[key]
            else:
                new = NOTHING
                del groups[key], totals[key]
            if new != old:
                replace_output(changes, key, old, new)
        return changes


class SumInPlace(InPlace):
    """``sum()`` in place: each key's values and, while they are all ints, their running sum.

    A running sum of other numbers is not exact (floats round, and rounding
    does not undo when a value is retracted), so a key holding any value
    that is not an int is summed again from its values, as ``sum_values``
    does. Invariant: ``_groups[key]`` is the key's consolidated values,
    ``_totals[key]`` the sum of ``value * multiplicity`` over its int values,
    and ``_others[key]`` how many of its values are not ints.
    """

    def __init__(self, place: Place) -> None:
        super().__init__(place)
        self._groups: dict[Any, dict[Any, Multiplicity]] = {}
        self._totals: dict[Any, int] = {}
        self._others: dict[Any, int] = {}

    def state_size(self) -> int:
        return sum(map(len, self._groups.values())) + len(self._totals) + self.pending.size()

    def _sum(self, key: Any) -> Any:
        if self._others.get(key):
            return sum_values(list(self._groups[key].items()))[0][0]
        return self._totals[key]

    def apply(self, batches: list[list[Entry]]) -> list[Entry]:
        groups, totals, others = self._groups, self._totals, self._others
        before: dict[Any, Any] = {}
        for updates in batches:
            for (key, value), multiplicity in updates:
                if not multiplicity:
                    continue
                group = groups.get(key)
                if group is None:
                    before.setdefault(key, NOTHING)
                    group = groups[key] = {}
                    totals[key] = 0
                elif key not in before:
                    before[key] = self._sum(key)
                old = group.get(value, 0)
                total = old + multiplicity
                if total:
                    group[value] = total
                else:
                    del group[value]
                if type(value) is int:
                    totals[key] += value * multiplicity
                elif not old or not total:  # a value that is not an int arrived or left
                    others[key] = others.get(key, 0) + (1 if total else -1)
        changes: list[Entry] = []
        for key, old in before.items():
            if groups[key]:
                new = self._sum(key)
            else:
                new = NOTHING
                del groups[key], totals[key]
                others.pop(key, None)
            if new != old:
                replace_output(changes, key, old, new)
        return changes


class ThresholdInPlace(InPlace):
    """``threshold(f)`` in place: each record's accumulated multiplicity ``m``, and ``f(m)`` copies of it out.

    ``distinct`` is this with ``f(m) = 1 if m > 0 else 0``: a record's
    output changes only when its multiplicity crosses zero.
    Invariant: ``_records`` maps every record whose multiplicity is not zero to it.
    """

    def __init__(self, place: Place, f: Callable[[int], int], needs_pairs: bool) -> None:
        super().__init__(place)
        self._f = f
        self.needs_pairs = needs_pairs
        self._records: dict[Any, int] = {}

    def state_size(self) -> int:
        return len(self._records) + self.pending.size()

    def _out(self, multiplicity: int) -> int:
        if not multiplicity:
            return 0
        result = self._f(multiplicity)
        if type(result) is not int:
            raise RecordError(
                f"threshold's function must return an int multiplicity, but returned {result!r} for {multiplicity}"
            )
        return result

    def apply(self, batches: list[list[Entry]]) -> list[Entry]:
        records = self._records
        before: dict[Any, int] = {}
        for updates in batches:
            for record, multiplicity in updates:
                old = records.get(record, 0)
                if record not in before:
                    before[record] = old
                total = old + multiplicity
                if total:
                    records[record] = total
                elif old:
                    del records[record]
        out = self._out
        changes = []
        for record, old in before.items():
            difference = out(records.get(record, 0)) - out(old)
            if difference:
                changes.append((record, difference))
        return changes


NOTHING: Any = object()
"""An in-place reduction's output for a key that has none."""


def replace_output(changes: list[Entry], key: Any, old: Any, new: Any) -> None:
    """Add to ``changes`` what takes ``key``'s output from ``(key, old)`` to ``(key, new)`` (``NOTHING``: none)."""
    if old is not NOTHING:
        changes.append(((key, old), -1))
    if new is not NOTHING:
        changes.append(((key, new), 1))

ROWS, NON_NULL, SUM = "rows", "non-null", "sum"
"""The parts of 004's in-place totals: a key's number of rows, of non-NULL values, and (a part per kind of
number) their sum."""


class Consolidate(Operator):
    """One consolidated difference per finished version, in version order.

    Invariant: ``pending`` maps each unfinished version to what arrived at it.
    """

    def __init__(self, place: Place) -> None:
        super().__init__(place)
        self.pending = Pending(self, list)

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self.pending.at(version).extend(collection.updates)

    def on_frontier(self, frontier: Antichain) -> None:
        for version, updates in self._finished(frontier):
            self.send(version, updates)

    def _finished(self, frontier: Antichain) -> list[tuple[Version, list]]:
        """The versions ``frontier`` has passed, in order, each with what arrived at it consolidated."""
        return [
            (version, Collection.trusted(kept).consolidate().updates)
            for version, kept in self.pending.pop_finished(frontier)
        ]


class ReduceMethods(StreamMethods):
    """The stream methods of reductions.

    ``count``, ``sum``, ``distinct`` and ``threshold`` record their in-place
    operator with the general ``Reduce`` beside it; the strategy pass
    (``final.strategies``) keeps the in-place one wherever versions are
    totally ordered and the stream has no shared arrangement.
    """

    def reduce(self, f: Callable[[Values], Iterable[tuple[Any, Multiplicity]]]) -> Any:
        """``(key, output)`` for each ``(output, multiplicity)`` in ``f(values of key)``, kept up to date.

        ``f`` gets a key's consolidated, non-empty ``(value, multiplicity)``
        list and returns ``(output, multiplicity)`` pairs, int multiplicities.
        """
        return self.reduction(f, "reduce")

    def reduction(self, f: Callable[[Values], Iterable[tuple[Any, Multiplicity]]], name: str) -> Any:
        """A general ``Reduce`` of ``f`` called ``name`` (the internal protocol: for the families built on it)."""
        checked_function(f, name)
        return self.add_operator(Reduce, name, arguments=(f,))

    def count(self) -> Any:
        """``(key, number of values)``, counting multiplicities (``COUNT(*) GROUP BY key``)."""
        return self.add_operator(CountInPlace, "count", general=lambda stream: stream.reduction(count_values, "count"))

    def sum(self) -> Any:
        """``(key, sum of value * multiplicity)`` (``SUM(value) GROUP BY key``).

        Raises:
            RecordError: (while stepping) a value is not a number.
        """
        return self.add_operator(SumInPlace, "sum", general=lambda stream: stream.reduction(sum_values, "sum"))

    def distinct(self) -> Any:
        """Each ``(key, value)`` with positive multiplicity, once."""
        return self.add_operator(ThresholdInPlace, "distinct", arguments=(_positive, True),
                                 general=lambda stream: stream.reduction(distinct_values, "distinct"))

    def threshold(self, f: Callable[[int], int]) -> Any:
        """Each record with multiplicity ``f(m)``, where ``m`` is its accumulated multiplicity (Rust DD's
        ``threshold``).

        ``distinct_keys`` is ``threshold(lambda m: 1 if m > 0 else 0)``.
        Records whose multiplicity cancels to zero are not passed to ``f``.
        """
        checked_function(f, "threshold")

        def apply(values: Values) -> Values:
            ((_, multiplicity),) = values
            result = f(multiplicity)
            if type(result) is not int:
                raise RecordError(
                    f"threshold's function must return an int multiplicity, but returned {result!r} for "
                    f"{multiplicity}"
                )
            return [((), result)] if result else []

        def general(stream: Any) -> Any:
            return stream.map(lambda record: (record, ())).reduction(apply, "threshold").map(lambda pair: pair[0])

        return self.add_operator(ThresholdInPlace, "threshold", arguments=(f, False), general=general)

    def distinct_keys(self) -> Any:
        """Each record once if its multiplicity is positive: ``distinct`` for records that are not pairs."""
        return self.threshold(_positive)

    def consolidate(self) -> Any:
        """One consolidated difference per finished version."""
        return self.add_operator(Consolidate, "consolidate")

    def count_total(self) -> Any:
        """``(key, number of rows)`` per key, kept in place: one total per key (004).

        Like SQL's ``COUNT(*) GROUP BY key``: a key whose rows cancel out has
        no output. Equal to ``count()`` whenever multiplicities are not
        negative (``count`` keeps a key's values, so that a key whose values
        are there but add up to 0 counts 0).

        Not Rust DD's ``count_total``, which counts each whole record and is
        ``count`` for totally ordered times: here "total" is 004's running
        total of rows per key, kept as a multiplicity, for any versions.
        """
        rows = self.explode(lambda record: [((key_value(record, "count_total")[0], ROWS), 1)])
        return rows.totals(lambda totals: totals.get(ROWS, 0) or None, "count_total")

    def sum_total(self) -> Any:
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
                return [((key, ROWS), 1)]
            part, amount = _summand(value, record)
            return [((key, ROWS), 1), ((key, NON_NULL), 1), ((key, part), amount)]

        def result(totals: dict) -> Any:
            if not totals.get(ROWS):
                return None
            if not totals.get(NON_NULL):
                return NULL
            summands = [_SUMMANDS[part[1]](amount, part[2]) for part, amount in totals.items() if type(part) is tuple]
            kinds = {type(summand) for summand in summands}
            if Fraction in kinds and Decimal in kinds:
                raise RecordError(
                    f"sum_total cannot add Fractions and Decimals in one group (here {summands!r}); use one of them"
                )
            with localcontext(EXACT):
                return sum(summands)

        return self.explode(parts).totals(result, "sum_total")

    def totals(self, result: Callable[[dict], Any], name: str) -> Any:
        """Reduce ``(key, part)`` records, whose multiplicity is that part's total, to ``(key, result)`` (the
        internal protocol: 004's in-place aggregates, here and in ``aggregate``).

        ``result`` returns None for no output, ``NULL`` for a NULL output.
        """

        def reduce_totals(values: Values) -> Values:
            value = result(dict(values))
            if value is None:
                return []
            return [(None if value is NULL else value, 1)]

        return self.reduction(reduce_totals, name)


def _positive(multiplicity: int) -> int:
    """``distinct``'s threshold: one copy of a record whose multiplicity is positive."""
    return 1 if multiplicity > 0 else 0


_SUMMANDS: dict[str, Callable[[int, int], Any]] = {
    "int": lambda amount, _: amount,
    "decimal": lambda digits, exponent: Decimal(digits).scaleb(exponent, EXACT),
    "fraction": lambda numerator, denominator: Fraction(numerator, denominator),
}
"""How ``sum_total`` reads a part's total back as a number: by kind, from the part's exponent or denominator."""


def _summand(value: Any, record: Any) -> tuple[tuple[str, str, int], int]:
    """``value`` as ``(part, int amount)``: the part is ``(SUM, kind, exponent or denominator)``."""
    if type(value) is int:
        return (SUM, "int", 0), value
    if isinstance(value, Decimal) and value.is_finite():
        exponent = value.as_tuple().exponent
        return (SUM, "decimal", exponent), int(value.scaleb(-exponent, EXACT))
    if isinstance(value, Fraction):
        return (SUM, "fraction", value.denominator), value.numerator
    raise _inexact(value, record)


def _inexact(value: Any, record: Any) -> RecordError:
    """The error for a value that SUM cannot add exactly."""
    return RecordError(
        f"sum_total adds exact numbers, but got {value!r} in {record!r}; use int, Fraction or "
        f"Decimal (for money, whole cents), or None for NULL"
    )


EXACT = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN, traps=[InvalidOperation, DivisionByZero, Overflow])
"""The decimal context sums are taken in, where adding never rounds: a sum stays exact and cancels exactly
when its values are retracted (the default context keeps 28 digits; Spark's DECIMAL has up to 38)."""


def exact_sum(total: Any, value: Any, multiplicity: int, record: Any) -> Any:
    """``total + value * multiplicity`` for an exact number ``value``, to be run in the ``EXACT`` context.

    Raises:
        RecordError: ``value`` is not an int, a finite Decimal or a Fraction, or a Fraction meets a Decimal.
    """
    if type(value) is not int and not (
        (isinstance(value, Decimal) and value.is_finite()) or isinstance(value, Fraction)
    ):
        raise _inexact(value, record)
    try:
        return total + value * multiplicity
    except TypeError:
        raise RecordError(
            f"sum cannot add Fractions and Decimals in one group (here {total!r} and {value!r}); use one of them"
        ) from None


class _Null:
    """SQL's NULL as an aggregate result, told apart from 'no output' inside ``totals``."""

    def __repr__(self) -> str:
        return "NULL"


NULL = _Null()
