"""``pip install <clone>`` gives a working ``final`` and its oracle's console script, outside the repository.

The package is built from a clone of the repository (committed files only,
as a user's clone would be) into a fresh virtual environment in a temporary
directory; every command then runs from another temporary directory, so
nothing can be found through the repository. Needs the package registry
(PyPI) for the build backend and jsonschema.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from final.conformance.catalog import PROGRAMS
from final.conformance.check import read_report

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow

OUTSIDE = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
"""The environment the installed commands run in: without the suite's PYTHONPATH, which points into the
repository, so that only what was installed can be imported."""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``bin`` folder of a fresh virtual environment with the clone installed in it."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a repository to clone")
    place = tmp_path_factory.mktemp("install")
    clone = place / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    subprocess.run([sys.executable, "-m", "venv", str(place / "venv")], check=True)
    bin_folder = place / "venv" / "bin"
    result = subprocess.run([str(bin_folder / "pip"), "install", "--quiet", str(clone)], capture_output=True,
                            text=True, timeout=600, env=OUTSIDE)
    assert result.returncode == 0, result.stderr[-3000:]
    return bin_folder


def run(bin_folder: Path, *arguments: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(bin_folder / "dd-conformance"), *arguments], cwd=cwd, capture_output=True,
                          text=True, timeout=600, env=OUTSIDE)


def test_the_package_holds_final_and_the_oracle_and_needs_only_jsonschema(installed: Path, tmp_path: Path) -> None:
    code = (
        "import importlib.metadata as m, json, final, final.conformance as c;"
        "print(final.__file__); print(json.dumps(m.requires('differential-dataflow-stages')));"
        "print(len(list(c.load_all(c.CASES))))"
    )
    result = subprocess.run([str(installed / "python"), "-c", code], cwd=tmp_path, capture_output=True, text=True,
                            env=OUTSIDE)
    assert result.returncode == 0, result.stderr
    location, requires, cases = result.stdout.splitlines()
    assert "site-packages" in location  # not the repository's copy
    required = [name for name in json.loads(requires) if "extra ==" not in name]
    assert [name.split(">")[0].strip() for name in required] == ["jsonschema"]
    assert int(cases) == json.loads((ROOT / "final/conformance/cases/manifest.json").read_text())["cases"]
    for stage in ("v0", "v5"):  # the stages are not part of the package
        missing = subprocess.run([str(installed / "python"), "-c", f"import {stage}"], cwd=tmp_path,
                                 capture_output=True, text=True, env=OUTSIDE)
        assert missing.returncode != 0


def committed(*programs: str) -> int:
    """How many cases of ``programs`` the committed set holds (its manifest's count per program)."""
    counts = json.loads((ROOT / "final/conformance/cases/manifest.json").read_text())["programs"]
    return sum(counts[program] for program in programs)


def test_the_console_script_checks_final_from_any_directory(installed: Path, tmp_path: Path) -> None:
    result = run(installed, "check", "--engine", "final", "--program", "count_by_key", "--program", "reachability",
                 cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    count = committed("count_by_key", "reachability")
    assert result.stdout.rstrip().endswith(f"{count} passed, 0 failed, 0 unsupported")
    report = read_report(tmp_path / "out" / "conformance" / "final.jsonl")
    assert report["passed"] == count


def test_the_console_script_checks_a_command_engine(installed: Path, tmp_path: Path) -> None:
    engine = f"cmd:{installed / 'dd-conformance'} serve --engine final"
    result = run(installed, "check", "--engine", engine, "--program", "join", "--report", "join.jsonl", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.rstrip().endswith(f"{committed('join')} passed, 0 failed, 0 unsupported")
    assert read_report(tmp_path / "join.jsonl")["passed"] == committed("join")


def test_the_console_script_names_itself_in_what_it_prints(installed: Path, tmp_path: Path) -> None:
    result = run(installed, "check", "--engine", "final", "--program", "no_such_program", cwd=tmp_path)
    assert result.returncode == 2
    assert "see 'dd-conformance programs'" in result.stderr
    usage = run(installed, "--help", cwd=tmp_path)
    assert usage.returncode == 0 and usage.stdout.startswith("usage: dd-conformance")


def test_an_installed_oracle_shrinks_a_failing_engine_without_a_clone(installed: Path, tmp_path: Path) -> None:
    silent = tmp_path / "silent.py"  # answers every case with no output at all, not even a frontier
    silent.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    if 'end' in json.loads(line):\n"
        "        print(json.dumps({'done': True}), flush=True)\n"
    )
    # concat: its smallest case has three updates, so there is something to shrink.
    result = run(installed, "check", "--engine", f"cmd:{sys.executable} {silent}", "--program", "concat",
                 cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    # Without a frontier no version's output is ever complete, so even the case whose output is empty fails.
    assert result.stdout.rstrip().endswith(f"0 passed, {committed('concat')} failed, 0 unsupported")
    # The shrunk case's answer comes from the program's plain-Python definition, shipped in the package.
    assert "shrinking concat ..." in result.stderr
    report = read_report(tmp_path / "out" / "conformance" / "cmd.jsonl")
    smallest = report["smallest_failing"]["concat"]
    assert smallest["name"].endswith("-shrunk")
    assert sum(len(message.get("data", [])) for message in smallest["messages"]) <= 1


def test_the_wheel_carries_the_licence_and_the_changelog(tmp_path: Path) -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a repository to clone")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir",
                             str(tmp_path / "wheels"), str(clone)], capture_output=True, text=True, timeout=600,
                            env=OUTSIDE)
    assert result.returncode == 0, result.stderr[-3000:]
    [wheel] = (tmp_path / "wheels").glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        info = next(name.split("/")[0] for name in archive.namelist() if name.endswith(".dist-info/METADATA"))
        metadata = archive.read(f"{info}/METADATA").decode()
        licence = archive.read(f"{info}/licenses/LICENSE").decode()
    assert "License-Expression: MIT" in metadata.splitlines() and "License-File: LICENSE" in metadata.splitlines()
    assert licence == (ROOT / "LICENSE").read_text() and licence.startswith("MIT License")
    assert "## Compatibility policy" in metadata  # the changelog follows the README in the long description
    changelog = (ROOT / "CHANGELOG.md").read_text()
    version = next(line for line in metadata.splitlines() if line.startswith("Version: ")).split(": ")[1]
    assert f"## {version} " in changelog  # every released version has its entry


def test_an_installed_oracle_generates_a_case_set_where_it_is_told(installed: Path, tmp_path: Path) -> None:
    result = run(installed, "generate", "--out", "made", "--seed", "7", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    made, ours = tmp_path / "made", ROOT / "final/conformance/cases"
    manifest = json.loads((made / "manifest.json").read_text())
    committed_manifest = json.loads((ours / "manifest.json").read_text())
    assert manifest["seed"] == 7
    assert (manifest["cases"], manifest["programs"]) == (committed_manifest["cases"], committed_manifest["programs"])
    # A case's name says its program and its family (doc-, random-, null-keys-, ...), whatever the seed.
    assert sorted(path.relative_to(made) for path in made.rglob("*.json")) == sorted(
        path.relative_to(ours) for path in ours.rglob("*.json"))


def test_an_installed_oracle_will_not_generate_into_its_own_package(installed: Path, tmp_path: Path) -> None:
    result = run(installed, "generate", "--seed", "7", cwd=tmp_path)
    assert result.returncode == 2
    assert "pass --out DIR" in result.stderr and "dd-conformance generate --out" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_installed_oracle_fuzzes_and_takes_an_engines_expected_failures(installed: Path, tmp_path: Path) -> None:
    fuzzed = run(installed, "fuzz", "--engine", "final", "--histories", "1", "--seed", "3", cwd=tmp_path)
    assert fuzzed.returncode == 0, fuzzed.stdout + fuzzed.stderr
    assert fuzzed.stdout.rstrip().endswith(f"{len(PROGRAMS)} passed, 0 failed, 0 unsupported")
    silent = tmp_path / "silent.py"  # answers every case with no output, not even a frontier: every case fails
    silent.write_text("import json, sys\nfor line in sys.stdin:\n    if 'end' in json.loads(line):\n"
                      "        print(json.dumps({'done': True}), flush=True)\n")
    check = ["check", "--engine", f"cmd:{sys.executable} {silent}", "--program", "join", "--no-shrink"]
    first = run(installed, *check, "--write-expect", "known.json", cwd=tmp_path)
    assert first.returncode == 1 and (tmp_path / "known.json").exists()
    known = run(installed, *check, "--expect", "known.json", cwd=tmp_path)
    assert known.returncode == 0, known.stdout + known.stderr
    assert known.stdout.rstrip().endswith(f"{committed('join')} failures expected, 0 new, 0 listed but not failing")


def test_installing_from_a_clone_leaves_the_clone_as_git_has_it(installed: Path) -> None:
    """pip builds in the clone's folder (its build/ and *.egg-info/), which .gitignore covers."""
    clone = installed.parent.parent / "clone"
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=clone, capture_output=True,
                            text=True, check=True)
    assert status.stdout == ""


def test_the_package_imports_under_the_distributions_own_name(installed: Path, tmp_path: Path) -> None:
    code = ("import differential_dataflow_stages as d, final\n"
            "from differential_dataflow_stages.conformance.drive import Run\n"
            "import final.conformance.drive\n"
            "assert d is final and Run is final.conformance.drive.Run\n"
            "print(d.conformance.check.read_report.__module__)")
    result = subprocess.run([str(installed / "python"), "-c", code], cwd=tmp_path, capture_output=True, text=True,
                            env=OUTSIDE)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "final.conformance.check"


BREAKING_CONCAT = """
from differential_dataflow_stages.conformance.drive import FinalEngine, Run
from differential_dataflow_stages.conformance.engines import serve


class LosingRetractions(FinalEngine):
    '''final, but concat's output loses its retractions.'''

    def run(self, case):
        run = super().run(case)
        if case.program != "concat" or run.status != "done":
            return run
        kept = [(kind, [u for u in items if u[2] > 0] if kind == "data" else items) for kind, items in run.events]
        return Run(events=kept)


serve(LosingRetractions())
"""


def _ci_rows(section: str) -> dict[int, list[str]]:
    """The README's table of what the CI step ends with: exit status -> the summary's reasons on its row."""
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0].isdigit():
            rows[int(cells[0])] = json.loads(cells[1].split('"reasons": ')[1].split("`")[0])
    return rows


def test_the_readmes_ci_step_ends_as_it_documents_on_three_engines(installed: Path, tmp_path: Path) -> None:
    readme = (ROOT / "final" / "conformance" / "README.md").read_text()
    section = readme.split("\n## Vendoring it in CI\n")[1].split("\n## ")[0]
    step = section.split("<!-- ci-step: run by tests/test_install.py")[1].split("```sh\n")[1].split("```")[0]
    assert "--deadline" in step and "$ENGINE" in step
    documented = _ci_rows(section)
    (tmp_path / "breaking.py").write_text(BREAKING_CONCAT)
    engines = {
        "passing": (f"{installed / 'dd-conformance'} serve --engine final", 0),
        "failing": (f"{installed / 'python'} {tmp_path / 'breaking.py'}", 1),
        "unstartable": (str(tmp_path / "no-such-engine"), 2),
    }
    for name, (engine, status) in engines.items():
        folder = tmp_path / name
        (folder / "conformance").mkdir(parents=True)
        (folder / "conformance" / "expected-failures.json").write_text(json.dumps(
            {"format": "dd-conformance-expect/2", "engine": "mine", "case_set": 3, "expected_failures": {}}))
        result = subprocess.run(["bash", "-c", step], cwd=folder, capture_output=True, text=True, timeout=900,
                                env={**OUTSIDE, "ENGINE": engine, "PATH": f"{installed}{os.pathsep}{OUTSIDE['PATH']}"})
        assert result.returncode == status, (name, result.stdout[-3000:], result.stderr[-3000:])
        [report] = folder.glob("*.jsonl")
        summary = json.loads(report.read_text().splitlines()[-1])["summary"]
        assert summary["ok"] is (status == 0) and summary["reasons"] == documented[status], name
        if name == "failing":
            assert {verdict["program"] for verdict in read_report(report)["verdicts"]
                    if verdict["status"] == "failed"} == {"concat"}
