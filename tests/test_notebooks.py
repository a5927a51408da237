"""Every teaching notebook is stored without outputs, and runs from top to bottom without an error.

The notebooks (one per stage, the Spark pipeline's and the conformance
oracle's, in notebooks/) assert what they demonstrate, and each exercise's
hidden solution runs through the checker a learner's answer meets, so
executing them keeps their prose and solutions honest as the engines change.
They are executed once per run, the way the workshop site executes them (a
fresh kernel, notebooks/ as the working directory, a fixed hash seed), by
tests/test_site.py's ``test_executing_each_notebook_again_gives_the_committed_site``,
which also holds their pages to the committed site; a failing cell fails that
test, naming the notebook and the cell. Nothing is written back to the
notebooks, which are stored without outputs, as the tests here check.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS, f"no notebooks found in {NOTEBOOKS_DIR}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebook_is_stored_without_outputs(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    run_cells = [
        index
        for index, cell in enumerate(notebook.cells)
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None)
    ]
    assert not run_cells, f"{path.name}: cells {run_cells} hold outputs; clear them before saving"
