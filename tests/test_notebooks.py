"""Every teaching notebook runs from top to bottom without an error.

The notebooks (one per stage, the Spark pipeline's and the conformance
oracle's, in notebooks/) assert what they demonstrate, and each exercise's
hidden solution runs through the checker a learner's answer meets, so
executing them keeps their prose and solutions honest as the engines change.
They run in memory with nbclient, in a kernel started from this interpreter,
with notebooks/ as the working directory; nothing is written back to the
files, which are stored without outputs. Their pages on the workshop site
(site/) are held to the notebooks as they are now by tests/test_site.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient

NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
RENDERED = NOTEBOOKS_DIR.parent / "docs" / "notebooks"
KERNEL_NAME = "python3"

CELL_TIMEOUT = 300
"""Seconds one cell may take: the slowest cell needs well under one; a kernel
that hangs fails the test instead of stalling the run."""


def ensure_kernelspec() -> None:
    """Install this interpreter's ipykernel spec into ``sys.prefix`` if no ``python3`` kernel is known."""
    if KERNEL_NAME not in KernelSpecManager().find_kernel_specs():
        from ipykernel.kernelspec import install

        install(user=False, prefix=sys.prefix)


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


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebook_runs(path: Path) -> None:
    ensure_kernelspec()
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT,
        kernel_name=KERNEL_NAME,
        resources={"metadata": {"path": str(NOTEBOOKS_DIR)}},
    )
    client.execute()  # raises CellExecutionError, naming the cell, on the first error
