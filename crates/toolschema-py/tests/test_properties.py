"""Properties, over generated cases: `validate` never raises on a JSON value, valid instances
validate, mutated ones do not, and numbers are compared exactly whatever their size."""

import json

from hypothesis import given, settings, strategies as st

import toolschema

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=5)
    | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=30,
)

CATALOG = toolschema.Catalog.from_tools([
    {
        "name": "search",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": 64},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                "ratio": {"type": "number", "multipleOf": 0.25},
                "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "uniqueItems": True},
                "exact": {"type": "integer", "maximum": 18446744073709551616},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
    {"name": "anything", "inputSchema": {"type": "object"}},
])
SEARCH = CATALOG.validator("search")
ANYTHING = CATALOG.validator("anything")

VALID_SEARCH = st.fixed_dictionaries(
    {"query": st.text(min_size=1, max_size=64)},
    optional={
        "limit": st.integers(1, 100),
        "ratio": st.integers(-1000, 1000).map(lambda n: n / 4),
        "tags": st.lists(st.sampled_from(["a", "b", "c"]), unique=True),
        "exact": st.integers(max_value=2**64),
    },
)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_validate_never_raises_on_a_json_value(value):
    for validator in (SEARCH, ANYTHING):
        errors = validator.validate(value)
        assert all(isinstance(e.message, str) and e.message for e in errors)
        assert validator.is_valid(value) == (not errors)
        # As JSON text, the same verdict.
        assert [e.message for e in validator.validate(json.dumps(value))] == [e.message for e in errors]
    assert ANYTHING.is_valid(value) == isinstance(value, dict)


@settings(max_examples=300, deadline=None)
@given(VALID_SEARCH)
def test_valid_instances_validate(arguments):
    assert SEARCH.validate(arguments) == []


@settings(max_examples=300, deadline=None)
@given(VALID_SEARCH, st.sampled_from(["drop-query", "long-query", "limit", "ratio", "tag", "extra", "exact"]),
       st.integers(1, 2**80))
def test_mutated_instances_do_not(arguments, mutation, n):
    arguments = dict(arguments)
    if mutation == "drop-query":
        del arguments["query"]
    elif mutation == "long-query":
        arguments["query"] = "x" * (64 + n % 10 + 1)
    elif mutation == "limit":
        arguments["limit"] = 100 + n
    elif mutation == "ratio":
        arguments["ratio"] = (4 * (n % 1000) + 1) / 8
    elif mutation == "tag":
        arguments["tags"] = ["a", "a"]
    elif mutation == "extra":
        arguments["lmit"] = n
    elif mutation == "exact":
        arguments["exact"] = 2**64 + n
    errors = SEARCH.validate(arguments)
    assert errors, arguments
    assert not SEARCH.is_valid(arguments)


@settings(max_examples=300, deadline=None)
@given(st.integers(-(2**200), 2**200), st.integers(-(2**200), 2**200))
def test_integers_of_any_size_are_compared_exactly(bound, n):
    schema = {"type": "integer", "maximum": bound}
    errors = toolschema.validate_value(schema, n)
    assert (not errors) == (n <= bound)
