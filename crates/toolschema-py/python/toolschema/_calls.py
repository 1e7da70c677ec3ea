"""What the server integrations (fastmcp.py, mcp.py) share: the messages refusing a call."""

from typing import Any, List

from . import UncheckedError, Validator


def refusal(validator: Validator, arguments: Any) -> List[str]:
    """The messages refusing a call with these arguments (absent ones read as {}, MCP's rule);
    empty when the call may run. Arguments that could not be checked are refused."""
    try:
        errors = validator.validate({} if arguments is None else arguments)
    except UncheckedError as e:
        return [str(e)]
    return [e.message for e in errors]
