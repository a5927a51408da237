"""Joins: ``(key, (a, b))`` for records with matching keys, at the lattice join of their versions.

Source: shared/seeds/002_74f1d5592741c2fb.txt, "v1" (the join expansion),
"v3" and "v5/vFinal" (versions), and shared/seeds/003_8a1a68ac9bab78a7.txt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..collection import Collection
from ..order import Antichain, Version
from ..trace import Index
from .base import BinaryOperator

if TYPE_CHECKING:
    from ..graph import DifferenceStreamWriter


class Join(BinaryOperator):
    """``(key, (a, b))`` for matching keys, each at the join of the two versions.

    A difference arriving on one side is joined with everything the other
    side has indexed, then indexed itself, so each pair of records meets
    exactly once, whatever order the differences arrive in.
    Invariant: ``_indexes[side]`` holds every difference received on that side.
    """

    def __init__(self, inputs: list, output: DifferenceStreamWriter) -> None:
        super().__init__(inputs, output)
        self._indexes = (Index(), Index())

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        delta = Index.from_collection(version, collection, "join")
        mine, theirs = self._indexes[side], self._indexes[1 - side]
        output = delta.join(theirs) if side == 0 else theirs.join(delta)
        for output_version, updates in output.items():
            self.send(output_version, updates)
        mine.append(delta)

    def on_frontier(self, frontier: Antichain) -> None:
        for index in self._indexes:
            index.compact(frontier)
