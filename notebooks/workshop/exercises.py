"""Exercises: a checker per exercise that says what is wrong, and the learner's and solution's calls.

A checker is a function decorated with ``@exercise``: it takes the answer
(a value, or a function to try) and raises ``Wrong`` with a message a learner
can act on (which input, what the answer gave, what was expected), or returns
when the answer is right. A notebook calls ``check(checker, answer)`` under
the learner's cell, which prints the verdict and never raises, and
``solve(checker, solution)`` in a collapsed cell tagged ``solution``, which
shows the solution and raises if it does not pass: the test suite runs every
notebook, so every solution is checked by the same function as the learner's
answer.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from IPython.display import Markdown, display

CHECKERS: dict[str, Callable[[Any], None]] = {}
"""Every checker by ``module.name``, as ``tests/test_exercises.py`` finds them."""


class Wrong(Exception):
    """What is wrong with an answer, said so a learner can fix it."""


def exercise(checker: Callable[[Any], None]) -> Callable[[Any], None]:
    """Register ``checker`` (its module's solution of the same name answers it)."""
    CHECKERS[f"{checker.__module__}.{checker.__name__}"] = checker
    return checker


def as_multiset(answer: Any, what: str) -> dict[Any, int]:
    """A predicted collection given as ``{record: multiplicity}`` or as a Collection (any stage's), zeros dropped.

    Raises ``Wrong`` naming ``what`` when the prediction is neither.
    """
    if hasattr(answer, "as_dict"):
        return answer.as_dict()
    if not isinstance(answer, dict):
        raise Wrong(
            f"give {what} as a dict {{record: multiplicity}} (or a Collection), not {type(answer).__name__}: {answer!r}"
        )
    return {record: multiplicity for record, multiplicity in answer.items() if multiplicity != 0}


def _unanswered(answer: Any) -> bool:
    """A placeholder left as given: ``...``, ``None``, or a function whose body is only ``...``."""
    if answer is ... or answer is None:
        return True
    if callable(answer):
        try:
            body = inspect.getsource(answer).strip().splitlines()[1:]
        except (OSError, TypeError):
            return False
        code = [line.split("#")[0].strip() for line in body]
        return [line for line in code if line] in ([], ["..."])
    return False


def check(checker: Callable[[Any], None], answer: Any) -> None:
    """Print whether ``answer`` is right and, if not, what is wrong (returning nothing, so a cell shows only that)."""
    if _unanswered(answer):
        print("Not answered yet: replace the `...` above with your answer and run the cell again.")
        return
    try:
        checker(answer)
    except Wrong as wrong:
        print(f"Not yet: {wrong}")
    except Exception as error:  # a learner's code may raise anything; say so instead of a traceback
        print(f"Your answer raised {type(error).__name__}: {error}")
    else:
        print("Right.")


def solve(checker: Callable[[Any], None], solution: Any) -> None:
    """Show ``solution`` (its source, if it is a function) and check it; raise ``Wrong`` if it fails."""
    if callable(solution):
        display(Markdown(f"```python\n{inspect.getsource(solution)}```"))
    else:
        display(Markdown(f"```python\n{solution!r}\n```"))
    checker(solution)
    print("The solution passes the same check as your answer.")
