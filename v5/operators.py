"""Operators: the vertices of a dataflow graph, and the messages on its edges.

An operator reads messages from its input edges and writes to its one output
edge, keeping whatever state it needs (``join`` and ``reduce`` keep indexes)
between calls. A message is a difference collection at a version, or a
frontier: the sender's promise that versions before it are finished. The base
class owns reading, dispatching and frontiers (an operator's output frontier is
the meet of its input frontiers); a leaf operator says only what data becomes,
and what to do when versions finish.
Source: document 002, "v2: Constructing dataflow
graphs", "v3: Versions and frontiers" and "v4: Multidimensional versions"
(ingress, feedback and egress, the operators ``iterate`` is made of). Rust
DD's operators are timely dataflow operators; a frontier message stands in for
timely's progress tracking.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .collection import Collection, Multiplicity, Update, Values
from .errors import IterationError
from .index import Index
from .order import Antichain, Version

if TYPE_CHECKING:
    from .graph import DifferenceStreamReader, DifferenceStreamWriter


@dataclass(frozen=True)
class DataMessage:
    """A difference collection at a version."""

    version: Version
    collection: Collection


@dataclass(frozen=True)
class FrontierMessage:
    """The sender will send no more data at versions before ``frontier``."""

    frontier: Antichain


class Operator:
    """A vertex with input readers and one output writer.

    Invariant: the output frontier is ``output_frontier`` of the meet of the
    input frontiers, and data at a version is sent before the output frontier
    passes that version.

    ``name`` is what built it (``map``, ``count``, ``debug out``...), set by
    the graph builder, so a picture of the graph can label the vertex.
    """

    name: str

    def __init__(self, inputs: list[DifferenceStreamReader], output: DifferenceStreamWriter) -> None:
        self.inputs = inputs
        self.output = output
        # The graph is not running yet: each input is at the frontier its edge starts at.
        self._input_frontiers = [reader.frontier for reader in inputs]
        self._frontier = self._meet_of_inputs()

    def run(self) -> None:
        """Consume what is queued on the inputs and send the resulting outputs."""
        for side, reader in enumerate(self.inputs):
            for message in reader.drain():
                if isinstance(message, DataMessage):
                    self.on_data(side, message.version, message.collection)
                else:
                    self._on_input_frontier(side, message.frontier)

    def _meet_of_inputs(self) -> Antichain:
        frontier = self._input_frontiers[0]
        for input_frontier in self._input_frontiers[1:]:
            frontier = frontier.meet(input_frontier)
        return frontier

    def _on_input_frontier(self, side: int, frontier: Antichain) -> None:
        self._input_frontiers[side] = frontier
        frontier = self._meet_of_inputs()
        if frontier != self._frontier:
            self._frontier = frontier
            self.on_frontier(frontier)
            output_frontier = self.output_frontier(frontier)
            if output_frontier != self.output.frontier:
                self.output.send_frontier(output_frontier)

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        """Handle a difference collection arriving on input ``side`` at ``version``."""
        raise NotImplementedError

    def on_frontier(self, frontier: Antichain) -> None:
        """The input frontiers have advanced to ``frontier``: versions before it are finished."""

    def output_frontier(self, frontier: Antichain) -> Antichain:
        """The output frontier when the inputs' is ``frontier``: the same, unless versions change shape."""
        return frontier

    def send(self, version: Version, updates: list[Update]) -> None:
        """Send ``updates`` at ``version`` unless there are none."""
        if updates:
            self.output.send_data(version, Collection._trusted(updates))


class UnaryOperator(Operator):
    """An operator with one input."""


class BinaryOperator(Operator):
    """An operator with two inputs.

    With versions, a difference no longer waits for its partner from the other
    input: each is handled as it arrives, labelled with its version.
    """


class LinearUnaryOperator(UnaryOperator):
    """Applies ``f`` to each difference; right for any ``f`` with ``f(a + b) == f(a) + f(b)``."""

    def __init__(self, inputs: list, output: DifferenceStreamWriter, f: Callable[[Collection], Collection]) -> None:
        super().__init__(inputs, output)
        self._f = f

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self.send(version, list(self._f(collection)))


class Debug(UnaryOperator):
    """Passes messages through unchanged, describing each to ``sink``."""

    def __init__(self, inputs: list, output: DifferenceStreamWriter, name: str, sink: Callable[[str], None]) -> None:
        super().__init__(inputs, output)
        self._name = name
        self._sink = sink

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self._sink(f"debug {self._name} data: version: {version} collection: {collection}")
        self.output.send_data(version, collection)

    def on_frontier(self, frontier: Antichain) -> None:
        self._sink(f"debug {self._name} notification: frontier {frontier}")


class Concat(BinaryOperator):
    """The sum of two streams: every difference is forwarded at its version."""

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self.output.send_data(version, collection)


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


class Reduce(UnaryOperator):
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
    ``t`` pending. (Advancing kept times by the frontier does not change those
    joins for any version the frontier still allows.)

    Invariant: ``_inputs`` holds every difference received and ``_outputs``
    every difference sent; ``_pending`` maps each unfinished version to the
    keys whose output may change at it.
    """

    def __init__(
        self, inputs: list, output: DifferenceStreamWriter,
        f: Callable[[Values], Iterable[tuple[Any, Multiplicity]]],
    ) -> None:
        super().__init__(inputs, output)
        self._f = f
        self._inputs = Index()
        self._outputs = Index()
        self._pending: defaultdict[Version, set] = defaultdict(set)
        self._times: defaultdict[Any, set[Version]] = defaultdict(set)

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        delta = Index.from_collection(version, collection, "reduce")
        self._inputs.append(delta)
        for key in delta.keys():
            times = self._times[key]
            new_times = {version} | {version.join(time) for time in times}
            for time in new_times:
                self._pending[time].add(key)
            times |= new_times

    def on_frontier(self, frontier: Antichain) -> None:
        finished = sorted((v for v in self._pending if not frontier.less_equal_version(v)), key=Version.sort_key)
        touched = set()
        for version in finished:
            changes = Index()
            keys = self._pending.pop(version)
            touched |= keys
            for key in keys:
                values = self._inputs.reconstruct_at(key, version)
                for value, multiplicity in self._f(values) if values else ():
                    changes.add_value(key, version, (value, multiplicity))
                for value, multiplicity in self._outputs.reconstruct_at(key, version):
                    changes.add_value(key, version, (value, -multiplicity))
            changes.compact(Antichain([version]))
            self._outputs.append(changes)
            self.send(version, [((key, value), multiplicity) for key in changes.keys()
                                for value, multiplicity in changes.reconstruct_at(key, version)])
        self._inputs.compact(frontier)
        self._outputs.compact(frontier)
        for key in touched:
            self._times[key] = {time.advance_by(frontier) for time in self._times[key]}


class Consolidate(UnaryOperator):
    """One consolidated difference per finished version, in version order.

    Invariant: ``_pending`` maps each unfinished version to what arrived at it.
    """

    def __init__(self, inputs: list, output: DifferenceStreamWriter) -> None:
        super().__init__(inputs, output)
        self._pending: defaultdict[Version, list[Update]] = defaultdict(list)

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self._pending[version].extend(collection)

    def on_frontier(self, frontier: Antichain) -> None:
        finished = sorted((v for v in self._pending if not frontier.less_equal_version(v)), key=Version.sort_key)
        for version in finished:
            self.send(version, list(Collection._trusted(self._pending.pop(version)).consolidate()))


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
        finished = sorted((v for v in self._pending if not frontier.less_equal_version(v)), key=Version.sort_key)
        for version in finished:
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
