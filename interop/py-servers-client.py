"""Drives `toolschema proxy --server ...` (many servers behind one front, here over stdio) with
the Python `mcp` client, and prints what it saw as one JSON document: every page of the merged
listing, a valid and an invalid call to each server's tool.

    python py-servers-client.py -- COMMAND ARGS...
"""

import json
import sys

import anyio
from mcp import Client, MCPError, StdioServerParameters


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def outcome(call):
    try:
        return {"result": dump(await call)}
    except MCPError as error:
        return {"error": {"code": error.error.code, "message": error.error.message}}


async def main():
    rest = sys.argv[1:]
    if rest[:1] != ["--"]:
        raise SystemExit("usage: py-servers-client.py -- COMMAND ARGS...")
    server = StdioServerParameters(command=rest[1], args=rest[2:])
    with anyio.fail_after(90):
        async with Client(server, mode="legacy", cache=None) as client:
            names, cursor, pages = [], None, 0
            while True:
                page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
                pages += 1
                names.extend(tool.name for tool in page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
            output = {
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
    print(json.dumps(output))


anyio.run(main)
