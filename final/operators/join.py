"""Joins: ``(key, (a, b))`` for records with matching keys, at the lattice join of their versions.

Source: document 002, "v1" (the join expansion),
"v3" and "v5/vFinal" (versions), and document 003.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..collection import Collection
from ..errors import GraphError
from ..order import Antichain, Version
from ..trace import Arrangement, Index
from .base import BinaryOperator, Holding, Operator, Pending

if TYPE_CHECKING:
    from ..graph import DifferenceStreamWriter


class _OwnIndex:
    """A join side that indexes its own input."""

    def __init__(self) -> None:
        self.index = Index()

    def delta(self, version: Version, collection: Collection) -> Index:
        # The join checked the records were pairs before handling them (``Operator.needs_pairs``).
        return Index.of_checked(version, collection._updates)

    def parts(self) -> list[Index]:
        return [self.index]

    def taken_in(self, delta: Index) -> None:
        self.index.append(delta)

    def compact(self, frontier: Antichain) -> None:
        self.index.compact(frontier)


class _SharedArrangement:
    """A join side that reads an ``Arrangement`` made upstream, sharing it with other readers."""

    def __init__(self, arrangement: Arrangement) -> None:
        self.arrangement = arrangement
        self.reader = arrangement.new_reader()

    def delta(self, version: Version, collection: Collection) -> Index:
        # The arranging operator indexed this message already: take its batch instead of indexing again.
        return self.arrangement.batch(self.reader)

    def parts(self) -> list[Index]:
        # Exactly the batches this side has taken in: ``delta`` moved its position past each as it came.
        return self.arrangement.parts(self.reader)

    def taken_in(self, delta: Index) -> None:
        """Nothing to do: moving past the batch in ``delta`` took it in."""

    def compact(self, frontier: Antichain) -> None:
        self.arrangement.allow_compaction(self.reader, frontier)


class Join(BinaryOperator):
    """``(key, (a, b))`` for matching keys, each at the join of the two versions.

    A difference arriving on one side is joined with everything the other
    side has taken in so far, then taken in itself, so each pair of records
    meets exactly once, whatever order the differences arrive in. A side reads
    either its own index or a shared ``Arrangement`` of an arranged stream
    (003, 'Shared Arrangements'), in which case it builds no index at all.
    Invariant: each side's ``parts()`` hold exactly the differences received on that side.
    """

    def __init__(
        self, inputs: list, output: DifferenceStreamWriter, arrangements: tuple[Arrangement | None, ...] = (None, None)
    ) -> None:
        super().__init__(inputs, output)
        self._sides = tuple(_SharedArrangement(a) if a is not None else _OwnIndex() for a in arrangements)
        # A side read through a shared arrangement was checked by the operator that arranged it.
        self.needs_pairs = any(arrangement is None for arrangement in arrangements)

    def indexes(self, side: int) -> list[Index]:
        """The indexes that together hold what input ``side`` has sent so far (its own, or a shared
        arrangement's), read-only."""
        return self._sides[side].parts()

    @property
    def arrangements(self) -> tuple[Arrangement | None, Arrangement | None]:
        """The shared arrangement each side reads, or None for a side that indexes its own input."""
        return tuple(getattr(side, "arrangement", None) for side in self._sides)

    def state_size(self) -> int:
        return sum(part.size() for side in self._sides if isinstance(side, _OwnIndex) for part in side.parts())

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        mine, theirs = self._sides[side], self._sides[1 - side]
        delta = mine.delta(version, collection)
        for part in theirs.parts():
            output = delta.join(part) if side == 0 else part.join(delta)
            for output_version, updates in output.items():
                self.send(output_version, updates)
        mine.taken_in(delta)

    def on_frontier(self, frontier: Antichain) -> None:
        for side in self._sides:
            side.compact(frontier)


class HalfJoin(Holding, BinaryOperator):
    """Each difference of the stream (input 0) joined with the other input as it stands at that version.

    003's ``half_join``: 'an operator that responds to records in one input
    by look-ups into a second, and which does not respond to changes to the
    second input'. Each stream update ``((key, a), t, m)`` becomes
    ``((key, (a, b)), t, m * m_b)`` for every ``(key, b)`` the other input
    holds, accumulated, at ``t``. A stream update waits until the other
    input's frontier has passed ``t``, so that look-up is complete. The other
    input is read through its shared arrangement when it has one.
    Invariant: ``_pending`` holds stream updates whose look-up is not complete yet.
    """

    needs_pairs = True
    kind = "half_join"

    def __init__(self, inputs: list, output: DifferenceStreamWriter, arrangement: Arrangement | None = None) -> None:
        super().__init__(inputs, output)
        self._other = _SharedArrangement(arrangement) if arrangement is not None else _OwnIndex()
        self._pending = Pending(output.like, list)

    def state_size(self) -> int:
        own = self._other.index.size() if isinstance(self._other, _OwnIndex) else 0
        return own + super().state_size()

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        if side == 0:
            self._pending.at(version).extend(collection)
        else:
            self._other.taken_in(self._other.delta(version, collection))

    def on_frontier(self, frontier: Antichain) -> None:
        other_frontier = self._input_frontiers[1]
        for version, kept in self._pending.pop_finished(other_frontier):
            delta = Index.of_checked(version, kept)
            updates = []
            for key in delta.keys():
                matches: dict = {}
                for part in self._other.parts():
                    for value, multiplicity in part.reconstruct_at(key, version):
                        matches[value] = matches.get(value, 0) + multiplicity
                for value, multiplicity in delta.reconstruct_at(key, version):
                    updates += [((key, (value, other)), multiplicity * m) for other, m in matches.items() if m]
            self.send(version, updates)
        self._other.compact(frontier)


class Arrange(Operator):
    """Builds a shared ``Arrangement`` of its input and passes every message on, one batch each.

    Readers of the arranged stream (joins) take the batches from the
    arrangement in the order the messages reach them.
    """

    needs_pairs = True

    def __init__(self, inputs: list, output: DifferenceStreamWriter, arrangement: Arrangement) -> None:
        super().__init__(inputs, output)
        self.arrangement = arrangement
        # The arranging operator is a reader too: always at the end, so it holds no batch back,
        # and its input frontier bounds compaction while the arrangement has no other reader.
        self._reader = arrangement.new_reader()

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self.arrangement.append(Index.of_checked(version, collection._updates))
        self.arrangement.batch(self._reader)
        self.forward(version, collection)

    def on_frontier(self, frontier: Antichain) -> None:
        self.arrangement.allow_compaction(self._reader, frontier)

    def state_size(self) -> int:
        return self.arrangement.size()


Constraint = tuple[int, Callable[[Any], Any], int, Callable[[Any], Any]]
"""``(i, key_i, j, key_j)``: records of inputs ``i`` and ``j`` match when ``key_i(r_i) == key_j(r_j)``."""


@dataclass(frozen=True)
class _Step:
    """One look-up of a plan: bind input ``target`` through the arrangement keyed by ``target_key``,
    with the key taken from the already bound input ``source``; then check ``checks``."""

    target: int
    source: int
    source_key: Callable[[Any], Any]
    target_key: Callable[[Any], Any]
    checks: tuple[Constraint, ...]


class DeltaJoin(Operator):
    """A multi-way equijoin that keeps no arrangement of any intermediate result (003, 'delta joins').

    The output holds a tuple ``(r_0, ..., r_n-1)``, one record per input, for
    every combination meeting all constraints, at the lattice join of the
    records' versions, with the product of their multiplicities. Keys that
    are ``None`` never match (SQL's NULL).

    Rather than a tree of binary joins, each input has its own plan, 003's
    ``d_query/d_input = d_input ⋈ ...``: it visits the other inputs in an
    order where each is reached through a constraint with one already bound,
    looking each up in an arrangement of that input by that constraint's key.
    A difference is run through its input's plan against what the other
    inputs have sent so far, then added to its own input's arrangements, so
    each combination is counted once, when its last record arrives, whatever
    the order of arrival. The arrangements are of the inputs only: for 003's
    four-way enrichment, six of them, each by a key an input is looked up by.

    Invariant: ``_arrangements[(j, key)]`` indexes every record received on
    input ``j`` by ``key(record)``.
    """

    kind = "join_many"

    def __init__(self, inputs: list, output: DifferenceStreamWriter, constraints: list[Constraint]) -> None:
        super().__init__(inputs, output)
        self._plans = [_plan(start, len(inputs), constraints) for start in range(len(inputs))]
        self._arrangements: dict[tuple[int, Callable], Index] = {
            (step.target, step.target_key): Index() for plan in self._plans for step in plan
        }

    @property
    def arranged_inputs(self) -> list[int]:
        """For each arrangement it keeps, the input it indexes (an input looked up by two keys is there twice)."""
        return sorted(target for target, _ in self._arrangements)

    def state_size(self) -> int:
        return sum(arrangement.size() for arrangement in self._arrangements.values())

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        updates = [(record, multiplicity) for record, multiplicity in collection.consolidate()]
        partials = [({side: record}, version, multiplicity) for record, multiplicity in updates]
        for step in self._plans[side]:
            partials = list(self._extend(partials, step))
        by_version: dict[Version, list] = {}
        for bound, joined, multiplicity in partials:
            record = tuple(bound[i] for i in range(len(self.inputs)))
            by_version.setdefault(joined, []).append((record, multiplicity))
        for output_version, output in by_version.items():
            self.send(output_version, output)
        for (target, key), arrangement in self._arrangements.items():
            if target == side:
                for record, multiplicity in updates:
                    if key(record) is not None:
                        arrangement.add_value(key(record), version, (record, multiplicity))

    def _extend(self, partials: list, step: _Step) -> Any:
        arrangement = self._arrangements[(step.target, step.target_key)]
        for bound, joined, multiplicity in partials:
            key = step.source_key(bound[step.source])
            if key is None:
                continue
            for other_version, values in arrangement._values.get(key, {}).items():
                for record, other_multiplicity in values.items():
                    extended = {**bound, step.target: record}
                    if all(_equal(left(extended[i]), right(extended[j])) for i, left, j, right in step.checks):
                        yield extended, joined.join(other_version), multiplicity * other_multiplicity

    def on_frontier(self, frontier: Antichain) -> None:
        for arrangement in self._arrangements.values():
            arrangement.compact(frontier)


def _plan(start: int, inputs: int, constraints: list[Constraint]) -> list[_Step]:
    """The order in which a difference on input ``start`` binds the other inputs, breadth first."""
    bound, steps, used = {start}, [], set()
    while len(bound) < inputs:
        for index, (i, key_i, j, key_j) in enumerate(constraints):
            if index in used or (i in bound) == (j in bound):
                continue
            source, source_key, target, target_key = (i, key_i, j, key_j) if i in bound else (j, key_j, i, key_i)
            used.add(index)
            checks = tuple(
                constraint for other, constraint in enumerate(constraints)
                if other not in used and {constraint[0], constraint[2]} <= bound | {target}
            )
            used.update(other for other, constraint in enumerate(constraints) if constraint in checks)
            steps.append(_Step(target, source, source_key, target_key, checks))
            bound.add(target)
            break
        else:
            raise GraphError(
                f"join_many needs every input connected to input {start} by constraints; inputs "
                f"{sorted(set(range(inputs)) - bound)} are not. Add a constraint (i, key_i, j, key_j) for them"
            )
    return steps


def _equal(left: Any, right: Any) -> bool:
    """SQL equality of keys: NULL (``None``) equals nothing, itself included."""
    return left is not None and left == right
