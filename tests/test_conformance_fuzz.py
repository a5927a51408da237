"""Fresh random cases at run time (``fuzz_cases``): deterministic, valid, varied, and able to catch a fault."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from final.conformance.__main__ import main
from final.conformance.cases import CaseError, file_name, load
from final.conformance.catalog import BY_NAME, PROGRAMS
from final.conformance.check import judge, read_report
from final.conformance.drive import FinalEngine
from final.conformance.encoding import Boolean
from final.conformance.fuzz import families_of, fuzz_cases, kinds_of
from final.conformance.generate import FAMILIES
from tests.conformance_faults import FaultyEngine

ROUND = 6
"""Histories per program for the tests over every program: two of each kind of versions a program allows."""


@pytest.fixture(scope="module")
def every_program() -> list:
    return list(fuzz_cases(11, ROUND))


def test_a_seed_makes_the_same_cases_and_another_seed_others() -> None:
    first, again, other = ([case.text() for case in fuzz_cases(seed, 3, ["join", "reachability"])]
                           for seed in (7, 7, 8))
    assert first == again
    assert first != other
    alone = [case.text() for case in fuzz_cases(7, 3, ["reachability"])]
    assert alone == first[1::2]  # a program's cases do not depend on which other programs the run holds


def test_programs_take_turns_so_a_run_cut_short_covers_them_all(every_program: list) -> None:
    assert len(every_program) == ROUND * len(PROGRAMS)
    assert [case.program for case in every_program[:len(PROGRAMS)]] == [program.name for program in PROGRAMS]
    assert [case.name for case in every_program[len(PROGRAMS):][:2]] == [
        f"{PROGRAMS[0].name}/fuzz-11-1", f"{PROGRAMS[1].name}/fuzz-11-1"]
    case = every_program[0]
    assert case.source == "dd-conformance fuzz, seed 11, history 0"
    assert [c.name for c in fuzz_cases(11, 2, ["join", "distinct", "join"])] == [
        "join/fuzz-11-0", "distinct/fuzz-11-0", "join/fuzz-11-1", "distinct/fuzz-11-1"]


def test_every_program_gets_each_kind_of_versions_it_allows(every_program: list) -> None:
    for program in PROGRAMS:
        dimensions = {case.dimensions for case in every_program if case.program == program.name}
        assert dimensions == ({1, 2, 3} if "product" in program.versions else {1}), program.name
    assert {BY_NAME[name].name for name in ("timed_copies", "temporal_window")} == {
        program.name for program in PROGRAMS if kinds_of(program) == ("int",)}
    triples = [case for case in every_program if case.dimensions == 3]
    assert triples and all("three-dimensions" in case.tags for case in triples)


def test_the_families_records_reach_the_programs_they_name() -> None:
    for name in ("distinct", "join"):
        program = BY_NAME[name]
        families = [family.name for family in families_of(program)[1:]]
        assert families == [family.name for family in FAMILIES if family.records.get(name)]
        rounds = 2 * len(kinds_of(program)) * len(families_of(program))  # each kind with each family, twice
        cases = list(fuzz_cases(3, rounds, [name]))
        assert {tag for case in cases for tag in case.tags} >= set(families)
        records = {case.name: {r for history in case.histories() for r, _, _ in history} for case in cases}
        if name == "distinct":
            assert any(any(isinstance(r, Boolean) for r in updates) and any(type(r) is int for r in updates)
                       for updates in records.values())  # JSON's booleans beside integers, in one collection
            assert any(updates & {2**53 + 1, -(2**53) - 1, 2**31} for updates in records.values())
        else:
            null_keys = [case for case in cases if "null-keys" in case.tags]
            assert null_keys and all(any(key is None for (key, _), _, _ in history)
                                     for case in null_keys for history in case.histories())


def test_every_case_is_valid_reads_back_as_written_and_final_passes_it(every_program: list, tmp_path: Path) -> None:
    final = FinalEngine()
    for case in every_program:
        assert case.inconsistency() is None, case.name
        path = tmp_path / file_name(case.name)
        path.parent.mkdir(exist_ok=True)
        path.write_text(case.text())
        assert load(path) == case
        verdict = judge(case, final.run(case))
        assert verdict.status == "passed", (case.name, verdict.lines())


@pytest.mark.parametrize("fault", ["drop_retraction", "wrong_version", "double_count"])
def test_a_planted_fault_is_caught_within_two_histories_per_program(fault: str) -> None:
    engine = FaultyEngine(fault)
    assert any(judge(case, engine.run(case)).status == "failed" for case in fuzz_cases(5, 2))


def test_an_unknown_program_is_refused_at_once_naming_those_there_are() -> None:
    with pytest.raises(CaseError, match="no program 'joins' in the catalog: fuzz some of word_count, "):
        fuzz_cases(1, 1, ["join", "joins"])


# -- the command line: dd-conformance fuzz -------------------------------------------------------------------

FAULTY = f"cmd:{sys.executable} -m tests.conformance_faults drop_retraction"


def test_fuzz_finds_shrinks_and_writes_failures_as_cases_an_engines_ci_can_keep(tmp_path: Path, capsys) -> None:
    out, report = tmp_path / "found", tmp_path / "fuzz.jsonl"
    status = main(["fuzz", "--engine", FAULTY, "--seed", "5", "--histories", "4", "--program", "count_by_key",
                   "--program", "join", "--program", "distinct", "--failures", "2", "--out", str(out),
                   "--report", str(report)])
    printed = capsys.readouterr().out
    assert status == 1
    written = read_report(report)
    assert written["seed"] == 5 and written["case_set"] == "fuzz" and written["complete"]
    assert len(written["found"]) == 2  # --failures 2: the run stops at the second
    assert written["failed"] == 2 and written["verdicts"][-1]["status"] == "failed"
    files = sorted(out.rglob("*.json"))
    assert [str(path) for path in files] == sorted(found["file"] for found in written["found"])
    for path in files:
        case = load(path)  # a case file like any other: checked against the schema and its own consistency
        assert case.name.endswith("-shrunk") and f"shrunk from {case.name.removesuffix('-shrunk')}" == case.source
        assert judge(case, FaultyEngine("drop_retraction").run(case)).status == "failed"
        assert judge(case, FinalEngine().run(case)).status == "passed"
        assert f"--label cmd-{path.parent.name}-{path.stem} --cases {path.resolve()}" in printed
    # The folder is a case set the engine's CI can check as it is.
    assert main(["check", "--engine", "final", "--cases", str(out), "--report", str(tmp_path / "kept.jsonl")]) == 0
    assert main(["check", "--engine", FAULTY, "--cases", str(out), "--no-shrink",
                 "--report", str(tmp_path / "kept.jsonl")]) == 1


def test_fuzz_of_a_right_engine_is_green_and_says_its_seed(tmp_path: Path, capsys) -> None:
    report = tmp_path / "fuzz.jsonl"
    assert main(["fuzz", "--engine", "final", "--histories", "2", "--program", "reachability", "--program",
                 "counts_and_keys", "--report", str(report), "--out", str(tmp_path / "none")]) == 0
    seed = read_report(report)["seed"]
    assert f"--seed {seed} draws the same histories" in capsys.readouterr().out
    assert read_report(report)["passed"] == 4 and not (tmp_path / "none").exists()


def test_fuzz_refuses_an_unknown_program_before_any_engine_runs(capsys, tmp_path: Path) -> None:
    report = tmp_path / "fuzz.jsonl"
    assert main(["fuzz", "--engine", "cmd:false", "--program", "no_such_program", "--report", str(report)]) == 2
    assert "no program 'no_such_program' in the catalog" in capsys.readouterr().err
    assert read_report(report)["reasons"] == ["could not start"] and read_report(report)["verdicts"] == []
