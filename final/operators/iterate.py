"""The operators a loop is made of: ingress, enter, feedback and egress.

``iterate`` (graph.py) wires them: the input enters the loop at iteration 0
and is retracted at iteration 1, the body's output comes back one iteration
on, and leaves the loop with the iteration coordinate dropped.
Source: document 002, "v4: Multidimensional
versions" and the liveness section of "v5/vFinal".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..collection import Collection
from ..errors import IterationError
from ..order import Antichain, Version, minimal
from .base import DataMessage, Holding, Operator, UnaryOperator
from .reduce import Consolidate

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
        entered = version.extend()
        self.forward(entered, collection)
        self.forward(entered.increment(), collection.negate())

    def output_frontier(self, frontier: Antichain) -> Antichain:
        return frontier.extend()


class Enter(UnaryOperator):
    """Brings a stream from outside a loop into it unchanged at every iteration: ``v`` becomes ``(v, 0)``.

    Unlike ``Ingress`` nothing is retracted: a collection the loop body reads
    (``edges`` in reachability) is the same at every iteration. Rust DD's ``enter``.
    """

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self.forward(version.extend(), collection)

    def output_frontier(self, frontier: Antichain) -> Antichain:
        return frontier.extend()


class Egress(UnaryOperator):
    """Takes the loop's output out of it: ``(v, i)`` becomes ``v``.

    The loop's output differences at every iteration of ``v`` add up, outside,
    to the fixed point at ``v``.
    """

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self.forward(version.truncate(), collection)

    def output_frontier(self, frontier: Antichain) -> Antichain:
        return frontier.truncate()


class Feedback(Consolidate):
    """The loop's back edge: the body's output at ``(v, i)`` returns to the loop head at ``(v, i + 1)``.

    A ``Consolidate`` one iteration on: each version is held until the
    frontier passes it, then sent consolidated, so every cycle through the
    loop has a consolidation on it and a difference that cancels out stops
    instead of circling forever.

    How a loop ends. The output frontier promises that nothing more will be
    sent at the versions it has passed. Everything the body will ever deliver
    here comes from something already in the loop or from outside it: data
    queued on the loop's edges, data its operators hold unsent
    (``Operator.holds``: a reduce's pending versions, say), and data the
    operators that bring collections into the loop (``Ingress``, ``Enter``)
    will still send, which their output frontiers bound. An operator only ever
    sends at versions ``>=`` the data that caused it, so those versions, cut to
    this loop's coordinates, bound what can still arrive here, and one
    iteration on, what can still be sent: that is the output frontier. When
    a version ``v`` has converged, nothing in the loop is at ``(v, _)`` any
    more, so the frontier jumps past all of ``v``'s iterations at once,
    instead of walking them one by one as v5's rule does; an iteration where
    nothing is held is skipped too. This is timely dataflow's progress
    tracking, with pointstamps counted by looking, for one loop.

    Invariant: ``_pending`` holds what arrived at unfinished versions.
    ``_holders`` are the operators of the loop that can deliver data here and
    keep data back (this one among them), ``_watched_queues`` the input
    queues of all that can deliver data here, ``_entries`` the operators
    bringing data into the loop (set by ``watch`` when the graph is finalized).

    Raises:
        IterationError: a version needs more than ``max_iterations`` iterations.
    """

    def __init__(self, inputs: list, output: DifferenceStreamWriter, max_iterations: int) -> None:
        super().__init__(inputs, output)
        self._max_iterations = max_iterations
        self.watch([self], [])

    def watch(self, inside: list[Operator], entries: list[Operator]) -> None:
        """Watch ``inside`` (the loop's operators upstream of this one, itself included) and ``entries``."""
        self._entries = entries
        self._holders = [operator for operator in inside if isinstance(operator, Holding)]
        self._watched_queues = [queue for operator in inside for queue in operator._queues]

    @property
    def entries(self) -> list[Operator]:
        """The operators that bring data into this loop from outside it (``Ingress``, ``Enter``)."""
        return list(self._entries)

    def on_frontier(self, frontier: Antichain) -> None:
        for version, updates in self._finished(frontier):
            if not updates:
                continue
            if version[-1] + 1 > self._max_iterations:
                raise IterationError(
                    f"iterate did not converge at version {version.truncate()} within {self._max_iterations} "
                    f"iterations: iteration {version[-1]} still changed {len(updates)} records. Check that "
                    f"the body converges (a distinct or a filter usually bounds it), or raise max_iterations"
                )
            self.send(version.increment(), updates)

    def output_frontier(self, frontier: Antichain) -> Antichain:
        return self._still_possible().increment()

    def _still_possible(self) -> Antichain:
        """A frontier for what can still arrive at this operator: see the class docstring."""
        dimension = len(self.output.like)
        possible = [version for entry in self._entries for version in entry.output.frontier.elements]
        for operator in self._holders:
            possible += operator.holds()
        for queue in self._watched_queues:
            if queue:
                possible += [message.version for message in queue if type(message) is DataMessage]
        # Versions of loops nested in this one have more coordinates: cut them to this loop's.
        return Antichain._of(minimal(
            version if len(version) == dimension else Version._of(version[:dimension]) for version in possible
        ))
