"""A small MCP server on the Python `mcp` SDK whose tool bounds an integer past 2^64: Python
writes its schema's numbers exactly (`"maximum": 18446744073709551616`), which no 64-bit float
holds. It records each call it runs, so tests can prove what reached it.

    python py-big-numbers-server.py RECORD
"""

import json
import sys
from typing import Annotated

from pydantic import Field

from mcp.server.mcpserver import MCPServer

record = sys.argv[1]
server = MCPServer("py-big-numbers-server")


@server.tool()
def transfer(amount: Annotated[int, Field(ge=-(2**64), le=2**64)]) -> str:
    """Transfers an amount between -2^64 and 2^64."""
    with open(record, "a", encoding="utf-8") as out:
        out.write(json.dumps({"tool": "transfer", "amount": amount}) + "\n")
    return f"transferred {amount}"


server.run("stdio")
