"""Message cases: the Python validator and `toolschema validate --calls` give the same errors
(pointer and message text, in order) for the same tools and the same calls."""

import json
import pathlib

import pytest

import toolschema
from conftest import jsonl, run

OBJ = {"type": "object"}


def obj(properties, **more):
    return {"type": "object", "properties": properties, **more}


# (inputSchema, arguments): every keyword a model meets, and values that are odd but valid JSON.
CASES = [
    (obj({"q": {"type": "string"}}, required=["q"]), {}),
    (obj({"q": {"type": "string"}}, required=["q"]), {"q": 1}),
    (obj({"n": {"type": "integer"}}), {"n": 1.5}),
    (obj({"n": {"type": "integer"}}), {"n": 2.0}),
    (obj({"n": {"type": "number"}}), {"n": "1"}),
    (obj({"b": {"type": "boolean"}}), {"b": "true"}),
    (obj({"a": {"type": "array"}}), {"a": {}}),
    (obj({"o": {"type": "object"}}), {"o": []}),
    (obj({"z": {"type": "null"}}), {"z": 0}),
    (obj({"limit": {"type": "integer"}}, additionalProperties=False), {"limt": 5}),
    (obj({"limit": {"type": "integer"}}, additionalProperties=False), {"limit": 1, "x": 2, "y": 3}),
    (obj({"m": {"enum": ["fast", "slow"]}}), {"m": "fats"}),
    (obj({"c": {"const": 3}}), {"c": 4}),
    (obj({"n": {"type": "integer", "minimum": 1, "maximum": 100}}), {"n": 500}),
    (obj({"n": {"type": "integer", "minimum": 1}}), {"n": 0}),
    (obj({"n": {"exclusiveMinimum": 0, "exclusiveMaximum": 10}}), {"n": 10}),
    (obj({"n": {"maximum": 18446744073709551615}}), {"n": 18446744073709551616}),
    (obj({"n": {"maximum": 10**30}}), {"n": 10**30 + 1}),
    (obj({"n": {"minimum": -(10**30)}}), {"n": -(10**30) - 1}),
    (obj({"n": {"multipleOf": 0.1}}), {"n": 0.3}),
    (obj({"n": {"multipleOf": 0.1}}), {"n": 0.35}),
    (obj({"n": {"multipleOf": 3}}), {"n": 9007199254740993}),
    (obj({"s": {"minLength": 3}}), {"s": "ab"}),
    (obj({"s": {"maxLength": 2}}), {"s": "\U0001f600\U0001f600\U0001f600"}),
    (obj({"s": {"pattern": "^[a-z]+$"}}), {"s": "ABC"}),
    (obj({"s": {"format": "email"}}), {"s": "not an email"}),
    (obj({"a": {"minItems": 2}}), {"a": [1]}),
    (obj({"a": {"maxItems": 1}}), {"a": [1, 2]}),
    (obj({"a": {"uniqueItems": True}}), {"a": [1, 1.0]}),
    (obj({"a": {"items": {"type": "string"}}}), {"a": ["x", 2, None]}),
    (obj({"a": {"prefixItems": [{"type": "integer"}], "items": False}}), {"a": [1, 2]}),
    (obj({"a": {"contains": {"type": "integer"}}}), {"a": ["x"]}),
    (obj({"o": {"minProperties": 1}}), {"o": {}}),
    (obj({"o": {"propertyNames": {"maxLength": 2}}}), {"o": {"abc": 1}}),
    (obj({"a": {}, "b": {}}, dependentRequired={"a": ["b"]}), {"a": 1}),
    (obj({"v": {"oneOf": [{"type": "integer"}, {"type": "number"}]}}), {"v": 1}),
    (obj({"v": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}), {"v": None}),
    (obj({"v": {"not": {"type": "string"}}}), {"v": "x"}),
    (obj({"v": {"if": {"type": "integer"}, "then": {"minimum": 5}}}), {"v": 1}),
    (obj({"rows": {"type": "array", "items": obj({"id": {"type": "integer"}}, required=["id"])}}),
     {"rows": [{"id": 1}, {}, {"id": "x"}]}),
    (obj({"a.b": {"type": "string"}, "": {"type": "string"}}), {"a.b": 1, "": 2}),
    ({"query": {"type": "string", "required": True}, "limit": {"type": "integer", "maximum": 100}},
     {"limit": 500}),
    (obj({"u": {"type": "string", "maxLength": 1}}), {"u": "\ud800\udc00"}),
    (obj({"u": {"type": "string", "const": "\ud800"}}), {"u": "\ud800"}),
    (obj({"t": {"type": "string"}}), {"t": "\u0000\u001f\"\\ \u2028"}),
    (OBJ, []),
    (OBJ, "text"),
    (obj({"f": {"type": "number", "maximum": 1e308}}), {"f": 1.7976931348623157e308}),
    (obj({"f": {"type": "number", "minimum": 0}}), {"f": -5e-324}),
    (obj({"deep": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}}),
     {"deep": [[1, "x"], [2.5]]}),
]


def catalog_of(cases):
    return {"tools": [{"name": f"t{i}", "inputSchema": schema} for i, (schema, _) in enumerate(cases)]}


@pytest.mark.parametrize("unknown", ["allow", "reject"])
def test_messages_are_the_commands(unknown: str, tmp_path: pathlib.Path):
    catalog_file = tmp_path / "catalog.json"
    catalog_file.write_text(json.dumps(catalog_of(CASES), indent=2))
    calls = tmp_path / "calls.jsonl"
    calls.write_text(jsonl([{"name": f"t{i}", "arguments": a} for i, (_, a) in enumerate(CASES)]))
    code, out, err = run(["validate", str(catalog_file), "--calls", str(calls),
                          "--unknown-arguments", unknown])
    records = [json.loads(line) for line in out.splitlines()]
    assert len(records) == len(CASES), err
    catalog = toolschema.Catalog.from_file(catalog_file)
    compared = 0
    for i, ((schema, arguments), record) in enumerate(zip(CASES, records)):
        validator = catalog.validator(f"t{i}", unknown_arguments=unknown)
        # A str given as the arguments is their JSON text: a JSON string goes as its text.
        arguments = json.dumps(arguments) if isinstance(arguments, str) else arguments
        theirs = [(e["path"], e["message"]) for e in record["errors"]]
        try:
            ours = [(e.pointer, e.message) for e in validator.validate(arguments)]
        except toolschema.UncheckedError as e:
            ours = [("", m) for m in str(e).split("\n")]
            assert "could not be checked" in str(e)
        assert ours == theirs, f"case {i}: {schema} {arguments!r}"
        if any("could not be checked" in m for _, m in ours):
            assert not record["valid"]
            with pytest.raises(toolschema.UncheckedError):
                validator.is_valid(arguments)
        else:
            assert validator.is_valid(arguments) == record["valid"]
            # The same arguments as JSON text: the same verdict.
            as_text = [(e.pointer, e.message) for e in validator.validate(json.dumps(arguments))]
            assert as_text == ours
        compared += 1
    assert compared == len(CASES)
    # Some cases are valid and most are not: the comparison is not vacuous.
    assert 3 <= sum(r["valid"] for r in records) < len(CASES) // 2


def test_a_path_is_written_as_a_caller_writes_it():
    catalog = toolschema.Catalog.from_tools([{"name": "t", "inputSchema": CASES[39][0]}])
    errors = catalog.validator("t").validate(CASES[39][1])
    assert [(e.path, e.pointer, e.keyword) for e in errors] == [
        ("rows[1].id", "/rows/1/id", "required"),
        ("rows[2].id", "/rows/2/id", "type"),
    ]


def test_null_arguments_are_judged_as_validate_tool_judges_them(tmp_path):
    # `--calls` and the proxy read absent or null arguments as {} (MCP's rule for a call);
    # arguments given whole are judged as given, as `validate --tool --args null` judges them.
    catalog_file = tmp_path / "catalog.json"
    catalog_file.write_text(json.dumps(catalog_of([(OBJ, None)])))
    code, out, _ = run(["validate", str(catalog_file), "--tool", "t0", "--args", "null"])
    errors = toolschema.Catalog.from_file(catalog_file).validator("t0").validate(None)
    assert code == 1 and [e.message for e in errors] == out.strip().split("\n")
