"""Operators that handle each update on its own: linear ones, and concatenation.

A linear operator satisfies ``f(a + b) == f(a) + f(b)``, so it can act on
each update ``(record, version, multiplicity)`` alone and never waits for a
version to finish.
Source: shared/seeds/000_60294c000a3077be.txt ("Generalizing linear
operators"), shared/seeds/002_74f1d5592741c2fb.txt, "v2".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from ..collection import Collection, Update
from ..order import Antichain, Version
from .base import BinaryOperator, UnaryOperator

if TYPE_CHECKING:
    from ..graph import DifferenceStreamWriter


Logic = Callable[[Version, list[Update]], Iterable[tuple[Version, list[Update]]]]
"""A linear operator's work on one difference: the updates at a version become updates at versions.

Every linear operator is this, for some logic (000, "All of the linear
operators"): ``map``, ``filter``, ``flat_map`` and ``negate`` keep the version;
``explode`` multiplies multiplicities; ``join_function`` and temporal filters
move updates to the lattice join of their version and one the logic names.
A logic must not mutate the list it is given: other readers share it."""


class LinearUnaryOperator(UnaryOperator):
    """Applies ``logic`` to each difference as it arrives.

    Right for any logic that is linear, ``logic(a + b) == logic(a) + logic(b)``,
    and never moves an update to a version before its own (it joins versions),
    so the output frontier is the input's.
    Invariant: ``_logic`` is the composition of the logics of every operator
    fused into this one, in order.
    """

    def __init__(self, inputs: list, output: DifferenceStreamWriter, logic: Logic) -> None:
        super().__init__(inputs, output)
        self._logic = logic
        self.fused = 1
        """How many linear operators this one stands for."""

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        for output_version, updates in self._logic(version, collection._updates):
            self.send(output_version, updates)

    def absorb(self, following: LinearUnaryOperator) -> None:
        """Take over ``following``, which reads only this operator's output: one operator, same results.

        000, "Fusing logic": applying two linear logics in turn is one linear
        logic, so the intermediate stream need never be built.
        """
        first, then = self._logic, following._logic

        def followed_by(version: Version, updates: list[Update]) -> Iterable[tuple[Version, list[Update]]]:
            for middle_version, middle in first(version, updates):
                yield from then(middle_version, middle)

        self._logic = followed_by
        self.output = following.output
        self.fused += following.fused


class Debug(UnaryOperator):
    """Passes messages through unchanged, describing each to ``sink``."""

    def __init__(self, inputs: list, output: DifferenceStreamWriter, name: str, sink: Callable[[str], None]) -> None:
        super().__init__(inputs, output)
        self._name = name
        self._sink = sink

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self._sink(f"debug {self._name} data: version: {version} collection: {collection}")
        self.output._send(version, collection)

    def on_frontier(self, frontier: Antichain) -> None:
        self._sink(f"debug {self._name} notification: frontier {frontier}")


class Concat(BinaryOperator):
    """The sum of two streams: every difference is forwarded at its version."""

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self.output._send(version, collection)
