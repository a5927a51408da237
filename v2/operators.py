"""Operators: the vertices of a dataflow graph.

An operator reads difference collections from its input edges and writes the
corresponding differences of its output to its one output edge, keeping
whatever state it needs (``join`` and ``reduce`` keep indexes) between calls.
The base classes own the reading and writing; a leaf operator says only how a
difference becomes an output difference.
Source: document 002, "v2: Constructing dataflow
graphs". Rust DD's operators are timely dataflow operators.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .collection import Collection, Multiplicity, Values
from .index import Index

if TYPE_CHECKING:
    from .graph import DifferenceStreamReader, DifferenceStreamWriter


class Operator:
    """A vertex with input readers and one output writer.

    Invariant: the i-th difference an operator sends is the change of its
    output caused by the i-th differences of its inputs.

    ``name`` is what built it (``map``, ``count``, ``debug out``...), set by
    the graph builder, so a picture of the graph can label the vertex.
    """

    name: str

    def __init__(self, inputs: list[DifferenceStreamReader], output: DifferenceStreamWriter) -> None:
        self.inputs = inputs
        self.output = output

    def run(self) -> None:
        """Consume what is queued on the inputs and send the resulting outputs."""
        raise NotImplementedError


class UnaryOperator(Operator):
    """An operator with one input: one output difference per input difference."""

    def run(self) -> None:
        for collection in self.inputs[0].drain():
            self.output.send_data(self.on_data(collection))

    def on_data(self, collection: Collection) -> Collection:
        raise NotImplementedError


class BinaryOperator(Operator):
    """An operator with two inputs, pairing their i-th differences.

    Both inputs must have sent their i-th difference before the i-th output
    can be computed, so a difference waits here until its partner arrives:
    the cost of a world with no versions.
    """

    def run(self) -> None:
        left, right = self.inputs
        while not left.is_empty() and not right.is_empty():
            self.output.send_data(self.on_data(next(left.drain()), next(right.drain())))

    def on_data(self, left: Collection, right: Collection) -> Collection:
        raise NotImplementedError


class LinearUnaryOperator(UnaryOperator):
    """Applies ``f`` to each difference; right for any ``f`` with ``f(a + b) == f(a) + f(b)``."""

    def __init__(self, inputs: list, output: DifferenceStreamWriter, f: Callable[[Collection], Collection]) -> None:
        super().__init__(inputs, output)
        self._f = f

    def on_data(self, collection: Collection) -> Collection:
        return self._f(collection)


class Debug(UnaryOperator):
    """Passes differences through unchanged, describing each to ``sink``."""

    def __init__(self, inputs: list, output: DifferenceStreamWriter, name: str, sink: Callable[[str], None]) -> None:
        super().__init__(inputs, output)
        self._name = name
        self._sink = sink

    def on_data(self, collection: Collection) -> Collection:
        self._sink(f"debug {self._name} data: collection: {collection}")
        return collection


class Concat(BinaryOperator):
    """The sum of two streams: the i-th output is the sum of the i-th inputs."""

    def on_data(self, left: Collection, right: Collection) -> Collection:
        return left.concat(right)


class Join(BinaryOperator):
    """``(key, (a, b))`` for matching keys, by the three-term expansion.

    Invariant: ``_before`` holds the indexes of everything received before the
    current pair of differences ``dA``, ``dB``, whose output is
    ``dA.join(B) + A.join(dB) + dA.join(dB)``.
    """

    def __init__(self, inputs: list, output: DifferenceStreamWriter) -> None:
        super().__init__(inputs, output)
        self._before = (Index(), Index())

    def on_data(self, left: Collection, right: Collection) -> Collection:
        delta_a = Index.from_collection(left, "join")
        delta_b = Index.from_collection(right, "join")
        before_a, before_b = self._before
        output = delta_a.join(before_b) + before_a.join(delta_b) + delta_a.join(delta_b)
        before_a.append(delta_a)
        before_b.append(delta_b)
        before_a.compact()
        before_b.compact()
        return Collection._trusted(output)


class Reduce(UnaryOperator):
    """``(key, output)`` for ``output`` in ``f(values of key)``; recomputes touched keys only.

    Invariant: ``_inputs`` holds the consolidated input so far and ``_outputs``
    the output sent so far, both indexed by key.
    """

    def __init__(
        self, inputs: list, output: DifferenceStreamWriter,
        f: Callable[[Values], Iterable[tuple[Any, Multiplicity]]],
    ) -> None:
        super().__init__(inputs, output)
        self._f = f
        self._inputs = Index()
        self._outputs = Index()

    def on_data(self, collection: Collection) -> Collection:
        delta = Index.from_collection(collection, "reduce")
        self._inputs.append(delta)
        self._inputs.compact()
        changes = Index()
        for key in delta.keys():
            values = self._inputs.get(key)
            for value, multiplicity in self._f(values) if values else ():
                changes.add_value(key, (value, multiplicity))
            for value, multiplicity in self._outputs.get(key):
                changes.add_value(key, (value, -multiplicity))
        changes.compact()
        self._outputs.append(changes)
        self._outputs.compact()
        return Collection._trusted(
            [((key, value), multiplicity) for key in changes.keys() for value, multiplicity in changes.get(key)]
        )
