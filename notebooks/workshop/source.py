"""The stages' own code in a notebook: a function's source, and the hunks of a stage diff.

Both are read live from the repository, so what a notebook shows is what the
engine runs: after a change to a stage, the notebook shows the new code.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from IPython.display import Markdown, display

from tests.stage_diff import file_changes

ROOT = Path(__file__).resolve().parents[2]


def _where(obj: Any) -> str:
    """``v5/order.py``, lines 40-52: where ``obj``'s source lives, relative to the repository."""
    path = Path(inspect.getsourcefile(obj)).resolve().relative_to(ROOT).as_posix()
    lines, first = inspect.getsourcelines(obj)
    return f"`{path}`, lines {first}-{first + len(lines) - 1}"


def show_source(*objects: Any) -> str:
    """Display the source of each function or class, with the file and lines it comes from; return the text."""
    shown = []
    for obj in objects:
        source = inspect.getsource(obj)
        shown.append(source)
        display(Markdown(f"{_where(obj)}:\n```python\n{source}```"))
    return "\n".join(shown)


def _hunks(diff: list[str]) -> list[list[str]]:
    """A unified diff (without its two header lines) cut at each ``@@`` line."""
    hunks: list[list[str]] = []
    for line in diff[2:]:
        if line.startswith("@@"):
            hunks.append([])
        hunks[-1].append(line)
    return hunks


def show_diff(before: str, after: str, file: str, *names: str) -> str:
    """Display what changed in ``file`` from stage ``before`` to stage ``after``; return the diff text.

    With ``names``, only the hunks that mention one of them (a function,
    a class, an attribute) are shown, so a notebook can point at the lines
    that carry the new concept. Raises ``ValueError`` when nothing matches:
    a stale notebook should fail loudly, not show an empty diff.
    """
    changes = {name: diff for name, _, _, diff in file_changes(before, after)}
    if file not in changes:
        raise ValueError(f"{before}/{file} and {after}/{file} do not differ (or neither exists)")
    diff = changes[file]
    hunks = _hunks(diff)
    if names:
        hunks = [hunk for hunk in hunks if any(name in line for line in hunk for name in names)]
        if not hunks:
            raise ValueError(f"no hunk of the {before} -> {after} diff of {file} mentions {', '.join(names)}")
    text = "\n".join([*diff[:2], *(line for hunk in hunks for line in hunk)])
    display(Markdown(f"`diff {before}/{file} {after}/{file}`:\n```diff\n{text}\n```"))
    return text


def stage_changes(before: str, after: str) -> list[tuple[str, int, int]]:
    """Display, as a table, each file that differs from ``before`` to ``after`` and its lines added and removed."""
    rows = [(name, added, removed) for name, added, removed, _ in file_changes(before, after)]
    table = "\n".join(f"| `{name}` | +{added} | -{removed} |" for name, added, removed in rows)
    display(Markdown(f"| file ({before} → {after}) | added | removed |\n|---|---|---|\n{table}"))
    return rows
