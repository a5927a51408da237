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

import ast
import dis
import inspect
import textwrap
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
    """A placeholder left as given: ``...``, ``None``, or a function whose body is only ``...``.

    A function is read from its source's syntax tree, so a lambda or a one-line
    ``def`` with a real body counts as an answer. Where the source does not
    parse alone (a lambda inside a longer statement) or cannot be read, its
    code decides: a body that only returns a constant ``...`` or None is a
    placeholder. Anything else callable (``functools.partial``, a callable
    object) is an answer, and goes to the checker.
    """
    if answer is ... or answer is None:
        return True
    if not inspect.isfunction(answer):
        return False
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(answer)))
    except (OSError, TypeError, SyntaxError):
        return _returns_a_constant_placeholder(answer)
    kinds = (ast.Lambda,) if answer.__name__ == "<lambda>" else (ast.FunctionDef, ast.AsyncFunctionDef)
    functions = [node for node in ast.walk(tree) if isinstance(node, kinds)
                 and getattr(node, "name", answer.__name__) == answer.__name__]
    return bool(functions) and all(_only_ellipsis(function) for function in functions)


def _returns_a_constant_placeholder(function: Callable) -> bool:
    """Whether ``function``'s code does nothing but return ``...`` or None."""
    steps = [step for step in dis.get_instructions(function) if step.opname not in ("RESUME", "NOP", "CACHE")]
    names = [step.opname for step in steps]
    if names == ["RETURN_CONST"] or names == ["LOAD_CONST", "RETURN_VALUE"]:
        return steps[0].argval is ... or steps[0].argval is None
    return False


def _only_ellipsis(function: ast.Lambda | ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a function's body is ``...`` alone (after a docstring, if it has one)."""
    if isinstance(function, ast.Lambda):
        return isinstance(function.body, ast.Constant) and function.body.value is ...
    body = function.body
    if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and body[0].value.value is ...


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
