"""A small MCP server on the Python `mcp` SDK (MCPServer), which speaks both protocol eras:
2025-11-25 with `initialize`, and 2026-07-28 with the revision in every request's `_meta`. It
records each tool call it runs, so tests can prove what reached it and what did not.

    python py-server.py [--record FILE] stdio
    python py-server.py [--record FILE] http PORT        (Streamable HTTP at /mcp)
"""

import json
import sys

from mcp.server.mcpserver import Context, MCPServer

args = sys.argv[1:]
record = None
if args[:1] == ["--record"]:
    record, args = args[1], args[2:]

server = MCPServer("py-server")


def remember(tool, arguments):
    if record:
        with open(record, "a", encoding="utf-8") as out:
            out.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")


@server.tool()
def echo(message: str) -> str:
    """Echoes back the message."""
    remember("echo", {"message": message})
    return f"echo: {message}"


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    remember("add", {"a": a, "b": b})
    return a + b


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Counts to `steps`, reporting progress at each step."""
    remember("count", {"steps": steps})
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps)
    return f"counted to {steps}"


match args:
    case ["stdio"]:
        server.run("stdio")
    case ["http", port]:
        server.run("streamable-http", host="127.0.0.1", port=int(port))
    case _:
        sys.stderr.write("usage: py-server.py [--record FILE] stdio | http PORT\n")
        sys.exit(64)
