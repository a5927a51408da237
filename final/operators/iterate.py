"""Loops: ``iterate``, and the operators a loop is made of: ingress, enter, feedback and egress.

``iterate(f)`` nests a scope whose versions carry one more coordinate, the
iteration: the input enters the loop at iteration 0 and is retracted at
iteration 1, the body's output comes back one iteration on, and leaves the
loop with the iteration coordinate dropped. Streams from outside the loop
that the body reads enter it unchanged at every iteration. For the progress
tracker these are the operators whose summaries change versions (extend,
increment, truncate), so a loop ends by the same rule as everything else:
when nothing in it can still be at a version. Source: document 002, "v4:
Multidimensional versions" and the liveness section of "v5/vFinal".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..collection import MAX_ITERATIONS, Collection
from ..errors import GraphError, IterationError
from ..order import Antichain, Version
from .base import Operator, Pending, Place, StreamMethods, checked_function
from .reduce import Consolidate


class Ingress(Operator):
    """Brings a stream into a loop: ``v`` becomes ``(v, 0)``, and is retracted at ``(v, 1)``.

    The loop's collection at iteration ``i`` must be ``f`` applied ``i`` times
    to the input, but the loop head also receives the body's output fed back.
    Entering the input at iteration 0 and taking it away at iteration 1 leaves
    exactly the fed-back ``f(...)`` from iteration 1 on.
    """

    summary = "extend"

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        entered = version.extend()
        self.forward(entered, collection)
        self.forward(entered.increment(), collection.negate())


class Enter(Operator):
    """Brings a stream from outside a loop into it unchanged at every iteration: ``v`` becomes ``(v, 0)``.

    Unlike ``Ingress`` nothing is retracted: a collection the loop body reads
    (``edges`` in reachability) is the same at every iteration. Rust DD's ``enter``.
    """

    summary = "extend"

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self.forward(version.extend(), collection)


class Egress(Operator):
    """Takes the loop's output out of it: ``(v, i)`` becomes ``v``.

    The loop's output differences at every iteration of ``v`` add up, outside,
    to the fixed point at ``v``.
    """

    summary = "truncate"

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self.forward(version.truncate(), collection)


class Feedback(Consolidate):
    """The loop's back edge: the body's output at ``(v, i)`` returns to the loop head at ``(v, i + 1)``.

    A ``Consolidate`` one iteration on: each version is held until the
    frontier passes it, then sent consolidated, so every cycle through the
    loop has a consolidation on it and a difference that cancels out stops
    instead of circling forever. What it holds back for ``(v, i)`` it will
    send at ``(v, i + 1)``, so that is where its capability is: around the
    loop it holds back the body from ``(v, i + 1)`` on, never its own
    ``(v, i)``.

    How a loop ends is no concern of its own: its input frontier, from the
    progress tracker, passes ``(v, i)`` once nothing in the loop (a message
    queued, a version an operator holds back, this one's included) nor
    entering it can still reach ``(v, i)``. When nothing in the loop is at
    ``(v, _)`` any more, the frontier jumps past all of ``v``'s iterations at
    once. The tracker counts what v5's ``Feedback`` reasons about, for every
    loop, nested ones too.

    Raises:
        IterationError: a version needs more than ``max_iterations`` iterations.
    """

    summary = "increment"

    def __init__(self, place: Place, max_iterations: int) -> None:
        super().__init__(place)
        self.pending = Pending(self, list, capability=Version.increment)
        self._max_iterations = max_iterations

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


class IterateMethods(StreamMethods):
    """The stream method of loops: ``iterate``."""

    def iterate(self, f: Callable[[Any], Any], max_iterations: int = MAX_ITERATIONS) -> Any:
        """The fixed point of ``f`` from this stream, kept up to date as the stream changes.

        Builds a nested scope whose versions are ``(version, iteration)``: the
        input enters at iteration 0 and is retracted at iteration 1
        (``Ingress``), joins what ``Feedback`` brings back from the body's
        previous iteration (``concat``), runs through ``f``, and leaves the
        loop with the iteration dropped (``Egress``). So the loop's collection
        at ``(v, i)`` is ``f`` applied ``i`` times to the input at ``v``. ``f``
        may use streams from outside the loop; they are entered into it.

        Raises:
            GraphError: ``f`` is not a function, ``max_iterations`` is not a
                positive int, or ``f`` does not return a stream.
            IterationError: (while stepping) a version needs more than
                ``max_iterations`` iterations.
        """
        checked_function(f, "iterate")
        if type(max_iterations) is not int or max_iterations < 1:
            raise GraphError(f"max_iterations is a positive int, not {max_iterations!r}; e.g. max_iterations=100")
        scope = self.builder.new_scope(self.scope)
        entered = self.add_operator(Ingress, "ingress", scope=scope)
        feedback = self.stream_of(self.builder.new_writer(scope), scope)
        result = f(entered.concat(feedback))
        if not isinstance(result, StreamMethods):
            raise GraphError(f"the body of iterate must return a stream, not {type(result).__name__}: {result!r}")
        result = result.enter(scope)
        result.add_operator(Feedback, "feedback", output=feedback.writer, arguments=(max_iterations,))
        egress = result.add_operator(Egress, "egress", scope=self.scope)
        scope.closed = True
        return egress
