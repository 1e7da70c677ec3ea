"""Drives an MCP server with the Python `mcp` client (`mcp.Client`), over Streamable HTTP or
stdio, in either protocol era, and prints what the client saw as one JSON document.

    python py-http-client.py SCENARIO MODE --url URL
    python py-http-client.py SCENARIO MODE -- COMMAND ARGS...

MODE: `legacy` (initialize, 2025-11-25) or `2026-07-28` (the revision in every request's
`_meta`, no session). SCENARIO: `everything` (server-everything: valid and invalid calls, progress
of a long operation, a sampling round trip), `pyserver` (interop/py-server.py: valid and
invalid calls, progress) or `modern` (the same, with an invalid call before any listing), or
`servers` (`toolschema proxy --server ...` with everything and time behind one front: every page
of the merged listing, a valid and an invalid call to each server's tool).
"""

import json
import sys
import warnings

import anyio
import mcp_types as types
from mcp import Client, MCPDeprecationWarning, MCPError, StdioServerParameters

# Sampling and logging are deprecated from 2026-07-28 on; server-everything speaks 2025-11-25.
warnings.simplefilter("ignore", MCPDeprecationWarning)


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def outcome(call):
    """A call's result, or the JSON-RPC error it was answered with."""
    try:
        return {"result": dump(await call)}
    except MCPError as error:
        return {"error": {"code": error.error.code, "message": error.error.message}}


async def list_tools(client):
    tools, cursor = [], None
    while True:
        page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
        tools.extend(dump(tool) for tool in page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return sorted(tools, key=lambda tool: tool["name"])


async def sampled(context, params):
    """The client's answer to a sampling request: what was asked, echoed."""
    text = "; ".join(
        m.content.text for m in params.messages if getattr(m.content, "type", None) == "text"
    )
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=f"sampled: {text}"),
        model="interop-model",
        stop_reason="endTurn",
    )


async def everything(client):
    progress = []

    async def on_progress(value, total, message):
        progress.append({"progress": value, "total": total})

    return {
        "tools": [tool["name"] for tool in await list_tools(client)],
        "valid": {
            "echo": await outcome(client.call_tool("echo", {"message": "hello"})),
            "sum": await outcome(client.call_tool("get-sum", {"a": 2, "b": 3.5})),
        },
        "invalid": {
            "echoMissing": await outcome(client.call_tool("echo", {})),
            "sumTypes": await outcome(client.call_tool("get-sum", {"a": "two", "b": 3})),
        },
        "longRunning": await outcome(
            client.call_tool(
                "trigger-long-running-operation",
                {"duration": 0.6, "steps": 3},
                progress_callback=on_progress,
            )
        ),
        "progress": progress,
        "sampling": await outcome(
            client.call_tool("trigger-sampling-request", {"prompt": "hi", "maxTokens": 5})
        ),
    }


async def pyserver(client):
    progress = []

    async def on_progress(value, total, message):
        progress.append({"progress": value, "total": total})

    return {
        "protocol": client.protocol_version,
        "tools": await list_tools(client),
        "valid": {
            "echo": await outcome(client.call_tool("echo", {"message": "hello"})),
            "add": await outcome(client.call_tool("add", {"a": 2, "b": 3})),
        },
        "invalid": {
            "addTypes": await outcome(client.call_tool("add", {"a": "two", "b": 3})),
            "echoMissing": await outcome(client.call_tool("echo", {})),
        },
        "count": await outcome(client.call_tool("count", {"steps": 3}, progress_callback=on_progress)),
        "progress": progress,
    }


async def modern(client):
    """A session of interop/py-server.py that calls before it lists: the proxy lists the
    tools itself."""
    first = await outcome(client.call_tool("add", {"a": "two", "b": 3}))
    output = await pyserver(client)
    output["first"] = first
    return output


async def servers(client):
    """Three servers behind one front: the merged listing's pages, calls routed to each."""
    names, cursor, pages = [], None, 0
    while True:
        page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
        pages += 1
        names.extend(tool.name for tool in page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return {
        "listing": {"pages": pages, "names": sorted(names)},
        "valid": {
            "everything": await outcome(client.call_tool("everything__echo", {"message": "hi"})),
            "time": await outcome(client.call_tool("time__get_current_time", {"timezone": "UTC"})),
        },
        "invalid": {
            "everything": await outcome(client.call_tool("everything__echo", {})),
            "time": await outcome(client.call_tool("time__get_current_time", {"timezone": 5})),
        },
    }


async def main():
    argv = sys.argv[1:]
    scenario, mode, rest = argv[0], argv[1], argv[2:]
    if rest[:1] == ["--url"]:
        server = rest[1]
    elif rest[:1] == ["--"]:
        server = StdioServerParameters(command=rest[1], args=rest[2:])
    else:
        raise SystemExit("usage: py-http-client.py SCENARIO MODE (--url URL | -- COMMAND ARGS...)")
    run = {"everything": everything, "pyserver": pyserver, "modern": modern, "servers": servers}[
        scenario
    ]
    with anyio.fail_after(60):
        async with Client(server, mode=mode, sampling_callback=sampled, cache=None) as client:
            output = await run(client)
    print(json.dumps(output))


anyio.run(main)
