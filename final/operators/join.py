"""Joins: ``(key, (a, b))`` for records with matching keys, at the lattice join of their versions, and the
joins built from them.

``join`` meets every record of one input with every record of the other
under the same key; ``half_join`` meets one input's changes with the other
as it stands; ``arrange`` indexes a stream once so that many joins share it
(003, 'Shared Arrangements'). Built from these: ``semijoin``, ``antijoin``,
and SQL's ``LEFT JOIN``, as a sum of inner joins (003): the left records
whose key the right side lacks, padded with ``None`` (SQL's NULL), and the
left records whose key is ``None``, which never match anything (NULL is not
equal to itself in SQL):

    left ⟕ right = left ⋈ right + left ⋈ absent(right) + left ⋈ NULL

A chain of left joins is planned one step at a time, each step that sum of
three terms ('Rendering JOINs of UNIONs': step1 = step0 ⋈ users + step0 ⋈
absent(users) + step0 ⋈ NULL). The NULL term is a filter, not a join, so no
NULL keys are ever gathered in one place.

Source: document 002, "v1" (the join expansion), "v3" and "v5/vFinal"
(versions), and document 003.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from operator import itemgetter
from typing import Any

from ..collection import Collection
from ..order import Antichain, Version
from ..trace import Arrangement, Index
from .base import Operator, Pending, Place, StreamMethods, checked_stream


class _OwnIndex:
    """A join side that indexes its own input."""

    def __init__(self) -> None:
        self.index = Index()

    def take(self, version: Version, collection: Collection) -> None:
        """Take in a difference: add it to the index."""
        # The join checked the records were pairs before handling them (``Operator.needs_pairs``).
        self.index.add_trusted(version, collection.updates)

    def parts(self) -> list[Index]:
        return [self.index]

    def meets(
        self, version: Version, collection: Collection, others: list[Index], left: bool
    ) -> Iterable[dict[Version, list]]:
        """``collection`` at ``version`` joined with each of ``others``, then taken in (a difference is met
        directly, never indexed on its own; one whose records repeat is consolidated first, so that what
        cancels out in it meets nothing)."""
        updates = collection.updates
        if len(updates) > 1 and len(set(map(itemgetter(0), updates))) != len(updates):
            updates = collection.consolidate().updates
        for other in others:
            yield other.meet(version, updates, left)
        self.index.add_trusted(version, updates)

    def compact(self, frontier: Antichain) -> None:
        self.index.compact(frontier)


class _SharedArrangement:
    """A join side that reads an ``Arrangement`` made upstream, sharing it with other readers."""

    def __init__(self, arrangement: Arrangement) -> None:
        self.arrangement = arrangement
        self.reader = arrangement.new_reader()

    def take(self, version: Version, collection: Collection) -> Index:
        """Take in a difference: the arranging operator indexed it already, as the next batch; move past it."""
        return self.arrangement.batch(self.reader)

    def parts(self) -> list[Index]:
        # Exactly the batches this side has taken in: ``take`` moved its position past each as it came.
        return self.arrangement.parts(self.reader)

    def meets(
        self, version: Version, collection: Collection, others: list[Index], left: bool
    ) -> Iterable[dict[Version, list]]:
        """The arrangement's batch for ``collection`` joined with each of ``others``; taking the batch took it in."""
        delta = self.take(version, collection)
        for other in others:
            yield delta.join(other) if left else other.join(delta)

    def compact(self, frontier: Antichain) -> None:
        self.arrangement.allow_compaction(self.reader, frontier)


class Join(Operator):
    """``(key, (a, b))`` for matching keys, each at the join of the two versions.

    A difference arriving on one side is joined with everything the other
    side has taken in so far, then taken in itself, so each pair of records
    meets exactly once, whatever order the differences arrive in. A side reads
    either its own index or a shared ``Arrangement`` of an arranged stream
    (003, 'Shared Arrangements'), in which case it builds no index at all.
    Invariant: each side's ``parts()`` hold exactly the differences received on that side.
    """

    always_waits = True  # its indexes compact as versions finish
    kind = "join"

    def __init__(self, place: Place, arrangements: tuple[Arrangement | None, ...] = (None, None)) -> None:
        super().__init__(place)
        self._sides = tuple(_SharedArrangement(a) if a is not None else _OwnIndex() for a in arrangements)
        # A side read through a shared arrangement was checked by the operator that arranged it.
        self.needs_pairs = any(arrangement is None for arrangement in arrangements)

    def indexes(self, side: int) -> list[Index]:
        """The indexes that together hold what input ``side`` has sent so far (its own, or a shared
        arrangement's), read-only."""
        return self._sides[side].parts()

    @property
    def arrangements(self) -> tuple[Arrangement | None, Arrangement | None]:
        """The shared arrangement each side reads, or None for a side that indexes its own input."""
        return tuple(getattr(side, "arrangement", None) for side in self._sides)

    def state_size(self) -> int:
        return sum(part.size() for side in self._sides if isinstance(side, _OwnIndex) for part in side.parts())

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        mine, theirs = self._sides[side], self._sides[1 - side]
        for output in mine.meets(version, collection, theirs.parts(), side == 0):
            for output_version, updates in output.items():
                self.send(output_version, updates)

    def on_frontier(self, frontier: Antichain) -> None:
        for side in self._sides:
            side.compact(frontier)


class HalfJoin(Operator):
    """Each difference of the stream (input 0) joined with the other input as it stands at that version.

    003's ``half_join``: 'an operator that responds to records in one input
    by look-ups into a second, and which does not respond to changes to the
    second input'. Each stream update ``((key, a), t, m)`` becomes
    ``((key, (a, b)), t, m * m_b)`` for every ``(key, b)`` the other input
    holds, accumulated, at ``t``. A stream update waits until the other
    input's frontier has passed ``t``, so that look-up is complete. The other
    input is read through its shared arrangement when it has one.
    Invariant: ``pending`` holds stream updates whose look-up is not complete yet.
    """

    always_waits = True  # pending updates wait for the other input, and its index compacts as versions finish
    needs_pairs = True
    kind = "half_join"

    def __init__(self, place: Place, arrangement: Arrangement | None = None) -> None:
        super().__init__(place)
        self._other = _SharedArrangement(arrangement) if arrangement is not None else _OwnIndex()
        self.pending = Pending(self, list)

    def state_size(self) -> int:
        own = self._other.index.size() if isinstance(self._other, _OwnIndex) else 0
        return own + super().state_size()

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        if side == 0:
            self.pending.at(version).extend(collection)
        else:
            self._other.take(version, collection)

    def on_frontier(self, frontier: Antichain) -> None:
        other_frontier = self.progress.frontier(self.inputs[1].location)
        for version, kept in self.pending.pop_finished(other_frontier):
            delta = Index.trusted(version, kept)
            updates = []
            for key in delta.keys():
                matches: dict = {}
                for part in self._other.parts():
                    for value, multiplicity in part.reconstruct_at(key, version):
                        matches[value] = matches.get(value, 0) + multiplicity
                for value, multiplicity in delta.reconstruct_at(key, version):
                    updates += [((key, (value, other)), multiplicity * m) for other, m in matches.items() if m]
            self.send(version, updates)
        self._other.compact(frontier)


class Arrange(Operator):
    """Builds a shared ``Arrangement`` of its input and passes every message on, one batch each.

    Readers of the arranged stream (joins) take the batches from the
    arrangement in the order the messages reach them.
    """

    always_waits = True  # the arrangement compacts as versions finish
    needs_pairs = True
    kind = "arrange"

    def __init__(self, place: Place, arrangement: Arrangement) -> None:
        super().__init__(place)
        self.arrangement = arrangement
        # The arranging operator is a reader too: always at the end, so it holds no batch back,
        # and its input frontier bounds compaction while the arrangement has no other reader.
        self._reader = arrangement.new_reader()

    def on_data(self, side: int, version: Version, collection: Collection) -> None:
        self.arrangement.append(Index.trusted(version, collection.updates))
        self.arrangement.batch(self._reader)
        self.forward(version, collection)

    def on_frontier(self, frontier: Antichain) -> None:
        self.arrangement.allow_compaction(self._reader, frontier)

    def state_size(self) -> int:
        return self.arrangement.size()




class JoinMethods(StreamMethods):
    """The stream methods of joins: ``join``, ``half_join``, ``arrange``, and the joins built from ``join``."""

    def _arrangement_in(self, scope: Any) -> Arrangement | None:
        """This stream's shared arrangement, if it has one and lives in ``scope`` (a stream entered into a
        loop is read through its own index: the arrangement's versions lack the iteration)."""
        return self.arrangement if self.scope is scope else None

    def join(self, other: Any) -> Any:
        """``(key, (a, b))`` for matching keys; an arranged input is read through its shared arrangement."""
        checked_stream(other, "join")
        inner = max((self.scope, other.scope), key=lambda scope: scope.depth)
        arrangements = (self._arrangement_in(inner), other._arrangement_in(inner))
        return self.add_operator(Join, "join", [other], arguments=(arrangements,))

    def half_join(self, other: Any) -> Any:
        """Each difference here joined with ``other`` as it stands at that difference's version (003).

        Changes to ``other`` alone produce no output: see ``HalfJoin``.
        """
        checked_stream(other, "half_join")
        inner = max((self.scope, other.scope), key=lambda scope: scope.depth)
        arrangement = other._arrangement_in(inner)
        return self.add_operator(HalfJoin, "half_join", [other], arguments=(arrangement,))

    def arrange(self) -> Any:
        """This stream, indexed once by key in a shared ``Arrangement`` that every join reading it uses.

        003's 'Shared Arrangements': joining ``query`` three times with an
        arranged ``links`` indexes ``links`` once, not three times.
        """
        arrangement = Arrangement()
        stream = self.add_operator(Arrange, "arrange", arguments=(arrangement,))
        return stream.with_arrangement(arrangement)

    def semijoin(self, keys: Any) -> Any:
        """The ``(key, value)`` records whose key is in ``keys``, a collection of keys (003).

        Each record's multiplicity is multiplied by its key's in ``keys`` (Rust
        DD's ``semijoin``), so keys present once keep records as they are.
        """
        return self.join(keys.map(lambda key: (key, ()))).map(lambda pair: (pair[0], pair[1][0]))

    def antijoin(self, keys: Any) -> Any:
        """The ``(key, value)`` records whose key is not in ``keys``: the stream minus its ``semijoin`` (003).

        ``keys`` should hold each key at most once (``distinct`` it first) for
        the usual meaning.
        """
        return self.concat(self.semijoin(keys).negate())

    def left_join(self, other: Any) -> Any:
        """SQL's ``LEFT JOIN`` on the key: ``(key, (value, other_value))``, with ``None`` where nothing matches.

        The three terms of 003: the inner join of the records whose key is not
        ``None``; the left records whose key no right record has, padded with
        ``None``; the left records whose key is ``None``, padded with ``None``.
        """
        left = self.filter(lambda pair: pair[0] is not None)
        right = other.filter(lambda pair: pair[0] is not None)
        inner = left.join(right)
        left_keys = left.map(lambda pair: pair[0]).distinct_keys()
        absent = left_keys.map(lambda key: (key, ())).antijoin(right.map(lambda pair: pair[0]).distinct_keys())
        missing = left.semijoin(absent.map(lambda pair: pair[0])).map(lambda pair: (pair[0], (pair[1], None)))
        nulls = self.filter(lambda pair: pair[0] is None).map(lambda pair: (None, (pair[1], None)))
        return inner.concat(missing).concat(nulls)

    def left_join_chain(self, steps: Sequence[tuple[Any, Callable[[Any], Any]]]) -> Any:
        """A multi-way ``LEFT JOIN``: each step left-joins the rows so far with one more collection (003).

        This stream holds rows (tuples); each step is ``(other, key_of)``,
        where ``other`` holds ``(key, row)`` pairs and ``key_of(row so far)``
        picks the join key from the row built so far (``None`` if it is NULL).
        Each step appends the matched row (or ``None``) to the row: the result
        holds tuples ``(row, match1, match2, ...)``.
        """
        rows = self.map(lambda row: (row,))
        for other, key_of in steps:
            keyed = rows.map(lambda row, key_of=key_of: (key_of(row), row))
            rows = keyed.left_join(other).map(lambda pair: (*pair[1][0], pair[1][1]))
        return rows
