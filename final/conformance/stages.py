"""Adapters for this project's own engines: each stage, v0 to final, runs a case in process.

A stage runs a case's program the way a user of that stage would, fed the
case's messages in order, and reports what its output said: data and
frontier messages (``Run``). The stages have three kinds of API (document
002's static collections in v0, difference sequences in v1, and dataflow
graphs in v2 and after), so there are four drivers:

- v0 has no time at all: it keeps every update and, at the end, computes the
  output from scratch at every version of the case (the join closure of the
  input versions) and reports the differences between them (001's formula);
- v1 has a sequence of differences but no versions: the updates are put in
  version order at the end, one difference per version;
- v2 has a dataflow graph but no versions: a version is fed, in order, once
  every input's frontier has passed it;
- v3 to final take the messages as they are, data and frontiers, and step
  the graph after each; v3 and v4 spell a frontier as one version (the end of
  input as a version past the case's last), v5 and final as an antichain.

The stages are imported by name (``importlib``) from the repository, as the
shared test suite does; final reaches its engine through its public API
only. A stage that lacks a concept the case needs reports it ``unsupported``
with the reason, which is not a failure.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from .cases import Case
from .catalog import program_named
from .encoding import PlainVersion, add
from .versions import differences, join_closure, less_equal

STAGES = ("v0", "v1", "v2", "v3", "v4", "v5", "final")
STEP_BUDGET = 20_000
"""Most ``graph.step()`` calls a case may take: far beyond what any case needs, so a stage that never
finishes is reported in seconds instead of hanging the check."""


@dataclass
class Run:
    """What an engine did with one case.

    ``events`` are the engine's output messages in the order it sent them:
    ``("data", [(record, version, multiplicity), ...])`` or ``("frontier",
    [version, ...])``. ``status`` is ``done``, ``unsupported`` or ``error``,
    with ``reason`` saying why for the last two. An engine in a child
    process that gave a case no closing line (it died, broke the protocol,
    or was stopped) leaves how it ended: ``exit_status`` (None when the
    checker stopped it) and the last lines of its standard error, ``stderr``.
    """

    status: str = "done"
    reason: str = ""
    events: list[tuple[str, list]] = field(default_factory=list)
    exit_status: int | None = None
    stderr: str = ""

    def updates(self) -> list[tuple[Hashable, PlainVersion, int]]:
        return [update for kind, items in self.events if kind == "data" for update in items]


def unsupported(reason: str) -> Run:
    return Run(status="unsupported", reason=reason)


def missing_concept(stage: str, case: Case) -> str | None:
    """Why ``stage`` cannot run ``case`` (the concept it lacks), or None when it can."""
    program = program_named(case.program)
    position = STAGES.index(stage)
    if "final" in program.concepts() and stage != "final":
        return f"{case.program} needs operators only final has (from {program.source}); {stage} lacks them"
    if "iterate" in program.concepts() and stage in ("v1", "v2", "v3"):
        return f"{case.program} iterates; iterate needs versions with an iteration coordinate, which arrive in v4"
    if case.dimensions > 1 and position in (1, 2, 3, 4):
        return (
            f"{stage} takes its input one version after another (v1 and v2 as a sequence, v3 and v4 in "
            "version order); partially ordered (tuple) versions arrive in v5"
        )
    retracts = any(multiplicity < 0 for history in case.histories() for _, _, multiplicity in history)
    if stage == "v4" and "iterate" in program.concepts() and retracts:
        return (
            "v4's iterate is right only for inputs that only grow: with versions in lexicographic order, a "
            "retraction leaves what earlier iterations derived (document 002, v4), which v5 fixes"
        )
    return None


def run_stage(stage: str, case: Case) -> Run:
    """Run ``case`` on ``stage`` (v0..v5, final); an exception the stage raises is reported as an error."""
    reason = missing_concept(stage, case)
    if reason is not None:
        return unsupported(reason)
    module = importlib.import_module(stage)
    program = program_named(case.program)
    implementation = program.on_final() if stage == "final" else program.portable
    driver = {"v0": _from_scratch, "v1": _sequence, "v2": _graph_without_versions}.get(stage, _graph_with_versions)
    try:
        return driver(module, implementation, case)
    except Exception as error:  # the stage's own failure is the finding, reported with its type
        return Run(status="error", reason=f"{stage} raised {type(error).__name__}: {error}")


def from_scratch(module: ModuleType, implementation: Callable, case: Case, versions: list) -> dict:
    """The output collection at each of ``versions``: the inputs accumulated there, run through the program."""
    histories = case.histories()
    collections = {}
    for version in versions:
        inputs = [
            module.Collection([(record, m) for record, at, m in history if less_equal(at, version)])
            for history in histories
        ]
        totals: dict = {}
        for record, multiplicity in implementation(*inputs):
            add(totals, record, multiplicity)
        collections[version] = totals
    return collections


def _from_scratch(module: ModuleType, implementation: Callable, case: Case) -> Run:
    collections = from_scratch(module, implementation, case, join_closure(case.input_versions()))
    data = [
        (record, version, multiplicity)
        for version, difference in differences(collections).items()
        for record, multiplicity in difference.items()
    ]
    return Run(events=[("data", data), ("frontier", [])])


def _by_version(module: ModuleType, history: list, versions: list) -> list:
    """One difference collection per version (empty where the input did not change)."""
    grouped: dict[PlainVersion, list] = {version: [] for version in versions}
    for record, version, multiplicity in history:
        grouped[version].append((record, multiplicity))
    return [module.Collection(grouped[version]) for version in versions]


def _sequence(module: ModuleType, implementation: Callable, case: Case) -> Run:
    versions = case.input_versions()
    output = implementation(*(module.DifferenceSequence(_by_version(module, h, versions)) for h in case.histories()))
    data = [
        (record, version, multiplicity)
        for version, difference in zip(versions, output, strict=False)
        for record, multiplicity in difference
    ]
    return Run(events=[("data", data), ("frontier", [])])


def _graph_without_versions(module: ModuleType, implementation: Callable, case: Case) -> Run:
    """Feed each version, in order, once every input's frontier has passed it; label the output with it."""
    builder = module.GraphBuilder()
    streams, writers = zip(*(builder.new_input() for _ in case.inputs), strict=True)
    reader = implementation(*streams).connect_reader()
    graph = builder.finalize()
    pending: dict[int, list[list]] = {}
    frontiers: dict[str, float] = {name: 0 for name in case.inputs}
    run = Run()
    for message in case.messages:
        if message.data is not None:
            for record, version, multiplicity in message.data:
                slots = pending.setdefault(version, [[] for _ in case.inputs])
                slots[case.inputs.index(message.input)].append((record, multiplicity))
            continue
        frontiers[message.input] = min(message.frontier) if message.frontier else float("inf")
        for version in sorted(v for v in pending if v < min(frontiers.values())):
            for writer, updates in zip(writers, pending.pop(version), strict=True):
                writer.send_data(module.Collection(updates))
            _step_until(graph, lambda: not reader.is_empty())
            data = [(record, version, m) for output in reader.drain() for record, m in output]
            run.events.append(("data", data))
    run.events.append(("frontier", []))
    return run


def _step_until(graph: Any, done: Callable[[], bool]) -> None:
    for _ in range(STEP_BUDGET):
        if done():
            return
        graph.step()
    raise RuntimeError(f"the graph did not finish within {STEP_BUDGET} steps")


@dataclass
class _Spelling:
    """How a dataflow stage spells the case's versions and frontiers."""

    module: ModuleType
    case: Case

    def __post_init__(self) -> None:
        self.antichains = hasattr(self.module, "Antichain")
        versions = self.case.input_versions()
        # v3 and v4 have no empty frontier: the end of input is a version past every version of the case.
        self.beyond = (max(versions) + 1) if versions and not self.antichains else 0

    def zero(self) -> PlainVersion:
        return 0 if self.case.dimensions == 1 else (0,) * self.case.dimensions

    def frontier(self, versions: tuple) -> Any:
        Version = self.module.Version
        if self.antichains:
            return self.module.Antichain([Version(version) for version in versions])
        return Version(versions[0] if versions else self.beyond)

    def plain(self, version: Any) -> PlainVersion:
        coords = getattr(version, "coords", None)
        if coords is None:
            return version.value
        return coords[0] if self.case.dimensions == 1 else tuple(coords)

    def plain_frontier(self, frontier: Any) -> list[PlainVersion]:
        if self.antichains:
            return [self.plain(element) for element in frontier.elements]
        plain = self.plain(frontier)
        return [] if plain >= self.beyond else [plain]

    def closed(self) -> Any:
        return self.frontier(())


def _graph_with_versions(module: ModuleType, implementation: Callable, case: Case) -> Run:
    """Send the case's messages as they come, a step after each; then step until the output is closed."""
    spell = _Spelling(module, case)
    builder = module.GraphBuilder(module.Version(spell.zero()))
    streams, writers = zip(*(builder.new_input() for _ in case.inputs), strict=True)
    reader = implementation(*streams).connect_reader()
    graph = builder.finalize()
    run = Run()
    frontier = spell.frontier((spell.zero(),))

    def read() -> None:
        nonlocal frontier
        for message in reader.drain():
            if isinstance(message, module.DataMessage):
                version = spell.plain(message.version)
                run.events.append(("data", [(record, version, m) for record, m in message.collection]))
            else:  # final sends a frontier as a change; the stages before it send the frontier itself
                frontier = message.frontier if hasattr(message, "frontier") else frontier.apply(message)
                run.events.append(("frontier", spell.plain_frontier(frontier)))

    for message in case.messages:
        writer = writers[case.inputs.index(message.input)]
        if message.data is not None:
            batches: dict[PlainVersion, list] = {}
            for record, version, multiplicity in message.data:
                batches.setdefault(version, []).append((record, multiplicity))
            for version, updates in batches.items():
                writer.send_data(module.Version(version), module.Collection(updates))
        else:
            writer.send_frontier(spell.frontier(message.frontier))
        graph.step()
        read()
    _step_until(graph, lambda: not reader.probe_frontier_less_than(spell.closed()))
    read()
    return run
