"""The conformance oracle: its case set, its checker, its adapters and its command line."""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from final.conformance import catalog
from final.conformance.__main__ import catalog_markdown, main
from final.conformance.cases import CASES, VALID_LIST, Case, CaseError, Message, load, load_all
from final.conformance.check import judge, physical, read_report, shrink, size, without
from final.conformance.encoding import FALSE, TRUE, EncodingError, decode, encode
from final.conformance.engines import CommandEngine
from final.conformance.generate import (
    DEFAULT_SEED,
    FAMILIES,
    GenerationError,
    answer,
    generate,
    merging_booleans_fails,
    merging_fails,
    random_cases,
    tags_of,
    write,
)
from ladder import STAGES, missing_concept
from tests.conformance_faults import FaultyEngine, MergingEngine
from tests.harness import PRESENT_STAGES, stage_engine

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = sorted(load_all(CASES), key=lambda case: case.name)
BY_NAME = {case.name: case for case in COMMITTED}


def test_the_committed_case_set_is_what_generate_writes_for_the_default_seed(tmp_path: Path) -> None:
    """Its cases, its manifest and its list of the digests of the cases found valid (``VALID_LIST``)."""
    write(generate(DEFAULT_SEED), tmp_path, DEFAULT_SEED)
    written = {path.relative_to(tmp_path): path.read_text() for path in tmp_path.rglob("*") if path.is_file()}
    committed = {path.relative_to(CASES): path.read_text() for path in CASES.rglob("*") if path.is_file()}
    assert Path(VALID_LIST) in committed
    assert written.keys() == committed.keys()
    assert [name for name in written if written[name] != committed[name]] == []


def test_expected_outputs_are_computed_with_no_stage_before_final(monkeypatch: pytest.MonkeyPatch) -> None:
    """The answer from scratch is each program's plain-Python reference: with the stages v0..v5 made
    unimportable, the first random case of every program is still generated as committed."""
    for stage in STAGES[:-1]:
        monkeypatch.setitem(sys.modules, stage, None)  # import_module(stage) now raises ImportError
    for program in catalog.PROGRAMS:
        [case] = random_cases(program, DEFAULT_SEED, 1)
        assert case.text() == (CASES / program.name / "random-00.json").read_text(), program.name


def test_generation_is_deterministic_for_a_seed_and_differs_between_seeds() -> None:
    program = catalog.BY_NAME["reachability"]
    first, again, other = (random_cases(program, seed, 4) for seed in (7, 7, 8))
    assert [case.text() for case in first] == [case.text() for case in again]
    assert [case.text() for case in first] != [case.text() for case in other]


def test_the_case_set_covers_every_program_the_documents_and_each_kind_of_history() -> None:
    manifest = json.loads((CASES / "manifest.json").read_text())
    assert manifest["cases"] == len(COMMITTED)
    assert {case.program for case in COMMITTED} == set(catalog.BY_NAME)
    tags = {tag for case in COMMITTED for tag in case.tags}
    assert {"document", "retractions", "total-order", "product-order", "out-of-order", "iterate"} <= tags
    assert sum("document" in case.tags for case in COMMITTED) == 17
    assert sum(path.stat().st_size for path in CASES.rglob("*")) < 10_000_000


def test_the_case_set_reaches_where_engines_break() -> None:
    tags = {tag for case in COMMITTED for tag in case.tags}
    assert {"null-keys", "booleans", "large-integers", "whitespace", "unicode", "hash-collision", "large",
            "three-dimensions", "long-iterate", "nested-iterate"} <= tags
    records = {case.name: [r for history in case.histories() for r, _, _ in history] for case in COMMITTED}
    assert max(len(updates) for updates in records.values()) >= 1000
    assert max(len(set(case.input_versions())) for case in COMMITTED) >= 200
    assert max(case.dimensions for case in COMMITTED) == 3
    for name in ("join", "semijoin", "antijoin", "left_outer_join", "enrichment", "three_hops"):
        both_sides = [case for case in COMMITTED if case.program == name and "null-keys" in case.tags
                      and all(any(_has_null_key(r) for r, _, _ in history) for history in case.histories())]
        assert both_sides, f"no {name} case has a NULL key in every input"
    assert any({TRUE, 1, "1"} <= set(updates) for updates in records.values())
    flat = {value for updates in records.values() for r in updates for value in _leaves(r)}
    assert {-(2**53) - 1, -(2**31) - 1, "w65014", "w107666", "\U0001f600"} <= flat  # past a double, past 32 bits
    assert {case.outputs for case in COMMITTED} == {(), ("counts", "keys")}
    path = next(case for case in COMMITTED if case.name == "reachability/long-iterate-00")
    assert len(path.expected[0].collection) > 200  # each round reaches one more node along the path


def _has_null_key(record: object) -> bool:
    """A NULL key, or a NULL in a record of the null-keys family, where every NULL is in a join key."""
    return record is None or (isinstance(record, tuple) and None in record)


def _leaves(record: object) -> list:
    return [leaf for item in record for leaf in _leaves(item)] if isinstance(record, tuple) else [record]


def test_the_readme_lists_the_catalog_as_the_code_defines_it() -> None:
    assert catalog_markdown() in (ROOT / "final" / "conformance" / "README.md").read_text()


@pytest.mark.parametrize("stage", PRESENT_STAGES)
def test_every_stage_passes_every_case_it_supports(stage: str) -> None:
    engine = stage_engine(stage)
    verdicts = [judge(case, engine.run(case)) for case in COMMITTED]
    failed = [(v.case, v.lines()) for v in verdicts if v.status == "failed"]
    assert failed == []
    unsupported = {v.case for v in verdicts if v.status == "unsupported"}
    if stage == "final":
        assert unsupported == set()
        return
    assert unsupported == {case.name for case in COMMITTED if missing_concept(stage, case)}
    if stage in ("v0", "v5"):
        assert all(not catalog.BY_NAME[BY_NAME[name].program].portable for name in unsupported)


def test_unsupported_says_which_concept_is_missing() -> None:
    geometric = BY_NAME["geometric_series/doc-geometric_series"]
    assert "arrive in v4" in missing_concept("v3", geometric)
    assert "only grow" in missing_concept("v4", geometric)
    assert "partially ordered" in missing_concept("v4", BY_NAME["distinct/doc-household_distinct"])
    assert "only final has" in missing_concept("v5", BY_NAME["explode/doc-explode_counts"])


# -- planted faults ----------------------------------------------------------------------


def test_a_dropped_retraction_is_reported_at_its_case_and_version() -> None:
    fraud = BY_NAME["reachability/doc-fraud_propagation"]
    verdict = judge(fraud, FaultyEngine("drop_retraction").run(fraud))
    assert verdict.status == "failed"
    [mismatch] = verdict.mismatches
    assert mismatch.version == 1
    assert len(mismatch.extra) == 1 and not mismatch.missing and not mismatch.wrong


def test_output_at_the_wrong_version_is_reported_there() -> None:
    names = BY_NAME["name_lengths/doc-names_with_lengths"]  # frank at 6; frank and david at 8; frank retracted at 9
    verdict = judge(names, FaultyEngine("wrong_version").run(names))
    assert verdict.status == "failed"
    assert [mismatch.version for mismatch in verdict.mismatches] == [6]
    assert verdict.mismatches[0].missing == {("frank", 5): 1}


def test_double_counting_is_reported_as_wrong_multiplicities_at_every_version() -> None:
    concat = BY_NAME["concat/doc-concat_out_of_order"]
    verdict = judge(concat, FaultyEngine("double_count").run(concat))
    assert [mismatch.version for mismatch in verdict.mismatches] == [0, 1, 2, 3]
    assert verdict.mismatches[0].wrong == {"a0": (1, 2), "b0": (1, 2)}


def test_every_fault_fails_cases_and_no_correct_engine_does() -> None:
    for fault in ("drop_retraction", "wrong_version", "double_count"):
        engine = FaultyEngine(fault)
        statuses = {judge(case, engine.run(case)).status for case in COMMITTED[:60]}
        assert "failed" in statuses, fault


BOOLEANS = [case for case in COMMITTED if "booleans" in case.tags]


@pytest.mark.parametrize("merged", [(TRUE,), (FALSE,)], ids=["true-as-1", "false-as-0"])
def test_every_booleans_case_fails_an_engine_that_takes_a_boolean_for_its_integer(merged: tuple) -> None:
    """final fed ``true`` (or ``false``) as Python's bool merges it with ``1`` (``0``) in every dict it
    keeps: each program of the family has cases, and each case fails it, as generate made sure; the same
    engine merging nothing, and final, pass them all."""
    [family] = [family for family in FAMILIES if family.name == "booleans"]
    assert {case.program for case in BOOLEANS} == set(family.records)
    merging = MergingEngine(merged)
    assert [case.name for case in BOOLEANS if judge(case, merging.run(case)).status != "failed"] == []
    for right in (MergingEngine(()), stage_engine("final")):
        verdicts = [judge(case, right.run(case)) for case in BOOLEANS]
        assert [(verdict.case, verdict.lines()) for verdict in verdicts if verdict.status != "passed"] == []


def test_a_booleans_case_is_one_that_merging_a_boolean_with_its_integer_must_fail() -> None:
    """Where merging changes the answer: a ``true`` key against a ``1`` record, or ``true`` and ``1`` in one
    version's output; not where both keys are there anyway, nor where the two come at different versions of
    a program that keeps no records."""
    antijoin, concat = catalog.BY_NAME["antijoin"], catalog.BY_NAME["concat"]
    assert merging_fails(antijoin, [[((1, "a"), 0, 1)], [(TRUE, 0, 1)]], TRUE)
    assert not merging_fails(antijoin, [[((1, "a"), 0, 1)], [(TRUE, 0, 1), (1, 0, 1)]], TRUE)
    assert not merging_fails(antijoin, [[((1, "a"), 0, 1)], [(TRUE, 0, 1)]], FALSE)
    assert merging_fails(concat, [[(TRUE, 1, 1)], [(1, 1, 1)]], TRUE)
    assert not merging_fails(concat, [[(TRUE, 0, 1)], [(1, 1, 1)]], TRUE)
    assert not merging_booleans_fails(concat, [[(TRUE, 1, 1)], [(1, 1, 1)]])  # false and 0 are not there
    assert all(merging_booleans_fails(catalog.BY_NAME[case.program], case.histories()) for case in BOOLEANS)


def test_shrinking_keeps_a_failing_physical_case_with_fewer_updates() -> None:
    engine = FaultyEngine("drop_retraction")
    case = BY_NAME["three_hops/doc-three_hops_shared_links"]
    shrunk = shrink(case, lambda c: judge(c, engine.run(c)).status == "failed")
    smallest = shrunk.case
    assert shrunk.stopped == "done" and 0 < shrunk.runs
    assert size(smallest) < size(case)
    assert physical(smallest)
    assert judge(smallest, engine.run(smallest)).status == "failed"
    assert judge(smallest, stage_engine("v0").run(smallest)).status == "passed"
    assert smallest.name == "three_hops/doc-three_hops_shared_links-shrunk"


def test_a_shrunk_case_drops_frontier_messages_that_repeat_and_the_tags_it_no_longer_earns() -> None:
    documented = BY_NAME["geometric_series/doc-geometric_series"]
    assert {"document", "retractions"} <= set(documented.tags)
    grows = lambda case: size(case) > 0 and all(m > 0 for h in case.histories() for *_, m in h)  # noqa: E731
    smallest = shrink(documented, grows).case
    assert size(smallest) == 1
    assert "document" not in smallest.tags and "retractions" not in smallest.tags
    assert smallest.tags == tags_of(catalog.BY_NAME["geometric_series"], 1, smallest.histories(), smallest.messages)
    data, closed, at_one = Message("records", data=(("chair", 0, 1),)), Message("records", frontier=()), \
        Message("records", frontier=(1,))
    repeating = dataclasses.replace(BY_NAME["distinct/doc-household_distinct"], dimensions=1, messages=(
        Message("records", frontier=(0,)), data, at_one, at_one, Message("records", data=(("desk", 1, 1),)), at_one,
        closed, closed))
    tidy = without(repeating, set())
    assert [message.frontier for message in tidy.messages if message.data is None] == [(1,), ()]
    assert size(tidy) == 2


def test_a_disagreement_between_final_and_from_scratch_is_never_written(monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = dataclasses.replace(catalog.BY_NAME["count_by_key"], final=lambda records: records.count().negate())
    monkeypatch.setitem(catalog.BY_NAME, "count_by_key", wrong)
    with pytest.raises(GenerationError, match="from scratch"):
        answer(BY_NAME["count_by_key/doc-reduce_closed_versions_in_order"])


# -- the protocol ----------------------------------------------------------------------------


def _command(*arguments: str) -> list[str]:
    return [sys.executable, *arguments]


def test_an_engine_speaking_the_protocol_is_checked_like_one_in_process() -> None:
    engine = CommandEngine("v3", _command("-m", "final.conformance", "serve", "--engine", "v3"))
    try:
        verdicts = [judge(case, engine.run(case)) for case in COMMITTED[:40]]
    finally:
        engine.close()
    assert {v.status for v in verdicts} <= {"passed", "unsupported"}
    assert sum(v.status == "passed" for v in verdicts) >= 10


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        ("print('hello', flush=True)", "protocol"),
        ("import sys; sys.stdin.readline()", "ended before a closing line"),
        ("import time; time.sleep(30)", "no answer within"),
        ("print('{\"data\": [[1, 2.5, 1]]}', flush=True)", "protocol"),
    ],
)
def test_an_engine_that_breaks_the_protocol_fails_the_case_saying_how(script: str, reason: str) -> None:
    engine = CommandEngine("broken", _command("-c", script), timeout=2)
    case = COMMITTED[0]
    try:
        verdicts = [judge(case, engine.run(case)) for _ in range(2)]  # restarted for the second
    finally:
        engine.close()
    assert all(v.status == "failed" and reason in v.reason for v in verdicts)


def test_output_frontiers_are_checked() -> None:
    from final.conformance.drive import Run

    case = BY_NAME["name_lengths/doc-names_with_lengths"]
    good = stage_engine("final").run(case)
    late = Run(events=[("frontier", [9]), *[event for event in good.events if event[0] == "data"]])
    assert any("after the output frontier" in v for v in judge(case, late).violations)
    unclosed = Run(events=[*[e for e in good.events if e[0] == "data"], ("frontier", [7])])
    assert any("never closed" in v for v in judge(case, unclosed).violations)


def test_an_engine_that_ignores_frontiers_fails_the_frontier_contract_unless_it_is_waived(tmp_path: Path,
                                                                                        capsys) -> None:
    from final.conformance.drive import Run

    final = stage_engine("final")
    runs = {case.name: final.run(case) for case in COMMITTED}
    silent = {name: Run(events=[event for event in run.events if event[0] == "data"]) for name, run in runs.items()}
    verdicts = [judge(case, silent[case.name]) for case in COMMITTED]
    assert all(verdict.status == "failed" for verdict in verdicts)
    assert all(any("sent no output frontier" in line for line in verdict.lines()) for verdict in verdicts)
    assert all(judge(case, silent[case.name], frontier_contract=False).status == "passed" for case in COMMITTED)
    assert all(judge(case, runs[case.name]).status == "passed" for case in COMMITTED)

    engine = f"cmd:{sys.executable} -m tests.conformance_faults no_frontiers"
    arguments = ["check", "--engine", engine, "--program", "distinct", "--label", "silent"]
    assert main([*arguments, "--report", str(tmp_path / "held.json"), "--no-shrink"]) == 1
    assert main([*arguments, "--report", str(tmp_path / "waived.json"), "--waive-frontier-contract"]) == 0
    out = capsys.readouterr().out
    count = sum(case.program == "distinct" for case in COMMITTED)
    assert f"0 passed, {count} failed, 0 unsupported" in out
    assert f"{count} passed, 0 failed, 0 unsupported (frontier contract waived)" in out
    assert read_report(tmp_path / "held.json")["frontier_contract"] == "checked"
    assert read_report(tmp_path / "waived.json")["frontier_contract"] == "waived"


def test_each_output_of_a_case_with_several_is_judged_apart() -> None:
    from final.conformance.drive import Run

    case = BY_NAME["counts_and_keys/random-00"]
    run = stage_engine("final").run(case)
    assert judge(case, run).status == "passed"
    keys_only = Run(events=[event for event in run.events if event[2] == "keys"])
    verdict = judge(case, keys_only)
    assert verdict.status == "failed"
    assert verdict.violations[0].startswith("output 'counts': the engine sent no output frontier")
    assert all(mismatch.output == "counts" for mismatch in verdict.mismatches)
    assert verdict.mismatches[0].describe().startswith("output 'counts' at version ")
    untagged = Run(events=[(kind, items) for kind, items, _ in run.events])
    assert "which is not an output of this case" in judge(case, untagged).violations[0]


def test_output_at_a_version_of_the_wrong_shape_fails_the_case() -> None:
    from final.conformance.drive import Run

    pairs = BY_NAME["join/random-01"]
    verdict = judge(pairs, Run(events=[("data", [((1, (1, 1)), 0, 1)]), ("frontier", [])]))
    assert verdict.status == "failed"
    assert verdict.violations == ["output at version 0, which is not a version of this case (2 coordinate(s))"]


# -- case files and encoding ----------------------------------------------------------------------


def test_records_round_trip_through_the_encoding() -> None:
    for record in [None, 3, "a", (), (1, None), ("x", (2, ("y", None))), TRUE, (FALSE, 0, "false")]:
        assert decode(json.loads(json.dumps(encode(record)))) == record
    assert len({decode(value) for value in json.loads('[true, 1, "1", false, 0]')}) == 5
    with pytest.raises(EncodingError, match="TRUE and FALSE"):
        encode(True)
    with pytest.raises(EncodingError, match="float"):
        encode(2.5)
    with pytest.raises(EncodingError):
        decode({"a": 1})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c: c.pop("program"), "'program' is a required property"),
        (lambda c: c.update(dimensions=0), "dimensions"),
        (lambda c: c["messages"].insert(0, {"input": "numbers", "data": [[1, -1, 1]]}), "messages"),
        (lambda c: c["messages"].insert(0, {"input": "nobody", "frontier": []}), "not one of"),
        (lambda c: c["messages"].pop(), "never closed"),
        (lambda c: c["messages"].append({"input": "numbers", "data": [[1, 0, 1]]}), "frontier passed it"),
        (lambda c: c["messages"].insert(0, {"input": "numbers", "data": [[1, [0, 0], 1]]}), "coordinate"),
    ],
)
def test_a_broken_case_file_is_refused_with_what_is_wrong(tmp_path: Path, change, message: str) -> None:
    value = BY_NAME["add_one_squares/doc-add_one_iterate"].to_json()
    change(value)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(value))
    with pytest.raises(CaseError, match=message):
        load(path)


FRAUD = CASES / "reachability" / "doc-fraud_propagation.json"
"""Messages: roots +you at 0, roots' frontier [1], four edges at 0, edges closed, roots -you at 1, roots closed.
Expected: at 0 ana, bo, cy and you (collection and difference); at 1 nothing (each retracted)."""


def _set(path: list, to):
    def change(case: dict) -> None:
        target = case
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = to
    return change


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_set(["program"], "reachabilty"), "$.program: 'reachabilty' is not a program of the catalog: did you mean "
                                           "'reachability'? use one of those 'python -m final.conformance programs' "
                                           "lists"),
        (_set(["inputs"], ["edges", "roots"]), "$.inputs: ['edges', 'roots'] are not reachability's inputs in the "
                                               "catalog's order, ['roots', 'edges']: list those, in that order"),
        (_set(["inputs"], ["roots"]), "$.inputs: ['roots'] are not reachability's inputs"),
        (_set(["messages", 2, "data", 3, 2], 0), "$.messages[2].data[3][2]: a multiplicity of 0 says nothing, and a "
                                                 "case holds none: remove the update"),
        (_set(["expected", 1, "difference", 2, 1], 0), "$.expected[1].difference[2][1]: a multiplicity of 0 says "
                                                       "nothing, and a case holds none: leave the record out"),
        (_set(["expected", 0, "collection", 0, 1], 0), "$.expected[0].collection[0][1]: a multiplicity of 0"),
        (_set(["expected", 0, "collection", 1, 1], 2), '$.expected[0].collection: at version 0 the collection '
                                                       'contradicts the differences ("bo" is x2 in the collection, x1 '
                                                       'in the differences): the collection at a version is the sum '
                                                       'of the differences at every version <= it'),
        (_set(["expected", 1, "collection"], [["cy", 1]]), '$.expected[1].collection: at version 1 the collection '
                                                           'contradicts the differences ("cy" is x1 in the collection, '
                                                           'x0 in the differences)'),
        (_set(["expected", 1, "difference"], [["ana", -1], ["bo", -1], ["you", -1]]),
         '$.expected[1].collection: at version 1 the collection contradicts the differences ("cy" is x0 in the '
         'collection, x1 in the differences)'),
    ],
    ids=["unknown program", "inputs out of order", "inputs missing", "zero update", "zero difference",
         "zero collection", "collection off", "collection extra", "difference short"],
)
@pytest.mark.parametrize("engine", [["--engine", "v5"], ["--engine", "cmd:false"], ["--outputs", "."]],
                         ids=["stage", "cmd", "outputs"])
def test_a_wrong_case_is_refused_before_any_engine_runs(tmp_path: Path, capsys, change, message: str,
                                                        engine: list[str]) -> None:
    value = json.loads(FRAUD.read_text())
    change(value)
    path = tmp_path / "cases" / "reachability" / "doc-fraud_propagation.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(value))
    assert main(["check", *engine, "--cases", str(path), "--report", str(tmp_path / "r.json")]) == 2
    assert any(line.startswith(f"error: {path}: {message}") for line in capsys.readouterr().err.splitlines())
    report = read_report(tmp_path / "r.json")  # no engine ran, and the report says why
    assert report["verdicts"] == [] and report["reasons"] == ["could not start"] and path.name in report["error"]
    with pytest.raises(CaseError, match=re.escape(f"{path}: {message}")):
        list(load_all(tmp_path / "cases"))


def test_a_case_reads_back_as_written() -> None:
    for case in COMMITTED[::25]:
        assert Case.from_json(json.loads(case.text())) == case


def test_generate_refuses_to_write_over_a_directory_that_is_not_a_case_set(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="not a case set"):
        write(COMMITTED[:2], tmp_path, 1)
    assert (tmp_path / "notes.txt").exists()


# -- the command line ----------------------------------------------------------------------------------


def test_check_prints_failures_a_table_the_smallest_cases_and_the_summary(tmp_path: Path, capsys) -> None:
    cases = tmp_path / "cases"
    write([BY_NAME["reachability/doc-fraud_propagation"], BY_NAME["explode/doc-explode_counts"]], cases, 1)
    engine = "cmd:python -m tests.conformance_faults drop_retraction"
    status = main(["check", "--engine", engine, "--cases", str(cases), "--report", str(tmp_path / "r.json")])
    out = capsys.readouterr().out
    assert status == 1
    assert "FAIL reachability/doc-fraud_propagation" in out and "at version 1: extra" in out
    assert "| reachability |" in out.replace("  ", " ").replace("  ", " ")
    # The rerun has a label of its own, the run's and the case's, so that its report is filed beside this one's.
    assert ("check --engine 'cmd:python -m tests.conformance_faults drop_retraction' --label "
            "cmd-reachability-doc-fraud_propagation-shrunk --cases") in out
    assert out.rstrip().splitlines()[-1] == "0 passed, 2 failed, 0 unsupported"
    report = read_report(tmp_path / "r.json")
    assert report["failed"] == 2 and set(report["smallest_failing"]) == {"reachability", "explode"}
    assert report["complete"] and report["shrinking"]["reachability"]["stopped"] == "done"
    assert list((tmp_path / "r-shrunk").rglob("*.json"))


def _expect(path: Path, failures: dict[str, dict[str, str]], format: str = "dd-conformance-expect/2") -> Path:
    path.write_text(json.dumps({"format": format, "engine": "drop", "expected_failures": failures}))
    return path


DROPPING = "cmd:python -m tests.conformance_faults drop_retraction"
DOUBLING = "cmd:python -m tests.conformance_faults double_count"
FRAUD_DROPPED = "at version 1: extra \"ana\" x1"
"""How the fraud case fails when the first retraction of its output is dropped: ana stays reached."""


def test_expected_failures_keep_a_run_green_and_anything_else_turns_it_red(tmp_path: Path, capsys) -> None:
    cases = tmp_path / "cases"
    failing = ["reachability/doc-fraud_propagation", "explode/doc-explode_counts"]
    passing = "concat/doc-concat_out_of_order"  # no retraction in its output: dropping one changes nothing
    write([BY_NAME[name] for name in [*failing, passing]], cases, 1)
    check = ["check", "--engine", DROPPING, "--cases", str(cases), "--report", str(tmp_path / "r.jsonl")]

    written = tmp_path / "written.json"  # a run's failures, written as an engine's CI starts from them
    assert main([*check, "--no-shrink", "--write-expect", str(written)]) == 1
    recorded = json.loads(written.read_text())
    assert recorded["format"] == "dd-conformance-expect/2"
    assert sorted(recorded["expected_failures"]) == sorted(failing)
    assert recorded["expected_failures"][failing[0]] == {"reason": FRAUD_DROPPED, "failure": FRAUD_DROPPED}
    capsys.readouterr()

    both = _expect(tmp_path / "both.json", {name: {"reason": "drops a retraction (planted)",
                                                   "failure": recorded["expected_failures"][name]["failure"]}
                                            for name in failing})
    assert main([*check, "--expect", str(both)]) == 0
    out = capsys.readouterr().out
    assert "expected FAIL reachability/doc-fraud_propagation: drops a retraction (planted)" in out
    assert out.rstrip().splitlines()[-1].endswith("2 failures expected, 0 new, 0 listed but not failing")
    assert "smallest failing case" not in out  # known faults are not shrunk again
    assert read_report(tmp_path / "r.jsonl")["verdicts"][1]["expected_failure"] == "drops a retraction (planted)"
    assert read_report(tmp_path / "r.jsonl")["reasons"] == []

    one = _expect(tmp_path / "one.json", {failing[0]: {"reason": "drops a retraction (planted)",
                                                       "failure": FRAUD_DROPPED}})
    assert main([*check, "--expect", str(one)]) == 1
    out = capsys.readouterr().out
    assert "FAIL explode/doc-explode_counts\n" in out and "1 failures expected, 1 new, 0 listed but not failing" in out
    assert set(read_report(tmp_path / "r.jsonl")["smallest_failing"]) == {"explode"}
    assert read_report(tmp_path / "r.jsonl")["new_failures"] == ["explode/doc-explode_counts"]
    assert read_report(tmp_path / "r.jsonl")["reasons"] == ["failed"]

    stale = _expect(tmp_path / "stale.json", {**json.loads(both.read_text())["expected_failures"],
                                              passing: {"reason": "was fixed in 0.2", "failure": "at version *"}})
    assert main([*check, "--expect", str(stale), "--no-shrink"]) == 1
    out = capsys.readouterr().out
    assert f"PASSED {passing}, listed in {stale} as failing (was fixed in 0.2): remove it" in out
    assert read_report(tmp_path / "r.jsonl")["listed_but_not_failing"] == [passing]
    assert read_report(tmp_path / "r.jsonl")["reasons"] == ["listed but not failing"]

    assert main([*check, "--expect", str(written)]) == 0


def test_a_listed_case_that_fails_otherwise_is_a_new_failure_shown_with_what_it_now_says(tmp_path: Path,
                                                                                         capsys) -> None:
    cases = tmp_path / "cases"
    write([BY_NAME["reachability/doc-fraud_propagation"]], cases, 1)
    known = _expect(tmp_path / "known.json", {"reachability/doc-fraud_propagation": {
        "reason": "drops a retraction (planted)", "failure": FRAUD_DROPPED}})
    report = tmp_path / "r.jsonl"
    assert main(["check", "--engine", DOUBLING, "--cases", str(cases), "--expect", str(known), "--no-shrink",
                 "--report", str(report)]) == 1
    out = capsys.readouterr().out
    doubled = 'at version 0: wrong multiplicity "ana" expected x1 got x2'
    assert (f"FAIL reachability/doc-fraud_propagation, listed in {known} as failing with '{FRAUD_DROPPED}' (drops "
            f"a retraction (planted)), now fails otherwise:\n    {doubled}") in out
    assert "expected FAIL" not in out
    assert out.rstrip().splitlines()[-1].endswith("0 failures expected, 1 new, 0 listed but not failing")
    written = read_report(report)
    assert written["new_failures"] == written["failing_otherwise"] == ["reachability/doc-fraud_propagation"]
    assert written["reasons"] == ["failed"]
    [verdict] = written["verdicts"]
    assert verdict["expected_failure"] == "drops a retraction (planted)" and verdict["failing_otherwise"]
    # A failure's text that changes from run to run (a count of steps, seconds) is matched with * in its place.
    loose = _expect(tmp_path / "loose.json", {"reachability/doc-fraud_propagation": {
        "reason": "counts twice (planted)", "failure": "at version *: wrong multiplicity \"ana\" expected x* got x*"}})
    assert main(["check", "--engine", DOUBLING, "--cases", str(cases), "--expect", str(loose), "--no-shrink",
                 "--report", str(report)]) == 0


def test_a_listed_case_the_case_set_lacks_is_refused_before_any_engine_runs(tmp_path: Path, capsys) -> None:
    typo = _expect(tmp_path / "typo.json", {
        "reachability/doc-fraud_propagation": {"reason": "drops a retraction", "failure": FRAUD_DROPPED},
        "reachability/doc-fraud_propagatoin": {"reason": "drops a retraction", "failure": FRAUD_DROPPED},
        "joins/random-00": {"reason": "a program that is not there", "failure": "*"}})
    for program in ([], ["--program", "concat"]):  # a listed name is checked against the whole set
        report = tmp_path / "r.jsonl"
        assert main(["check", "--engine", DROPPING, *program, "--expect", str(typo), "--report", str(report)]) == 2
        err = capsys.readouterr().err
        assert (f"error: --expect {typo}: 2 listed cases are not in the case set under {CASES}: "
                "joins/random-00, reachability/doc-fraud_propagatoin") in err
        assert read_report(report)["reasons"] == ["could not start"] and read_report(report)["verdicts"] == []


def test_an_expectations_file_of_the_first_format_is_still_read_saying_what_it_cannot_tell(tmp_path: Path,
                                                                                          capsys) -> None:
    """Format /1 named each case with its reason alone: a listed case that fails in any way is expected, and
    the checker says so, and prints what each failure now is."""
    cases = tmp_path / "cases"
    write([BY_NAME["reachability/doc-fraud_propagation"]], cases, 1)
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"format": "dd-conformance-expect/1", "expected_failures": {
        "reachability/doc-fraud_propagation": "drops a retraction (planted)"}}))
    assert main(["check", "--engine", DOUBLING, "--cases", str(cases), "--expect", str(old), "--report",
                 str(tmp_path / "r.jsonl")]) == 0
    captured = capsys.readouterr()
    assert (f"note: {old} is dd-conformance-expect/1, which records no failure per case: a listed case that "
            "fails otherwise is not told apart") in captured.err
    assert ("expected FAIL reachability/doc-fraud_propagation: drops a retraction (planted)\n"
            '    at version 0: wrong multiplicity "ana" expected x1 got x2') in captured.out


@pytest.mark.parametrize("text, message", [
    ("{", "not JSON"),
    ('{"expected_failures": {}}', '"format": "dd-conformance-expect/2"'),
    ('{"format": "dd-conformance-expect/2", "expected_failures": ["join/random-00"]}', "an object of case names"),
    ('{"format": "dd-conformance-expect/2", "expected_failures": {"random-00": {"reason": "x", "failure": "x"}}}',
     "is not a case name"),
    ('{"format": "dd-conformance-expect/2", "expected_failures": {"join/random-00": {"reason": "", "failure": "x"}}}',
     "has no reason"),
    ('{"format": "dd-conformance-expect/2", "expected_failures": {"join/random-00": {"reason": "x"}}}',
     "has no failure"),
    ('{"format": "dd-conformance-expect/2", "expected_failures": {"join/random-00": "x"}}', "has no failure"),
    ('{"format": "dd-conformance-expect/1", "expected_failures": {"join/random-00": ""}}', "has no reason"),
])
def test_an_expectations_file_that_says_nothing_clear_is_refused(tmp_path: Path, capsys, text: str,
                                                                 message: str) -> None:
    (tmp_path / "e.json").write_text(text)
    assert main(["check", "--engine", "final", "--program", "join", "--expect", str(tmp_path / "e.json"),
                 "--report", str(tmp_path / "r.jsonl")]) == 2
    assert message in capsys.readouterr().err
    assert read_report(tmp_path / "r.jsonl")["reasons"] == ["could not start"]


def test_a_report_names_its_engine_label_case_set_and_seed_and_is_filed_under_the_label(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)  # the default report folder, out/conformance, is relative
    manifest = json.loads((CASES / "manifest.json").read_text())
    for label in ("first", "second"):
        assert main(["check", "--engine", "v5", "--program", "distinct", "--label", label]) == 0
    assert f"(engine second, case set {manifest['case_set']}, seed {manifest['seed']})" in capsys.readouterr().out
    for label in ("first", "second"):  # two labels, two reports: neither overwrites the other
        report = read_report(tmp_path / "out" / "conformance" / f"{label}.jsonl")
        assert (report["label"], report["case_set"], report["seed"]) == (label, manifest["case_set"], manifest["seed"])
    loose = tmp_path / "loose.json"  # a case file of one's own belongs to no set
    loose.write_text(BY_NAME["distinct/doc-household_distinct"].text())
    assert main(["check", "--engine", "v5", "--cases", str(loose), "--report", str(tmp_path / "loose.report")]) == 0
    report = read_report(tmp_path / "loose.report")
    assert (report["label"], report["case_set"], report["seed"]) == ("v5", None, None)


def test_recorded_outputs_are_checked_like_a_live_engine(tmp_path: Path, capsys) -> None:
    cases = tmp_path / "cases"
    write(COMMITTED[:12], cases, 1)
    recorded = tmp_path / "recorded"
    assert main(["check", "--engine", "v2", "--cases", str(cases), "--record", str(recorded),
                 "--report", str(tmp_path / "a.json")]) == 0
    assert main(["check", "--outputs", str(recorded), "--cases", str(cases), "--report", str(tmp_path / "b.json")]) == 0
    first = read_report(tmp_path / "a.json")
    assert read_report(tmp_path / "b.json")["passed"] == first["passed"]
    next(recorded.rglob("*.jsonl")).unlink()
    assert main(["check", "--outputs", str(recorded), "--cases", str(cases), "--report", str(tmp_path / "c.json")]) == 1
    assert "no recorded output" in capsys.readouterr().out


def test_check_from_the_command_line_exits_zero_on_a_clean_pass() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "final.conformance", "check", "--engine", "v5", "--program", "distinct",
         "--report", "/dev/null"],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    count = sum(case.program == "distinct" for case in COMMITTED)
    assert result.stdout.rstrip().splitlines()[-1] == f"{count} passed, 0 failed, 0 unsupported"


def test_a_rerun_command_keeps_what_changes_the_verdict_and_files_its_report_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)  # the default report folder, out/conformance, is relative
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the faulty engine's module, from here
    cases = tmp_path / "cases"
    write([BY_NAME["reachability/doc-fraud_propagation"]], cases, 1)
    nothing = _expect(tmp_path / "nothing.json", {})
    assert main(["check", "--engine", DROPPING, "--cases", str(cases), "--timeout", "7", "--max-output-lines",
                 "2000000", "--waive-frontier-contract", "--expect", "nothing.json"]) == 1
    out = capsys.readouterr().out
    [line] = [line for line in out.splitlines() if " — " in line]
    rerun = line.split(" — ", 1)[1]
    label = "cmd-reachability-doc-fraud_propagation-shrunk"
    for kept in (f"--engine '{DROPPING}'", f"--label {label}", "--timeout 7", "--max-output-lines 2000000",
                 "--waive-frontier-contract", f"--expect {nothing.resolve()}"):
        assert kept in rerun
    full = (tmp_path / "out" / "conformance" / "cmd.jsonl").read_text()
    assert main(shlex.split(rerun)[3:]) == 1  # pasted in the same folder
    assert (tmp_path / "out" / "conformance" / "cmd.jsonl").read_text() == full
    [verdict] = read_report(tmp_path / "out" / "conformance" / f"{label}.jsonl")["verdicts"]
    assert verdict["status"] == "failed" and verdict["case"].endswith("-shrunk")


def test_the_readme_says_how_many_programs_the_catalog_holds() -> None:
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f"a catalog of {len(catalog.PROGRAMS)} named programs" in readme


def test_the_help_names_every_command(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    usage = capsys.readouterr().out
    description = usage.split("\n\n")[1]
    for name in ("generate", "check", "fuzz", "programs", "serve"):
        assert name in description
    assert "``" not in usage


def test_the_package_imports_under_the_distributions_name_as_the_same_modules() -> None:
    """``final`` is a generic name in an adopter's environment: ``differential_dataflow_stages`` is the
    package under the distribution's own name, module for module, so one class is one class under both."""
    import differential_dataflow_stages.conformance.check as check
    from differential_dataflow_stages.conformance.drive import Run

    import differential_dataflow_stages
    import final
    import final.conformance.check
    import final.conformance.drive

    assert differential_dataflow_stages is final and check is final.conformance.check
    assert Run is final.conformance.drive.Run
    alone = subprocess.run(
        [sys.executable, "-c", "from differential_dataflow_stages.conformance.encoding import TRUE\n"
         "import final.conformance.encoding, sys\nassert TRUE is final.conformance.encoding.TRUE\n"
         "print(sorted({m.__name__ for n, m in sys.modules.items() if n.startswith('differential_')}))"],
        capture_output=True, text=True, cwd=ROOT)
    assert alone.returncode == 0, alone.stderr
    assert alone.stdout.strip() == str(sorted(["final", "final.conformance", "final.conformance.encoding"]))
    policy = (ROOT / "CHANGELOG.md").read_text().split("## Compatibility policy")[1].split("\n## ")[0]
    assert "`differential_dataflow_stages`" in policy


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["check", "--engine", "v9"], "unknown engine 'v9'"),
        (["check", "--engine", "v3", "--program", "nothing"], "no such program"),
        (["check", "--engine", "v3", "--cases", "/nonexistent"], "holds no case files"),
        (["check", "--engine", "no_such_module:make"], "cannot import no_such_module"),
        (["check", "--engine", "json:no_such_factory"], "json has no factory 'no_such_factory'"),
        (["check", "--engine", "json:JSONDecoder"], "JSONDecoder() returned JSONDecoder, which has no run(case)"),
        (["serve", "--engine", "v9"], "use final, one of v0, v1"),
    ],
)
def test_check_that_cannot_start_says_why_and_exits_2(arguments: list[str], message: str, capsys, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the default report folder, out/conformance, is relative
    assert main(arguments) == 2
    assert message in capsys.readouterr().err
    if arguments[0] == "check":
        [report] = (tmp_path / "out" / "conformance").glob("*.jsonl")
        assert read_report(report)["reasons"] == ["could not start"] and message in read_report(report)["error"]


def test_a_python_engine_is_judged_through_its_factory_as_the_readme_shows(tmp_path: Path, capsys,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    readme = (ROOT / "final" / "conformance" / "README.md").read_text()
    plugin = readme.split("## A Python engine")[1].split("```python\n")[1].split("```")[0]
    (tmp_path / "echo_engine.py").write_text(plugin)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--engine", "echo_engine:make", "--program", "concat", "--no-shrink"]) == 0
    count = sum(case.program == "concat" for case in COMMITTED)
    assert capsys.readouterr().out.rstrip().splitlines()[-1] == f"{count} passed, 0 failed, 0 unsupported"
    assert main(["check", "--engine", "echo_engine:make", "--program", "difference", "--no-shrink"]) == 1
    report = read_report(tmp_path / "out" / "conformance" / "echo_engine.jsonl")
    assert report["engine"] == "echo_engine:make" and report["failed"] > 0


def test_the_stages_the_oracle_knows_are_the_project_stages() -> None:
    assert (*STAGES, "final") == tuple(PRESENT_STAGES)


def test_the_readme_table_of_stages_is_what_they_do_on_the_committed_set() -> None:
    readme = (ROOT / "README.md").read_text().split("## The conformance oracle")[1].split("\n## ")[0]
    for stage in PRESENT_STAGES:
        engine = stage_engine(stage)
        statuses = [judge(case, engine.run(case)).status for case in COMMITTED]
        counts = [statuses.count(status) for status in ("passed", "failed", "unsupported")]
        row = next(line for line in readme.splitlines() if line.startswith("| ") and stage in line.split("|")[1])
        assert [int(cell.split()[0]) for cell in row.split("|")[2:5]] == counts, row


# -- d2ts, as its report describes it ---------------------------------------------------------------

D2TS = ROOT / "final" / "conformance" / "d2ts"
FINDINGS = sorted(load_all(D2TS / "findings"), key=lambda case: case.name)


@pytest.fixture(scope="module")
def d2ts():
    """d2ts through its adapter (``npm ci`` of the pinned version on first use)."""
    from final.conformance.engines import d2ts_engine

    engine = d2ts_engine(timeout=60)
    yield engine
    engine.close()


def test_every_d2ts_finding_is_an_ordinary_case_that_the_stages_pass() -> None:
    assert len(FINDINGS) == 11
    for case in FINDINGS:
        for stage in ("v0", "v5", "final"):
            assert judge(case, stage_engine(stage).run(case)).status in {"passed", "unsupported"}, (case.name, stage)
        assert judge(case, stage_engine("final").run(case)).status == "passed"


@pytest.mark.slow
def test_d2ts_fails_each_finding_as_its_report_says(d2ts) -> None:
    verdicts = {case.name: judge(case, d2ts.run(case)) for case in FINDINGS}
    assert {name: v.status for name, v in verdicts.items()} == {case.name: "failed" for case in FINDINGS}
    first = {name: v.mismatches[0] for name, v in verdicts.items() if v.mismatches}
    assert first["count_by_key/count-of-nothing"].extra == {(1, 0): 1}  # F3
    assert first["semijoin/filterby-value"].missing == {(1, 4): 1}  # F5
    assert first["semijoin/filterby-value"].extra == {(1, None): 1}
    assert first["left_outer_join/two-matches"].extra == {(0, (3, None)): -1}  # F4
    assert (first["distinct/compaction-drops-key"].version, first["distinct/compaction-drops-key"].missing) == (
        5, {"a": 1})  # F1
    assert "did not settle" in verdicts["noop_loop/consolidate-never-quiet"].reason  # F2
    assert "Invalid version" in verdicts["geometric_series/loop-closed-early"].reason  # F7
    assert first["distinct/past-2-53"].missing == {2**53 + 1: 1}  # F8


@pytest.mark.slow
def test_d2ts_passes_every_case_of_the_programs_its_report_says_pass(d2ts) -> None:
    row = next(line for line in (D2TS / "REPORT.md").read_text().splitlines() if line.startswith("| antijoin"))
    programs = [name.strip() for name in row.split("|")[1].split(",")]
    assert len(programs) == 11 and set(programs) <= set(catalog.BY_NAME)
    verdicts = [judge(case, d2ts.run(case)) for case in COMMITTED if case.program in programs]
    assert [(v.case, v.lines()) for v in verdicts if v.status != "passed"] == []
