"""d2mini, pathway and pydbsp, checked by the oracle as their reports describe them, and the README's table of engines.

(d2ts's own tests are at the end of test_conformance.py.) Each peer's
findings are ordinary cases that this project's stages pass and that the
peer still fails as its REPORT says; the peer passes every case of the
programs its REPORT's results table shows passing; and the README's engine
table and each REPORT's results block are what a run of the checker gives
(``python -m final.conformance.judged`` rewrites them). The engines are
skipped only when node and npm (d2mini) or a Python 3.12 (pathway, pydbsp)
are absent; an install that fails is a failure.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from final.conformance import judged
from final.conformance.cases import CASES, Case, case_set, load_all
from final.conformance.check import Verdict, judge
from final.conformance.d2mini import findings as d2mini_findings
from final.conformance.encoding import TRUE
from final.conformance.engines import (
    D2MINI,
    PATHWAY,
    PYDBSP,
    d2mini_engine,
    pathway_engine,
    pydbsp_engine,
    python312,
)
from final.conformance.expect import Expectations
from final.conformance.pathway import findings as pathway_findings
from final.conformance.pydbsp import findings as pydbsp_findings
from final.conformance.reproducers import reproducer
from tests.harness import stage_engine

COMMITTED = sorted(load_all(CASES), key=lambda case: case.name)
PEERS = {"d2mini": (D2MINI, d2mini_findings), "pathway": (PATHWAY, pathway_findings),
         "pydbsp": (PYDBSP, pydbsp_findings)}
"""The peers: their folders and findings modules."""
REPORTS = {"d2mini": D2MINI, "pathway": PATHWAY, "pydbsp": PYDBSP}


def findings(peer: str) -> list[Case]:
    return sorted(load_all(PEERS[peer][0] / "findings"), key=lambda case: case.name)


def has_node() -> bool:
    return shutil.which("node") is not None and shutil.which("npm") is not None


@pytest.fixture(scope="module")
def d2mini():
    """d2mini through its adapter (``npm ci`` of the pinned version on first use)."""
    if not has_node():
        pytest.skip("d2mini's adapter needs node and npm")
    engine = d2mini_engine(timeout=60)
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def pathway():
    """pathway through its adapter (its venv made from the pinned requirements on first use)."""
    if python312() is None:
        pytest.skip("pathway's adapter needs Python 3.12 or newer")
    engine = pathway_engine(timeout=60)
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def pydbsp():
    """pydbsp through its adapter (its venv made from the pinned requirements on first use)."""
    if python312() is None:
        pytest.skip("pydbsp's adapter needs Python 3.12 or newer")
    engine = pydbsp_engine(timeout=60)
    yield engine
    engine.close()


def results_table(peer: str) -> dict[str, list[tuple[int, ...]]]:
    """The results block of a peer's REPORT, per program: (passed, failed, unsupported) per column."""
    text = (REPORTS[peer] / "REPORT.md").read_text()
    block = text.split("<!-- results: generated")[1].split("<!-- end of results -->")[0]
    rows = {}
    for line in block.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) >= 3 and re.fullmatch(r"\d+ / \d+ / \d+", cells[1]):
            rows[cells[0]] = [tuple(int(n) for n in cell.split(" / ")) for cell in cells[1:-1]]
    return rows


def passing_programs(peer: str) -> list[str]:
    """The programs the peer's REPORT shows with passes and no failure."""
    return [program for program, columns in results_table(peer).items() if columns[0][0] > 0 and columns[0][1] == 0]


def assert_passes_or_cannot_order(verdicts: list[Verdict]) -> None:
    """Every verdict passed, or is unsupported because the case's versions are not a chain."""
    assert [(v.case, v.lines()) for v in verdicts if v.status == "failed"] == []
    assert [(v.case, v.reason) for v in verdicts if v.status == "unsupported" and "incomparable" not in v.reason] == []


@pytest.mark.parametrize("peer", sorted(PEERS))
def test_every_peer_finding_is_an_ordinary_case_that_the_stages_pass(peer: str) -> None:
    cases = findings(peer)
    assert len(cases) == {"d2mini": 7, "pathway": 2, "pydbsp": 2}[peer]
    for case in cases:
        for stage in ("v0", "v5"):
            assert judge(case, stage_engine(stage).run(case)).status in {"passed", "unsupported"}, (case.name, stage)
        assert judge(case, stage_engine("final").run(case)).status == "passed", case.name


@pytest.mark.parametrize("peer", sorted(PEERS))
def test_every_peer_finding_is_what_its_findings_module_writes(peer: str) -> None:
    module = PEERS[peer][1]
    written = {case.name: case for case in findings(peer)}
    assert set(written) == set(module.REPRODUCERS)
    for name, spec in module.REPRODUCERS.items():
        assert reproducer(peer, name, spec).text() == written[name].text(), name


@pytest.mark.slow
def test_d2mini_fails_each_finding_as_its_report_says(d2mini) -> None:
    verdicts = {case.name: judge(case, d2mini.run(case)) for case in findings("d2mini")}
    assert {name: v.status for name, v in verdicts.items()} == dict.fromkeys(verdicts, "failed")
    first = {name: v.mismatches[0] for name, v in verdicts.items()}
    assert first["count_by_key/count-of-nothing"].extra == {(1, 0): 1}  # M1
    assert first["antijoin/key-twice"].extra == {(1, 4): -1}  # M2
    assert first["left_outer_join/two-matches"].extra == {(0, (3, None)): -1}  # M2, through leftJoin
    assert first["semijoin/key-twice"].wrong == {(1, 4): (1, 2)}  # M3
    assert first["semijoin/number-and-string"].missing == {(1, "1"): 1}  # M4
    assert first["semijoin/number-and-string"].wrong == {(1, 1): (1, 2)}
    assert first["distinct/hash-collision"].missing == {("user", 18519): 1}  # M5
    assert first["distinct/past-2-53"].missing == {2**53 + 1: 1}  # M6


@pytest.mark.slow
def test_pathway_fails_each_finding_as_its_report_says(pathway) -> None:
    verdicts = {case.name: judge(case, pathway.run(case)) for case in findings("pathway")}
    assert {name: v.status for name, v in verdicts.items()} == dict.fromkeys(verdicts, "failed")
    wrapped = verdicts["sum_by_key/past-64-bits"].mismatches[0]  # P1
    assert (wrapped.missing, wrapped.extra) == ({(1, 2**63): 1}, {(1, -(2**63)): 1})
    assert "worker panic" in verdicts["distinct/integer-past-64-bits"].reason  # P1


@pytest.mark.slow
def test_pydbsp_fails_each_finding_as_its_report_says(pydbsp) -> None:
    verdicts = {case.name: judge(case, pydbsp.run(case)) for case in findings("pydbsp")}
    assert {name: v.status for name, v in verdicts.items()} == dict.fromkeys(verdicts, "failed")
    assert verdicts["difference/true-and-1"].mismatches[0].missing == {TRUE: 1, 1: -1}  # D1: true and 1 cancel
    assert "KeyError: (0, True)" in verdicts["count_by_key/false-1-and-0-true"].reason  # D1, in its index


@pytest.mark.slow
def test_d2mini_passes_every_case_of_the_programs_its_report_says_pass(d2mini) -> None:
    programs = passing_programs("d2mini")
    assert len(programs) >= 10  # of 26: 9 are unsupported whole (loops, 000's operators, two outputs), 7 fail
    assert_passes_or_cannot_order([judge(case, d2mini.run(case)) for case in COMMITTED if case.program in programs])


@pytest.mark.slow
def test_pathway_passes_every_case_of_the_programs_its_report_says_pass(pathway) -> None:
    programs = passing_programs("pathway")
    assert len(programs) >= 21
    assert_passes_or_cannot_order([judge(case, pathway.run(case)) for case in COMMITTED if case.program in programs])


@pytest.mark.slow
def test_pydbsp_passes_every_case_of_the_programs_it_runs_but_the_booleans_ones_of_d1(pydbsp) -> None:
    """Its REPORT's results: every program it runs passes, or fails by D1 alone, and only in cases of the
    booleans family (true beside 1, false beside 0); every other case of those programs passes."""
    runs = [program for program, columns in results_table("pydbsp").items() if columns[0][0] > 0]
    assert len(runs) >= 22  # of 26: 4 are unsupported whole (000's operators, not yet written)
    assert set(runs) == set(passing_programs("pydbsp")) | set(pydbsp_findings.FAILS_BY)
    assert set(pydbsp_findings.FAILS_BY.values()) == {"D1"}
    assert_passes_or_cannot_order([judge(case, pydbsp.run(case)) for case in COMMITTED
                                   if case.program in runs and "booleans" not in case.tags])


@pytest.mark.slow
def test_the_readme_table_of_engines_and_each_report_match_a_run() -> None:
    if not has_node() or python312() is None:
        pytest.skip("the table needs every engine: node and npm (d2ts, d2mini) and a Python 3.12 (pathway, pydbsp)")
    engines = judged.engines()
    results = judged.run_all(engines, COMMITTED)
    stale = [str(path) for path, text in judged.rendered(engines, results, COMMITTED).items()
             if Path(path).read_text() != text]
    assert stale == [], "python -m final.conformance.judged rewrites them"
    # d2mini/REPORT.md: with --workarounds, every case d2mini can express passes but those of M6, whose
    # integers pass 2^53 (no operator can work around JavaScript's doubles).
    failing = [verdict for verdict in results["d2mini --workarounds"] if verdict.status == "failed"]
    assert [verdict.case for verdict in failing] == ["count_by_key/large-integers-00"]
    assert (-(2**53) - 1, 1) in failing[0].mismatches[0].missing


@pytest.mark.slow
def test_npm_installs_go_to_the_user_cache_and_never_into_the_package(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    if not has_node():
        pytest.skip("d2mini's adapter needs node and npm")
    before = sorted(path.name for path in D2MINI.iterdir())
    monkeypatch.setenv("DD_CONFORMANCE_CACHE", str(tmp_path))
    engine = d2mini_engine(timeout=60)
    try:
        [place] = tmp_path.iterdir()  # one folder, named by the pinned lock's hash
        assert place.name.startswith("d2mini-") and (place / "node_modules" / "@electric-sql" / "d2mini").is_dir()
        assert engine.command[1] == str(place / "adapter.mjs")
        assert (place / "adapter.mjs").read_bytes() == (D2MINI / "adapter.mjs").read_bytes()
        case = next(case for case in COMMITTED if case.program == "concat")
        assert judge(case, engine.run(case)).status == "passed"
    finally:
        engine.close()
    assert sorted(path.name for path in D2MINI.iterdir()) == before


@pytest.mark.parametrize("peer", sorted(judged.EXPECTED))
def test_each_peer_ships_expectations_of_the_committed_set_with_a_reason_for_each(peer: str) -> None:
    """What `check --engine PEER --expect PEER/expected-failures.json` reads: failures of this case set, each
    explained by a finding of the peer's REPORT (a run that fails another case, or passes a listed one, is
    caught by the slow test of the tables above, which rewrites this file with the run's failures)."""
    expected = Expectations.load(judged.EXPECTED[peer] / "expected-failures.json")
    assert (expected.engine, expected.case_set) == (peer, case_set(CASES)["case_set"])
    names = {case.name for case in COMMITTED}
    assert set(expected.failures) <= names
    findings_of = {"d2ts": r"F\d", "d2mini": r"M\d", "pydbsp": r"D\d", "pathway": r"P\d"}[peer]
    report = (judged.EXPECTED[peer] / "REPORT.md").read_text()
    for case, entry in expected.failures.items():
        named = re.findall(findings_of, entry.reason)
        assert named and all(finding in report for finding in named), (case, entry.reason)
        assert entry.failure, case  # each failing as recorded: a failure otherwise is a new one
