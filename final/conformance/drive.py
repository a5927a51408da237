"""How a case is run on an engine written with this project's API, and what the run said.

One driver serves the oracle and the test suite: a stage of the ladder (v0
to v5, through the adapters in the repository's ``ladder.py``), final (here,
as ``FinalEngine``), and the shared tests (``tests/harness.py``) all run a
case through ``drive``. The stages have four kinds of API (document 002's
static collections in v0, difference sequences in v1, dataflow graphs
without versions in v2, and with versions from v3 on), told apart by what
the module defines (``kind_of``):

- ``static`` (v0) has no time at all: it keeps every update and, at the
  end, computes the output from scratch at every version of the case (the
  join closure of the input versions) and reports the differences between
  them (001's formula);
- ``sequence`` (v1) has a sequence of differences but no versions: the
  updates are put in version order, one difference per version;
- ``unversioned`` (v2) has a dataflow graph but no versions: a version is
  fed, in order, once every input's frontier has passed it;
- ``versioned`` (v3 to final) takes the messages as they are, data and
  frontiers, with a step of the graph after each, then steps until the output
  is closed; v3 and v4 spell a frontier as one version (the end of input as a
  version past the case's last), v5 and final as an antichain.

This module imports no stage: the caller hands it the stage's module. A
driver's own failure (a stage that raises, or never finishes) propagates;
``drive`` turns it into an ``error`` run, which is the finding.

A stage's difference collections may hold updates of multiplicity 0 (final's
do: ``explode`` and ``join_function`` multiply by what a function yields,
0 included, and leave consolidation to whoever reads them); the protocol
refuses them, since they say nothing, so the drivers leave them out of a
run, as consolidating would (``nonzero``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from .cases import Case
from .catalog import program_named
from .encoding import PlainVersion, add
from .versions import differences, join_closure, less_equal

STEP_BUDGET = 20_000
"""Most ``graph.step()`` calls one wait may take (for an output to be written, or closed): far beyond
what any case or test needs, so a stage that never finishes is reported in seconds instead of hanging."""


class StepBudgetExceeded(RuntimeError):
    """A dataflow graph did not finish within ``STEP_BUDGET`` steps: it never settles."""


Output = str | None
"""An output's name: one of a program's ``outputs``, or None for a program's one unnamed output."""


def outputs_of(result: Any) -> dict[Output, Any]:
    """A program's result by output: a dict (one stream or collection per named output) as it is, a single
    result as the one unnamed output."""
    return dict(result) if isinstance(result, dict) else {None: result}


@dataclass
class Run:
    """What an engine did with one case.

    ``events`` are the engine's output messages in the order it sent them:
    ``("data", [(record, version, multiplicity), ...])`` or ``("frontier",
    [version, ...])``, with the output's name as a third element when the
    program has several outputs (``("data", [...], "evens")``). ``status`` is ``done``, ``unsupported`` or ``error``,
    with ``reason`` saying why for the last two. An engine in a child
    process that gave a case no closing line (it died, broke the protocol,
    or was stopped) leaves how it ended: ``exit_status`` (None when the
    checker stopped it) and the last lines of its standard error, ``stderr``;
    ``timed_out`` says the checker stopped it at the case's deadline.
    """

    status: str = "done"
    reason: str = ""
    events: list[tuple[str, list]] = field(default_factory=list)
    exit_status: int | None = None
    stderr: str = ""
    timed_out: bool = False
    """Whether the checker stopped the engine at the case's deadline (the shrinker's budget reads it)."""
    broke_protocol: bool = False
    """Whether the run is an ``error`` because the engine's output broke the protocol (``reason`` quotes the
    line), rather than an error the engine answered or a way it ended."""

    def events_of(self, output: Output = None) -> list[tuple[str, list]]:
        """The events of one output, as ``(kind, items)``."""
        return [(kind, items) for kind, items, *named in self.events if (named or [None])[0] == output]

    def outputs(self) -> set[Output]:
        """The outputs the events name (None for untagged events)."""
        return {(named or [None])[0] for _, _, *named in self.events}

    def add(self, kind: str, items: list, output: Output = None) -> None:
        self.events.append((kind, items) if output is None else (kind, items, output))

    def updates(self, output: Output = None) -> list[tuple[Hashable, PlainVersion, int]]:
        return [update for kind, items in self.events_of(output) if kind == "data" for update in items]


def nonzero(updates: Iterable[tuple[Hashable, PlainVersion, int]]) -> list[tuple[Hashable, PlainVersion, int]]:
    """``updates`` without those of multiplicity 0, which a run never holds (the module's docstring)."""
    return [update for update in updates if update[2] != 0]


def unsupported(reason: str) -> Run:
    return Run(status="unsupported", reason=reason)


def kind_of(module: ModuleType) -> str:
    """Which of the four APIs ``module`` has: ``static``, ``sequence``, ``unversioned`` or ``versioned``."""
    if not hasattr(module, "GraphBuilder"):
        return "sequence" if hasattr(module, "DifferenceSequence") else "static"
    return "versioned" if hasattr(module, "Version") else "unversioned"


def drive(module: ModuleType, implementation: Callable[..., Any], case: Case) -> Run:
    """Run ``case`` with ``implementation`` (one collection or stream per input, returning one) on ``module``.

    Whatever the module raises while doing so is reported as an ``error`` run, with its type.
    """
    try:
        return run_case(module, implementation, case)
    except Exception as error:  # the engine's own failure is the finding, reported with its type
        return Run(status="error", reason=f"{module.__name__} raised {type(error).__name__}: {error}")


def run_case(module: ModuleType, implementation: Callable[..., Any], case: Case) -> Run:
    """``drive`` without the net: what the module raises propagates (the test suite wants the traceback)."""
    return _DRIVERS[kind_of(module)](module, implementation, case)


class FinalEngine:
    """final, run in this process on its own operators (the catalog's ``final`` implementations)."""

    name = "final"

    def run(self, case: Case) -> Run:
        return drive(importlib.import_module("..", __package__), program_named(case.program).on_final(), case)

    def close(self) -> None:
        pass


# -- static collections (v0) -------------------------------------------------------


def from_scratch(module: ModuleType, implementation: Callable, histories: list, versions: list) -> dict:
    """The output collection at each of ``versions``: each input's ``(record, version, multiplicity)``
    history accumulated there, run through the program (one with a single output)."""
    return from_scratch_by_output(module, implementation, histories, versions).get(None, {})  # {}: no versions


def from_scratch_by_output(module: ModuleType, implementation: Callable, histories: list, versions: list) -> dict:
    """``from_scratch`` for each output: ``{output: {version: collection}}``."""
    collections: dict[Output, dict] = {}
    for version in versions:
        inputs = [
            module.Collection([(record, m) for record, at, m in history if less_equal(at, version)])
            for history in histories
        ]
        for output, collection in outputs_of(implementation(*inputs)).items():
            totals: dict = {}
            for record, multiplicity in collection:
                add(totals, record, multiplicity)
            collections.setdefault(output, {})[version] = totals
    return collections


def _static(module: ModuleType, implementation: Callable, case: Case) -> Run:
    by_output = from_scratch_by_output(module, implementation, case.histories(), join_closure(case.input_versions()))
    run = Run()
    for output, collections in by_output.items():
        data = [
            (record, version, multiplicity)
            for version, difference in differences(collections).items()
            for record, multiplicity in difference.items()
        ]
        run.add("data", data, output)
        run.add("frontier", [], output)
    return run


# -- a sequence of differences (v1) -------------------------------------------------


def _by_version(module: ModuleType, history: list, versions: list) -> list:
    """One difference collection per version (empty where the input did not change)."""
    grouped: dict[PlainVersion, list] = {version: [] for version in versions}
    for record, version, multiplicity in history:
        grouped[version].append((record, multiplicity))
    return [module.Collection(grouped[version]) for version in versions]


def _sequence(module: ModuleType, implementation: Callable, case: Case) -> Run:
    versions = case.input_versions()
    result = implementation(*(module.DifferenceSequence(_by_version(module, h, versions)) for h in case.histories()))
    run = Run()
    for output, sequence in outputs_of(result).items():
        data = [
            (record, version, multiplicity)
            for version, difference in zip(versions, sequence, strict=False)
            for record, multiplicity in difference
        ]
        run.add("data", nonzero(data), output)
        run.add("frontier", [], output)
    return run


# -- dataflow graphs -----------------------------------------------------------------


def step_until(graph: Any, done: Callable[[], bool]) -> None:
    """Step ``graph`` until ``done()``, at most ``STEP_BUDGET`` times.

    Raises:
        StepBudgetExceeded: it was not done by then.
    """
    for _ in range(STEP_BUDGET):
        if done():
            return
        graph.step()
    raise StepBudgetExceeded(f"the graph did not finish within {STEP_BUDGET} steps")


def build(module: ModuleType, implementation: Callable, inputs: int, zero: PlainVersion | None = None) -> tuple:
    """``(writers, reader, graph)``: ``implementation`` (a program with one output) built on ``inputs``
    fresh inputs of a dataflow stage (starting at version ``zero`` where it has versions), its output
    read, the graph finalized."""
    writers, readers, graph = build_by_output(module, implementation, inputs, zero)
    return writers, readers[None], graph


def build_by_output(module: ModuleType, implementation: Callable, inputs: int,
                    zero: PlainVersion | None = None) -> tuple:
    """``build`` for a program with any outputs: ``(writers, {output: reader}, graph)``."""
    builder = module.GraphBuilder() if zero is None else module.GraphBuilder(module.Version(zero))
    streams, writers = zip(*(builder.new_input() for _ in range(inputs)), strict=True)
    readers = {output: stream.connect_reader() for output, stream in outputs_of(implementation(*streams)).items()}
    return list(writers), readers, builder.finalize()


def _unversioned(module: ModuleType, implementation: Callable, case: Case) -> Run:
    """Feed each version, in order, once every input's frontier has passed it; label the output with it.

    Without versions, the updates of every input at one version are sent
    together: binary operators pair their inputs' differences by position.
    """
    writers, readers, graph = build_by_output(module, implementation, len(case.inputs))
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
            step_until(graph, lambda: not any(reader.is_empty() for reader in readers.values()))
            for output, reader in readers.items():
                run.add("data", nonzero((record, version, m) for change in reader.drain() for record, m in change),
                        output)
    for output in readers:
        run.add("frontier", [], output)
    return run


@dataclass
class Spelling:
    """How a versioned stage spells a case's plain versions (ints, or tuples of ints) and frontiers."""

    module: ModuleType
    dimensions: int
    versions: list

    def __post_init__(self) -> None:
        self.antichains = hasattr(self.module, "Antichain")
        # v3 and v4 have no empty frontier: the end of input is a version past every version of the case.
        self.beyond = (max(self.versions) + 1) if self.versions and not self.antichains else 0

    @property
    def zero(self) -> PlainVersion:
        return 0 if self.dimensions == 1 else (0,) * self.dimensions

    def frontier(self, versions: tuple | list) -> Any:
        """The frontier whose least versions are ``versions`` (``()``: the input is closed)."""
        Version = self.module.Version
        if self.antichains:
            return self.module.Antichain([Version(version) for version in versions])
        return Version(min(versions) if versions else self.beyond)

    def plain(self, version: Any) -> PlainVersion:
        coords = getattr(version, "coords", None)
        if coords is None:
            return version.value
        return coords[0] if self.dimensions == 1 else tuple(coords)

    def plain_frontier(self, frontier: Any) -> list[PlainVersion]:
        if self.antichains:
            return [self.plain(element) for element in frontier.elements]
        plain = self.plain(frontier)
        return [] if plain >= self.beyond else [plain]


def frontier_after(message: Any, previous: Any) -> Any:
    """The frontier a frontier message leaves: the one it carries (v3 to v5), or ``previous`` with its
    change applied (final sends frontiers as changes)."""
    return message.frontier if hasattr(message, "frontier") else previous.apply(message)


def _versioned(module: ModuleType, implementation: Callable, case: Case) -> Run:
    """Send the case's messages as they come, a step after each; then step until the output is closed."""
    spell = Spelling(module, case.dimensions, case.input_versions())
    writers, readers, graph = build_by_output(module, implementation, len(case.inputs), spell.zero)
    run = Run()
    frontiers = dict.fromkeys(readers, spell.frontier((spell.zero,)))

    def read() -> None:
        for output, reader in readers.items():
            for message in reader.drain():
                if isinstance(message, module.DataMessage):
                    version = spell.plain(message.version)
                    run.add("data", nonzero((record, version, m) for record, m in message.collection), output)
                else:
                    frontiers[output] = frontier_after(message, frontiers[output])
                    run.add("frontier", spell.plain_frontier(frontiers[output]), output)

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
    closed = spell.frontier(())
    step_until(graph, lambda: not any(reader.probe_frontier_less_than(closed) for reader in readers.values()))
    read()
    return run


_DRIVERS: dict[str, Callable[[ModuleType, Callable, Case], Run]] = {
    "static": _static, "sequence": _sequence, "unversioned": _unversioned, "versioned": _versioned,
}
