"""The stage packages are self-contained and read as a ladder (the README's "The stages").

- no stage imports another (relative imports only), so ``import v2, v3`` never mixes them;
- final imports no code of the repository outside it but where the README's Layout says (the oracle's
  examples writer reads ``tests/examples.py``);
- a file keeps its name from the stage that introduces it on (v1's sequence.py alone is retired);
- each package opens with "Stage vN: <concept>. New since ...";
- the doctests in ``collection.py`` and ``order.py`` pass.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import re
import subprocess
from itertools import pairwise

import pytest

from tests.harness import PRESENT_STAGES, ROOT, stage_module, stage_python_files

STAGE_IMPORT = re.compile(r"^\s*(from|import)\s+(v\d|final)\b|import_module\(\s*[\"'](v\d|final)\b", re.MULTILINE)
RETIRED = {("v1", "v2"): {"sequence.py"}}


def test_no_stage_imports_another(stage: str) -> None:
    offenders = [
        f"{path.relative_to(ROOT)}: {match.group(0).strip()}"
        for path in stage_python_files(stage)
        for match in STAGE_IMPORT.finditer(path.read_text())
    ]
    assert offenders == []


OUTSIDE_FINAL = {"v0", "v1", "v2", "v3", "v4", "v5", "ladder", "tests", "notebooks", "scripts"}
"""The repository's code outside final/, by its top-level import name."""


def test_final_imports_the_repository_outside_it_only_where_the_readme_says() -> None:
    found: dict[str, list[str]] = {}
    for path in stage_python_files("final"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                if name.split(".")[0] in OUTSIDE_FINAL:
                    found.setdefault(str(path.relative_to(ROOT)), []).append(name)
    assert found == {"final/conformance/examples.py": ["tests.examples"]}


def test_stages_loaded_together_stay_apart() -> None:
    modules = [stage_module(stage) for stage in PRESENT_STAGES]
    collections = {module.Collection for module in modules}
    assert len(collections) == len(modules)
    for module in modules:
        assert module.Collection.__module__ == f"{module.__name__}.collection"


LADDER = [stage for stage in PRESENT_STAGES if stage != "final"]
"""final/ is a package laid out by concept (one module per operator family), not a copy of v5's files."""


@pytest.mark.parametrize(("before", "after"), list(pairwise(LADDER)))
def test_files_keep_their_names(before: str, after: str) -> None:
    names = {path.name for path in (ROOT / before).glob("*.py")}
    later = {path.name for path in (ROOT / after).glob("*.py")}
    assert names - later == RETIRED.get((before, after), set())


def test_package_docstring_names_the_concept(stage: str) -> None:
    module = stage_module(stage)
    assert re.match(rf"Stage {stage}: .+", module.__doc__)
    assert "New since" in module.__doc__
    assert all(hasattr(module, name) for name in module.__all__)


def test_doctests(stage: str) -> None:
    attempted = 0
    for path in sorted((ROOT / stage).glob("*.py")):
        module = importlib.import_module(f"{stage}.{path.stem}") if path.stem != "__init__" else stage_module(stage)
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, f"{path.name}: {result.failed} doctest(s) failed"
        attempted += result.attempted
    assert attempted > 0


def test_no_committed_file_holds_a_merge_conflict() -> None:
    """A merge left half-resolved shows as git's conflict markers at the start of a line."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    marker = re.compile(r"^(<{7} |>{7} |={7}$)", re.MULTILINE)
    offenders = []
    for name in filter(None, listed.stdout.split("\0")):
        path = ROOT / name
        if path.is_file() and path.suffix in {".py", ".md", ".json", ".ipynb", ".toml", ".txt", ".sh", ".mjs"}:
            found = marker.search(path.read_text(errors="replace"))
            if found:
                offenders.append(f"{name}:{path.read_text(errors='replace')[:found.start()].count(chr(10)) + 1}")
    assert offenders == []
