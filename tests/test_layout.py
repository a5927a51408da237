"""The README's Layout block is the one ``scripts/layout.py`` makes from the tree, so it never drifts from it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import layout  # from scripts/, which is not a package


@pytest.fixture(scope="module")
def files() -> list[str]:
    """The tracked files, or a skip outside a git checkout."""
    try:
        return layout.tracked()
    except layout.LayoutError:
        pytest.skip("not a git checkout")


def test_the_readme_layout_is_made_from_the_tree(files: list[str]) -> None:
    assert layout.readme_block(layout.README.read_text()) == layout.layout(files), (
        "the README's Layout block is stale: run 'python scripts/layout.py --write'"
    )


def test_every_final_module_is_in_the_layout_with_its_docstring(files: list[str]) -> None:
    block = layout.layout(files)
    for path in sorted((layout.ROOT / "final").glob("*.py")):
        if path.name != "__init__.py":
            assert f"  {path.name}" in block
            assert layout.docstring_summary(path).split()[0].replace("``", "") in block


def test_a_top_level_entry_the_layout_cannot_place_is_refused_saying_where_to_add_it(files: list[str]) -> None:
    with pytest.raises(layout.LayoutError, match="newtool: place each in ORDER"):
        layout.layout([*files, "newtool/run.py"])


def test_a_module_without_a_docstring_is_refused_saying_to_write_one(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "final").mkdir()
    (tmp_path / "final" / "__init__.py").write_text('"""An engine."""\n')
    (tmp_path / "final" / "silent.py").write_text("x = 1\n")
    monkeypatch.setattr(layout, "ROOT", tmp_path)
    with pytest.raises(layout.LayoutError, match=r"final/silent\.py says nothing of itself: give it a docstring"):
        layout.layout(["final/__init__.py", "final/silent.py"])
