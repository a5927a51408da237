"""Is this machine ready for the workshop? One line per item: ``ok`` or what to do.

Run it from the repository, in the environment the notebooks will use::

    scripts/workshop.sh --check
    # or, with that environment's Python:  cd notebooks && python -m workshop.check

It checks, in about ten seconds: the Python version; that the workshop's packages
(``requirements/workshop.txt``) import, at their pinned versions; that graphviz's
``dot`` renders a tiny graph; that a Jupyter kernel starts and runs a cell (a tiny
notebook held in memory, run with nbclient); and that the stages import and one of
the documents' examples gives the document's answer on every stage. The exit
status is 0 when every item is ok, 1 otherwise.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
"""The repository's folder (this file is notebooks/workshop/check.py)."""

WORKSHOP_REQUIREMENTS = ROOT / "requirements" / "workshop.txt"

IMPORT_NAMES = {"jupyter": "jupyterlab", "ipykernel": "ipykernel_launcher"}
"""The module to import for a distribution whose module name is not its own (jupyter is a
meta-package: the lab it brings is what the room opens)."""

SETUP = "scripts/workshop.sh"

MINIMUM_PYTHON = (3, 11)

Check = Callable[[], str]
"""An item: returns what is fine, in a few words, or raises ``NotReady`` saying what to do."""


class NotReady(Exception):
    """An item is not ready; the message says what is wrong and what to do."""


def pins() -> dict[str, str]:
    """``{distribution: version}`` as ``requirements/workshop.txt`` pins them."""
    pinned = {}
    for line in WORKSHOP_REQUIREMENTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            pinned[name.strip()] = version.strip()
    return pinned


def python_version() -> str:
    """Python 3.11 or newer, as the stages are written for."""
    version = ".".join(map(str, sys.version_info[:3]))
    if sys.version_info[:2] < MINIMUM_PYTHON:
        raise NotReady(f"Python {version} is too old: install Python 3.11 or newer, then run {SETUP} again")
    return f"Python {version} ({sys.prefix})"


def packages() -> str:
    """Every workshop package imports, at its pinned version."""
    missing, other_versions = [], []
    pinned = pins()
    for name, version in pinned.items():
        try:
            importlib.import_module(IMPORT_NAMES.get(name, name))
        except ImportError as error:
            missing.append(f"{name} ({error})")
            continue
        installed = importlib.metadata.version(name)
        if installed != version:
            other_versions.append(f"{name} {installed} (pinned {version})")
    if missing:
        raise NotReady(f"cannot import {', '.join(missing)}: run {SETUP} (or {SETUP} --offline DIR)")
    if other_versions:
        raise NotReady(f"not the pinned versions: {', '.join(other_versions)}: run {SETUP} again")
    return f"{len(pinned)} packages import, at the pinned versions"


def dot_renders() -> str:
    """Graphviz's ``dot`` draws a two-node graph as SVG, as the notebooks' graph cells do."""
    import graphviz

    try:
        svg = graphviz.Source("digraph { a -> b }").pipe(format="svg")
    except graphviz.ExecutableNotFound:
        raise NotReady(f"graphviz's `dot` is missing: run {SETUP} as root (it apt-installs graphviz), "
                       f"or {SETUP} --offline DIR, or `apt-get install graphviz`") from None
    except graphviz.CalledProcessError as error:
        raise NotReady(f"`dot` failed: {error}; reinstall graphviz (`apt-get install --reinstall graphviz`)") from None
    if b"<svg" not in svg:
        raise NotReady("`dot` ran but drew no SVG; reinstall graphviz (`apt-get install --reinstall graphviz`)")
    return "`dot` renders a graph"


def kernel_runs() -> str:
    """A Jupyter kernel starts and runs a cell that imports a stage, in this environment's Python."""
    import nbclient
    import nbformat

    cell = f"import sys\nsys.path.insert(0, {str(ROOT)!r})\nimport v0\nprint(sys.prefix)"
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    try:
        nbclient.NotebookClient(notebook, timeout=60, kernel_name="python3").execute()
    except Exception as error:  # any failure to start or run is the finding
        raise NotReady(f"the python3 kernel did not run a cell ({type(error).__name__}: {error}); "
                       f"run {SETUP} and start Jupyter from its environment") from None
    outputs = notebook.cells[0].outputs
    prefix = "".join(output.get("text", "") for output in outputs).strip()
    if prefix != sys.prefix:
        raise NotReady(f"the python3 kernel runs in {prefix or 'an unknown Python'}, not in {sys.prefix}: "
                       "start Jupyter from the workshop's environment (see the teacher's guide)")
    return "a python3 kernel starts and runs a cell that imports v0"


def stages_run() -> str:
    """The stages import, and the documents' first example gives the document's answer on each."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.examples import EXAMPLES, judge
    from tests.harness import PRESENT_STAGES, STAGES, run

    example = EXAMPLES[0]
    wrong = []
    ran = []
    for stage in PRESENT_STAGES:
        if STAGES.index(stage) < STAGES.index(example.since):
            continue
        importlib.import_module(stage)
        verdict = judge(example, stage, run(stage, example.program, example.inputs, example.at))
        ran.append(stage)
        if not verdict.ok:
            wrong.extend(verdict.failures)
    if wrong:
        raise NotReady("; ".join(wrong) + ": the checkout is damaged; `git status` shows what changed")
    return f"{', '.join(ran)} import and run the example {example.name!r} as the document says"


CHECKS: list[tuple[str, Check]] = [
    ("python", python_version),
    ("packages", packages),
    ("dot", dot_renders),
    ("kernel", kernel_runs),
    ("stages", stages_run),
]


def main() -> int:
    """Run every item, print one line each and a verdict; 0 when all are ok."""
    started = time.monotonic()
    failed = 0
    for name, check in CHECKS:
        try:
            line = f"ok    {name:<9} {check()}"
        except NotReady as error:
            failed += 1
            line = f"FIX   {name:<9} {error}"
        except Exception as error:  # reported, and the rest still run
            failed += 1
            line = f"FIX   {name:<9} {type(error).__name__}: {error} (run {SETUP}, then this check again)"
        print(line, flush=True)
    seconds = time.monotonic() - started
    if failed:
        print(f"NOT READY: {failed} item{'s' if failed > 1 else ''} to fix above ({seconds:.0f} s)")
        return 1
    print(f"READY for the workshop ({seconds:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
