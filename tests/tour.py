"""The tour: every stage runs every example of the documents, beside what the document printed.

For each example of tests/examples.py it prints the document's passage and
output, then for each stage either the stage's output (accumulated, at the
last input version) with two verdicts, against the document's expected output
and against v0 recomputed from scratch at every version, or why the stage
cannot run it. It exits non-zero if any stage disagrees with either.

    python -m tests.tour            # every example
    python -m tests.tour add_one    # examples whose name contains "add_one"
"""

from __future__ import annotations

import argparse
import sys
import textwrap

from tests.examples import EXAMPLES, Example, judge
from tests.harness import PRESENT_STAGES, STAGES, Result, run, run_messages

WIDTH = 100


def show(records: dict) -> str:
    """A collection as the documents print it: ``[(record, multiplicity), ...]``, sorted when possible."""
    pairs = list(records.items())
    try:
        pairs.sort()
    except TypeError:
        pairs.sort(key=repr)
    return "[" + ", ".join(f"({record!r}, {multiplicity})" for record, multiplicity in pairs) + "]"


def tour_example(example: Example) -> list[str]:
    """Print one example on every stage; return the stages that disagreed."""
    print("=" * WIDTH)
    print(f"{example.name}   ({example.source})")
    print(textwrap.indent(textwrap.fill(f"document: {example.printed}", WIDTH - 2), "  "))
    if example.notes:
        print(textwrap.indent(textwrap.fill(f"note: {example.notes}", WIDTH - 2), "  "))
    last = max(example.expected, key=lambda version: (version,) if isinstance(version, int) else version)
    print(f"  expected at version {last}: {show(example.expected[last])}")
    from_scratch: Result = example.from_scratch()
    failures = []
    for stage in PRESENT_STAGES:
        if STAGES.index(stage) < STAGES.index(example.since):
            print(f"  {stage:>5}  cannot run it: its operators arrive in {example.since}")
            continue
        try:
            result = run(stage, example.program, example.inputs, example.at)
        except NotImplementedError as missing:
            print(f"  {stage:>5}  cannot run it: {missing}")
            continue
        verdict = judge(example, stage, result, from_scratch)
        count = f"{len(result)} version{'s' if len(result) != 1 else ''}"
        print(f"  {stage:>5}  {show(result.get(last, {}))}   [{count}: {verdict.summary()}]")
        if verdict.limitation:
            print(textwrap.indent(textwrap.fill(f"why: {verdict.limitation}", WIDTH - 9), " " * 9))
        if not verdict.ok:
            failures.append(stage)
        if not verdict.ok or verdict.limitation:
            for version in example.expected:
                if result.get(version) != example.expected[version]:
                    print(f"         at version {version}: got {show(result.get(version, {}))}, "
                          f"from scratch {show(example.expected[version])}")
        failures += show_messages(example, stage)
    return failures


def show_messages(example: Example, stage: str) -> list[str]:
    """Where the document prints a stage's debug lines, print the stage's own beside them."""
    documented = example.messages_on(stage)
    if documented is None:
        return []
    produced = run_messages(stage, example.program, example.inputs)
    print(f"         debug lines, {stage} | document:")
    for index in range(max(len(produced), len(documented))):
        mine = produced[index] if index < len(produced) else None
        theirs = documented[index] if index < len(documented) else None
        mark = "  " if mine == theirs else "!="
        left = f"{mine[0]}: {show(mine[1])}" if mine else "-"
        right = f"{theirs[0]}: {show(theirs[1])}" if theirs else "-"
        print(f"         {left:<44} {mark} {right}")
    return [] if produced == documented else [f"{stage} (debug lines)"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="run only examples whose name contains one of these")
    args = parser.parse_args(argv)
    chosen = [e for e in EXAMPLES if not args.names or any(name in e.name for name in args.names)]
    if not chosen:
        parser.error(f"no example matches {args.names}; known: {', '.join(e.name for e in EXAMPLES)}")
    print(f"Stages present: {', '.join(PRESENT_STAGES)}. Examples: {len(chosen)}.")
    failures = {example.name: tour_example(example) for example in chosen}
    failed = {name: stages for name, stages in failures.items() if stages}
    print("=" * WIDTH)
    if failed:
        print("FAILED: " + "; ".join(f"{name} on {', '.join(stages)}" for name, stages in failed.items()))
        return 1
    print(f"All {len(chosen)} examples agree with their documents and with from-scratch on every stage that runs them.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
