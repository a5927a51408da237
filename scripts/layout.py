"""The README's Layout block, made from the tree: ``python scripts/layout.py`` prints it, ``--write`` puts it in.

The block lists the repository's folders and Python modules, each with what it
is: a module's (or a package's ``__init__``) docstring summary, a shell
script's header comment's first sentence, and, for what says nothing of
itself (a folder of notebooks or pages), the words in ``DESCRIBED``. The
entries are read from ``git ls-files``, so a new module or folder shows up
with its own docstring, and a new top-level entry must be placed in ``ORDER``
(or ``LEFT_OUT``) before the block can be made. ``tests/test_layout.py``
checks that the README holds the block as made.

The block's style: a name column of ``NAME_WIDTH`` characters, folders
ending in ``/``, children two spaces in, descriptions wrapped under the
column at ``WIDTH``.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
import textwrap
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
NAME_WIDTH = 22
WIDTH = 110

ORDER = ("v0", "v1", "v2", "v3", "v4", "v5", "final", "differential_dataflow_stages", "ladder.py", "notebooks",
         "docs", "site", "tests", "scripts", "requirements")
"""The top-level entries the block lists, in its order."""

LEFT_OUT = (".ci", ".gitignore", "CHANGELOG.md", "LICENSE", "README.md", "pyproject.toml", "requirements.txt")
"""The top-level entries the block leaves out: files the reader opens by name, and the CI's folder."""

EXPANDED = ("final", "notebooks", "docs", "tests", "scripts")
"""The folders whose own files and folders are listed under them (one level down)."""

GROUPED = {"tests": "test_*.py"}
"""Files of a folder listed as one entry, by a pattern."""

DESCRIBED = {
    "notebooks": "The workshops: one notebook per stage, the Spark pipeline's and the oracle's, stored without "
                 "outputs, executed by the tests.",
    "docs": "What the README and the workshop site are made from.",
    "docs/pictures": "The README's pictures, drawn from graphs the engine built (python -m tests.pictures).",
    "docs/site": "The workshop site's sources: layout, styles, nbconvert template, the home page, the teacher's "
                 "guide and the glossary (Jinja, then Markdown).",
    "site": "The workshop site as built (scripts/site.sh; tests/test_site.py checks it).",
    "tests/test_*.py": "The shared suite: examples, properties against from-scratch, misuse, ...",
    "scripts": "The commands: the venv, the two jobs, the site, a room's machines, and this block.",
    "requirements": "The pinned sets: workshop.txt (the day), pipeline.txt (Spark), dev.txt (tests); "
                    "requirements.txt includes all three.",
}
"""What an entry that says nothing of itself is: a folder with no ``__init__.py``, a group of files."""


class LayoutError(RuntimeError):
    """The tree has an entry the block cannot place or describe; the message says what to add where."""


def tracked() -> list[str]:
    """The repository's files, as ``git ls-files`` lists them.

    Raises:
        LayoutError: git cannot list them (not a clone, or no git).
    """
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as error:
        raise LayoutError(f"git ls-files failed in {ROOT} ({error}); run this in a clone") from None
    return listed.stdout.splitlines()


def docstring_summary(path: Path) -> str | None:
    """A Python file's docstring summary: its first paragraph, on one line; None when it has no docstring."""
    docstring = ast.get_docstring(ast.parse(path.read_text()))
    if not docstring:
        return None
    return " ".join(docstring.split("\n\n")[0].split())


def comment_summary(path: Path) -> str | None:
    """A shell script's header comment (after the ``#!`` line), its first sentence; None when it has none."""
    lines = path.read_text().splitlines()[1:]
    header = []
    for line in lines:
        if not line.startswith("#"):
            break
        header.append(line.lstrip("#").strip())
    sentence = re.match(r"(.+?\.)(\s|$)", " ".join(header))
    return sentence.group(1) if sentence else None


def describe(path: str, files: set[str]) -> str:
    """What ``path`` (a file, a folder or a group's pattern, relative to the root) is, in a line of prose.

    Raises:
        LayoutError: neither its docstring, its header comment nor ``DESCRIBED`` says.
    """
    found = DESCRIBED.get(path)
    if found is None and f"{path}/__init__.py" in files:
        found = docstring_summary(ROOT / path / "__init__.py")
    elif found is None and path.endswith(".py"):
        found = docstring_summary(ROOT / path)
    elif found is None and path.endswith(".sh"):
        found = comment_summary(ROOT / path)
    if not found:
        raise LayoutError(f"{path} says nothing of itself: give it a docstring (or header comment), or add it to "
                          f"DESCRIBED in {Path(__file__).name}")
    return found.replace("``", "")


def children(folder: str, files: set[str]) -> list[str]:
    """The entries listed under ``folder``: its Python modules and shell scripts, then its groups, then its
    folders, each in name order."""
    inside = {name[len(folder) + 1:] for name in files if name.startswith(f"{folder}/")}
    folders = sorted({name.split("/")[0] for name in inside if "/" in name})
    own = sorted(name for name in inside if "/" not in name and name.endswith((".py", ".sh"))
                 and name != "__init__.py")
    pattern = GROUPED.get(folder)
    grouped = [name for name in own if pattern and fnmatch(name, pattern)]
    return ([name for name in own if name not in grouped] + ([pattern] if grouped else [])
            + [f"{name}/" for name in folders])


def entry(name: str, description: str, depth: int) -> list[str]:
    """One entry of the block: ``name`` in its column, ``description`` wrapped beside it."""
    shown = "  " * depth + name
    lines = textwrap.wrap(description, WIDTH - NAME_WIDTH, break_long_words=False, break_on_hyphens=False)
    indent = " " * NAME_WIDTH
    if len(shown) >= NAME_WIDTH:
        return [shown] + [indent + line for line in lines]
    return [shown.ljust(NAME_WIDTH) + lines[0]] + [indent + line for line in lines[1:]]


def layout(files: list[str] | None = None) -> str:
    """The Layout block's lines (without the fence), from ``files`` (by default ``git ls-files``).

    Raises:
        LayoutError: a top-level entry is in neither ``ORDER`` nor ``LEFT_OUT``, or an entry says nothing of
            itself.
    """
    files = set(tracked() if files is None else files)
    top = {name.split("/")[0] for name in files}
    unplaced = sorted(top - set(ORDER) - set(LEFT_OUT))
    if unplaced:
        raise LayoutError(f"{', '.join(unplaced)}: place each in ORDER (or LEFT_OUT) in {Path(__file__).name}")
    lines = []
    for name in (name for name in ORDER if name in top):
        folder = name not in files
        lines += entry(f"{name}/" if folder else name, describe(name, files), 0)
        if name in EXPANDED:
            for child in children(name, files):
                lines += entry(child, describe(f"{name}/{child.rstrip('/')}", files), 1)
    return "\n".join(lines) + "\n"


def readme_block(text: str) -> str:
    """The README's Layout block: the first fenced block after the heading ``## Layout``, without the fence.

    Raises:
        LayoutError: the README has no such block.
    """
    found = re.search(r"^## Layout\n.*?^```\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)
    if found is None:
        raise LayoutError(f"{README} has no fenced block under '## Layout'")
    return found.group(1)


def main(argv: list[str] | None = None) -> int:
    """Print the block, or with ``--write`` put it in the README in place of the one there."""
    parser = argparse.ArgumentParser(prog="python scripts/layout.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="replace the README's Layout block with it")
    arguments = parser.parse_args(argv)
    try:
        block = layout()
        if arguments.write:
            text = README.read_text()
            old = readme_block(text)
            README.write_text(text.replace(f"```\n{old}```", f"```\n{block}```", 1))
        else:
            sys.stdout.write(block)
    except LayoutError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
