"""Bad input raises a clear typed exception, and never crashes the interpreter."""

import json
import subprocess
import sys

import pytest

import toolschema

CATALOG = toolschema.Catalog.from_tools([
    {"name": "search_docs", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}},
])
V = CATALOG.validator("search_docs")


def test_malformed_arguments_raise_json_error_with_the_place():
    with pytest.raises(toolschema.JSONError) as e:
        V.validate('{\n  "q": "x",\n  "n": }')
    assert (e.value.line, e.value.column) == (3, 8)
    assert str(e.value).startswith("arguments:3:8: invalid JSON: ")
    assert isinstance(e.value, ValueError) and isinstance(e.value, toolschema.Error)


def test_a_malformed_catalog_raises_with_line_and_column():
    with pytest.raises(toolschema.JSONError) as e:
        toolschema.Catalog.from_json('{"tools": [\n  {"name": "a",}\n]}', file="tools.json")
    assert (e.value.file, e.value.line) == ("tools.json", 2)
    assert str(e.value).startswith(f"tools.json:2:{e.value.column}: invalid JSON")
    with pytest.raises(toolschema.CatalogError) as e:
        toolschema.Catalog.from_json('{"tool": []}')
    assert not isinstance(e.value, toolschema.JSONError)


def test_a_tool_breaking_a_rule_is_left_out_and_refused_by_name():
    catalog = toolschema.Catalog.from_json(
        '[{"name": "ok", "inputSchema": {}},\n {"name": "bad name", "inputSchema": {}}]', file="c.json")
    assert catalog.names == ["ok"]
    assert len(catalog.left_out) == 1 and catalog.left_out[0].startswith("c.json:2:")
    with pytest.raises(toolschema.CatalogError) as e:
        catalog.validator("bad name")
    assert e.value.line == 2
    with pytest.raises(toolschema.CatalogError):
        toolschema.diff(catalog, catalog)


@pytest.mark.parametrize("as_text", [False, True])
def test_values_100k_deep_raise(as_text):
    deep: list = []
    inner = deep
    for _ in range(100_000):
        inner.append([])
        inner = inner[0]
    arguments = {"q": deep}
    if as_text:
        arguments = '{"q": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises((toolschema.NotJSONError, toolschema.JSONError)) as e:
        V.validate(arguments)
    assert "deeper than 128" in str(e.value) or "nest" in str(e.value)


def test_a_value_holding_itself_raises():
    loop: list = []
    loop.append(loop)
    with pytest.raises(toolschema.NotJSONError):
        V.validate({"q": loop})


@pytest.mark.parametrize("value,words", [
    (float("nan"), "not a JSON number"),
    (float("inf"), "not a JSON number"),
    ({1, 2}, "set is not a JSON value"),
    (object(), "object is not a JSON value"),
    ({1: "x"}, "dict key must be a str"),
])
def test_python_values_without_a_json_form_raise(value, words):
    with pytest.raises(toolschema.NotJSONError) as e:
        V.validate({"q": value})
    assert words in str(e.value)
    assert isinstance(e.value, TypeError)


def test_a_remote_ref_is_refused_not_fetched():
    catalog = toolschema.Catalog.from_tools([{"name": "r", "inputSchema": {
        "type": "object", "properties": {"a": {"$ref": "https://example.com/schema.json"}}}}])
    with pytest.raises(toolschema.SchemaError) as e:
        catalog.validator("r")
    assert "https://example.com/schema.json" in str(e.value)


def test_keys_whose_lone_surrogates_read_alike_are_refused_as_their_text_is():
    # Both keys read as U+FFFD: the text holding them has a duplicate key.
    arguments = {"q": {"\ud800": 1, "\udfff": 2}}
    with pytest.raises(toolschema.NotJSONError, match="duplicate key"):
        V.validate(arguments)
    with pytest.raises(toolschema.JSONError, match="duplicate key"):
        V.validate(json.dumps(arguments))


def test_an_unknown_tool_raises_with_a_did_you_mean():
    with pytest.raises(toolschema.UnknownToolError) as e:
        CATALOG.validator("search_doc")
    assert str(e.value) == "<tools>: unknown tool 'search_doc' (did you mean 'search_docs'?)"
    assert e.value.suggestion == "search_docs" and isinstance(e.value, LookupError)
    with pytest.raises(KeyError if False else LookupError):
        CATALOG["nothing"]


def test_could_not_be_checked_is_never_valid():
    # A number whose power of ten is past what can be compared, where the schema compares.
    validator = toolschema.Catalog.from_tools([{"name": "u", "inputSchema": {
        "type": "object", "properties": {"a": {"type": "array", "uniqueItems": True}}}}]).validator("u")
    text = '{"a": [1e1152921504606846977, 2e1152921504606846977]}'
    with pytest.raises(toolschema.UncheckedError) as e:
        validator.validate(text)
    assert "could not be checked" in str(e.value)
    with pytest.raises(toolschema.UncheckedError):
        validator.is_valid(text)


def test_bad_input_never_crashes_the_interpreter():
    # Everything above again in a child interpreter: it must end with exit 0, not a signal.
    program = (
        "import toolschema\n"
        "v = toolschema.Catalog.from_tools([{'name': 't', 'inputSchema': {}}]).validator('t')\n"
        "for bad in ['[' * 1000000, '{\"a\": ' + '[' * 200000, b'\\xff', '\\ud800', '{\"a\": 1e99999999999}']:\n"
        "    try:\n"
        "        v.validate(bad)\n"
        "    except toolschema.Error:\n"
        "        pass\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
