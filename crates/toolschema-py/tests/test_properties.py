"""Properties, over generated cases: `validate` never raises on a JSON value, valid instances
validate, mutated ones do not, and numbers are compared exactly whatever their size."""

import json

import pytest
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
                "exact": {"type": "integer", "maximum": 2**70},
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
        "exact": st.integers(max_value=2**70),
    },
)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_validate_never_raises_on_a_json_value(value):
    # A str given as the arguments is their JSON text: a JSON string goes as its text.
    given = json.dumps(value) if isinstance(value, str) else value
    for validator in (SEARCH, ANYTHING):
        errors = validator.validate(given)
        assert all(isinstance(e.message, str) and e.message for e in errors)
        assert validator.is_valid(given) == (not errors)
        # As JSON text, the same verdict.
        assert [e.message for e in validator.validate(json.dumps(value))] == [e.message for e in errors]
    assert ANYTHING.is_valid(given) == isinstance(value, dict)


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
        arguments["exact"] = 2**70 + n
    errors = SEARCH.validate(arguments)
    assert errors, arguments
    assert not SEARCH.is_valid(arguments)


# A schema's own numbers are compared as its JSON text writes them, whatever their size: bounds
# past 2^53, 2^64 and 2^200 as much as small ones.
BOUNDS = (
    st.integers(-(2**53), 2**53)
    | st.integers(-(2**200), 2**200)
    | st.sampled_from([2**53, 2**63, 2**64, 2**65, -(2**64)]).flatmap(
        lambda p: st.integers(p - 3, p + 3)
    )
)


@settings(max_examples=300, deadline=None)
@given(BOUNDS, st.integers(-(2**200), 2**200) | st.integers(-(2**60), 2**60))
def test_integers_of_any_size_are_compared_exactly(bound, n):
    for m in (n, bound - 1, bound, bound + 1):
        errors = toolschema.validate_value({"type": "integer", "maximum": bound}, m)
        assert (not errors) == (m <= bound), (bound, m)


# Found by the property above with larger bounds, when the core compared a schema's float past
# 2^53 by its shortest decimal (3.6893488147419103e19 for 2^65): `maximum: 2^65` refused 2^65
# itself and `maximum: 2^64` let 2^64 + 1 through.
@pytest.mark.parametrize("bound,value,valid", [(2**64, 2**64 + 1, False), (2**65, 2**65, True)])
def test_bounds_past_2_to_the_53_are_compared_by_their_value(bound, value, valid):
    assert (not toolschema.validate_value({"maximum": bound}, value)) == valid


# Strings holding lone surrogates (and surrogate pairs given as two code points, which JSON text
# writes as a pair of escapes and reads as one character).
SURROGATE_TEXTS = st.builds(
    lambda a, s, b: a + s + b,
    st.text(max_size=3),
    st.sampled_from(["\ud800", "\udfff", "\udc00\ud800", "\ud83d\ude00", "\ud83d"]),
    st.text(max_size=3),
)
TEXTS = st.text(max_size=8) | SURROGATE_TEXTS
NUMBERS = (
    st.integers()
    | st.integers(min_value=-(2**200), max_value=2**200)
    | st.sampled_from([2**53 + 1, 2**64, 2**64 - 1, -(2**63) - 1, 2**70, 10**400, -(10**30)])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1e308, -1e308, -0.0, 0.0, 5e-324, 2.0**53, 0.1, 1e16, 123456789.125])
)
# Nested around the depth the reader accepts: deeper ones are refused either way.
DEEP = st.integers(120, 135).map(lambda n: json.loads("[" * n + "1" + "]" * n))
HOST_VALUES = st.recursive(
    st.none() | st.booleans() | NUMBERS | TEXTS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXTS, children, max_size=4),
    max_leaves=20,
) | DEEP
HOST_ARGUMENTS = st.fixed_dictionaries({"v": HOST_VALUES}) | st.dictionaries(TEXTS, HOST_VALUES, max_size=4)

# Schemas that examine characters, compare numbers exactly, divide by floats, compare items.
HOST_CATALOG = toolschema.Catalog.from_tools([
    {
        "name": "examines",
        "inputSchema": {
            "type": "object",
            "properties": {
                "v": {
                    "anyOf": [
                        {"type": "string", "pattern": "^[a-z]*$"},
                        {"type": "integer", "minimum": -(2**64), "maximum": 2**64},
                        {"type": "number", "multipleOf": 0.5, "maximum": 1e300},
                        {"type": "array", "items": {"$ref": "#/properties/v"}, "maxItems": 3},
                        {"type": "null"},
                    ]
                }
            },
            "required": ["v"],
            "additionalProperties": {"type": ["integer", "object", "array"], "exclusiveMaximum": 2**70},
        },
    },
    {
        "name": "compares",
        "inputSchema": {
            "type": "object",
            "properties": {
                "v": {"type": "array", "uniqueItems": True, "maxItems": 4, "not": {"contains": {"const": 2**64}}}
            },
            "additionalProperties": {"type": "string", "maxLength": 3},
        },
        "outputSchema": {"type": "object", "properties": {"v": {"enum": [-0.0, 2**70, "\ud800x"]}}},
    },
    {"name": "anything", "inputSchema": {"type": "object"}},
])


def outcome(check, given):
    """What a check says of `given`: its errors, why it could not be checked, or a refusal."""
    try:
        return ("errors", [(e.path, e.message, e.keyword, e.pointer) for e in check(given)])
    except toolschema.UncheckedError as e:
        return ("unchecked", str(e))
    except toolschema.Error:
        return ("refused",)


@settings(max_examples=400, deadline=None)
@given(HOST_ARGUMENTS)
def test_a_value_and_its_json_text_get_the_same_verdict_and_messages(arguments):
    text = json.dumps(arguments)
    for name in HOST_CATALOG.names:
        validator = HOST_CATALOG.validator(name)
        for check in (validator.validate, validator.validate_output):
            as_object = outcome(check, arguments)
            assert as_object == outcome(check, text), (name, check.__name__, text)
            assert as_object == outcome(check, text.encode()), (name, check.__name__, text)
        verdict = outcome(validator.validate, arguments)
        if verdict[0] == "errors":
            assert validator.is_valid(arguments) == (verdict[1] == [])


class _Str(str):
    pass


class _Int(int):
    pass


class _Float(float):
    pass


class _Dict(dict):
    pass


class _List(list):
    pass


def subclassed(value):
    """The same JSON value built of subclasses of the built-in types, and tuples for some lists:
    the validator tells the built-in types first and their subclasses after."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _Str(value)
    if isinstance(value, int):
        return _Int(value)
    if isinstance(value, float):
        return _Float(value)
    if isinstance(value, dict):
        return _Dict((_Str(k), subclassed(v)) for k, v in value.items())
    items = [subclassed(v) for v in value]
    return tuple(items) if len(items) % 2 else _List(items)


@settings(max_examples=200, deadline=None)
@given(HOST_ARGUMENTS)
def test_subclasses_of_the_json_types_get_the_verdict_of_the_plain_value(arguments):
    dressed = subclassed(arguments)
    for name in HOST_CATALOG.names:
        validator = HOST_CATALOG.validator(name)
        for check in (validator.validate, validator.validate_output):
            assert outcome(check, dressed) == outcome(check, arguments), (name, check.__name__, arguments)
