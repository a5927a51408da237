"""The delta join: a multi-way equijoin that keeps no arrangement of any intermediate result (003).

A tree of binary joins keeps an index of every intermediate result; 003's
delta join keeps only arrangements of its inputs, one per key each is looked
up by, and turns each input's change into output by a plan of look-ups into
the others (``d_query/d_input = d_input ⋈ ...``). Source: document 003,
"Delta joins"; Materialize plans multi-way joins this way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..collection import Collection
from ..errors import GraphError
from ..order import Antichain, Version
from ..trace import Index
from .base import Operator, Place, StreamMethods, checked_stream

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

    always_waits = True  # its arrangements compact as versions finish

    def __init__(self, place: Place, plans: list[list[_Step]]) -> None:
        """A delta join running ``plans``, one per input (``_plan``: made when the join is recorded)."""
        super().__init__(place)
        self._plans = plans
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
            for other_version, values in arrangement.entries(key).items():
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


class DeltaJoinMethods(StreamMethods):
    """The stream method of the delta join: ``join_many``."""

    def join_many(self, others: list[Any], constraints: list[Constraint]) -> Any:
        """A multi-way equijoin of this stream (input 0) and ``others`` (inputs 1, 2, ...), as a delta join.

        ``constraints`` are ``(i, key_i, j, key_j)``: a combination needs
        ``key_i(r_i) == key_j(r_j)`` (``None`` never matches). The output holds
        ``(r_0, r_1, ...)`` tuples. No intermediate result is arranged (003);
        see ``DeltaJoin``.

        Raises:
            GraphError: some input is not connected to the others by constraints.
        """
        streams = [checked_stream(stream, "join_many") for stream in others]
        constraints = _checked_constraints(constraints, len(streams) + 1)
        plans = [_plan(start, len(streams) + 1, constraints) for start in range(len(streams) + 1)]
        return self.add_operator(DeltaJoin, "join_many", streams, arguments=(plans,))


def _checked_constraints(constraints: Any, inputs: int) -> list[Constraint]:
    """``join_many``'s constraints as a list, each ``(i, key_i, j, key_j)`` with inputs in range and callables.

    Raises:
        GraphError: naming the first constraint that is not.
    """
    if not isinstance(constraints, (list, tuple)):
        raise GraphError(f"join_many takes a list of constraints (i, key_i, j, key_j), not {constraints!r}")
    for constraint in constraints:
        if (
            not isinstance(constraint, tuple) or len(constraint) != 4
            or any(type(i) is not int or not 0 <= i < inputs for i in constraint[::2])
            or not all(callable(key) for key in constraint[1::2])
        ):
            raise GraphError(
                f"a join_many constraint is (i, key_i, j, key_j) with inputs i, j in 0..{inputs - 1} and key "
                f"functions, not {constraint!r}; e.g. (0, lambda r: r[0], 1, lambda r: r[0])"
            )
    return list(constraints)
