"""Argument checks for a server written with the official ``mcp`` SDK's low-level ``Server``.

>>> from mcp.server.lowlevel import Server
>>> from toolschema.mcp import checked_call_tool
>>> server = Server("docs", on_list_tools=list_tools,
...                 on_call_tool=checked_call_tool(TOOLS, call_tool))  # doctest: +SKIP

``checked_call_tool(tools, handler)`` wraps an ``on_call_tool`` handler (``mcp`` 2: it takes the
request context and the ``tools/call`` params): each call's arguments are checked against the
``inputSchema`` of its tool among ``tools`` (the tools ``on_list_tools`` lists, as ``mcp`` types
or dicts) before the handler runs. An invalid call, or one that could not be checked, is
answered with a tool error (``isError: true``) holding toolschema's messages, one per line; the
handler never sees it. A call to a tool not in ``tools`` goes to the handler, which answers it.
"""

from typing import Any, Awaitable, Callable, Dict, List, Mapping, Sequence, Union

from mcp import types

from . import Catalog, Validator
from ._calls import refusal

__all__ = ["checked_call_tool"]

Handler = Callable[[Any, Any], Awaitable[Any]]


def _definition(tool: Union[Mapping[str, Any], Any]) -> Dict[str, Any]:
    if isinstance(tool, Mapping):
        return dict(tool)
    dumped: Dict[str, Any] = tool.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped


def _refusal(messages: List[str]) -> Any:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text="\n".join(messages))], is_error=True
    )


def checked_call_tool(
    tools: Sequence[Union[Mapping[str, Any], Any]],
    handler: Handler,
    *,
    unknown_arguments: str = "allow",
) -> Handler:
    """``handler`` with each call's arguments checked first (see the module's doc)."""
    catalog = Catalog.from_tools([_definition(t) for t in tools])
    validators: Dict[str, Validator] = {
        name: catalog.validator(name, unknown_arguments=unknown_arguments)  # type: ignore[arg-type]
        for name in catalog.names
    }

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        validator = validators.get(params.name)
        if validator is None:
            return await handler(ctx, params)
        messages = refusal(validator, params.arguments)
        if messages:
            return _refusal(messages)
        return await handler(ctx, params)

    return on_call_tool
