"""One way to run a program on any stage: ``run(stage, program, inputs)``.

The stages expose four different APIs (static collections in v0, difference
sequences in v1, dataflow graphs from v2 on, with versions from v3 on); the
oracle's driver, ``final.conformance.drive``, adapts each to one contract, and
this module adds what the tests need on top of it:

- ``program`` takes one collection-like per input and returns one, using only
  operator methods, so the same function runs on every stage;
- ``inputs`` holds one history per input, a list of ``(record, version,
  multiplicity)`` updates; a version is an int, or a tuple of ints. A
  history becomes the messages the driver sends (``generate.script``): the
  inputs take turns, one run of updates at one version each, each followed by
  the input's frontier, the least versions it has yet to send;
- the result maps every version at which any input changed to the
  accumulated, consolidated output collection at that version.

v0 computes every version from scratch, which makes it the oracle the other
stages are checked against. A stage that lacks a concept a program needs raises
``NotImplementedError`` naming it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from final.conformance.cases import Case
from final.conformance.check import frontier_violations
from final.conformance.drive import FinalEngine, Spelling, build, from_scratch, run_case, step_until
from final.conformance.generate import script
from final.conformance.versions import consolidate, differences, join_closure, less_equal, sort_key
from ladder import StageEngine

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


def stage_module(stage: str) -> ModuleType:
    """Import a stage package by name."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; expected one of {', '.join(STAGES)}")
    return importlib.import_module(stage)


def stage_engine(stage: str) -> Any:
    """The oracle's engine for ``stage``, in this process: final's own, or the ladder's plug-in."""
    return FinalEngine() if stage == "final" else StageEngine(stage)


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
    """The output differences by version: what a stage sent, or for v0 its collections at ``report`` differenced.

    A dataflow stage is held to the frontier contract on the way: no output
    data at a version its output frontier has passed.
    """
    if stage == "v0":
        return differences(from_scratch(stage_module(stage), program, list(inputs), report))
    if STAGES.index(stage) < STAGES.index("v5") and any(not isinstance(version, int) for version in versions):
        raise NotImplementedError(
            f"{stage} takes its input one version after another (v1 and v2 as a sequence, v3 and v4 in "
            "version order); partially ordered (tuple) input versions arrive in v5"
        )
    names = tuple(f"input{index}" for index in range(len(inputs)))
    dimensions = len(versions[0]) if versions and isinstance(versions[0], tuple) else 1
    case = Case("harness", "", names, dimensions, tuple(script(names, [list(h) for h in inputs])), ())
    run = run_case(stage_module(stage), program, case)
    broken = frontier_violations(case, run, required=False)
    if broken:
        raise AssertionError(f"{stage}: {'; '.join(broken)}")
    return {version: dict(difference) for version, difference in consolidate(run.updates()).items()}


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


def operators(graph: Any) -> list:
    """A finished graph's operators in topological order (every stage from v2 shows them as ``graph.operators``)."""
    return list(graph.operators)


def build_graph(stage: ModuleType, program: Callable[..., Any], inputs: int, zero: Any = 0) -> tuple[list, Any, Any]:
    """``(writers, reader, graph)``: ``program`` built on ``inputs`` fresh inputs, its output read, finalized."""
    return build(stage, program, inputs, zero if hasattr(stage, "Version") else None)


def data_until(stage: ModuleType, graph: Any, reader: Any, version: Any) -> list[dict]:
    """Step until ``reader``'s frontier passes ``version``; the data messages read, as ``{record: m}``."""
    step_until(graph, lambda: not reader.probe_frontier_less_than(version))
    return [message.collection.as_dict() for message in reader.drain() if isinstance(message, stage.DataMessage)]


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
    spell = Spelling(module, 1, versions)
    writers, reader, graph = build_graph(module, program, len(inputs), spell.zero)
    result = []
    for version in versions:
        for writer, history in zip(writers, inputs, strict=True):
            updates = [(record, m) for record, at, m in history if at == version]
            if updates:
                writer.send_data(module.Version(version), module.Collection(updates))
            writer.send_frontier(module.Version(version + 1))
        step_until(graph, lambda v=version: not reader.probe_frontier_less_than(module.Version(v + 1)))
        result += [
            (spell.plain(message.version), message.collection.as_dict())
            for message in reader.drain()
            if isinstance(message, module.DataMessage)
        ]
    return result
