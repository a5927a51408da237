"""Operators that handle each update on its own: linear ones, and concatenation.

A linear operator satisfies ``f(a + b) == f(a) + f(b)``, so it can act on
each update ``(record, version, multiplicity)`` alone and never waits for a
version to finish.
Source: document 000 ("Generalizing linear
operators"), document 002, "v2".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..collection import Collection
from ..order import Antichain, Version
from .base import BinaryOperator, Logic, UnaryOperator

if TYPE_CHECKING:
    from ..graph import DifferenceStreamWriter


class LinearUnaryOperator(UnaryOperator):
    """Applies ``logic`` to each difference as it arrives.

    Right for any logic that is linear, ``logic(a + b) == logic(a) + logic(b)``,
    and never moves an update to a version before its own (it joins versions),
    so the output frontier is the input's. Linear operators that follow it
    are fused into it (``Operator.absorb``).
    """

    kind = "linear"

    def __init__(self, inputs: list, output: DifferenceStreamWriter, logic: Logic) -> None:
        super().__init__(inputs, output)
        self._logic = logic

    @property
    def fused(self) -> int:
        """How many linear operators this one stands for."""
        return 1 + self.absorbed

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        for output_version, updates in self.applied(self._logic, version, collection._updates):
            self.send(output_version, updates)


class Debug(UnaryOperator):
    """Passes messages through unchanged, describing each to ``sink``."""

    def __init__(self, inputs: list, output: DifferenceStreamWriter, name: str, sink: Callable[[str], None]) -> None:
        super().__init__(inputs, output)
        self._debug_name = name
        self._sink = sink

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self._sink(f"debug {self._debug_name} data: version: {version} collection: {collection}")
        self.forward(version, collection)

    def on_frontier(self, frontier: Antichain) -> None:
        self._sink(f"debug {self._debug_name} notification: frontier {frontier}")


class Concat(BinaryOperator):
    """The sum of two streams: every difference is forwarded at its version."""

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self.forward(version, collection)
