"""Reductions: operators that need all of a key's values at a finished version.

Source: document 002, "v1" (reduce on touched keys),
"v3" (finished versions in order), "v5/vFinal" (the couch: corrections at
joins of versions), and document 004.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..collection import Collection, Multiplicity, Values
from ..errors import RecordError
from ..order import Antichain, Version
from ..trace import Index, add_multiplicity
from .base import Holding, Pending, UnaryOperator

if TYPE_CHECKING:
    from ..graph import DifferenceStreamWriter


class Reduce(Holding, UnaryOperator):
    """``(key, output)`` for ``output`` in ``f(values of key)``, one finished version at a time.

    ``f`` needs all of a key's values at a version, so nothing is sent at a
    version until the frontier has passed it; then the versions that finished
    are computed in version order, each on the keys that may have changed at it.

    With partially ordered versions a key's output can change at a version
    where its input did not: with input at ``(1, 0)`` and at ``(0, 1)``, the
    input at ``(1, 1)`` holds both, and ``distinct`` must emit ``(couch, -1)``
    there (002, "v5/vFinal"). The output can change only at joins of the
    versions at which the input changed, so each key keeps ``_times``, closed
    under join: new data at ``v`` makes ``v`` and ``v.join(t)`` for every kept
    ``t`` pending. A key's kept times are advanced by the frontier when it
    next gets data, just before they are joined: advancing changes none of
    those joins for a version the frontier still allows, and merges times the
    frontier has passed, so the set stays small. When versions are
    totally ordered (one coordinate) every join of two versions is one of
    them, so the closure adds nothing and ``_times`` is not kept.

    Invariant: ``_inputs`` holds every difference received; ``_outputs``
    every difference sent, or in a total order ``_current`` their sum (the
    output at every finished version); ``_pending`` maps each unfinished
    version to the keys whose output may change at it.
    """

    needs_pairs = True

    def __init__(
        self, inputs: list, output: DifferenceStreamWriter,
        f: Callable[[Values], Iterable[tuple[Any, Multiplicity]]],
    ) -> None:
        super().__init__(inputs, output)
        self._f = f
        self._inputs = Index()
        self._pending = Pending(output.like, set)
        self._totally_ordered = len(output.like) == 1
        if self._totally_ordered:
            self._current: dict[Any, dict[Any, Multiplicity]] = {}
            """key -> its output as sent so far: in a total order, the output at every finished version."""
        else:
            self._outputs = Index()
            self._times: defaultdict[Any, set[Version]] = defaultdict(set)

    def state_size(self) -> int:
        if self._totally_ordered:
            output = sum(len(values) for values in self._current.values())
        else:
            output = self._outputs.size() + sum(len(times) for times in self._times.values())
        return self._inputs.size() + output + self._pending.size()

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self._inputs.add_checked(version, collection._updates)
        keys = {record[0] for record, _ in collection._updates}
        if self._totally_ordered:
            self._pending.at(version).update(keys)
            return
        advance = self._frontier.advance
        for key in keys:
            times = {advance(time) for time in self._times[key]}
            new_times = {version, *(version.join(time) for time in times)}
            for time in new_times:
                self._pending.at(time).add(key)
            self._times[key] = times | new_times

    def on_frontier(self, frontier: Antichain) -> None:
        if self._totally_ordered:
            self._run_in_order(frontier)
        else:
            self._run_at_joins(frontier)

    def _run_in_order(self, frontier: Antichain) -> None:
        """Finished versions in order, each key's input merged up to it in place (``Index.accumulate``)."""
        current, accumulate = self._current, self._inputs.accumulate
        for version, keys in self._pending.pop_finished(frontier):
            updates: list = []
            for key in keys:
                output = current.get(key)
                changes = self._changes(accumulate(key, version), output, version, key)
                if not changes:
                    continue
                updates += [((key, value), multiplicity) for value, multiplicity in changes]
                if output is None:  # a key with no output yet: the changes are all of it
                    current[key] = dict(changes)
                    continue
                for value, multiplicity in changes:
                    add_multiplicity(output, value, multiplicity)
                if not output:
                    del current[key]
            self.send(version, updates)

    def _run_at_joins(self, frontier: Antichain) -> None:
        """Finished versions in order, each key's input and output reconstructed at it."""
        inputs, outputs = self._inputs, self._outputs
        touched: set = set()
        for version, keys in self._pending.pop_finished(frontier):
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


class Consolidate(Holding, UnaryOperator):
    """One consolidated difference per finished version, in version order.

    Invariant: ``_pending`` maps each unfinished version to what arrived at it.
    """

    def __init__(self, inputs: list, output: DifferenceStreamWriter) -> None:
        super().__init__(inputs, output)
        self._pending = Pending(output.like, list)

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self._pending.at(version).extend(collection)

    def on_frontier(self, frontier: Antichain) -> None:
        for version, updates in self._finished(frontier):
            self.send(version, updates)

    def _finished(self, frontier: Antichain) -> list[tuple[Version, list]]:
        """The versions ``frontier`` has passed, in order, each with what arrived at it consolidated."""
        return [
            (version, list(Collection._trusted(kept).consolidate()))
            for version, kept in self._pending.pop_finished(frontier)
        ]
