"""A FastMCP middleware that checks each call's arguments against the tool's own ``inputSchema``
before the tool runs.

>>> from fastmcp import FastMCP
>>> from toolschema.fastmcp import ValidateArguments
>>> server = FastMCP("docs", middleware=[ValidateArguments()])

An invalid call is answered with a tool error (``isError: true``) whose text is toolschema's
messages, one per line, as SEP-1303 has servers report invalid arguments: the model reads them
and can correct the call. The tool never runs. Arguments that could not be checked are refused
the same way: they are never passed as valid. With ``check_output=True`` a result's structured
content is checked against the tool's ``outputSchema`` too.

Needs the ``fastmcp`` package (it is not a dependency of toolschema).
"""

import json
from typing import Any, Dict, List, Optional, Tuple

from fastmcp.server.middleware import Middleware, MiddlewareContext
from fastmcp.tools.base import ToolResult
from mcp.types import TextContent

from . import Catalog, UncheckedError, Validator
from ._calls import refusal

__all__ = ["ValidateArguments"]


def _refusal(messages: List[str]) -> ToolResult:
    return ToolResult(content=[TextContent(type="text", text="\n".join(messages))], is_error=True)


class ValidateArguments(Middleware):
    """Check ``tools/call`` arguments with toolschema before the tool runs.

    ``unknown_arguments="reject"`` also refuses top-level arguments the schema does not declare;
    ``check_output=True`` checks structured results against the ``outputSchema``. Each tool's
    schemas are compiled once, and again only when the tool's definition changes.
    """

    def __init__(self, *, unknown_arguments: str = "allow", check_output: bool = False) -> None:
        self.unknown_arguments = unknown_arguments
        self.check_output = check_output
        self._validators: Dict[str, Tuple[str, Validator]] = {}

    def _validator(self, definition: Dict[str, Any]) -> Validator:
        key = json.dumps(definition, sort_keys=True)
        name = definition["name"]
        cached = self._validators.get(name)
        if cached is not None and cached[0] == key:
            return cached[1]
        validator = Catalog.from_tools([definition]).validator(
            name, unknown_arguments=self.unknown_arguments  # type: ignore[arg-type]
        )
        self._validators[name] = (key, validator)
        return validator

    async def on_call_tool(self, context: MiddlewareContext[Any], call_next: Any) -> Any:
        server = context.fastmcp_context.fastmcp if context.fastmcp_context else None
        name = context.message.name
        tool = await server.get_tool(name) if server is not None else None
        if tool is None:
            # FastMCP answers an unknown tool itself.
            return await call_next(context)
        definition = tool.to_mcp_tool().model_dump(by_alias=True, exclude_none=True, mode="json")
        validator = self._validator(definition)
        messages = refusal(validator, context.message.arguments)
        if messages:
            return _refusal(messages)
        result = await call_next(context)
        if self.check_output and isinstance(result, ToolResult):
            try:
                problems = validator.validate_output(result.structured_content, result.is_error)
            except UncheckedError as e:
                return _refusal([str(e)])
            if problems:
                return _refusal([e.message for e in problems])
        return result
