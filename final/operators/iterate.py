"""The operators a loop is made of: ingress, enter, feedback and egress.

``iterate`` (graph.py) wires them: the input enters the loop at iteration 0
and is retracted at iteration 1, the body's output comes back one iteration
on, and leaves the loop with the iteration coordinate dropped.
Source: shared/seeds/002_74f1d5592741c2fb.txt, "v4: Multidimensional
versions" and the liveness section of "v5/vFinal".
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from ..collection import Collection, Update
from ..errors import IterationError
from ..order import Antichain, Version
from .base import UnaryOperator, finished

if TYPE_CHECKING:
    from ..graph import DifferenceStreamWriter


class Ingress(UnaryOperator):
    """Brings a stream into a loop: ``v`` becomes ``(v, 0)``, and is retracted at ``(v, 1)``.

    The loop's collection at iteration ``i`` must be ``f`` applied ``i`` times
    to the input, but the loop head also receives the body's output fed back.
    Entering the input at iteration 0 and taking it away at iteration 1 leaves
    exactly the fed-back ``f(...)`` from iteration 1 on.
    """

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self.output.send_data(version.extend(), collection)
        self.output.send_data(version.extend().increment(), collection.negate())

    def output_frontier(self, frontier: Antichain) -> Antichain:
        return frontier.extend()


class Enter(UnaryOperator):
    """Brings a stream from outside a loop into it unchanged at every iteration: ``v`` becomes ``(v, 0)``.

    Unlike ``Ingress`` nothing is retracted: a collection the loop body reads
    (``edges`` in reachability) is the same at every iteration. Rust DD's ``enter``.
    """

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self.output.send_data(version.extend(), collection)

    def output_frontier(self, frontier: Antichain) -> Antichain:
        return frontier.extend()


class Egress(UnaryOperator):
    """Takes the loop's output out of it: ``(v, i)`` becomes ``v``.

    The loop's output differences at every iteration of ``v`` add up, outside,
    to the fixed point at ``v``.
    """

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self.output.send_data(version.truncate(), collection)

    def output_frontier(self, frontier: Antichain) -> Antichain:
        return frontier.truncate()


class Feedback(UnaryOperator):
    """The loop's back edge: the body's output at ``(v, i)`` returns to the loop head at ``(v, i + 1)``.

    Each version is held until the frontier passes it, then sent consolidated,
    so every cycle through the loop has a consolidation on it and a difference
    that cancels out stops instead of circling forever.

    Frontier rule. The output frontier is the input frontier one iteration on,
    never moving backwards, except that an element ``e = (v, j)`` is dropped once the loop has
    provably converged on everything only ``e`` still allows: when, for
    ``k = j - 1 >= 1``, every finished version ``(w, k)`` at which the body's
    output changed is ``>=`` one of the other elements. Why that is sound:
    take any ``(u, j')`` that only ``e`` allows, with ``j' > k``. Every ``(w, k)``
    with ``w <= u`` is then allowed by no other element (else ``(u, j')``
    would be), so the body's output did not change there; the loop head's
    input at ``(w, k + 1)`` is that output fed back (the input's retraction
    only touches iteration 1, entered collections only iteration 0), so it
    did not change either; then the body sees at ``(w, k + 1)`` exactly the
    collections it saw at ``(w, k)`` for every ``w <= u``, and its output does
    not change at iteration ``k + 1``, nor, by the same step, at any later one.
    No external input can arrive there either: it would need a frontier
    element below ``u``. The rule looks at differences, not at how many
    rounds went by, so a version that converges slowly is never cut off.

    Invariant: ``_pending`` holds what arrived at unfinished versions;
    ``_changed[k]`` the outer versions ``w`` at which the output at a finished
    ``(w, k)`` was not empty. Simplification: ``_changed`` is never compacted.

    Raises:
        IterationError: a version needs more than ``max_iterations`` iterations.
    """

    def __init__(self, inputs: list, output: DifferenceStreamWriter, max_iterations: int) -> None:
        super().__init__(inputs, output)
        self._max_iterations = max_iterations
        self._pending: defaultdict[Version, list[Update]] = defaultdict(list)
        self._changed: defaultdict[int, set[Version]] = defaultdict(set)

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self._pending[version].extend(collection)

    def on_frontier(self, frontier: Antichain) -> None:
        for version in finished(self._pending, frontier):
            updates = list(Collection._trusted(self._pending.pop(version)).consolidate())
            if not updates:
                continue
            if version.coords[-1] + 1 > self._max_iterations:
                raise IterationError(
                    f"iterate did not converge at version {version.truncate()} within {self._max_iterations} "
                    f"iterations: iteration {version.coords[-1]} still changed {len(updates)} records. Check that "
                    f"the body converges (a distinct or a filter usually bounds it), or raise max_iterations"
                )
            self._changed[version.coords[-1]].add(version.truncate())
            self.send(version.increment(), updates)

    def output_frontier(self, frontier: Antichain) -> Antichain:
        advanced = Antichain(
            element.increment() for element in frontier.elements if not self._converged(element, frontier)
        )
        # A region found converged stays converged, but the input frontier that showed it may be
        # followed by one, still in flight from before, that no longer does: keep what was shown.
        return advanced.join(self.output.frontier)

    def _converged(self, element: Version, frontier: Antichain) -> bool:
        iteration = element.coords[-1] - 1
        if iteration < 1:
            return False
        others = [other for other in frontier.elements if other != element]
        return all(
            any(other.less_equal(Version((*outer.coords, iteration))) for other in others)
            for outer in self._changed.get(iteration, ())
        )
