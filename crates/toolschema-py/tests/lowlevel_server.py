"""A server on the `mcp` SDK's low-level Server, its call handler wrapped by
toolschema.mcp.checked_call_tool; the handler records each call it runs in $TOOLSCHEMA_RECORD
(run by test_fastmcp.py)."""

import json
import os

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from toolschema.mcp import checked_call_tool

TOOLS = [
    types.Tool(
        name="search",
        description="Search the documents.",
        input_schema={
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "maximum": 50}},
            "required": ["query"],
            "additionalProperties": False,
        },
    )
]


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx, params):
    with open(os.environ["TOOLSCHEMA_RECORD"], "a") as record:
        record.write(json.dumps(params.arguments) + "\n")
    return types.CallToolResult(content=[types.TextContent(type="text", text="found")])


server = Server("recorded", on_list_tools=list_tools, on_call_tool=checked_call_tool(TOOLS, call_tool))


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
