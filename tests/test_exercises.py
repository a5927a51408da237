"""Every notebook is a workshop: exercises whose solutions pass, checkers that catch mistakes, a stated shape.

Exercises live in three places that must agree: the notebook (the learner's
cell calls ``check``, a collapsed cell tagged ``solution`` calls ``solve``),
``notebooks/exercises/<module>.py`` (the checkers) and
``notebooks/solutions/<module>.py`` (the answers, and a plausible mistake per
exercise). The module is the notebook's name up to its first underscore.
Running the notebooks (tests/test_site.py executes each) runs each solution through
its checker too; these tests say which piece is missing when one is.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import nbformat
import pytest

NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
sys.path.insert(0, str(NOTEBOOKS_DIR))

from workshop import Wrong, check_piece, equals_from_scratch, swapped  # noqa: E402 (importable once notebooks/ is on the path)
from workshop.exercises import CHECKERS, check  # noqa: E402


def module_name(notebook: Path) -> str:
    return notebook.stem.split("_")[0]


def modules(notebook: Path) -> tuple[ModuleType, ModuleType]:
    name = module_name(notebook)
    return importlib.import_module(f"exercises.{name}"), importlib.import_module(f"solutions.{name}")


def checkers(notebook: Path) -> dict[str, object]:
    exercises, _ = modules(notebook)
    prefix = f"{exercises.__name__}."
    return {key.removeprefix(prefix): checker for key, checker in CHECKERS.items() if key.startswith(prefix)}


def checker_named(name: str) -> object:
    """The checker registered as ``name`` (``exercises.v2.build_reduce``), its module imported first: a checker
    is registered when its notebook's exercises module is imported, which another test may or may not have done
    on this worker already."""
    importlib.import_module(name.rpartition(".")[0])
    return CHECKERS[name]


def cells(notebook: Path) -> list:
    return nbformat.read(notebook, as_version=4).cells


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_each_notebook_has_two_to_five_exercises(notebook: Path) -> None:
    assert 2 <= len(checkers(notebook)) <= 5, f"{notebook.name}: exercises {sorted(checkers(notebook))}"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_each_solution_passes_and_each_mistake_is_caught(notebook: Path) -> None:
    _, solutions = modules(notebook)
    for name, checker in checkers(notebook).items():
        checker(getattr(solutions, name))
        assert name in solutions.MISTAKES, f"solutions.{module_name(notebook)}.MISTAKES has no mistake for {name}"
        with pytest.raises(Wrong) as wrong:
            checker(solutions.MISTAKES[name])
        assert len(str(wrong.value)) > 20, f"{name}: say what is wrong, not just {str(wrong.value)!r}"


class _Calls:
    """A callable object: an answer whose source ``inspect`` cannot read."""

    def __init__(self, function: Callable) -> None:
        self.function = function

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)


def _spellings(solution: Callable) -> dict[str, Callable]:
    """``solution`` written the ways a learner may write a function: each must be judged, not skipped."""
    def one_line(*args: Any, **kwargs: Any) -> Any: return solution(*args, **kwargs)

    return {
        "lambda": lambda *args, **kwargs: solution(*args, **kwargs),
        "one-line def": one_line,
        "functools.partial": functools.partial(solution),
        "callable object": _Calls(solution),
    }


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_a_function_answer_is_judged_however_it_is_written(notebook: Path, capsys: pytest.CaptureFixture) -> None:
    _, solutions = modules(notebook)
    for name, checker in checkers(notebook).items():
        solution = getattr(solutions, name)
        if not inspect.isfunction(solution):
            continue
        for spelling, answer in _spellings(solution).items():
            check(checker, answer)
            assert capsys.readouterr().out.strip() == "Right.", f"{name} written as a {spelling}"
        mistake = solutions.MISTAKES[name]
        if inspect.isfunction(mistake):
            check(checker, lambda *args, wrong=mistake, **kwargs: wrong(*args, **kwargs))
            assert capsys.readouterr().out.startswith("Not yet: "), f"{name}'s mistake as a lambda"


def test_a_placeholder_is_not_an_answer_however_it_is_written(capsys: pytest.CaptureFixture) -> None:
    def placeholder(lines):
        """Count the words."""
        ...

    def one_line(lines): ...

    for answer in (..., None, placeholder, one_line, lambda lines: ...):
        check(lambda _: None, answer)
        assert capsys.readouterr().out.startswith("Not answered yet"), answer


def test_a_swapped_piece_is_put_back_even_when_it_raises() -> None:
    import v3

    original = vars(v3.index.Index)["compact"]

    def broken(self, frontier):
        raise KeyError("the learner's bug")

    with pytest.raises(KeyError), swapped("v3", "index.Index.compact", broken):
        assert vars(v3.index.Index)["compact"] is not original
        v3.Index().compact(v3.Version(0))
    assert vars(v3.index.Index)["compact"] is original
    with pytest.raises(Wrong, match="raised KeyError: \"the learner's bug\""):
        check_piece("v3", "index.Index.compact", broken, [equals_from_scratch("v3", "count")])
    assert vars(v3.index.Index)["compact"] is original

    assert "run" not in vars(v3.operators.Concat)  # inherited: swapped in on Concat, then removed, not copied down
    with pytest.raises(KeyError), swapped("v3", "operators.Concat.run", broken):
        raise KeyError("the learner's bug")
    assert "run" not in vars(v3.operators.Concat)


def test_a_wrong_piece_is_shown_its_smallest_failing_history() -> None:
    """The mistake in v2's reduce (a key whose values cancel still gets f's output) needs one update to show."""
    import solutions.v2

    with pytest.raises(Wrong) as wrong:
        checker_named("exercises.v2.build_reduce")(solutions.v2.MISTAKES["build_reduce"])
    message = str(wrong.value)
    smallest = ast.literal_eval(message.splitlines()[1].strip())  # the failing inputs, on the second line
    assert sum(len(history) for history in smallest) <= 2, message
    assert "with your Reduce.on_data:" in message and "v0 from scratch:" in message, message


@pytest.mark.parametrize("spelling", ["lambda", "functools.partial"])
def test_a_build_it_checker_judges_a_piece_however_it_is_written(spelling: str) -> None:
    """A method written as a lambda or a partial still gets ``self`` once swapped in, and its verdict."""
    import solutions.v3

    spell = {
        "lambda": lambda piece: lambda self, frontier: piece(self, frontier),
        "functools.partial": functools.partial,
    }[spelling]
    checker = checker_named("exercises.v3.build_compact")
    checker(spell(solutions.v3.build_compact))
    with pytest.raises(Wrong, match="smallest failing"):
        checker(spell(solutions.v3.MISTAKES["build_compact"]))


def test_the_word_count_data_repeats_a_word_in_a_line() -> None:
    def distinct_words(builder):
        lines, writer = builder.new_input()
        words = lines.flat_map(lambda line: set(line.split())).map(lambda word: (word, None)).count()
        return writer, words.connect_reader()

    with pytest.raises(Wrong, match="word counts"):
        checker_named("exercises.v2.word_count")(distinct_words)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_each_exercise_is_checked_in_the_notebook_and_solved_in_a_hidden_cell(notebook: Path) -> None:
    code = [cell for cell in cells(notebook) if cell.cell_type == "code"]
    hidden = [cell for cell in code if "solution" in cell.metadata.get("tags", [])]
    for cell in hidden:
        assert cell.metadata.get("jupyter", {}).get("source_hidden"), f"solution cell not collapsed:\n{cell.source}"
    for name in checkers(notebook):
        assert any(f"check({name}," in cell.source for cell in code), f"{notebook.name}: no check({name}, ...)"
        assert any(f"solve({name}," in cell.source for cell in hidden), f"{notebook.name}: no solve({name}, ...)"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_each_notebook_states_goals_duration_and_recap_and_shows_code_and_a_picture(notebook: Path) -> None:
    texts = [cell.source for cell in cells(notebook)]
    first = texts[0]
    assert "Learning goals" in first and "minutes" in first, f"{notebook.name}: goals and workshop time go first"
    assert any("## Recap" in text for text in texts[-3:]), f"{notebook.name}: end with a '## Recap' section"
    code = "\n".join(cell.source for cell in cells(notebook) if cell.cell_type == "code")
    assert "show_source(" in code, f"{notebook.name}: show the stage's own code"
    if module_name(notebook) not in ("v0", "spark", "conformance"):
        assert "show_diff(" in code, f"{notebook.name}: show what changed from the stage before"
    assert any(call in code for call in ("draw(", "plt.", "render(", "plot_")), f"{notebook.name}: no picture"
    assert "check_stage" not in code, f"{notebook.name}: check_stage is regression output, not teaching"


# Build-it exercises: beside the hidden solution, plausible wrong pieces, each as a learner might write it.


def _v1_join_walking_self_into_other_values(self, other):
    # Walks self whatever its size and reads other._values[key]: right pairs, but B.join(D) walks all of B,
    # and the defaultdict stores an empty list in D under every key of B that D lacks.
    result = []
    for key, values in self._values.items():
        for value, multiplicity in values:
            for other_value, other_multiplicity in other._values[key]:
                result.append(((key, (value, other_value)), multiplicity * other_multiplicity))
    return result


def _v1_join_walking_self(self, other):
    # Reads through get, so writes nothing, but always walks self: B.join(D) costs all of B's keys.
    return [((key, (value, other_value)), multiplicity * other_multiplicity)
            for key in self.keys() for value, multiplicity in self.get(key)
            for other_value, other_multiplicity in other.get(key)]


def _v1_join_walking_smaller_into_larger_values(self, other):
    # Walks the smaller index but reads both through _values[key] without asking whether the larger has the key:
    # every key of the smaller that the larger lacks is left in the larger as an empty list.
    smaller = self if len(self) <= len(other) else other
    return [((key, (value, other_value)), multiplicity * other_multiplicity)
            for key in smaller.keys() for value, multiplicity in self._values[key]
            for other_value, other_multiplicity in other._values[key]]


def _v2_reduce_without_retraction(self, collection):
    # Sends f's new output for each touched key but never takes back what it sent before: counts pile up.
    from v2 import Collection
    from v2.index import Index

    delta = Index.from_collection(collection, "reduce")
    self._inputs.append(delta)
    self._inputs.compact()
    updates = []
    for key in delta.keys():
        values = self._inputs.get(key)
        updates += [((key, value), multiplicity) for value, multiplicity in (self._f(values) if values else [])]
    return Collection(updates).consolidate()


def _v2_reduce_of_the_difference_only(self, collection):
    # Applies f to the difference's values alone, as if each difference were the whole input.
    from v2 import Collection
    from v2.index import Index

    delta = Index.from_collection(collection, "reduce")
    delta.compact()
    updates = []
    for key in delta.keys():
        updates += [((key, value), multiplicity) for value, multiplicity in self._f(delta.get(key))]
        updates += [((key, value), -multiplicity) for value, multiplicity in self._outputs.get(key)]
    changes = Collection(updates).consolidate()
    self._outputs.append(Index.from_collection(changes, "reduce"))
    self._outputs.compact()
    return changes


def _v3_compact_never_leaving_a_key_dirty(self, frontier):
    # Merges right, then forgets every dirty key: versions 3 and 5, kept apart at frontier 4, never merge
    # once the frontier passes 5, because the key is not compacted again until new data arrives.
    from collections import defaultdict

    for key in self._dirty:
        totals = defaultdict(int)
        for version, values in self._values[key].items():
            for value, multiplicity in values:
                totals[version.advance_by(frontier), value] += multiplicity
        versions = defaultdict(list)
        for (version, value), total in totals.items():
            if total != 0:
                versions[version].append((value, total))
        if versions:
            self._values[key] = versions
        else:
            del self._values[key]
    self._dirty = set()


def _v3_compact_keeping_emptied_keys(self, frontier):
    # Merges and drops zero multiplicities, but keeps a key (and its version) whose values all cancelled.
    from collections import defaultdict

    still_dirty = set()
    for key in self._dirty:
        versions = defaultdict(list)
        for version, values in list(self._values[key].items()):
            versions[version.advance_by(frontier)].extend(values)
        for version, values in versions.items():
            totals = defaultdict(int)
            for value, multiplicity in values:
                totals[value] += multiplicity
            versions[version] = [(value, total) for value, total in totals.items() if total != 0]
        self._values[key] = versions
        if len(versions) > 1:
            still_dirty.add(key)
    self._dirty = still_dirty


def _v4_join_as_the_earlier(self, other):
    # The meet, not the join: the earlier of the two versions, where a pair's second record is not there yet.
    return self if self.less_equal(other) else other


def _v4_join_by_the_second_coordinate(self, other):
    # Compares round first, as if the iteration counter outranked the input version.
    return other if (self.coords[1], self.coords[0]) <= (other.coords[1], other.coords[0]) else self


def _v5_advance_by_the_join_of_the_joins(self, frontier):
    # Joins the version with every frontier element and takes the join of those, not their meet: too far.
    if not frontier.elements:
        return self
    advanced = self
    for element in frontier.elements:
        advanced = advanced.join(element)
    return advanced


def _v5_advance_by_the_least_element(self, frontier):
    # Joins with one element only, the one with the least coordinates: too far when another element is not under it.
    if not frontier.elements:
        return self
    return self.join(min(frontier.elements, key=lambda element: element.coords))


def _final2_meet_ignoring_left(self, version, updates, left=True):
    # Always pairs (arriving value, held value): right for the left input, swapped for the right one.
    met = {}
    for (key, value), multiplicity in updates:
        for other_version, entries in self.entries(key).items():
            pairs = met.setdefault(version.join(other_version), [])
            for other, other_multiplicity in entries.items():
                pairs.append(((key, (value, other)), multiplicity * other_multiplicity))
    return met


def _final2_meet_at_the_held_version(self, version, updates, left=True):
    # Puts each pair at the version of the record it met, though the arriving one may come later.
    met = {}
    for (key, value), multiplicity in updates:
        for other_version, entries in self.entries(key).items():
            for other, other_multiplicity in entries.items():
                pair = (value, other) if left else (other, value)
                met.setdefault(other_version, []).append(((key, pair), multiplicity * other_multiplicity))
    return met


def _final3_min_with_its_multiplicity(values):
    # Finds the least value present, but gives it its multiplicity: a minimum held twice is output twice.
    present = [(value, multiplicity) for value, multiplicity in values if multiplicity > 0]
    return [min(present)] if present else []


def _final3_min_of_the_first_listed(values):
    # Takes the first value listed that is present, as if a group came sorted.
    present = [value for value, multiplicity in values if multiplicity > 0]
    return [(present[0], 1)] if present else []


WRONG_PIECES: dict[str, dict[str, Callable]] = {
    "exercises.v1.build_index_join": {
        "walks self, reads other._values": _v1_join_walking_self_into_other_values,
        "walks self": _v1_join_walking_self,
        "walks the smaller, reads _values": _v1_join_walking_smaller_into_larger_values,
    },
    "exercises.v2.build_reduce": {
        "no retraction": _v2_reduce_without_retraction,
        "the difference only": _v2_reduce_of_the_difference_only,
    },
    "exercises.v3.build_compact": {
        "never leaves a key dirty": _v3_compact_never_leaving_a_key_dirty,
        "keeps emptied keys": _v3_compact_keeping_emptied_keys,
    },
    "exercises.v4.build_join": {
        "the earlier": _v4_join_as_the_earlier,
        "round first": _v4_join_by_the_second_coordinate,
    },
    "exercises.v5.build_advance_by": {
        "join of the joins": _v5_advance_by_the_join_of_the_joins,
        "the least element only": _v5_advance_by_the_least_element,
    },
    "exercises.final2.build_meet": {
        "left ignored": _final2_meet_ignoring_left,
        "at the held version": _final2_meet_at_the_held_version,
    },
    "exercises.final3.build_min": {
        "with its multiplicity": _final3_min_with_its_multiplicity,
        "the first listed": _final3_min_of_the_first_listed,
    },
}
"""Two or more wrong pieces per build-it exercise, beside the one in its solutions module's ``MISTAKES``."""


def _build_it_checkers() -> set[str]:
    """Every registered checker that swaps a learner's piece into a stage (its source calls ``check_piece``)."""
    for notebook in NOTEBOOKS:
        modules(notebook)
    return {name for name, checker in CHECKERS.items() if "check_piece(" in inspect.getsource(checker)}


def test_every_build_it_exercise_has_wrong_pieces_to_fail() -> None:
    assert _build_it_checkers() == set(WRONG_PIECES)
    assert all(len(pieces) >= 2 for pieces in WRONG_PIECES.values())


@pytest.mark.parametrize(("name", "mistake"), [(name, mistake) for name, pieces in WRONG_PIECES.items()
                                               for mistake in pieces], ids=lambda part: part)
def test_a_build_it_checker_fails_a_plausible_wrong_piece(name: str, mistake: str) -> None:
    with pytest.raises(Wrong, match="smallest failing"):
        checker_named(name)(WRONG_PIECES[name][mistake])


@pytest.mark.parametrize("name", sorted(WRONG_PIECES))
def test_a_build_it_checker_passes_the_hidden_solution(name: str) -> None:
    module, _, exercise_name = name.rpartition(".")
    checker_named(name)(getattr(importlib.import_module(module.replace("exercises.", "solutions.")), exercise_name))


def test_a_compact_that_never_leaves_a_key_dirty_is_told_what_the_definition_asks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two versions kept apart behind one frontier must merge once a later frontier passes both.

    Shrinking gets all the time it needs: this is about the smallest history, and a busy test machine must not
    cut it short where a learner's would not.
    """
    import workshop.build

    monkeypatch.setattr(workshop.build, "SHRINK_SECONDS", 600.0)
    with pytest.raises(Wrong) as wrong:
        checker_named("exercises.v3.build_compact")(_v3_compact_never_leaving_a_key_dirty)
    message = str(wrong.value)
    rounds = ast.literal_eval(message.splitlines()[1].strip())
    assert len(rounds) == 2 and sum(len(updates) for updates, _ in rounds) == 2, message
    assert "the definition:" in message and "cannot tell apart" in message and "self._dirty" in message, message


@pytest.mark.parametrize("mistake", ["walks self, reads other._values", "walks self"])
def test_a_join_that_touches_more_than_the_change_is_told_why_that_matters(mistake: str) -> None:
    with pytest.raises(Wrong) as wrong:
        checker_named("exercises.v1.build_index_join")(WRONG_PIECES["exercises.v1.build_index_join"][mistake])
    message = str(wrong.value)
    assert "keys looked at" in message and "size of the change, not of the state" in message, message
