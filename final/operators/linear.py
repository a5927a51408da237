"""Linear operators, concatenation and ``debug``: each difference handled on its own, as it arrives.

A linear operator satisfies ``f(a + b) == f(a) + f(b)``, so it can act on
each update ``(record, version, multiplicity)`` alone and never waits for a
version to finish: it holds no capability, and costs nothing when versions
finish. Every one of them is a ``Logic`` (000, "All of the linear
operators"): ``map``, ``filter``, ``flat_map`` and ``negate`` keep an update's
version, ``explode`` multiplies multiplicities, ``join_function`` (and the
temporal filter built on it) joins its version with others in the lattice.
Compiling the graph fuses them into the operators next to them
(``final.fusion``). Source: document 000 ("Generalizing linear operators"),
document 002, "v2".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from operator import itemgetter
from typing import Any

from ..collection import Collection, Entry, Multiplicity, Record
from ..errors import RecordError
from ..logic import Logic, apply_logic
from ..order import Antichain, Version, as_version
from .base import Operator, Place, StreamMethods, checked_function, checked_stream


class LinearUnaryOperator(Operator):
    """Applies ``logic`` to each difference as it arrives.

    Right for any logic that is linear, ``logic(a + b) == logic(a) + logic(b)``,
    and never moves an update to a version before its own (it joins
    versions): its summary is the identity.
    """

    def __init__(self, place: Place, logic: Logic) -> None:
        super().__init__(place)
        self.logic = logic

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        for output_version, updates in apply_logic(self.logic, version, collection.updates, self):
            self.send(output_version, updates)


class Concat(Operator):
    """The sum of two streams: every difference is forwarded at its version."""

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self.forward(version, collection)


class Debug(Operator):
    """Passes data through unchanged, describing each difference, and each move of its frontier, to ``sink``."""

    always_waits = True  # it reports every move of its frontier

    def __init__(self, place: Place, name: str, sink: Callable[[str], None]) -> None:
        super().__init__(place)
        self._debug_name = name
        self._sink = sink

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self._sink(f"debug {self._debug_name} data: version: {version} collection: {collection}")
        self.forward(version, collection)

    def on_frontier(self, frontier: Antichain) -> None:
        self._sink(f"debug {self._debug_name} notification: frontier {frontier}")


class LinearMethods(StreamMethods):
    """The stream methods of linear operators, concatenation and ``debug``."""

    def linear(self, logic: Logic, name: str) -> Any:
        """A linear operator called ``name`` applying ``logic`` (the internal protocol: families build theirs
        with it)."""
        return self.add_operator(LinearUnaryOperator, name, arguments=(logic,))

    def _per_collection(self, f: Callable[[Collection], Collection], name: str) -> Any:
        """A linear operator that keeps each difference at its version: ``f`` maps the collection."""
        return self.linear(lambda version, updates: [(version, f(Collection.trusted(updates)).updates)], name)

    def map(self, f: Callable[[Record], Record]) -> Any:
        checked_function(f, "map")
        return self._per_collection(lambda collection: collection.map(f), "map")

    def filter(self, predicate: Callable[[Record], bool]) -> Any:
        checked_function(predicate, "filter")
        return self._per_collection(lambda collection: collection.filter(predicate), "filter")

    def flat_map(self, f: Callable[[Record], Iterable[Record]]) -> Any:
        checked_function(f, "flat_map")
        return self._per_collection(lambda collection: collection.flat_map(f), "flat_map")

    def negate(self) -> Any:
        return self._per_collection(Collection.negate, "negate")

    def explode(self, f: Callable[[Record], Iterable[tuple[Record, Multiplicity]]]) -> Any:
        """Each record becomes the ``(value, multiplicity)`` updates ``f`` yields, multiplicities multiplied.

        000's ``explode``: ``f`` may produce negative multiplicities; an input
        with multiplicity ``m`` contributes ``m * d`` of each ``(value, d)``.

        Raises:
            RecordError: (while stepping) ``f`` yields something else than
                ``(value, int multiplicity)`` pairs.
        """
        checked_function(f, "explode")

        def logic(version: Version, updates: list[Entry]) -> list:
            exploded = [(value, m * d) for record, m in updates for value, d in _pairs(f(record), record)]
            if exploded and not set(map(type, map(itemgetter(1), exploded))) <= {int}:
                bad = next(m for _, m in exploded if type(m) is not int)
                raise RecordError(
                    f"explode's function must yield int multiplicities, but one came out as {bad!r}; "
                    f"a multiplicity counts copies of a record"
                )
            return [(version, exploded)]

        return self.linear(logic, "explode")

    def join_function(self, f: Callable[[Record], Iterable[tuple[Record, Any, Multiplicity]]]) -> Any:
        """The most general linear operator: each record joined with the collection ``f(record)`` describes.

        ``f(record)`` yields ``(value, version, multiplicity)`` updates; each
        output update is ``value`` at the lattice join of the input's version
        and ``version``, with the product of the multiplicities (000, "All of
        the linear operators"). ``version`` may be a Version, an int or a tuple.

        Raises:
            VersionError: (while stepping) ``f`` yields a version of another dimension.
        """
        checked_function(f, "join_function")
        dimension = self.writer.dimension

        def logic(version: Version, updates: list[Entry]) -> list:
            by_version: dict[Version, list] = {}
            for record, m in updates:
                for value, at, d in f(record):
                    if type(d) is not int:
                        raise RecordError(
                            f"join_function's function must yield (value, version, int multiplicity), but yielded "
                            f"the multiplicity {d!r} for the record {record!r}"
                        )
                    joined = version.join(as_version(at, dimension))
                    by_version.setdefault(joined, []).append((value, m * d))
            return list(by_version.items())

        return self.linear(logic, "join_function")

    def temporal_filter(self, lower: Callable[[Record], Any], upper: Callable[[Record], Any] | None = None) -> Any:
        """Each record present only from version ``lower(record)`` until ``upper(record)`` (if given).

        Materialize's temporal filter, as 000 writes it: ``join_function``
        with ``(record, lower(record), +1)`` and ``(record, upper(record), -1)``.
        """
        checked_function(lower, "temporal_filter")
        if upper is None:
            return self.join_function(lambda record: [(record, lower(record), 1)])
        return self.join_function(lambda record: [(record, lower(record), 1), (record, upper(record), -1)])

    def concat(self, other: Any) -> Any:
        return self.add_operator(Concat, "concat", [checked_stream(other, "concat")])

    def debug(self, name: str, sink: Callable[[str], None] = print) -> Any:
        """Pass the stream through unchanged, describing each difference and each move of its frontier to
        ``sink``."""
        checked_function(sink, "debug's sink")
        return self.add_operator(Debug, f"debug {name}", arguments=(name, sink))


def _pairs(produced: Iterable, record: Any) -> Iterable[tuple[Any, Any]]:
    """What explode's function yielded for ``record``, checked to be ``(value, multiplicity)`` pairs."""
    pairs = produced if type(produced) is list else list(produced)
    for pair in pairs:
        if type(pair) is not tuple or len(pair) != 2:
            raise RecordError(
                f"explode's function must yield (value, multiplicity) pairs, but yielded {pair!r} for the "
                f"record {record!r}; e.g. lambda record: [(record, 2)]"
            )
    return pairs
