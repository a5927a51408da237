"""One way to run a program on any stage: ``run(stage, program, inputs)``.

The stages expose three different APIs (static collections in v0, difference
sequences in v1, dataflow graphs from v2 on); this module adapts each to the
same contract:

- ``program`` takes one collection-like per input and returns one, using only
  operator methods, so the same function runs on every stage;
- ``inputs`` holds one history per input, a list of ``(record, version,
  multiplicity)`` updates; a version is an int, or a tuple of ints;
- the result maps every version at which any input changed to the
  accumulated, consolidated output collection at that version.

v0 computes every version from scratch, which makes it the oracle the other
stages are checked against. A stage that lacks a concept a program needs raises
``NotImplementedError`` naming it.
"""

from __future__ import annotations

import importlib
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from final.conformance.versions import differences, join_closure, less_equal, sort_key

STAGES = ("v0", "v1", "v2", "v3", "v4", "v5", "final")
ROOT = Path(__file__).resolve().parent.parent
PRESENT_STAGES = [stage for stage in STAGES if (ROOT / stage / "__init__.py").exists()]
INSTALLED_FOR_ADAPTERS = {"node_modules", ".venv"}
"""Folders the conformance adapters install their engines into (d2ts's and d2mini's npm packages,
pathway's venv), gitignored: third-party code, not the stage's."""


def stage_python_files(stage: str) -> list[Path]:
    """The stage's own .py files, subpackages included, without what its adapters installed."""
    return [path for path in sorted((ROOT / stage).rglob("*.py"))
            if not INSTALLED_FOR_ADAPTERS & set(path.relative_to(ROOT / stage).parts)]

Update = tuple[Hashable, Any, int]
History = Sequence[Update]
Result = dict[Any, dict[Hashable, int]]

STEP_BUDGET = 10_000
"""Most ``graph.step()`` calls a run may take to finish: far above what the
examples need (a handful), low enough that a stage that never finishes fails
the run in seconds instead of hanging it."""


class StepBudgetExceeded(AssertionError):
    """A dataflow stage did not finish within ``STEP_BUDGET`` steps."""


def stage_module(stage: str) -> ModuleType:
    """Import a stage package by name."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; expected one of {', '.join(STAGES)}")
    return importlib.import_module(stage)


def run(stage: str, program: Callable[..., Any], inputs: Sequence[History], at: Sequence | None = None) -> Result:
    """Run ``program`` on ``inputs`` with ``stage``; return the accumulated output at each input version.

    ``at`` names other versions to report instead (e.g. joins of input versions).
    """
    versions = sorted({version for history in inputs for _, version, _ in history}, key=sort_key)
    report = sorted(set(at), key=sort_key) if at is not None else versions
    return _accumulate(_differences(stage, program, inputs, versions, report), report)


def run_differences(stage: str, program: Callable[..., Any], inputs: Sequence[History]) -> Result:
    """The output's difference at each version where it is not empty (the document's ``difference[t]``).

    Dataflow stages report what they sent; the others are differenced over
    the join closure of the input versions (Moebius inversion, 001).
    """
    versions = sorted({version for history in inputs for _, version, _ in history}, key=sort_key)
    found = _differences(stage, program, inputs, versions, join_closure(versions))
    return {version: difference for version, difference in found.items() if difference}


def _differences(stage: str, program: Callable, inputs: Sequence[History], versions: list, report: list) -> Result:
    """The output differences by version: what a stage sent, or for v0 its collections at ``report`` differenced."""
    if stage == "v0":
        collections = _run_from_scratch(stage_module(stage), program, inputs, report)
        return differences(collections)
    if STAGES.index(stage) < STAGES.index("v5") and any(not isinstance(version, int) for version in versions):
        raise NotImplementedError(
            f"{stage} takes its input one version after another (v1 and v2 as a sequence, v3 and v4 in "
            "version order); partially ordered (tuple) input versions arrive in v5"
        )
    runners = {"v1": _run_sequence, "v2": _run_graph_without_versions}
    if stage in runners:
        return runners[stage](stage_module(stage), program, inputs, versions)
    return _run_graph_with_versions(stage_module(stage), program, inputs, versions)


def _consolidated(pairs: Any) -> dict[Hashable, int]:
    totals: defaultdict[Hashable, int] = defaultdict(int)
    for record, multiplicity in pairs:
        totals[record] += multiplicity
    return {record: total for record, total in totals.items() if total != 0}


def _accumulate(differences: dict[Any, dict[Hashable, int]], versions: list) -> Result:
    """The sum of the output differences at versions ``<=`` each of ``versions``.

    Each version's sum is built on one already made, adding only the
    differences in between, instead of summing every difference again.
    """
    if all(isinstance(version, int) for version in (*differences, *versions)):
        sums = _running_sums(differences, versions)
    else:
        sums = _sums_over_partial_order(differences, versions)
    return {version: sums[version] for version in versions}


def _running_sums(differences: dict[Any, dict[Hashable, int]], versions: list) -> Result:
    """Ints are totally ordered: one running sum, read off at each version in increasing order."""
    pending = sorted(differences)
    totals: dict[Hashable, int] = {}
    sums: Result = {}
    position = 0
    for version in sorted(set(versions)):
        while position < len(pending) and pending[position] <= version:
            _add(totals, differences[pending[position]])
            position += 1
        sums[version] = dict(totals)
    return sums


def _sums_over_partial_order(differences: dict[Any, dict[Hashable, int]], versions: list) -> Result:
    """Tuples: each version's sum starts from the sum made last at a version below it.

    Sound because ``base <= version`` means every difference ``<= base`` is
    also ``<= version``: only the differences ``<= version`` that ``base``
    lacks are added. Visiting versions in ``sort_key`` order makes every
    version below this one already made; the one made just before need not be
    below it, hence the search back.
    """
    sums: Result = {}
    lacking: dict[Any, list] = {}  # a made version -> the difference versions its sum leaves out
    for version in sorted(set(versions), key=sort_key):
        base = next((made for made in reversed(sums) if less_equal(made, version)), None)
        totals = dict(sums[base]) if base is not None else {}
        rest = []
        for other in lacking[base] if base is not None else differences:
            if less_equal(other, version):
                _add(totals, differences[other])
            else:
                rest.append(other)
        sums[version], lacking[version] = totals, rest
    return sums


def _add(totals: dict[Hashable, int], difference: dict[Hashable, int]) -> None:
    """Add ``difference`` into ``totals`` in place, dropping records whose total reaches zero."""
    for record, multiplicity in difference.items():
        total = totals.get(record, 0) + multiplicity
        if total:
            totals[record] = total
        else:
            totals.pop(record, None)


def new_builder(stage: ModuleType, zero: Any = 0) -> Any:
    """A GraphBuilder of a dataflow stage, starting at version ``zero`` where the stage has versions."""
    return stage.GraphBuilder(stage.Version(zero)) if hasattr(stage, "Version") else stage.GraphBuilder()


def as_frontier(stage: ModuleType, version: Any) -> Any:
    """The frontier of just ``version`` as ``stage`` spells it: the version itself, or (v5 on) its antichain."""
    return stage.Antichain([version]) if hasattr(stage, "Antichain") else version


def frontier_after(message: Any, previous: Any) -> Any:
    """The frontier a frontier message leaves: the one it carries (v3 to v5), or ``previous`` with its
    change applied (final sends frontiers as changes)."""
    return message.frontier if hasattr(message, "frontier") else previous.apply(message)


def operators(graph: Any) -> list:
    """A finished graph's operators in topological order (every stage from v2 shows them as ``graph.operators``)."""
    return list(graph.operators)


def build_graph(stage: ModuleType, program: Callable[..., Any], inputs: int, zero: Any = 0) -> tuple[list, Any, Any]:
    """``(writers, reader, graph)``: ``program`` built on ``inputs`` fresh inputs, its output read, finalized."""
    builder = new_builder(stage, zero)
    streams, writers = zip(*(builder.new_input() for _ in range(inputs)), strict=True)
    reader = program(*streams).connect_reader()
    return list(writers), reader, builder.finalize()


def data_until(stage: ModuleType, graph: Any, reader: Any, version: Any) -> list[dict]:
    """Step until ``reader``'s frontier passes ``version``; the data messages read, as ``{record: m}``."""
    _step_until(graph, lambda: not reader.probe_frontier_less_than(version))
    return [message.collection.as_dict() for message in reader.drain() if isinstance(message, stage.DataMessage)]


def _run_from_scratch(stage: ModuleType, program: Callable, inputs: Sequence[History], versions: list) -> Result:
    result = {}
    for version in versions:
        collections = [
            stage.Collection([(record, m) for record, at, m in history if less_equal(at, version)])
            for history in inputs
        ]
        output = program(*collections)
        result[version] = _consolidated(output)
    return result


def _differences_by_position(stage: ModuleType, history: History, versions: list) -> list:
    """One difference collection per input version (an empty one where this input did not change)."""
    by_version: defaultdict[Any, list] = defaultdict(list)
    for record, version, multiplicity in history:
        by_version[version].append((record, multiplicity))
    return [stage.Collection(by_version.get(version, [])) for version in versions]


def _run_sequence(stage: ModuleType, program: Callable, inputs: Sequence[History], versions: list) -> Result:
    sequences = [stage.DifferenceSequence(_differences_by_position(stage, h, versions)) for h in inputs]
    output = program(*sequences)
    return {version: _consolidated(d) for version, d in zip(versions, output, strict=True)}


def _run_graph_without_versions(
    stage: ModuleType, program: Callable, inputs: Sequence[History], versions: list
) -> Result:
    writers, reader, graph = build_graph(stage, program, len(inputs))
    columns = [_differences_by_position(stage, history, versions) for history in inputs]
    differences = {}
    for position, version in enumerate(versions):
        # Without versions, the i-th difference of every input must be sent
        # together: binary operators pair them by position.
        for writer, column in zip(writers, columns, strict=True):
            writer.send_data(column[position])
        _step_until(graph, lambda: not reader.is_empty())
        differences[version] = _consolidated(pair for output in reader.drain() for pair in output)
    return differences


def _step_until(graph: Any, done: Callable[[], bool]) -> None:
    for _ in range(STEP_BUDGET):
        if done():
            return
        graph.step()
    raise StepBudgetExceeded(f"the graph did not finish within {STEP_BUDGET} steps")


def _run_graph_with_versions(stage: ModuleType, program: Callable, inputs: Sequence[History], versions: list) -> Result:
    """Send each input's updates in the order given, with the frontier as far ahead as it can go.

    An input's frontier is always the least version (v3, v4), or the antichain
    of minimal versions (v5 on), it has yet to send, so versions close as soon
    as possible and out-of-order histories exercise out-of-order delivery.
    Inputs take turns, one batch (a run of updates at one version) each, with a
    graph step after every batch. The harness checks the frontier contract on
    the way: no output data at a version the output frontier has passed.
    """
    spell = _Spelling(stage, versions)
    writers, reader, graph = build_graph(stage, program, len(inputs), spell.zero)
    batches = [_batches(history) for history in inputs]
    differences: defaultdict[Any, dict] = defaultdict(dict)
    seen_frontier = spell.frontier([spell.zero])

    def read() -> None:
        nonlocal seen_frontier
        for message in reader.drain():
            if isinstance(message, stage.FrontierMessage):
                seen_frontier = frontier_after(message, seen_frontier)
                continue
            if not spell.allows(seen_frontier, message.version):
                raise AssertionError(
                    f"{stage.__name__} sent data at {message.version} after its frontier passed it ({seen_frontier})"
                )
            difference = differences[spell.plain(message.version)]
            for record, multiplicity in message.collection:
                difference[record] = difference.get(record, 0) + multiplicity

    for writer, remaining in zip(writers, batches, strict=True):
        writer.send_frontier(spell.frontier([version for version, _ in remaining]))
    while any(batches):
        for writer, remaining in zip(writers, batches, strict=True):
            if remaining:
                version, updates = remaining.pop(0)
                writer.send_data(stage.Version(version), stage.Collection(updates))
                writer.send_frontier(spell.frontier([version for version, _ in remaining]))
        graph.step()
        read()
    final = spell.frontier([])
    _step_until(graph, lambda: not reader.probe_frontier_less_than(final))
    read()
    return {version: _consolidated(d.items()) for version, d in differences.items()}


class _Spelling:
    """How a dataflow stage spells the harness's plain int or tuple versions, and frontiers."""

    def __init__(self, stage: ModuleType, versions: list) -> None:
        self.stage = stage
        self.antichains = hasattr(stage, "Antichain")
        self.tuples = bool(versions) and isinstance(versions[0], tuple)
        self.zero = tuple(0 for _ in versions[0]) if self.tuples else 0
        # With totally ordered versions, "no more data ever" is a version past every input version.
        self.beyond = None if self.antichains else (versions[-1] + 1 if versions else 0)

    def frontier(self, remaining: list) -> Any:
        """The frontier of an input that has yet to send ``remaining``: their least versions."""
        Version = self.stage.Version
        if self.antichains:
            return self.stage.Antichain([Version(version) for version in remaining])
        return Version(min(remaining) if remaining else self.beyond)

    def allows(self, frontier: Any, version: Any) -> bool:
        return frontier.less_equal_version(version) if self.antichains else frontier.less_equal(version)

    def plain(self, version: Any) -> Any:
        coords = getattr(version, "coords", None)
        if coords is None:
            return version.value
        return coords if self.tuples else coords[0]


def _batches(history: History) -> list[tuple[Any, list]]:
    """Runs of consecutive updates at one version, in the order given."""
    batches: list[tuple[Any, list]] = []
    for record, version, multiplicity in history:
        if batches and batches[-1][0] == version:
            batches[-1][1].append((record, multiplicity))
        else:
            batches.append((version, [(record, multiplicity)]))
    return batches


def run_or_skip(
    stage: str, program: Callable[..., Any], inputs: Sequence[History], at: Sequence | None = None
) -> Result:
    """``run``, but a stage lacking a concept the program needs skips the test, with the stage's reason."""
    import pytest

    try:
        return run(stage, program, inputs, at)
    except NotImplementedError as missing:
        pytest.skip(f"{stage}: {missing}")


def run_messages(stage: str, program: Callable[..., Any], inputs: Sequence[History]) -> list[tuple[Any, dict]]:
    """The output's data messages, in order, when versions are fed one at a time as document 002 does.

    For each input version in order: send every input's updates at it,
    advance every input's frontier past it, and step until the output's
    frontier has passed it. Returns ``(version, difference)`` per message.
    """
    module = stage_module(stage)
    versions = sorted({version for history in inputs for _, version, _ in history})
    spell = _Spelling(module, versions)
    writers, reader, graph = build_graph(module, program, len(inputs), spell.zero)
    result = []
    for version in versions:
        for writer, history in zip(writers, inputs, strict=True):
            updates = [(record, m) for record, at, m in history if at == version]
            if updates:
                writer.send_data(module.Version(version), module.Collection(updates))
            writer.send_frontier(module.Version(version + 1))
        _step_until(graph, lambda v=version: not reader.probe_frontier_less_than(module.Version(v + 1)))
        result += [
            (spell.plain(message.version), message.collection.as_dict())
            for message in reader.drain()
            if isinstance(message, module.DataMessage)
        ]
    return result
