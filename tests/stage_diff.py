"""Print how much each stage changes from the one before: ``python -m tests.stage_diff [--full]``.

The README promises that ``diff -r vN vN+1`` reads as the new concept and
nothing else; this lists, per consecutive pair, the lines added and removed in
each file (``--full`` prints the unified diffs too), so a reviewer sees at a
glance where a stage's change went.
"""

from __future__ import annotations

import argparse
import difflib
from itertools import pairwise

from tests.harness import PRESENT_STAGES, ROOT


def python_files(stage: str) -> set[str]:
    """The stage's .py files, as paths relative to its folder, subpackages included (final/operators/)."""
    return {path.relative_to(ROOT / stage).as_posix() for path in (ROOT / stage).rglob("*.py")}


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
        total_added = sum(added for _, added, _, _ in changes)
        total_removed = sum(removed for _, _, removed, _ in changes)
        print(f"{before} -> {after}: +{total_added} -{total_removed}")
        # 16 fits every top-level name; a subpackage's paths widen the column.
        width = max([16, *(len(name) for name, _, _, _ in changes)])
        for name, added, removed, diff in changes:
            print(f"    {name:<{width}} +{added:<4} -{removed}")
            if args.full:
                print("\n".join(diff))


if __name__ == "__main__":
    main()
