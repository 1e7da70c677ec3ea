"""toolschema: the contract between an MCP server and the model that calls it.

Read a catalog of MCP tools, compile a tool once and validate its calls' arguments with
messages a model can act on, lint a catalog and fix it, write its tools for a model provider,
compare two catalogs, and pin a server's tools. Every verdict and message is the one the
``toolschema`` command gives for the same JSON.

>>> import toolschema
>>> catalog = toolschema.Catalog.from_json('''{"tools": [{"name": "search",
...   "inputSchema": {"type": "object", "properties": {"query": {"type": "string"},
...   "limit": {"type": "integer", "maximum": 50}}, "required": ["query"],
...   "additionalProperties": false}}]}''')
>>> search = catalog.validator("search")
>>> [e.message for e in search.validate({"query": "x", "limt": 5})]
["unexpected argument 'limt' (did you mean 'limit'?)"]
>>> search.is_valid({"query": "json schema"})
True
"""

from . import errors
from ._toolschema import (
    Adapted,
    ArgumentError,
    Catalog,
    Change,
    Diagnostic,
    Validator,
    __version__,
    adapt,
    diff,
    fix,
    lint,
    pin,
    validate_value,
    verify,
)
from .errors import (
    CatalogError,
    Error,
    InvalidArgumentsError,
    JSONError,
    LockError,
    NotJSONError,
    SchemaError,
    UncheckedError,
    UnknownToolError,
    UsageError,
)

__all__ = [
    "Adapted",
    "ArgumentError",
    "Catalog",
    "CatalogError",
    "Change",
    "Diagnostic",
    "Error",
    "InvalidArgumentsError",
    "JSONError",
    "LockError",
    "NotJSONError",
    "SchemaError",
    "UncheckedError",
    "UnknownToolError",
    "UsageError",
    "Validator",
    "__version__",
    "adapt",
    "diff",
    "errors",
    "fix",
    "lint",
    "pin",
    "validate_value",
    "verify",
]
