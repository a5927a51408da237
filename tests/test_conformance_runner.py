"""The checker's side of the protocol holds, whatever an engine does.

Each engine here is a few lines of Python written to ``tmp_path`` and run as
``cmd:<python> <script>``, misbehaving in one way an engine under development
does: writing forever, writing a float where an integer goes, dying mid-case,
hanging with a process of its own started. The README's 'The protocol an
engine speaks' says what the checker must do then: fail the case within its
deadline, with a reason that quotes the line or says how the engine ended,
and leave nothing running.
"""

from __future__ import annotations

import json
import os
import resource
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from final.conformance.__main__ import main
from final.conformance.cases import CASES, CaseError, load
from final.conformance.check import judge, read_report
from final.conformance.engines import PROTOCOL, CommandEngine, case_lines, read_answer

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 2.0
SLACK = 3.0
"""Seconds a failing case may take beyond its deadline: stopping the engine, reading the last of its stderr."""
CASE_FILE = CASES / "name_lengths" / "doc-names_with_lengths.json"
CASE = load(CASE_FILE)
PAIRS = load(CASES / "join" / "random-01.json")
"""A case whose versions are pairs."""

READ_THE_CASE = """
import sys
for line in sys.stdin:
    if '"end"' in line:
        break
"""


def _engine(tmp_path: Path, body: str, **limits: int) -> CommandEngine:
    script = tmp_path / "engine.py"
    script.write_text(body)
    return CommandEngine("fake", [sys.executable, str(script), str(tmp_path)], timeout=TIMEOUT, **limits)


def _running(pid: int) -> bool:
    """Whether process ``pid`` still runs; a zombie (killed, not yet reaped by its new parent) does not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"


def _ends(pid: int, within: float = 5.0) -> bool:
    """Whether process ``pid`` is gone within ``within`` seconds: a kill is delivered asynchronously, so on a
    loaded machine the process may still be running for a moment after the signal is sent."""
    deadline = time.monotonic() + within
    while _running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _pid(path: Path) -> int:
    for _ in range(100):
        if path.exists() and path.read_text():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"the engine never wrote {path}")


def test_an_engine_that_writes_forever_fails_at_the_deadline_in_bounded_memory(tmp_path: Path) -> None:
    engine = _engine(tmp_path, "import sys\nblock = '{\"data\": [[[\"a\", 1], 0, 1]]}\\n' * 1000\n"
                               "while True:\n    sys.stdout.write(block)\n")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.monotonic()
    try:
        verdict = judge(CASE, engine.run(CASE))
    finally:
        engine.close()
    assert time.monotonic() - start < TIMEOUT + SLACK
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024  # kilobytes on Linux
    assert grown < 500 * 2**20
    assert verdict.status == "failed"
    assert verdict.reason.startswith("error: no answer within 2 s (a case's deadline counts from its first line "
                                     "and output does not extend it")
    assert "the engine was stopped" in verdict.reason


@pytest.mark.parametrize(
    ("body", "limits", "reason"),
    [
        ("import sys\nwhile True:\n    sys.stdout.write('{\"data\": []}\\n' * 100)\n", {"max_lines": 1000},
         "more than 1,000 output lines for one case (the cap on output lines; --max-output-lines raises it)"),
        ("import sys\nwhile True:\n    sys.stdout.write('x' * 4096)\n", {"max_bytes": 100_000},
         "more than 100,000 bytes of output for one case (the cap on output bytes; --max-output-bytes raises it)"),
    ],
    ids=["lines", "one endless line"],
)
def test_output_over_a_cap_fails_the_case_before_the_deadline(tmp_path: Path, body: str, limits: dict,
                                                              reason: str) -> None:
    engine = _engine(tmp_path, body, **limits)
    engine.timeout = 60
    start = time.monotonic()
    try:
        run = engine.run(CASE)
    finally:
        engine.close()
    assert time.monotonic() - start < SLACK
    assert run.status == "error" and run.reason.startswith(reason)


@pytest.mark.parametrize("multiplicity", ["1.5", "true", '"1"', "null"])
def test_a_multiplicity_that_is_not_an_integer_fails_the_case_quoting_the_line(tmp_path: Path,
                                                                                multiplicity: str) -> None:
    line = f'{{"data": [["alice", 0, 1], [["bob", 3], 0, {multiplicity}]]}}'
    engine = _engine(tmp_path, READ_THE_CASE + f"print({line!r}, flush=True)\nsys.stdin.read()\n")
    try:
        verdict = judge(CASE, engine.run(CASE))
    finally:
        engine.close()
    assert verdict.status == "failed"
    assert verdict.reason.startswith(
        f"error: protocol: output line 1 {line!r}: update 1: multiplicity {multiplicity} is not an integer; ")


@pytest.mark.parametrize(
    ("line", "dimensions", "problem"),
    [
        ('{"data": [["a", 0, 1]]}', 2, "version 0 has 1 coordinate(s), but this case's versions are arrays of 2 "
                                       "integers"),
        ('{"data": [["a", [0, 0, 0], 1]]}', 2, "version [0, 0, 0] has 3 coordinate(s)"),
        ('{"data": [["a", [0, 1], 1]]}', 1, "but this case's versions are integers"),
        ('{"frontier": [[1, 1]]}', 1, "version [1, 1] has 2 coordinate(s)"),
        ('{"data": [["a", "0", 1]]}', 1, "is not a version"),
        ('{"data": [["a", {"t": 0}, 1]]}', 1, "is not a version"),
        ('{"data": [["a", 0]]}', 1, "update 0 is not [record, version, multiplicity]"),
        ('{"data": {"a": 1}}', 1, "data is a list of updates"),
        ('{"frontier": 3}', 1, "a frontier is a list of versions"),
        ('[{"done": true}]', 1, "a message is a JSON object"),
        ('{"data": [[1.5, 0, 1]]}', 1, "is not an encoded record"),
    ],
)
def test_output_of_the_wrong_shape_or_type_is_a_protocol_failure_quoting_the_line(line: str, dimensions: int,
                                                                                   problem: str) -> None:
    run, closed = read_answer(iter(['{"data": []}', line, '{"done": true}']), dimensions)
    assert not closed and run.status == "error"
    assert run.reason.startswith(f"protocol: output line 2 {line!r}: ")
    assert problem in run.reason


def test_the_start_line_carries_the_protocol_version_and_a_programs_several_outputs() -> None:
    start = json.loads(next(case_lines(CASE)))
    assert start["protocol"] == PROTOCOL == 2 and "outputs" not in start
    several = load(CASES / "counts_and_keys" / "random-00.json")
    assert json.loads(next(case_lines(several)))["outputs"] == ["counts", "keys"]


@pytest.mark.parametrize(
    ("line", "outputs", "problem"),
    [
        ('{"data": [["a", 0, 1]]}', ("counts", "keys"), "no output named this case's outputs counts, keys"),
        ('{"frontier": [], "output": "sums"}', ("counts", "keys"), 'output "sums" is not one of this case\'s outputs'),
        ('{"data": [["a", 0, 1]], "output": "counts"}', (), "this case's program has one output: leave it out"),
    ],
)
def test_output_lines_name_an_output_exactly_when_the_case_has_several(line: str, outputs: tuple,
                                                                       problem: str) -> None:
    run, closed = read_answer(iter([line, '{"done": true}']), 1, outputs)
    assert not closed and run.status == "error" and problem in run.reason
    named, closed = read_answer(iter(['{"data": [["a", 0, 1]], "output": "keys"}', '{"frontier": [], "output": '
                                      '"keys"}', '{"done": true}']), 1, ("counts", "keys"))
    assert closed and named.events == [("data", [("a", 0, 1)], "keys"), ("frontier", [], "keys")]


def test_a_version_of_the_wrong_shape_fails_the_case_instead_of_breaking_the_checker(tmp_path: Path) -> None:
    engine = _engine(tmp_path, READ_THE_CASE + "print('{\"data\": [[[1, [1, 1]], 0, 1]]}', flush=True)\n")
    try:
        verdict = judge(PAIRS, engine.run(PAIRS))
    finally:
        engine.close()
    assert verdict.status == "failed"
    assert "version 0 has 1 coordinate(s), but this case's versions are arrays of 2 integers" in verdict.reason


def test_an_engine_that_dies_mid_case_is_reported_with_its_exit_status_and_stderr(tmp_path: Path, capsys) -> None:
    script = tmp_path / "engine.py"
    script.write_text("import sys\nsys.stdin.readline()\nprint('{\"data\": [[[\"alice\", 5], 0, 1]]}', flush=True)\n"
                      "print('reading names', file=sys.stderr)\nprint('engine: out of cheese', file=sys.stderr)\n"
                      "sys.exit(3)\n")
    report = tmp_path / "report.json"
    start = time.monotonic()
    status = main(["check", "--engine", f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(script))}",
                   "--cases", str(CASE_FILE), "--timeout", str(TIMEOUT), "--report", str(report), "--no-shrink"])
    assert time.monotonic() - start < TIMEOUT + SLACK
    assert status == 1
    [verdict] = read_report(report)["verdicts"]
    assert verdict["status"] == "failed" and verdict["exit_status"] == 3
    assert verdict["stderr"] == "reading names\nengine: out of cheese"
    assert verdict["reason"] == ("error: the engine's output ended before a closing line (done/unsupported/error); "
                                 "the engine exited with status 3; its stderr ended with:\n"
                                 "  reading names\n  engine: out of cheese")
    out = capsys.readouterr().out
    assert "exited with status 3" in out and "    engine: out of cheese" in out


def test_only_the_tail_of_stderr_is_kept_and_it_is_passed_through_when_asked(tmp_path: Path, capsys,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONFORMANCE_ENGINE_STDERR", "1")
    engine = _engine(tmp_path, "import sys\nfor n in range(5000):\n    print(f'log {n}', file=sys.stderr)\n"
                               "sys.exit(1)\n")
    try:
        run = engine.run(CASE)
    finally:
        engine.close()
    assert run.exit_status == 1
    assert run.stderr.splitlines() == [f"log {n}" for n in range(4980, 5000)]
    assert "log 0\nlog 1\n" in capsys.readouterr().err


def test_a_hanging_engine_and_the_process_it_started_are_killed_at_the_deadline(tmp_path: Path) -> None:
    engine = _engine(tmp_path, "import subprocess, sys, time\nchild = subprocess.Popen(['sleep', '600'])\n"
                               "open(sys.argv[1] + '/child', 'w').write(str(child.pid))\ntime.sleep(600)\n")
    start = time.monotonic()
    try:
        verdict = judge(CASE, engine.run(CASE))
        child = _pid(tmp_path / "child")
        assert time.monotonic() - start < TIMEOUT + SLACK
        assert verdict.status == "failed" and "no answer within 2 s" in verdict.reason
        assert _ends(child)
    finally:
        engine.close()


def test_what_an_engine_started_is_killed_when_the_run_ends(tmp_path: Path) -> None:
    engine = _engine(tmp_path, "import subprocess, sys\nchild = subprocess.Popen(['sleep', '600'])\n"
                               "open(sys.argv[1] + '/child', 'w').write(str(child.pid))\n" + READ_THE_CASE
                     + "print('{\"done\": true}', flush=True)\nsys.stdin.read()\n")
    try:
        assert engine.run(CASE).status == "done"
        child = _pid(tmp_path / "child")
        assert _running(child)
    finally:
        engine.close()
    assert _ends(child)



def test_a_process_that_leaves_the_engines_group_is_found_reported_and_killed(tmp_path: Path) -> None:
    # setsid puts the child in a session (and process group) of its own, which killing the engine's group misses.
    engine = _engine(tmp_path, "import subprocess, sys, time\n"
                               "child = subprocess.Popen(['sleep', '600'], start_new_session=True)\n"
                               "open(sys.argv[1] + '/child', 'w').write(str(child.pid))\ntime.sleep(600)\n")
    try:
        run = engine.run(CASE)
        child = _pid(tmp_path / "child")
        assert f"pid {child} (session {child}): sleep 600" in run.reason
        assert "had left its process group" in run.reason
        assert engine.escaped == [f"pid {child} (session {child}): sleep 600"]
        assert _ends(child)
    finally:
        engine.close()


def test_output_that_is_not_utf8_is_a_protocol_failure_quoting_the_bytes(tmp_path: Path) -> None:
    engine = _engine(tmp_path, READ_THE_CASE + "import sys\n"
                     "sys.stdout.buffer.write(b'{\"data\": [[\"\\xff\\xfe\", 0, 1]]}\\n')\n"
                     "sys.stdout.flush()\nsys.stdin.read()\n")
    try:
        verdict = judge(CASE, engine.run(CASE))
    finally:
        engine.close()
    assert verdict.status == "failed"
    assert "protocol: output line 1 b'{\"data\": [[\"\\xff\\xfe\", 0, 1]]}': not UTF-8 (byte ff at offset 12)" in \
        verdict.reason
    assert "\ufffd" not in verdict.reason


SLOW = READ_THE_CASE.replace("break", "break\nimport time\ntime.sleep(600)")
"""An engine that reads a case and never answers: every case, and every candidate of a shrink, hits the deadline."""


def test_a_slow_engines_shrink_stops_at_its_budget_and_reports_the_smallest_case_so_far(tmp_path: Path,
                                                                                        capsys) -> None:
    script = tmp_path / "slow.py"
    script.write_text(SLOW)
    report = tmp_path / "slow.jsonl"
    start = time.monotonic()
    status = main(["check", "--engine", f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(script))}",
                   "--cases", str(CASES / "concat" / "doc-concat_out_of_order.json"), "--timeout", "2",
                   "--shrink-budget", "3", "--report", str(report)])
    took = time.monotonic() - start
    assert status == 1
    # The case's own run (its 2 s deadline) and the shrink's budget of 3 s, with room for starting engines:
    # without a budget every candidate would cost its 2 s deadline.
    assert took < 2 + 3 + 2 * SLACK, took
    written = read_report(report)
    assert written["complete"] and written["failed"] == 1
    facts = written["shrinking"]["concat"]
    assert facts["stopped"] == "budget" and facts["seconds"] < 3 + SLACK
    assert written["smallest_failing"]["concat"]["name"] == "concat/doc-concat_out_of_order-shrunk"
    assert "the smallest found in the 3 s budget (--shrink-budget)" in capsys.readouterr().out


def _checker(tmp_path: Path, engine_body: str, *arguments: str) -> subprocess.Popen:
    """The checker run as a user runs it, in a process of its own, on an engine written to ``tmp_path``."""
    script = tmp_path / "engine.py"
    script.write_text(engine_body)
    return subprocess.Popen([sys.executable, "-m", "final.conformance", "check", "--engine",
                             f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(script))}", "--program", "distinct",
                             "--timeout", "60", "--report", str(tmp_path / "report.jsonl"), *arguments],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_interruptible)


def _interruptible() -> None:
    """In the checker's process before it starts: SIGINT as a terminal gives it, even when this suite runs in
    the background, whose commands inherit SIGINT ignored (POSIX), and Python then never raises
    KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _verdicts_written(report: Path, at_least: int, within: float = 60.0) -> None:
    """Wait until ``report`` holds ``at_least`` verdict lines."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if report.exists() and report.read_text().count('{"verdict"') >= at_least:
            return
        time.sleep(0.1)
    raise AssertionError(f"{report} did not reach {at_least} verdicts in {within} s")


# A served final that takes one case per second past its third: the run is stopped while it still goes.
DAWDLING = (f"import sys, time\nsys.path.insert(0, {str(ROOT)!r})\n"
            "from final.conformance.engines import serve\nfrom final.conformance.drive import FinalEngine\n"
            "class Dawdling(FinalEngine):\n    count = 0\n    def run(self, case):\n        self.count += 1\n"
            "        if self.count > 3:\n            time.sleep(1)\n        return super().run(case)\n"
            "serve(Dawdling())\n")


@pytest.mark.parametrize("stop, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_run_stopped_midway_ends_with_its_verdicts_so_far_and_a_summary(tmp_path: Path, stop: int,
                                                                          status: int) -> None:
    checker = _checker(tmp_path, DAWDLING)
    _verdicts_written(tmp_path / "report.jsonl", 4)
    checker.send_signal(stop)
    out, err = checker.communicate(timeout=60)
    assert checker.returncode == status, out + err
    written = read_report(tmp_path / "report.jsonl")
    assert not written["complete"] and written["interrupted"]
    assert written["passed"] == len(written["verdicts"]) >= 4
    assert out.rstrip().splitlines()[-1].endswith(f"interrupted after {len(written['verdicts'])} of "
                                                  f"{len(_names('distinct'))} cases")
    assert "the report holds every verdict so far" in err and "Traceback" not in err
    assert written["reasons"] == ["interrupted"] and not written["ok"]
    assert sorted(written["not_reached"]) == sorted(set(_names("distinct")) - {v["case"] for v in written["verdicts"]})


def test_a_run_killed_outright_leaves_every_verdict_written_before(tmp_path: Path) -> None:
    checker = _checker(tmp_path, DAWDLING)
    _verdicts_written(tmp_path / "report.jsonl", 4)
    checker.kill()
    checker.communicate(timeout=60)
    written = read_report(tmp_path / "report.jsonl")
    assert not written["complete"] and "interrupted" not in written
    assert written["passed"] == len(written["verdicts"]) >= 4
    assert written["label"] == "cmd" and written["verdicts"][0]["status"] == "passed"


# -- what a run's report says, and its exit status ----------------------------------------------------------


def _summary(report: Path) -> dict:
    """The summary line of a report: its last line."""
    return json.loads(report.read_text().splitlines()[-1])["summary"]


def _names(program: str) -> list[str]:
    return sorted(f"{program}/{path.stem}" for path in (CASES / program).glob("*.json"))


def test_an_engine_that_does_not_exist_leaves_a_report_that_says_the_run_could_not_start(tmp_path: Path,
                                                                                        capsys) -> None:
    """A report an earlier run left green is not left standing: a dashboard reading it must see red."""
    report = tmp_path / "report.jsonl"
    report.write_text('{"summary": {"passed": 18, "failed": 0, "unsupported": 0, "ok": true}}\n')
    status = main(["check", "--engine", f"cmd:{tmp_path / 'no-such-engine'} --conformance", "--program", "concat",
                   "--report", str(report)])
    assert status == 2
    assert f"cannot start {tmp_path / 'no-such-engine'} --conformance" in capsys.readouterr().err
    summary = _summary(report)
    assert (summary["passed"], summary["failed"], summary["unsupported"]) == (0, 0, 0)
    assert summary["ok"] is False and summary["reasons"] == ["could not start"]
    assert "cannot start" in summary["error"]
    assert summary["selected"] == len(_names("concat")) and summary["not_reached"] == _names("concat")
    assert not read_report(report)["complete"]


GARBAGE = READ_THE_CASE + "print('hello', flush=True)\nsys.stdin.read()\n"
"""An engine that answers a case with a line that is not the protocol's."""
FAULTY = f"cmd:{shlex.quote(sys.executable)} -m tests.conformance_faults drop_retraction"


@pytest.mark.parametrize(
    ("engine", "status", "reasons"),
    [
        ("final", 0, []),
        (FAULTY, 1, ["failed"]),
        ("garbage", 1, ["protocol"]),
        ("cmd:/nonexistent/dd-engine", 2, ["could not start"]),
        ("no_such_module:make", 2, ["could not start"]),
    ],
    ids=["green", "failed", "protocol", "no such command", "no such plug-in"],
)
def test_the_exit_status_and_the_reports_summary_agree(tmp_path: Path, engine: str, status: int,
                                                        reasons: list[str]) -> None:
    if engine == "garbage":
        engine = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(tmp_path / 'garbage.py'))}"
        (tmp_path / "garbage.py").write_text(GARBAGE)
    report = tmp_path / "report.jsonl"
    fraud = CASES / "reachability" / "doc-fraud_propagation.json"  # retracts at version 1: the fault shows
    assert main(["check", "--engine", engine, "--cases", str(fraud), "--no-shrink", "--report", str(report)]) == status
    summary = _summary(report)
    assert summary["reasons"] == reasons and summary["ok"] is (status == 0)
    assert summary["not_reached"] == ([] if status < 2 else ["reachability/doc-fraud_propagation"])
    if "protocol" in reasons:
        [verdict] = read_report(report)["verdicts"]
        assert verdict["protocol"] and verdict["reason"].startswith("error: protocol: output line 1 'hello'")


# -- zero multiplicities ------------------------------------------------------------------------------------------


def test_an_output_update_of_multiplicity_zero_is_a_protocol_failure_naming_its_line(tmp_path: Path) -> None:
    """Outputs need not be consolidated, but an update of multiplicity 0 says nothing, as in a case file: an
    engine whose consolidation keeps the entries it summed to 0 is told so, on every case."""
    line = '{"data": [["alice", 0, 1], [["bob", 3], 0, 0]]}'
    engine = _engine(tmp_path, READ_THE_CASE + f"print({line!r}, flush=True)\nsys.stdin.read()\n")
    try:
        verdict = judge(CASE, engine.run(CASE))
    finally:
        engine.close()
    assert verdict.status == "failed" and verdict.protocol
    assert verdict.reason.startswith(f"error: protocol: output line 1 {line!r}: update 1: multiplicity 0 says "
                                     "nothing: leave the update out")


def test_an_engine_that_keeps_zero_entries_fails_every_case_with_output_in_process_or_not(tmp_path: Path) -> None:
    from final.conformance.drive import FinalEngine
    from tests.conformance_faults import FaultyEngine

    cases = [load(path) for path in sorted(CASES.glob("*/doc-*.json"))]
    keeping = FaultyEngine("keep_zeros")
    verdicts = [judge(case, keeping.run(case)) for case in cases]
    final = FinalEngine()
    with_output = [case.name for case in cases  # final's output, which the fault copies, has updates
                   if any(kind == "data" and items for kind, items, *_ in final.run(case).events)]
    assert len(with_output) > len(cases) // 2
    assert [verdict.case for verdict in verdicts if verdict.status == "failed"] == with_output
    assert all(verdict.protocol and "multiplicity 0 says nothing" in verdict.reason
               for verdict in verdicts if verdict.status == "failed")
    report = tmp_path / "zeros.jsonl"
    assert main(["check", "--engine", f"cmd:{shlex.quote(sys.executable)} -m tests.conformance_faults keep_zeros",
                 "--cases", str(CASE_FILE), "--no-shrink", "--report", str(report)]) == 1
    [verdict] = read_report(report)["verdicts"]
    assert verdict["protocol"] and "multiplicity 0 says nothing" in verdict["reason"]
    assert _summary(report)["reasons"] == ["protocol"]


# -- a start within a second, signals at any moment, a deadline for the whole run --------------------------------


def test_a_check_of_one_program_reads_only_its_cases_and_each_valid_file_once(tmp_path: Path, capsys,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Checking cases against the schema is most of a start's time: a run checks only the cases it was given,
    the committed set's never (``generate`` found them valid and listed their digests in the set), and a case
    file found valid once is remembered (in the user cache, by its digest)."""
    import final.conformance.cases as cases

    monkeypatch.setenv("DD_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    checked: list[object] = []

    def counting(value: object) -> str | None:
        checked.append(value)
        return schema_problem(value)

    schema_problem = cases.schema_problem
    monkeypatch.setattr(cases, "schema_problem", counting)
    assert main(["check", "--engine", "final", "--program", "concat", "--report", str(tmp_path / "r.jsonl")]) == 0
    assert checked == [] and "against the schema" not in capsys.readouterr().err
    copied = tmp_path / "copied"  # the same files, without the set's list: checked, then remembered
    (copied / "concat").mkdir(parents=True)
    for path in (CASES / "concat").glob("*.json"):
        (copied / "concat" / path.name).write_bytes(path.read_bytes())
    arguments = ["check", "--engine", "final", "--cases", str(copied), "--report", str(tmp_path / "c.jsonl")]
    assert main(arguments) == 0
    assert len(checked) == len(_names("concat"))
    assert f"checking {len(_names('concat'))} case files against the schema" in capsys.readouterr().err
    assert main(arguments) == 0
    assert len(checked) == len(_names("concat"))  # none again
    edited = copied / "concat" / "random-00.json"
    edited.write_text(edited.read_text().replace('"source": "', '"source": "edited: ', 1))
    assert main(arguments) == 0
    assert len(checked) == len(_names("concat")) + 1  # another file, however alike: checked


def test_a_list_of_valid_digests_that_vouches_for_a_broken_file_still_says_what_is_wrong(tmp_path: Path) -> None:
    """The list is trusted as ``generate`` wrote it (a case it lists is not checked against the schema), but a
    list edited by hand to vouch for a file without its messages gives the schema's message, not a crash."""
    from final.conformance.cases import VALID_LIST, digest, schema_digest

    value = json.loads(CASE_FILE.read_text())
    del value["messages"]
    broken = tmp_path / "name_lengths" / "doc-names_with_lengths.json"
    broken.parent.mkdir()
    broken.write_text(json.dumps(value))
    (tmp_path / VALID_LIST).write_text(f"schema {schema_digest()}\n{digest(broken.read_bytes())}  {broken.name}\n")
    with pytest.raises(CaseError, match="'messages' is a required property"):
        load(broken)


def _started(checker: subprocess.Popen, line: str) -> None:
    """Read the checker's stderr until it says ``line``."""
    assert checker.stderr is not None
    for said in checker.stderr:
        if line in said:
            return
    raise AssertionError(f"the checker ended without saying {line!r}")


@pytest.mark.parametrize("stop, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_run_stopped_while_it_checks_its_cases_ends_with_a_report_and_no_traceback(tmp_path: Path, stop: int,
                                                                                    status: int) -> None:
    script = tmp_path / "engine.py"
    script.write_text("raise SystemExit(3)\n")  # were the signal missed, the run would still end, and soon
    report = tmp_path / "report.jsonl"
    # The committed cases without the set's list of valid digests, and a fresh cache: every case is checked
    # against the schema, which takes seconds.
    copied = tmp_path / "cases"
    for path in CASES.glob("*/*.json"):
        (copied / path.parent.name).mkdir(parents=True, exist_ok=True)
        (copied / path.parent.name / path.name).write_bytes(path.read_bytes())
    checker = subprocess.Popen([sys.executable, "-m", "final.conformance", "check", "--engine",
                                f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(script))}", "--no-shrink",
                                "--cases", str(copied), "--report", str(report)], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, preexec_fn=_interruptible,
                               env={**os.environ, "DD_CONFORMANCE_CACHE": str(tmp_path / "cache")})
    try:
        _started(checker, "against the schema")
        checker.send_signal(stop)
        out, err = checker.communicate(timeout=60)
    finally:
        checker.kill()
    assert checker.returncode == status, out + err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    summary = _summary(report)
    assert summary["reasons"] == ["interrupted"] and summary["interrupted"] and not summary["ok"]
    assert summary["passed"] + summary["failed"] + summary["unsupported"] == 0
    assert len(summary["not_reached"]) == summary["selected"] == json.loads((CASES / "manifest.json").read_text())[
        "cases"]


def test_a_deadline_for_the_whole_run_stops_the_case_in_progress_and_lists_those_not_reached(tmp_path: Path,
                                                                                          capsys) -> None:
    script = tmp_path / "dawdling.py"
    script.write_text(DAWDLING)
    report = tmp_path / "report.jsonl"
    status = main(["check", "--engine", f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(script))}",
                   "--program", "distinct", "--timeout", "60", "--deadline", "4", "--report", str(report)])
    assert status == 1
    written = read_report(report)
    judged = [verdict["case"] for verdict in written["verdicts"]]
    assert 3 <= len(judged) < len(_names("distinct"))
    assert written["passed"] == len(judged)  # the case the deadline stopped is not failed: it was not reached
    summary = _summary(report)
    assert summary["reasons"] == ["deadline"] and summary["stopped"] == "deadline"
    assert sorted(summary["not_reached"]) == sorted(set(_names("distinct")) - set(judged))
    out = capsys.readouterr().out
    assert out.rstrip().splitlines()[-1].endswith(f"deadline (--deadline 4) reached after {len(judged)} of "
                                                  f"{len(_names('distinct'))} cases")


def test_a_deadline_shorter_than_a_cases_timeout_cuts_that_case_short(tmp_path: Path) -> None:
    script = tmp_path / "slow.py"
    script.write_text(SLOW)
    report = tmp_path / "report.jsonl"
    status = main(["check", "--engine", f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(script))}",
                   "--cases", str(CASE_FILE), "--timeout", "600", "--deadline", "1", "--report", str(report)])
    assert status == 1
    written = read_report(report)
    assert written["verdicts"] == [] and written["not_reached"] == [CASE.name] and written["reasons"] == ["deadline"]
