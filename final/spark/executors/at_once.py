"""A step's dataflow built once and run over one key's collections at once: ``final/``'s stream methods at one
version.

A keyed step on the executors (a join, DISTINCT, a set operation, a top-k,
a window) holds one key's input rows and must say how the step's output for
that key changes when they do. 000 gives the answer: a difference
collection's operators compute, at each version, the collection operator
of the collections at that version; so the output of a key at a version is
the step over the key's inputs at that version, and its change is that
output minus the one before.

``AtOnce`` is a stream whose methods are ``final/``'s own (every family of
``operators.STREAM_METHODS``), recorded against inputs given later: the
step is built from its logical plan by ``sql.lower``, the same function
that builds it into the driver's dataflow, once per worker; ``run`` then
evaluates that recording on a key's collections. An operator with an
in-place form runs its ``general`` one (004's reductions, which is what
``final.strategies`` falls back to); the primitives it bottoms out in run
on ``Collection``: a linear logic on the collection's updates, ``concat``,
``join`` and ``reduce``. A loop (``iterate``) has no meaning at one
version and is refused.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from types import SimpleNamespace
from typing import Any

from ...collection import Collection, Entry
from ...errors import GraphError
from ...operators import STREAM_METHODS, Concat, Consolidate, Debug, Join, LinearUnaryOperator, Reduce
from ...operators.base import Operator, StreamMethods
from ...order import Version

AT = Version(0)
"""The one version a linear logic is applied at: a logic that moves updates to another version (a temporal filter)
has no meaning here and is refused."""

Run = Callable[[dict[int, Collection]], Collection]
"""How a stream's collection is made from the inputs' (a run's memo: stream id -> its collection)."""


class AtOnce(*STREAM_METHODS):  # type: ignore[misc]
    """A stream of ``final/``'s methods whose collection is computed when ``run`` is given its inputs.

    Invariant: a stream's collection is computed at most once per ``run``,
    however many streams read it (``_collection``'s memo), as a dataflow
    computes each operator's output once for all its readers.
    """

    scope = SimpleNamespace(depth=0)
    """The scope every stream here is in: outside any loop (families compare scopes' depths)."""

    def __init__(self, make: Run, builder: AtOnceBuilder) -> None:
        self.make, self.builder = make, builder

    def add_operator(self, operator: type[Operator], name: str, others: Iterable[StreamMethods] = (),
                     scope: Any = None, output: Any = None, arguments: tuple = (), general: Any = None) -> AtOnce:
        """The operator's output over collections: a primitive run on ``Collection``, else its ``general`` form."""
        inputs: list[AtOnce] = [self, *others]  # type: ignore[list-item]
        if operator is LinearUnaryOperator:
            (logic,) = arguments
            return self._then(lambda memo: Collection.trusted(_linear(logic, self._collection(memo).updates, name)))
        if operator is Concat:
            return self._then(lambda memo: Collection.trusted(
                [entry for stream in inputs for entry in stream._collection(memo).updates]))
        if operator is Join:
            (other,) = others
            return self._then(lambda memo: self._collection(memo).join(other._collection(memo)))  # type: ignore[attr-defined]
        if operator is Reduce:
            (f,) = arguments
            return self._then(lambda memo: self._collection(memo).reduce(f))
        if operator is Consolidate:
            return self._then(lambda memo: self._collection(memo).consolidate())
        if operator is Debug:
            return self
        if general is not None:
            return general(self)
        raise GraphError(f"{name} has no meaning over one version's collections (it needs a dataflow's versions: "
                         f"a loop or a shared arrangement); keep this step on the driver's follow")

    def _then(self, make: Run) -> AtOnce:
        return AtOnce(make, self.builder)

    def _collection(self, memo: dict[int, Collection]) -> Collection:
        found = memo.get(id(self))
        if found is None:
            found = memo[id(self)] = self.make(memo)
        return found

    def with_arrangement(self, arrangement: Any) -> AtOnce:
        """An arrangement shares a stream's index between readers; over one collection there is nothing to
        share."""
        return self


def _linear(logic: Any, updates: list[Entry], name: str) -> list[Entry]:
    out: list[Entry] = []
    for version, produced in logic(AT, updates):
        if version != AT:
            raise GraphError(f"{name} moves updates to version {version}; over one version's collections there "
                             f"is no other version; keep this step on the driver's follow")
        out += produced
    return out


class AtOnceBuilder:
    """What ``sql.lower`` asks of a graph builder, for streams built ``AtOnce``: labels (nothing to label) and
    constants. ``input(i)`` is the stream of the ``i``-th collection ``run`` is given."""

    @contextlib.contextmanager
    def labelled(self, label: str) -> Iterator[None]:
        yield

    def constant(self, records: Iterable[Any], name: str | None = None) -> AtOnce:
        fixed = Collection([(record, 1) for record in records])
        return AtOnce(lambda memo: fixed, self)

    def input(self, position: int) -> AtOnce:
        return AtOnce(lambda memo: memo[-1 - position], self)


def run(stream: AtOnce, inputs: Sequence[Collection]) -> Collection:
    """``stream``'s collection when the builder's inputs are ``inputs``, in order."""
    memo: dict[int, Collection] = {-1 - position: collection for position, collection in enumerate(inputs)}
    return stream._collection(memo)
