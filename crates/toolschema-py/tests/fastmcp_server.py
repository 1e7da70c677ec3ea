"""A FastMCP server with toolschema's middleware, over stdio; its tool records each call it runs
in the file $TOOLSCHEMA_RECORD (run by test_fastmcp.py)."""

import json
import os

from fastmcp import FastMCP

from toolschema.fastmcp import ValidateArguments

server = FastMCP(
    "recorded",
    middleware=[ValidateArguments(unknown_arguments=os.environ.get("TOOLSCHEMA_UNKNOWN", "allow"))],
)


@server.tool
def search(query: str, limit: int = 10) -> str:
    """Search the documents."""
    with open(os.environ["TOOLSCHEMA_RECORD"], "a") as record:
        record.write(json.dumps({"query": query, "limit": limit}) + "\n")
    return f"found {query}"


if __name__ == "__main__":
    server.run(show_banner=False)
