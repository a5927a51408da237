"""Every notebook is a workshop: exercises whose solutions pass, checkers that catch mistakes, a stated shape.

Exercises live in three places that must agree: the notebook (the learner's
cell calls ``check``, a collapsed cell tagged ``solution`` calls ``solve``),
``notebooks/exercises/<module>.py`` (the checkers) and
``notebooks/solutions/<module>.py`` (the answers, and a plausible mistake per
exercise). The module is the notebook's name up to its first underscore.
Running the notebooks (tests/test_notebooks.py) runs each solution through
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
