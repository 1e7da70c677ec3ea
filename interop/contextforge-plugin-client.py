"""The gateway side of a ContextForge external plugin, written from the plugin framework's MCP
client (PyPI `cpex`, framework/external/mcp/client.py): connect to the plugin's MCP server with
the Python `mcp` client, fetch its configuration (tool `get_plugin_config {name}`), then run
hooks (tool `invoke_hook {hook_type, plugin_name, payload, context}`), reading each answer as
the framework does: the JSON of the first text content, `{"result": PluginResult}` or
`{"error": ...}`. Prints one JSON document: the configuration and each hook's answer.

    python contextforge-plugin-client.py HOOKS.json -- COMMAND ARGS...

HOOKS.json is a list of [hook_type, payload] pairs.
"""

import json
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

PLUGIN = "ToolschemaSchemas"


def answer_of(result):
    for content in result.content:
        if content.type == "text":
            return json.loads(content.text)
    raise SystemExit(f"no text content in {result}")


async def main():
    hooks_file, separator, command, *args = sys.argv[1:]
    assert separator == "--", "usage: HOOKS.json -- COMMAND ARGS..."
    with open(hooks_file) as f:
        hooks = json.load(f)
    server = StdioServerParameters(command=command, args=args)
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = [tool.name for tool in (await session.list_tools()).tools]
            config = answer_of(await session.call_tool("get_plugin_config", {"name": PLUGIN}))
            answers = []
            for hook_type, payload in hooks:
                context = {"state": {}, "metadata": {},
                           "global_context": {"request_id": "req-1", "server_id": None}}
                called = await session.call_tool(
                    "invoke_hook",
                    {"hook_type": hook_type, "plugin_name": PLUGIN, "payload": payload, "context": context},
                )
                answers.append(answer_of(called))
    print(json.dumps({"tools": tools, "config": config, "answers": answers}))


anyio.run(main)
