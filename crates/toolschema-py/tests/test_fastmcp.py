"""The FastMCP middleware on a real FastMCP server, driven by the official `mcp` client over
stdio: a valid call runs the tool; an invalid one gets `isError` with toolschema's message and
the tool never runs (it records every call it runs)."""

import asyncio
import json
import os
import pathlib
import sys

import pytest

pytest.importorskip("fastmcp")

from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

import toolschema  # noqa: E402

SERVER = pathlib.Path(__file__).with_name("fastmcp_server.py")


LOWLEVEL = pathlib.Path(__file__).with_name("lowlevel_server.py")


async def session_calls(record: pathlib.Path, unknown: str, calls, server=SERVER):
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(server)],
        env={**os.environ, "TOOLSCHEMA_RECORD": str(record), "TOOLSCHEMA_UNKNOWN": unknown},
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            results = [await session.call_tool("search", arguments) for arguments in calls]
    tools = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools]
    return tools, results


def recorded(record: pathlib.Path):
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text().splitlines()]


@pytest.mark.parametrize("unknown", ["allow", "reject"])
def test_invalid_calls_never_run_the_tool(unknown, tmp_path):
    record = tmp_path / "calls.jsonl"
    calls = [
        {"query": "rust"},
        {"query": 5},
        {"limit": 3},
        {"query": "rust", "limit": "ten"},
        {"query": "rust", "limt": 5},
        {"query": "json", "limit": 2},
    ]
    tools, results = asyncio.run(session_calls(record, unknown, calls))
    validator = toolschema.Catalog.from_tools(tools).validator("search", unknown_arguments=unknown)
    ran = []
    for arguments, result in zip(calls, results):
        expected = [e.message for e in validator.validate(arguments)]
        text = "\n".join(c.text for c in result.content if c.type == "text")
        if expected:
            assert result.is_error, (arguments, text)
            assert text == "\n".join(expected), arguments
        else:
            assert not result.is_error, (arguments, text)
            ran.append({"query": arguments["query"], "limit": arguments.get("limit", 10)})
    assert recorded(record) == ran
    # Not vacuous: both kinds happened, and the messages are toolschema's.
    assert len(ran) == 2
    texts = ["\n".join(c.text for c in r.content) for r in results if r.is_error]
    assert "argument 'query' must be a string (got an integer)" in texts
    # FastMCP lists its tools closed (additionalProperties: false): a misspelt argument is
    # refused with a did-you-mean, where pydantic alone would drop it and run the tool.
    assert "unexpected argument 'limt' (did you mean 'limit'?)" in texts


def test_the_low_level_server_helper_refuses_invalid_calls(tmp_path):
    record = tmp_path / "calls.jsonl"
    calls = [{"query": "rust"}, {"query": "rust", "limit": 500}, {"limt": 5}, {"query": "x", "limit": 2}]
    tools, results = asyncio.run(session_calls(record, "allow", calls, server=LOWLEVEL))
    validator = toolschema.Catalog.from_tools(tools).validator("search")
    for arguments, result in zip(calls, results):
        expected = [e.message for e in validator.validate(arguments)]
        text = "\n".join(c.text for c in result.content if c.type == "text")
        assert bool(result.is_error) == bool(expected), (arguments, text)
        if expected:
            assert text == "\n".join(expected)
    assert recorded(record) == [calls[0], calls[3]]
    texts = [r.content[0].text for r in results if r.is_error]
    assert texts == [
        "argument 'limit' value must be <= 50 (got 500)",
        "missing required argument 'query'\nunexpected argument 'limt' (did you mean 'limit'?)",
    ]
