"""The documents' examples as the oracle's package data (``examples.json``), and ``generate`` outside a clone."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from final.conformance import __main__ as command_line
from final.conformance import examples
from final.conformance.cases import CASES
from final.conformance.generate import default_out, example_cases


def test_the_committed_examples_json_is_what_tests_examples_writes() -> None:
    written = examples.text(examples.repository_examples())
    assert written == examples.EXAMPLES_PATH.read_text(), f"examples.json is stale: run '{examples.WRITE}'"
    assert examples.main(["--check"]) == 0


def test_examples_json_reads_back_as_tests_examples_writes_the_examples() -> None:
    assert examples.load() == examples.repository_examples()
    assert [example.name for example in examples.load()] == list(examples.EXAMPLE_PROGRAMS)


def test_generate_makes_the_document_cases_from_the_package_data_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in ("tests.examples", "tests"):
        monkeypatch.setitem(sys.modules, module, None)  # importing it now raises ImportError
    made = example_cases()
    assert len(made) == len(examples.EXAMPLE_PROGRAMS)
    for case in made:
        assert case.text() == (CASES / f"{case.name}.json").read_text(), case.name


def test_writing_examples_json_outside_a_clone_says_where_to_run_it(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "tests.examples", None)
    assert examples.main(["--write"]) == 2
    assert f"run '{examples.WRITE}' from the clone's root" in capsys.readouterr().err


@pytest.mark.parametrize(("text", "message"), [
    (None, "No such file"),
    ("{", "cannot read the documents' examples"),
    ('{"format": "dd-conformance-examples/0", "examples": []}', "not 'dd-conformance-examples/1'"),
    ('{"format": "dd-conformance-examples/1", "examples": []}', "holds the examples []"),
])
def test_an_examples_file_that_cannot_serve_is_refused_saying_how_to_write_it(tmp_path: Path, text: str | None,
                                                                              message: str) -> None:
    path = tmp_path / "examples.json"
    if text is not None:
        path.write_text(text)
    with pytest.raises(examples.ExampleError, match="--write' in a clone") as error:
        examples.load(path)
    assert message in str(error.value)


def test_generate_writes_the_committed_set_by_default_only_in_a_clone(monkeypatch: pytest.MonkeyPatch,
                                                                       capsys) -> None:
    assert default_out() == CASES  # this checkout is a clone
    monkeypatch.setattr(command_line, "default_out", lambda: None)  # as installed, in site-packages
    assert command_line.main(["generate", "--seed", "7"]) == 2
    error = capsys.readouterr().err
    assert "pass --out DIR" in error and "not in a clone" in error
