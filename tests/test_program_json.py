"""Programs as JSON: every catalog program's definition, the expression language, and the generic adapter.

The definitions (``final/conformance/programs/*.json``) are checked against
``program.schema.json`` and the catalog, the generic adapter is judged on every
committed case like any engine, the expression language's edge cases (NULL,
int vs bool vs string, whitespace) are pinned one by one, and a malformed
definition is refused with the JSON path of its fault.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import sys
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from final import GraphBuilder
from final.conformance import catalog
from final.conformance.cases import CASES, load_all
from final.conformance.check import judge
from final.conformance.encoding import FALSE, TRUE
from final.conformance.engines import CommandEngine
from final.conformance.generic import (
    PROGRAMS,
    SCHEMA_PATH,
    WHITESPACE,
    Definition,
    EvaluationError,
    GenericEngine,
    ProgramError,
    build,
    compile_expression,
    load,
    split,
)

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "final" / "conformance" / "README.md"
COMMITTED = sorted(load_all(CASES), key=lambda case: case.name)
SCHEMA = json.loads(SCHEMA_PATH.read_text())
REACHABILITY = json.loads((PROGRAMS / "reachability.json").read_text())


def evaluate(expression: Any, argument: Any = None) -> Any:
    return compile_expression(expression, "$")(argument)


# -- the definitions ------------------------------------------------------------------------


def test_the_schema_is_a_valid_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_there_is_one_definition_per_catalog_program_and_no_other() -> None:
    assert {path.stem for path in PROGRAMS.glob("*.json")} == set(catalog.BY_NAME)


@pytest.mark.parametrize("program", catalog.PROGRAMS, ids=lambda program: program.name)
def test_a_programs_definition_is_valid_and_reads_the_catalogs_inputs(program: catalog.Program) -> None:
    path = PROGRAMS / f"{program.name}.json"
    jsonschema.Draft202012Validator(SCHEMA).validate(json.loads(path.read_text()))
    definition = load(path)
    assert definition.program == program.name
    assert definition.inputs == program.inputs
    assert list(definition.outputs) == (list(program.outputs) or ["output"])


@pytest.mark.parametrize("program", catalog.PROGRAMS, ids=lambda program: program.name)
def test_the_generic_adapter_passes_every_committed_case_of_a_program(program: catalog.Program) -> None:
    cases = [case for case in COMMITTED if case.program == program.name]
    engine = GenericEngine()
    verdicts = [judge(case, engine.run(case)) for case in cases]
    assert cases
    assert [(verdict.case, verdict.lines()) for verdict in verdicts if verdict.status != "passed"] == []


def test_the_generic_adapter_speaks_the_protocol_as_python_m_final_conformance_generic() -> None:
    firsts = {case.program: case for case in reversed(COMMITTED)}  # one case of each program
    engine = CommandEngine("generic", [sys.executable, "-m", "final.conformance.generic"])
    try:
        verdicts = [judge(case, engine.run(case)) for case in firsts.values()]
    finally:
        engine.close()
    assert [(verdict.case, verdict.lines()) for verdict in verdicts if verdict.status != "passed"] == []


def test_the_readmes_worked_example_is_the_committed_definition() -> None:
    assert (PROGRAMS / "reachability.json").read_text() in README.read_text()


def test_the_package_ships_the_schema_and_the_definitions() -> None:
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert {"program.schema.json", "programs/*.json"} <= set(package_data["final.conformance"])


# -- the expression language ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "argument", "value"),
    [
        (None, 7, None),
        (True, 7, TRUE),
        (1, 7, 1),
        ("1", 7, "1"),
        ([], 7, ()),
        ([1, [None, "a"]], 7, (1, (None, "a"))),
        ({"arg": []}, (1, 2), (1, 2)),
        ({"arg": [1, 0]}, ("k", ("v", "w")), "v"),
        ({"arg": [0]}, (None,), None),
        ({"add": [2, 3]}, None, 5),
        ({"sub": [2, 3]}, None, -1),
        ({"mul": [2**40, 2**40]}, None, 2**80),
        ({"mod": [-7, 2]}, None, 1),
        ({"mod": [7, -2]}, None, -1),
        ({"eq": [None, None]}, None, TRUE),
        ({"eq": [1, True]}, None, FALSE),
        ({"eq": [0, False]}, None, FALSE),
        ({"eq": [1, "1"]}, None, FALSE),
        ({"eq": [[1, None], [1, None]]}, None, TRUE),
        ({"eq": [[1], [True]]}, None, FALSE),
        ({"ne": [None, 0]}, None, TRUE),
        ({"lt": [1, 2]}, None, TRUE),
        ({"ge": ["b", "a"]}, None, TRUE),
        ({"lt": ["\uffff", "\U0001f600"]}, None, TRUE),  # code points; UTF-16 units would say otherwise
        ({"le": [3, 3]}, None, TRUE),
        ({"gt": [3, 3]}, None, FALSE),
        ({"and": [False, {"add": [None, 1]}]}, None, FALSE),  # stops at the first false
        ({"or": [True, {"add": [None, 1]}]}, None, TRUE),  # stops at the first true
        ({"and": [True, True, False]}, None, FALSE),
        ({"not": False}, None, TRUE),
        ({"if": [True, 1, {"arg": [5]}]}, (), 1),  # only the branch taken is evaluated
        ({"if": [False, {"arg": [5]}, 2]}, (), 2),
        ({"is_null": {"arg": []}}, None, TRUE),
        ({"is_null": {"arg": []}}, (), FALSE),
        ({"is_null": {"arg": []}}, FALSE, FALSE),
        ({"len": {"arg": []}}, "héllo", 5),
        ({"len": {"arg": []}}, "\U0001f600", 1),
        ({"len": {"arg": []}}, "", 0),
        ({"split": {"arg": []}}, "  the  cat\tsat\n", ("the", "cat", "sat")),
        ({"split": {"arg": []}}, "", ()),
        ({"split": {"arg": []}}, " \t ", ()),
        ({"split": {"arg": []}}, "\xa0a\u2003b\x1c", ("a", "b")),
        ({"split": {"arg": []}}, "a\u200bb", ("a\u200bb",)),  # a zero-width space is not whitespace
        ({"format": ["length: ", {"arg": []}]}, 3, "length: 3"),
        ({"format": [{"arg": []}]}, -4, "-4"),
    ],
)
def test_an_expression_evaluates_to(expression: Any, argument: Any, value: Any) -> None:
    result = evaluate(expression, argument)
    assert result == value
    assert type(result) is type(value)  # 1 is not True, nor "1"


@pytest.mark.parametrize(
    ("expression", "argument", "message"),
    [
        ({"arg": [0]}, None, "$.arg: the argument is null, which has no element 0"),
        ({"arg": [1, 2]}, (0, (1,)), "$.arg: element [1] of the argument is a tuple ([1]), which has no element 2"),
        ({"arg": [0]}, "ab", "$.arg: the argument is a string"),
        ({"add": [None, 1]}, None, "$.add: add takes two integers, not null and an integer (1)"),
        ({"add": [True, 1]}, None, "$.add: add takes two integers, not a boolean (true)"),
        ({"mul": ["a", 2]}, None, "$.mul: mul takes two integers, not a string"),
        ({"mod": [1, 0]}, None, "$.mod: mod by 0"),
        ({"lt": [None, 1]}, None, "$.lt: lt compares two integers or two strings, not null"),
        ({"lt": [1, "a"]}, None, "$.lt: lt compares two integers or two strings"),
        ({"le": [False, True]}, None, "$.le: le compares two integers or two strings, not a boolean"),
        ({"lt": [[1], [2]]}, None, "$.lt: lt compares two integers or two strings, not a tuple"),
        ({"and": [True, None]}, None, "$.and: each operand of and must be a boolean, not null"),
        ({"or": [False, 0]}, None, "$.or: each operand of or must be a boolean, not an integer (0)"),
        ({"not": None}, None, "$.not: the operand of not must be a boolean, not null"),
        ({"if": [1, 2, 3]}, None, "$.if: the condition must be a boolean, not an integer (1)"),
        ({"if": [None, 2, 3]}, None, "$.if: the condition must be a boolean, not null"),
        ({"len": {"arg": []}}, None, "$.len: len takes a string, not null"),
        ({"len": {"arg": []}}, ("a",), "$.len: len takes a string, not a tuple"),
        ({"split": {"arg": []}}, 3, "$.split: split takes a string, not an integer (3)"),
        ({"format": ["n", {"arg": []}]}, TRUE, "$.format: format joins strings and integers, not a boolean (true)"),
        ({"format": [{"arg": []}]}, None, "$.format: format joins strings and integers, not null"),
    ],
)
def test_an_expression_applied_to_what_it_is_not_defined_for_is_an_error(
    expression: Any, argument: Any, message: str
) -> None:
    with pytest.raises(EvaluationError) as raised:
        evaluate(expression, argument)
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (1.0, "$: 1.0 is not an expression"),
        ([1, 2.5], "$[1]: 2.5 is not an expression"),
        ({"plus": [1, 2]}, "$: 'plus' is not an operation"),
        ({"add": [1, 2], "sub": [1, 2]}, "is not an expression"),
        ({"add": [1]}, "$.add: takes an array of 2 expressions"),
        ({"arg": [-1]}, "$.arg: takes an array of element positions"),
        ({"if": [{"eq": [1, 1.5]}, 1, 2]}, "$.if[0].eq[1]: 1.5 is not an expression"),
    ],
)
def test_an_expression_that_is_not_one_is_refused_when_compiled(expression: Any, message: str) -> None:
    with pytest.raises(ProgramError) as raised:
        compile_expression(expression, "$")
    assert message in str(raised.value)


def test_split_splits_on_exactly_what_python_calls_whitespace_and_the_readme_lists() -> None:
    assert {chr(point) for point in range(0x110000) if chr(point).isspace()} == WHITESPACE
    listed = set()
    split = README.read_text().split('- `{"split": s}`')[1].split("\n- ")[0]  # the vocabulary's entry
    for low, high in re.findall(r"U\+([0-9A-F]{4})(?:\.\.U\+([0-9A-F]{4}))?", split):
        listed |= {chr(point) for point in range(int(low, 16), int(high or low, 16) + 1)}
    assert listed == WHITESPACE


@given(st.text(alphabet=st.sampled_from([*sorted(WHITESPACE), "a", "b", "\u200b", "é"])))
def test_split_is_pythons_str_split(text: str) -> None:
    assert split(text) == tuple(text.split())


# -- malformed definitions -------------------------------------------------------------------


def _body(value: dict, position: int) -> dict:
    return value["nodes"][0]["body"][position]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda v: v.pop("format"), "$: not a valid program definition: 'format' is a required property"),
        (lambda v: v.update(format="dd-conformance-program/2"), "$.format: not a valid program definition"),
        (lambda v: _body(v, 1).update(op="joyn"), "$.nodes[0].body[1].op: not a valid program definition: 'joyn'"),
        (lambda v: _body(v, 1).update(inputs=["keyed"]), "$.nodes[0].body[1].inputs: not a valid program"),
        (lambda v: _body(v, 2).pop("function"), "$.nodes[0].body[2]: not a valid program definition: 'function' is a "
                                                "required property"),
        (lambda v: _body(v, 2).update(functoin=1), "$.nodes[0].body[2]: not a valid program definition: 'functoin'"),
        (lambda v: _body(v, 2).update(function={"plus": [1, 2]}), "$.nodes[0].body[2].function: not a valid "
                                                                  "program definition: Additional properties"),
        (lambda v: _body(v, 2).update(function={"add": [1, 2.5]}), "$.nodes[0].body[2].function.add[1]: not a valid"),
        (lambda v: _body(v, 2).update(function={"add": [1, 2.0]}), "$.nodes[0].body[2].function.add[1]: 2.0 is not "
                                                                   "an expression"),
        (lambda v: _body(v, 2).update(name="Targets"), "$.nodes[0].body[2].name: not a valid program definition"),
        (lambda v: _body(v, 1).update(inputs=["keyed", "edgez"]), "$.nodes[0].body[1].inputs[1]: 'edgez' is not "
                                                                  "defined anywhere in the program"),
        (lambda v: _body(v, 1).update(inputs=["next", "edges"]), "$.nodes[0].body[1].inputs[0]: 'next' is defined "
                                                                 "at $.nodes[0].body[4].name, which cannot be read"),
        (lambda v: _body(v, 2).update(name="keyed"), "$.nodes[0].body[2].name: 'keyed' is already defined at "
                                                     "$.nodes[0].body[0].name"),
        (lambda v: _body(v, 2).update(name="edges"), "$.nodes[0].body[2].name: 'edges' is already defined at "
                                                     "$.inputs"),
        (lambda v: v["nodes"][0].update(variable="roots"), "$.nodes[0].variable: 'roots' is already defined"),
        (lambda v: v["nodes"][0].update(result="nowhere"), "$.nodes[0].result: 'nowhere' is not defined"),
        (lambda v: v.update(outputs={"output": "next"}), "$.outputs.output: 'next' is defined at "
                                                         "$.nodes[0].body[4].name, which cannot be read here"),
        (lambda v: v.update(outputs={}), "$.outputs: not a valid program definition"),
    ],
)
def test_a_malformed_definition_is_refused_naming_the_json_path(mutate: Any, message: str) -> None:
    value = copy.deepcopy(REACHABILITY)
    mutate(value)
    with pytest.raises(ProgramError) as raised:
        Definition.from_json(value, "reachability.json")
    assert str(raised.value).startswith("reachability.json: ")
    assert message in str(raised.value)


def test_a_definition_file_that_is_not_json_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{")
    with pytest.raises(ProgramError, match=r"broken\.json: cannot read a program definition"):
        load(path)


def _programs_with(tmp_path: Path, program: str, value: Any) -> Path:
    """A copy of the committed definitions with ``program``'s replaced by ``value``."""
    directory = tmp_path / "programs"
    shutil.copytree(PROGRAMS, directory)
    (directory / f"{program}.json").write_text(json.dumps(value))
    return directory


def _case(program: str) -> Any:
    return next(case for case in COMMITTED if case.program == program)


def test_the_engine_reports_a_malformed_definition_as_an_error_naming_the_path(tmp_path: Path) -> None:
    value = copy.deepcopy(REACHABILITY)
    _body(value, 1)["inputs"] = ["keyed", "edgez"]
    run = GenericEngine(_programs_with(tmp_path, "reachability", value)).run(_case("reachability"))
    assert run.status == "error"
    assert "reachability.json: $.nodes[0].body[1].inputs[1]: 'edgez'" in run.reason


def test_the_engine_reports_an_expression_that_fails_on_a_case_as_an_error(tmp_path: Path) -> None:
    value = json.loads((PROGRAMS / "plus_five_evens.json").read_text())
    value["nodes"][1]["predicate"] = {"mod": [{"arg": []}, 2]}  # an integer, not a boolean
    run = GenericEngine(_programs_with(tmp_path, "plus_five_evens", value)).run(_case("plus_five_evens"))
    assert run.status == "error"
    assert "$.nodes[1].predicate: a filter's predicate must be a boolean, not an integer" in run.reason


def test_the_engine_refuses_a_definition_with_other_inputs_than_the_case(tmp_path: Path) -> None:
    value = json.loads((PROGRAMS / "concat.json").read_text())
    value["inputs"] = ["b", "a"]
    run = GenericEngine(_programs_with(tmp_path, "concat", value)).run(_case("concat"))
    assert run.status == "error"
    assert "$.inputs: ['b', 'a'] are not the case's inputs ['a', 'b']" in run.reason


def test_the_engine_refuses_a_definition_of_another_program_than_its_file_is_named_for(tmp_path: Path) -> None:
    value = json.loads((PROGRAMS / "difference.json").read_text())
    run = GenericEngine(_programs_with(tmp_path, "concat", value)).run(_case("concat"))
    assert run.status == "error"
    assert "concat.json: $.program: 'difference' is not 'concat'" in run.reason


def test_a_program_without_a_definition_is_unsupported_and_one_with_other_outputs_an_error(tmp_path: Path) -> None:
    value = json.loads((PROGRAMS / "concat.json").read_text())
    value["outputs"] = {"output": "both", "left": "a"}
    directory = _programs_with(tmp_path, "concat", value)
    (directory / "join.json").unlink()
    engine = GenericEngine(directory)
    run = engine.run(_case("concat"))
    assert run.status == "error"
    assert "$.outputs: ['output', 'left'] are not the case's outputs one, unnamed" in run.reason
    assert engine.run(_case("join")).status == "unsupported"
    assert "join.json is missing" in engine.run(_case("join")).reason


# -- nested loops and several outputs ---------------------------------------------------------


def _doubling_and_plus_three(limit: int) -> dict:
    """A definition with a loop in a loop and two outputs: the numbers up to ``limit`` reached from the
    inputs by doubling (the inner loop) and adding 3 (the outer), split into evens and odds."""
    at_most = {"le": [{"arg": []}, limit]}
    parity = {"mod": [{"arg": []}, 2]}
    inner = [
        {"name": "doubled", "op": "map", "inputs": ["inner"], "function": {"mul": [{"arg": []}, 2]}},
        {"name": "inner_all", "op": "concat", "inputs": ["doubled", "inner", "numbers"]},
        {"name": "inner_small", "op": "filter", "inputs": ["inner_all"], "predicate": at_most},
        {"name": "inner_next", "op": "distinct", "inputs": ["inner_small"]},
    ]
    outer = [
        {"name": "doublings", "op": "iterate", "inputs": ["outer"], "variable": "inner", "body": inner,
         "result": "inner_next"},
        {"name": "plus_three", "op": "map", "inputs": ["doublings"], "function": {"add": [{"arg": []}, 3]}},
        {"name": "outer_all", "op": "concat", "inputs": ["plus_three", "doublings"]},
        {"name": "outer_small", "op": "filter", "inputs": ["outer_all"], "predicate": at_most},
        {"name": "outer_next", "op": "distinct", "inputs": ["outer_small"]},
    ]
    return {
        "format": "dd-conformance-program/1",
        "program": "doubling_and_plus_three",
        "inputs": ["numbers"],
        "nodes": [
            {"name": "reached", "op": "iterate", "inputs": ["numbers"], "variable": "outer", "body": outer,
             "result": "outer_next"},
            {"name": "evens", "op": "filter", "inputs": ["reached"], "predicate": {"eq": [parity, 0]}},
            {"name": "odds", "op": "filter", "inputs": ["reached"], "predicate": {"eq": [parity, 1]}},
        ],
        "outputs": {"evens": "evens", "odds": "odds"},
    }


def _reached(starts: set[int], limit: int) -> set[int]:
    reached, todo = set(), [n for n in starts if n <= limit]
    while todo:
        n = todo.pop()
        if n not in reached:
            reached.add(n)
            todo += [m for m in (2 * n, n + 3) if m <= limit]
    return reached


def test_a_definition_with_nested_loops_and_several_outputs_builds_on_final() -> None:
    jsonschema.Draft202012Validator(SCHEMA).validate(_doubling_and_plus_three(20))
    definition = Definition.from_json(_doubling_and_plus_three(20))
    builder = GraphBuilder(0)
    numbers, session = builder.new_session("numbers")
    outputs = {name: stream.output(name) for name, stream in build(definition, {"numbers": numbers}).items()}
    graph = builder.finalize()
    session.insert(1)
    session.advance_to(1)
    session.remove(1)
    session.insert(5)
    session.close()
    graph.run()
    for version, starts in ((0, {1}), (1, {5})):
        reached = _reached(starts, 20)
        assert outputs["evens"].at(version) == {n: 1 for n in reached if n % 2 == 0}
        assert outputs["odds"].at(version) == {n: 1 for n in reached if n % 2 == 1}
