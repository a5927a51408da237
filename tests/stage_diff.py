"""Print how much each stage changes from the one before: ``python -m tests.stage_diff [--full]``.

The README promises that ``diff -r vN vN+1`` reads as the new concept and
nothing else; this lists, per consecutive pair, the lines added and removed in
each file (``--full`` prints the unified diffs too), so a reviewer sees at a
glance where a stage's change went. ``final/`` also holds tools built on the
engine (``spark/``, ``conformance/``); they are counted apart from the
engine, so v5 -> final shows the engine's own change.
"""

from __future__ import annotations

import argparse
import difflib
from itertools import pairwise

from tests.harness import PRESENT_STAGES, ROOT, stage_python_files

TOOLS = ("spark", "conformance")
"""Subpackages of a stage that are tools built on its engine, not part of it."""


def is_tool(name: str) -> bool:
    """Whether the file ``name`` (relative to its stage) belongs to a tool rather than the engine."""
    return name.split("/", 1)[0] in TOOLS


def python_files(stage: str) -> set[str]:
    """The stage's .py files, as paths relative to its folder, subpackages included (final/operators/)."""
    return {path.relative_to(ROOT / stage).as_posix() for path in stage_python_files(stage)}


def file_changes(before: str, after: str) -> list[tuple[str, int, int, list[str]]]:
    """``(file name, lines added, lines removed, unified diff)`` for each .py file that differs."""
    names = sorted(python_files(before) | python_files(after))
    changes = []
    for name in names:
        old, new = ROOT / before / name, ROOT / after / name
        old_lines = old.read_text().splitlines() if old.exists() else []
        new_lines = new.read_text().splitlines() if new.exists() else []
        diff = list(difflib.unified_diff(old_lines, new_lines, f"{before}/{name}", f"{after}/{name}", lineterm=""))
        added = sum(1 for line in diff if line.startswith("+") and not line.startswith("+++"))
        removed = sum(1 for line in diff if line.startswith("-") and not line.startswith("---"))
        if added or removed:
            changes.append((name, added, removed, diff))
    return changes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true", help="print the unified diffs as well")
    args = parser.parse_args()
    for before, after in pairwise(PRESENT_STAGES):
        changes = file_changes(before, after)
        engine = [change for change in changes if not is_tool(change[0])]
        tools = [change for change in changes if is_tool(change[0])]
        print(f"{before} -> {after}: {_total(engine)}" + (f"; tools built on it ({', '.join(TOOLS)}): "
                                                          f"{_total(tools)}" if tools else ""))
        # 16 fits every top-level name; a subpackage's paths widen the column.
        width = max([16, *(len(name) for name, _, _, _ in changes)])
        for group, title in ((engine, "engine"), (tools, "tools")):
            if tools:
                print(f"  {title}:")
            for name, added, removed, diff in group:
                print(f"    {name:<{width}} +{added:<4} -{removed}")
                if args.full:
                    print("\n".join(diff))


def _total(changes: list[tuple[str, int, int, list[str]]]) -> str:
    """``+added -removed`` over ``changes``."""
    return f"+{sum(change[1] for change in changes)} -{sum(change[2] for change in changes)}"


if __name__ == "__main__":
    main()
