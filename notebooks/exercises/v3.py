"""Checkers for the exercises of ``v3_versions_and_frontiers.ipynb``: concat's frontier, when reduce emits, compaction.

The schedules and the index each exercise is about are defined here
(``FRONTIER_SCHEDULE``, ``REDUCE_SCHEDULE``, ``INDEX_UPDATES``), so the
notebook prints the very data the checker judges. Expected answers are
computed by running stage v3 itself, never typed in; the ``Index.compact`` a
learner builds is judged inside v3 against v0 from scratch (``workshop.build``).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from workshop import Property, Wrong, check_piece, equals_from_scratch, exercise
from workshop.v3 import describe, output_frontier, run_schedule

from tests import strategies
from v3 import GraphBuilder, Index, Version

FRONTIER_SCHEDULE = [("a", 2), ("b", 1), ("a", 5), ("b", 4), ("b", 7)]
"""Frontier updates sent to ``a`` or ``b`` of ``a.concat(b)``, one per step; both start at 0, no data is sent."""


def concat_frontiers() -> list[int]:
    """The frontier of ``a.concat(b)``'s output after each step of ``FRONTIER_SCHEDULE``, run on stage v3."""
    builder = GraphBuilder(Version(0))
    (a, a_writer), (b, b_writer) = builder.new_input(), builder.new_input()
    reader = a.concat(b).connect_reader()
    graph = builder.finalize()
    writers = {"a": a_writer, "b": b_writer}
    frontiers = []
    for side, frontier in FRONTIER_SCHEDULE:
        writers[side].send_frontier(Version(frontier))
        graph.step()
        frontiers.append(output_frontier(reader))
    return frontiers


def _as_int(version: Any, what: str) -> int:
    if isinstance(version, Version):
        return version.value
    if type(version) is not int:
        raise Wrong(f"{what} should be a version as an int (or a Version), not {version!r}")
    return version


@exercise
def concat_frontier(answer: Any) -> None:
    """The learner's prediction of concat's output frontier after each step of ``FRONTIER_SCHEDULE``: a list of ints."""
    expected = concat_frontiers()
    if not isinstance(answer, list) or len(answer) != len(expected):
        raise Wrong(f"give a list of {len(expected)} versions, one per step of FRONTIER_SCHEDULE; you gave {answer!r}")
    got = [_as_int(version, f"your entry for step {step}") for step, version in enumerate(answer, start=1)]
    inputs = {"a": 0, "b": 0}
    for step, ((side, frontier), mine, theirs) in enumerate(zip(FRONTIER_SCHEDULE, got, expected, strict=True), 1):
        inputs[side] = frontier
        if mine == theirs:
            continue
        if mine > theirs:
            raise Wrong(
                f"after step {step} ({side} -> {frontier}; a is at {inputs['a']}, b at {inputs['b']}) you said "
                f"{mine}, but concat's output frontier is {theirs}: an input still at {theirs} may send data at "
                f"{theirs}, and concat forwards it at that version, so concat cannot promise more than its least "
                f"promising input: the meet (here the min) of the two frontiers"
            )
        raise Wrong(
            f"after step {step} ({side} -> {frontier}; a is at {inputs['a']}, b at {inputs['b']}) you said {mine}, "
            f"but concat's output frontier is {theirs}: neither input will send data before {theirs} any more, "
            f"so concat promises that too, in the same step it hears from the later of the two"
        )


REDUCE_SCHEDULE = [
    ("data", 1, ("k", "x"), 1),
    ("data", 0, ("k", "y"), 1),
    ("frontier", 1),
    ("data", 3, ("k", "z"), 1),
    ("data", 2, ("k", "x"), -1),
    ("data", 2, ("k", "x"), 1),
    ("data", 1, ("k", "w"), 1),
    ("frontier", 3),
    ("frontier", 4),
]
"""What the input of ``values.count()`` receives, one action per step (step 1 first)."""


def reduce_run() -> list:
    """``run_schedule`` of ``REDUCE_SCHEDULE`` through ``count`` on stage v3: one ``Moment`` per step."""
    builder = GraphBuilder(Version(0))
    values, writer = builder.new_input()
    reader = values.count().connect_reader()
    graph = builder.finalize()
    return run_schedule(graph, writer, reader, REDUCE_SCHEDULE)


def _closing_step(version: int) -> int | None:
    """The step whose frontier update first passes ``version``."""
    return next((step for step, action in enumerate(REDUCE_SCHEDULE, start=1)
                 if action[0] == "frontier" and action[1] > version), None)


def _steps(steps: list[int]) -> str:
    return f"step {steps[0]}" if len(steps) == 1 else f"steps {', '.join(map(str, steps))}"


@exercise
def reduce_emission_steps(answer: Any) -> None:
    """The learner's ``{version: step}``: the step at which ``count`` emits each version, for ``REDUCE_SCHEDULE``."""
    expected = {version: moment.step for moment in reduce_run() for version in moment.emitted}
    if not isinstance(answer, dict):
        raise Wrong(f"give a dict {{version: step}}, e.g. {{0: 5}}, not {type(answer).__name__}: {answer!r}")
    got = {_as_int(version, "a version"): step for version, step in answer.items()}
    for version in sorted(set(got) | set(expected)):
        data = [step for step, action in enumerate(REDUCE_SCHEDULE, 1) if action[0] == "data" and action[1] == version]
        if version in got and version not in expected:
            why = (f"no data arrives at version {version}, so nothing changes there"
                   if not data else
                   f"the data at version {version} ({_steps(data)}) adds up to nothing, so the "
                   f"count at {version} equals the count at {version - 1}")
            raise Wrong(
                f"you said count emits version {version} at step {got[version]}, but it sends nothing at "
                f"{version}: {why}, and reduce sends only changes to its output"
            )
        closing = _closing_step(version)
        if version not in got:
            raise Wrong(
                f"you gave no step for version {version}; count emits it at step {expected[version]}, when "
                f"the frontier passes it (data arrived at {version} in {_steps(data)})"
            )
        if got[version] != expected[version]:
            if closing is not None and got[version] < closing:
                reason = (f"version {version} is still open until step {closing} "
                          f"({describe(REDUCE_SCHEDULE[closing - 1])}), and count needs all of a version's data")
            else:
                reason = (f"the frontier passes version {version} in step {closing}, and reduce computes every "
                          f"version that closes in that very step, in version order")
            raise Wrong(
                f"you said version {version} is emitted at step {got[version]}, not {expected[version]}: {reason}"
            )


INDEX_UPDATES = [
    ("north", 0, "apple", 1),
    ("north", 1, "apple", 1),
    ("north", 1, "fig", 1),
    ("north", 2, "fig", -1),
    ("north", 4, "plum", 1),
    ("south", 1, "pear", 1),
    ("south", 3, "pear", -1),
]
"""``(key, version, value, multiplicity)`` added to an empty ``Index`` before ``compact(Version(COMPACT_FRONTIER))``."""
COMPACT_FRONTIER = 3


def index_contents(index: Index) -> dict[Any, dict[int, dict[Any, int]]]:
    """``{key: {version: {value: multiplicity}}}``: what an index holds (its private ``_values``, read to show it)."""
    return {
        key: {version.value: dict(values) for version, values in sorted(versions.items(), key=lambda kv: kv[0].value)}
        for key, versions in index._values.items()
    }


def compacted() -> dict[Any, dict[int, dict[Any, int]]]:
    """``INDEX_UPDATES`` indexed and compacted to ``COMPACT_FRONTIER`` by stage v3."""
    index = Index()
    for key, version, value, multiplicity in INDEX_UPDATES:
        index.add_value(key, Version(version), (value, multiplicity))
    index.compact(Version(COMPACT_FRONTIER))
    return index_contents(index)


@exercise
def compact_by_hand(answer: Any) -> None:
    """The learner's ``{key: {version: {value: multiplicity}}}`` after compacting ``INDEX_UPDATES`` to the frontier."""
    expected = compacted()
    if not isinstance(answer, dict) or not all(isinstance(versions, dict) for versions in answer.values()):
        raise Wrong(f"give a dict {{key: {{version: {{value: multiplicity}}}}}}, not {answer!r}")
    got: dict[Any, dict[int, dict[Any, int]]] = {}
    for key, versions in answer.items():
        got[key] = {}
        for version, values in versions.items():
            if not isinstance(values, dict):
                raise Wrong(f"under {key!r}, version {version!r}: give the values as a dict {{value: multiplicity}}")
            got[key][_as_int(version, f"a version of {key!r}")] = values
    for key, versions in got.items():
        for version, values in versions.items():
            if version < COMPACT_FRONTIER:
                raise Wrong(
                    f"you kept {key!r} at version {version}, which the frontier {COMPACT_FRONTIER} has passed: "
                    f"compaction moves every such version to its advance_by({COMPACT_FRONTIER}), which is "
                    f"{COMPACT_FRONTIER} itself (the earliest version still to come), and merges it there"
                )
            if 0 in values.values() or not values:
                raise Wrong(
                    f"under {key!r} at version {version} you kept {values}: an index drops what adds up to "
                    f"zero, and a version (or a key) with nothing left goes with it"
                )
    for key in sorted(set(got) | set(expected)):
        if key not in expected:
            raise Wrong(
                f"you kept {key!r}, but compaction removes it: its updates "
                f"{[u[1:] for u in INDEX_UPDATES if u[0] == key]} all land at version {COMPACT_FRONTIER} and add "
                f"up to nothing there"
            )
        if key not in got:
            raise Wrong(f"you left out {key!r}; after compaction it holds {expected[key]}")
        if got[key] != expected[key]:
            raise Wrong(
                f"for {key!r} you gave {got[key]}; compaction gives {expected[key]}: versions before "
                f"{COMPACT_FRONTIER} merge at {COMPACT_FRONTIER} (adding up each value's multiplicities), and "
                f"versions at or after it stay as they are"
            )


Rounds = list[tuple[list[tuple[Any, int, Any, int]], int]]
"""``[(updates, frontier), ...]``: each round adds its ``(key, version, value, multiplicity)`` updates, at versions
at or after the frontier so far, then compacts to its frontier, which never moves back."""


@st.composite
def _rounds(draw: st.DrawFn) -> Rounds:
    """Up to three rounds, each frontier 0 to 2 past the one before, each update's version 0 to 3 past it.

    Drawn as offsets, so that hypothesis shrinks a failing example towards
    few rounds, few updates and frontiers that move little; small, so that
    it does so within ``workshop.build.SHRINK_SECONDS`` on a busy machine.
    """
    rounds, frontier = [], 0
    update = st.tuples(strategies.keys, st.integers(0, 3), strategies.values, strategies.multiplicities)
    for offsets, step in draw(st.lists(st.tuples(st.lists(update, max_size=3), st.integers(0, 2)),
                                       min_size=1, max_size=3)):
        updates = [(key, frontier + offset, value, multiplicity) for key, offset, value, multiplicity in offsets]
        frontier += step
        rounds.append((updates, frontier))
    return rounds


Held = dict[tuple[int, Any], dict[int, list[tuple[Any, int]]]]
"""``{(round, key): {version: sorted [(value, multiplicity)]}}``: what an index holds after each round's compaction."""


def _as_the_frontier_sees(versions: dict[Version, list], frontier: int) -> dict[int, list[tuple[Any, int]]]:
    """One key's versions, each moved to its ``advance_by(frontier)`` if no two of them land on one version.

    Where nothing would merge, where a version sits is the definition's own
    freedom: a key left untouched since an earlier compaction keeps a version
    the frontier has since passed, and no version still to come can tell.
    Where two would merge, the versions are shown as the index holds them.
    """
    shown = {version.value: sorted(values) for version, values in versions.items()}
    advanced = {max(version, frontier) for version in shown}
    if len(advanced) < len(shown):
        return shown
    return {max(version, frontier): values for version, values in shown.items()}


def _compacted_by_index(rounds: Rounds) -> Held:
    """Each round's updates added to one ``Index`` (the stage's, with the piece in place), then compacted."""
    index, held = Index(), {}
    for number, (updates, frontier) in enumerate(rounds, start=1):
        for key, version, value, multiplicity in updates:
            index.add_value(key, Version(version), (value, multiplicity))
        index.compact(Version(frontier))
        for key, versions in index._values.items():
            held[number, key] = _as_the_frontier_sees(versions, frontier)
    return held


def _compacted_by_definition(rounds: Rounds) -> Held:
    """After each round, every update so far at ``max(version, frontier)`` (``advance_by`` on ints), added up."""
    so_far, held = [], {}
    for number, (updates, frontier) in enumerate(rounds, start=1):
        so_far += updates
        totals: dict[tuple[Any, int, Any], int] = {}
        for key, version, value, multiplicity in so_far:
            place = (key, max(version, frontier), value)
            totals[place] = totals.get(place, 0) + multiplicity
        for (key, version, value), total in sorted(totals.items(), key=repr):
            if total != 0:
                held.setdefault((number, key), {}).setdefault(version, []).append((value, total))
    return {place: {version: sorted(values) for version, values in versions.items()}
            for place, versions in held.items()}


COMPACT_DEFINITION = Property(
    name="compact behind a moving frontier",
    examples=_rounds(),
    got=_compacted_by_index,
    expected=_compacted_by_definition,
    example="rounds [(updates (key, version, value, multiplicity), frontier compacted to after them), ...]; "
            "below by (round from 1, key), each version as the frontier sees it",
    reference="the definition",
    rule="compact(frontier) must leave each key one entry per group of versions the frontier cannot tell apart "
         "(versions with the same version.advance_by(frontier): every version still to come sees them alike), "
         "added up, with no zero and no empty version or key, so the collection at every version from the "
         "frontier on is unchanged. A key still holding several versions afterwards must stay in self._dirty: "
         "when the frontier moves on they may become indistinguishable, and only a dirty key is compacted again.",
)
"""What compaction must leave in an index, which no program's output shows, compaction after compaction as the
frontier moves: merged, consolidated, nothing empty, and a key left with several versions merged once the
frontier passes them (so it has to stay dirty)."""


@exercise
def build_compact(answer: Any) -> None:
    """The learner's ``Index.compact(self, frontier)``, run inside v3: join and count equal v0, then the definition.

    ``join`` comes first: with two inputs taking turns, a frontier moves while
    data beyond it is already indexed, which is where compaction can go wrong,
    and hypothesis shrinks such a history to a few updates. A compaction that
    keeps every answer right but does not merge or consolidate (the index
    would only grow), or that forgets a key it left with several versions, is
    caught by ``COMPACT_DEFINITION``.
    """
    check_piece("v3", "index.Index.compact", answer,
                [*(equals_from_scratch("v3", name) for name in ("join", "count")), COMPACT_DEFINITION])
