"""The stages' own code in a notebook: a function's source, and the hunks of a stage diff.

Both are read live from the repository, so what a notebook shows is what the
engine runs: after a change to a stage, the notebook shows the new code. They
are displayed as HTML with the colours written into each element (code
highlighted by Pygments, a diff's added lines green and removed lines red, all
in a monospace font), so they look the same in Jupyter, in the rendered site
and offline; the plain text goes along for a terminal.
"""

from __future__ import annotations

import inspect
from html import escape
from pathlib import Path
from typing import Any

from IPython.display import Markdown, display
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from tests.stage_diff import file_changes

ROOT = Path(__file__).resolve().parents[2]

MONOSPACE = "font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', monospace"
BLOCK = f"{MONOSPACE}; font-size: 13px; line-height: 1.4; margin: 0.3em 0 1em; padding: 0.5em 0.8em; " \
    "background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; overflow-x: auto; white-space: pre"
DIFF_LINES = {"+": "background: #dafbe1", "-": "background: #ffebe9", "@": "color: #0550ae; background: #ddf4ff"}
"""The style of a diff line by its first character: added, removed, a hunk's header; context lines plain."""


def _show(caption: str, block: str, text: str) -> None:
    """Display ``caption`` (HTML) above ``block`` (the inside of a ``<pre>``), with ``text`` as the plain form."""
    html = f'<div class="workshop-code"><p>{caption}</p><pre style="{BLOCK}">{block}</pre></div>'
    display({"text/html": html, "text/plain": text}, raw=True)


def _highlighted(source: str) -> str:
    """Python ``source`` as HTML spans coloured inline (no stylesheet needed), without a wrapper."""
    return highlight(source, PythonLexer(), HtmlFormatter(noclasses=True, nowrap=True, style="default"))


def _diff_html(lines: list[str]) -> str:
    """Diff lines as blocks, added ones on green and removed ones on red (the headers ``---``/``+++`` in bold)."""
    blocks = []
    for line in lines:
        if line.startswith(("---", "+++")):
            style = "font-weight: bold"
        else:
            style = DIFF_LINES.get(line[:1], "")
        blocks.append(f'<span style="display: block; {style}">{escape(line) or " "}</span>')
    return "".join(blocks)


def _where(obj: Any) -> tuple[str, str]:
    """(``v5/order.py``, ``lines 40-52``): where ``obj``'s source lives, relative to the repository."""
    path = Path(inspect.getsourcefile(obj)).resolve().relative_to(ROOT).as_posix()
    lines, first = inspect.getsourcelines(obj)
    return path, f"lines {first}-{first + len(lines) - 1}"


def show_source(*objects: Any) -> str:
    """Display the source of each function or class, with the file and lines it comes from; return the text."""
    shown = []
    for obj in objects:
        source = inspect.getsource(obj)
        shown.append(source)
        path, lines = _where(obj)
        _show(f"<code>{escape(path)}</code>, {lines}:", _highlighted(source), f"{path}, {lines}:\n{source}")
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
    shown = [*diff[:2], *(line for hunk in hunks for line in hunk)]
    text = "\n".join(shown)
    command = f"diff {before}/{file} {after}/{file}"
    _show(f"<code>{escape(command)}</code>:", _diff_html(shown), f"{command}:\n{text}")
    return text


def stage_changes(before: str, after: str) -> list[tuple[str, int, int]]:
    """Display, as a table, each file that differs from ``before`` to ``after`` and its lines added and removed."""
    rows = [(name, added, removed) for name, added, removed, _ in file_changes(before, after)]
    table = "\n".join(f"| `{name}` | +{added} | -{removed} |" for name, added, removed in rows)
    display(Markdown(f"| file ({before} → {after}) | added | removed |\n|---|---|---|\n{table}"))
    return rows
