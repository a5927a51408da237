"""Checkers for the exercises of ``v2_dataflow_graphs.ipynb``: debug, a word count, reduce, concat.

The inputs each exercise is about are defined here (``DEBUG_SENDS``,
``WORD_COUNT_SENDS``, ``CONCAT_A_FIRST``...), so the notebook prints the very
data the checker judges. Expected answers are computed by running stage v2
itself, never typed in; the ``Reduce.on_data`` a learner builds is judged
inside v2 against v0 from scratch (``workshop.build``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workshop import Wrong, as_multiset, check_piece, equals_from_scratch, exercise

from v2 import Collection, DifferenceStreamReader, DifferenceStreamWriter, GraphBuilder

DEBUG_SENDS = [
    Collection([(1, 1), (2, 1)]),
    Collection([(5, 1)]),
    Collection([(2, -1), (4, 2)]),
]
"""The differences sent, one per step, to ``numbers.map(lambda n: n * 3).filter(lambda n: n % 2 == 0).debug("out")``:
an addition, a difference whose only record the filter drops, and a retraction with a multiplicity of 2."""


def debug_graph(
    builder: GraphBuilder, sink: Callable[[str], None] = print,
) -> tuple[DifferenceStreamWriter, DifferenceStreamReader]:
    """The graph of the ``debug`` exercise, printing to ``sink``; returns the writer and a reader after ``debug``."""
    numbers, writer = builder.new_input()
    out = numbers.map(lambda n: n * 3).filter(lambda n: n % 2 == 0).debug("out", sink=sink)
    return writer, out.connect_reader()



@exercise
def debug_lines(answer: Any) -> None:
    """The learner's prediction of the lines ``debug("out")`` prints for ``DEBUG_SENDS``: one dict per line."""
    builder = GraphBuilder()
    lines: list[str] = []
    writer, reader = debug_graph(builder, sink=lines.append)
    graph = builder.finalize()
    printed = []
    for difference in DEBUG_SENDS:
        writer.send_data(difference)
        graph.step()
        printed += [message.as_dict() for message in reader.drain()]
    if not isinstance(answer, list):
        raise Wrong(f"give a list with one dict per printed line, not {type(answer).__name__}: {answer!r}")
    got = [as_multiset(line, f"line {number}") for number, line in enumerate(answer, start=1)]
    if len(got) != len(printed):
        raise Wrong(
            f"you predicted {len(got)} lines, {got}; debug prints {len(printed)}: every operator sends one "
            f"difference for each difference it receives, even when nothing is left of it (the filter drops "
            f"15, the only record of the second send, and still passes on an empty difference)"
        )
    for number, (mine, theirs, sent) in enumerate(zip(got, printed, DEBUG_SENDS, strict=True), start=1):
        if mine != theirs:
            raise Wrong(
                f"line {number}: you predicted {mine}, debug prints {lines[number - 1]!r}, that is {theirs}, "
                f"for the send {sent.as_dict()}: "
                f"map and filter apply to each record and leave its multiplicity alone, so a retraction stays "
                f"a retraction (-1), and a record added twice keeps its multiplicity 2"
            )


WORD_COUNT_SENDS = [
    Collection([("the cat saw the dog", 1)]),
    Collection([("the dog", 1)]),
    Collection([("the cat saw the dog", -1), ("a cat a dog", 1)]),
]
"""Lines of text, one difference per step: two lines added, then one replaced by another. Lines repeat
words ("the", "a"), so counting each line's distinct words (``set(line.split())``) is caught."""


def _word_counts(lines: dict[str, int]) -> dict[tuple[str, int], int]:
    """Word counts of a collection of lines, from scratch: ``{(word, count): 1}``."""
    counts: dict[str, int] = {}
    for line, multiplicity in lines.items():
        for word in line.split():
            counts[word] = counts.get(word, 0) + multiplicity
    return {(word, count): 1 for word, count in counts.items() if count != 0}


@exercise
def word_count(answer: Callable[[GraphBuilder], Any]) -> None:
    """The learner's ``word_count(builder)``: an input of lines, a reader of ``(word, count)``, checked each step."""
    builder = GraphBuilder()
    returned = answer(builder)
    if (not isinstance(returned, tuple) or len(returned) != 2
            or not isinstance(returned[0], DifferenceStreamWriter)
            or not isinstance(returned[1], DifferenceStreamReader)):
        raise Wrong(
            f"word_count returned {returned!r}; return (writer, reader): the writer that "
            f"builder.new_input() gave you and the reader from connect_reader() on the counts"
        )
    writer, reader = returned
    graph = builder.finalize()
    lines: dict[str, int] = {}
    output = Collection()
    for step, difference in enumerate(WORD_COUNT_SENDS, start=1):
        writer.send_data(difference)
        graph.step()
        for line, multiplicity in difference:
            lines[line] = lines.get(line, 0) + multiplicity
        for message in reader.drain():
            output = output.concat(message)
        got, expected = output.as_dict(), _word_counts(lines)
        if got == expected:
            continue
        hint = _word_count_hint(got, expected)
        raise Wrong(
            f"after step {step} (the lines are {lines}), the differences your reader received add up to "
            f"{got}, but the word counts are {expected}{hint}"
        )


def _word_count_hint(got: dict, expected: dict) -> str:
    """Why a word count may be off, judged from the records it produced."""
    keys = [record if isinstance(record, str) else record[0] for record in got if isinstance(record, (str, tuple))]
    if any(isinstance(key, str) and " " in key for key in keys):
        return "; your output holds whole lines: split each line into words with flat_map first"
    if any(isinstance(record, str) for record in got):
        return "; your output holds words, not (word, count) pairs: count() needs (key, value) records"
    words = {word for word, _ in expected}
    if any(isinstance(record, tuple) and len(record) == 2 and record not in expected and record[0] in words
           for record in got):
        return ("; a word's count is how many times it occurs, and count() adds up the multiplicities of "
                "a key's values: did you use distinct() instead, or key the records by line?")
    return ""


CONCAT_A_FIRST = [Collection([("a0", 1)]), Collection([("a0", -1), ("a1", 1)]), Collection([("a2", 1)])]
"""What input ``a`` sends before the first step: three differences."""
CONCAT_B_FIRST = [Collection([(f"b{i}", 1)]) for i in range(5)]
"""What input ``b`` sends before the first step: five differences, ``b0`` to ``b4``."""
CONCAT_A_SECOND = [Collection([("a3", 1)]), Collection([("a4", 1)])]
"""What input ``a`` sends before the second step; ``b`` sends nothing more."""


def concat_steps() -> list[list[dict]]:
    """What ``a.concat(b)`` emits in each of the two steps, run on stage v2."""
    builder = GraphBuilder()
    a, a_writer = builder.new_input()
    b, b_writer = builder.new_input()
    reader = a.concat(b).connect_reader()
    graph = builder.finalize()
    emitted = []
    for a_sends, b_sends in ((CONCAT_A_FIRST, CONCAT_B_FIRST), (CONCAT_A_SECOND, [])):
        for difference in a_sends:
            a_writer.send_data(difference)
        for difference in b_sends:
            b_writer.send_data(difference)
        graph.step()
        emitted.append([message.as_dict() for message in reader.drain()])
    return emitted


def _outputs(number: int) -> str:
    return f"{number} output" if number == 1 else f"{number} outputs"


@exercise
def concat_waits(answer: Any) -> None:
    """The learner's prediction of what ``concat`` emits in each step: a list per step of dicts, one per output."""
    expected = concat_steps()
    if not isinstance(answer, list) or len(answer) != len(expected) or not all(isinstance(s, list) for s in answer):
        raise Wrong(
            f"give a list of {len(expected)} lists, one per step, each holding one dict per difference "
            f"concat emits in that step; you gave {answer!r}"
        )
    for step, (mine, theirs) in enumerate(zip(answer, expected, strict=True), start=1):
        mine = [as_multiset(output, f"an output of step {step}") for output in mine]
        if len(mine) > len(theirs):
            raise Wrong(
                f"in step {step} you predicted {_outputs(len(mine))}, {mine}; concat emits {len(theirs)}: its i-th "
                f"output needs the i-th difference of both inputs, so a difference with no partner yet stays "
                f"queued instead of being sent alone"
            )
        if len(mine) < len(theirs):
            raise Wrong(
                f"in step {step} you predicted {_outputs(len(mine))}, {mine}; concat emits {len(theirs)}, {theirs}: "
                f"differences that waited in a queue are paired as soon as their partners arrive"
            )
        for number, (output, right) in enumerate(zip(mine, theirs, strict=True), start=1):
            if output != right:
                raise Wrong(
                    f"step {step}, output {number}: you predicted {output}, concat emits {right}: the {number}-th "
                    f"output of a step is the sum of the next unpaired difference of a and the next of b, "
                    f"in the order each input sent them"
                )


@exercise
def build_reduce(answer: Any) -> None:
    """The learner's ``Reduce.on_data(self, collection)``, run inside v2: count and distinct equal v0 from scratch."""
    check_piece("v2", "operators.Reduce.on_data", answer,
                [equals_from_scratch("v2", name) for name in ("count", "distinct")])
