"""Drives an MCP server (or `toolschema proxy -- server`) with the Python `mcp` client and prints
what the client saw as one JSON document on stdout.

    python py-client.py everything -- COMMAND ARGS...
    python py-client.py filesystem DIR -- COMMAND ARGS...
"""

import json
import sys

import warnings

import anyio
from mcp import ClientSession, MCPDeprecationWarning, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client

# Logging is deprecated from protocol 2026-07-28 on; the servers here speak 2025-11-25.
warnings.simplefilter("ignore", MCPDeprecationWarning)


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def outcome(call):
    """A call's result, or the JSON-RPC error it was answered with."""
    try:
        return {"result": dump(await call)}
    except MCPError as error:
        return {"error": {"code": error.error.code, "message": error.error.message}}


async def list_all(session):
    tools, cursor = [], None
    while True:
        page = await session.list_tools(
            params=None if cursor is None else {"cursor": cursor}
        )
        tools.extend(dump(tool) for tool in page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return tools


async def everything(session, logs):
    tools = await list_all(session)
    valid = {
        "echo": await outcome(session.call_tool("echo", {"message": "hello"})),
        "sum": await outcome(session.call_tool("get-sum", {"a": 2, "b": 3.5})),
        "structured": await outcome(
            session.call_tool("get-structured-content", {"location": "Chicago"})
        ),
    }
    invalid = {
        "echoMissing": await outcome(session.call_tool("echo", {})),
        "sumTypes": await outcome(session.call_tool("get-sum", {"a": "two", "b": 3})),
        "structuredEnum": await outcome(
            session.call_tool("get-structured-content", {"location": "Paris"})
        ),
    }
    progress = []

    async def on_progress(value, total, message):
        progress.append({"progress": value, "total": total})

    long_running = await outcome(
        session.call_tool(
            "trigger-long-running-operation",
            {"duration": 0.3, "steps": 3},
            progress_callback=on_progress,
        )
    )
    await session.set_logging_level("debug")
    await session.call_tool("toggle-simulated-logging", {})
    with anyio.move_on_after(5):
        while not logs:
            await anyio.sleep(0.02)
    await session.call_tool("toggle-simulated-logging", {})
    return {
        "tools": tools,
        "valid": valid,
        "invalid": invalid,
        "longRunning": long_running,
        "progress": progress,
        "logCount": len(logs),
    }


async def filesystem(session, directory):
    tools = await list_all(session)
    notes = f"{directory}/notes.txt"
    rejected = f"{directory}/rejected.txt"
    valid = {
        "write": await outcome(session.call_tool("write_file", {"path": notes, "content": "hello\n"})),
        "read": await outcome(session.call_tool("read_text_file", {"path": notes})),
        "list": await outcome(session.call_tool("list_directory", {"path": directory})),
    }
    invalid = {
        "writeNumber": await outcome(
            session.call_tool("write_file", {"path": rejected, "content": 42})
        ),
        "writeMissing": await outcome(session.call_tool("write_file", {"path": rejected})),
    }
    return {"tools": tools, "valid": valid, "invalid": invalid}


async def main():
    argv = sys.argv[1:]
    split = argv.index("--")
    scenario, scenario_args = argv[0], argv[1:split]
    command, *args = argv[split + 1 :]
    logs = []

    async def on_log(params):
        logs.append(dump(params))

    with anyio.fail_after(60):
        async with stdio_client(StdioServerParameters(command=command, args=args)) as (read, write):
            async with ClientSession(read, write, logging_callback=on_log) as session:
                await session.initialize()
                if scenario == "everything":
                    output = await everything(session, logs)
                elif scenario == "filesystem":
                    output = await filesystem(session, scenario_args[0])
                else:
                    raise SystemExit(f"py-client: unknown scenario {scenario}")
    print(json.dumps(output))


anyio.run(main)
