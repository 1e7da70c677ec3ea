"""Type stubs of the toolschema module (the extension `toolschema._toolschema`)."""

import os
from typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, Tuple, Union

from . import errors as errors
from .errors import (
    CatalogError as CatalogError,
    Error as Error,
    InvalidArgumentsError as InvalidArgumentsError,
    JSONError as JSONError,
    LockError as LockError,
    NotJSONError as NotJSONError,
    SchemaError as SchemaError,
    UncheckedError as UncheckedError,
    UnknownToolError as UnknownToolError,
    UsageError as UsageError,
)

__version__: str

JSON = Union[None, bool, int, float, str, List["JSON"], Dict[str, "JSON"]]
"""A JSON value as Python holds it (tuples are read as arrays too)."""
Arguments = Union[Mapping[str, Any], JSON, bytes]
"""Arguments as a Python value, or as JSON text (str or bytes)."""
CatalogLike = Union["Catalog", str, Sequence[Mapping[str, Any]]]
"""A Catalog, its JSON text, or a list of tool dicts."""

class ArgumentError:
    """One reason arguments do not fit the schema."""

    @property
    def path(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def keyword(self) -> str: ...
    @property
    def pointer(self) -> str: ...

class Validator:
    """A tool's schemas compiled once."""

    @property
    def name(self) -> str: ...
    def validate(self, arguments: Arguments) -> List[ArgumentError]: ...
    def is_valid(self, arguments: Arguments) -> bool: ...
    def validate_output(
        self, structured_content: Optional[Arguments], is_error: bool = False
    ) -> List[ArgumentError]: ...

class Catalog:
    """A list of MCP tools, in any shape the command reads."""

    @staticmethod
    def from_json(text: Union[str, bytes], file: str = "<input>") -> "Catalog": ...
    @staticmethod
    def from_file(path: Union[str, "os.PathLike[str]"]) -> "Catalog": ...
    @staticmethod
    def from_tools(tools: Sequence[Mapping[str, Any]]) -> "Catalog": ...
    @property
    def file(self) -> str: ...
    @property
    def names(self) -> List[str]: ...
    @property
    def left_out(self) -> List[str]: ...
    @property
    def text(self) -> str: ...
    def tool(self, name: str) -> Dict[str, Any]: ...
    def __getitem__(self, name: str) -> Dict[str, Any]: ...
    def __contains__(self, name: object) -> bool: ...
    def __len__(self) -> int: ...
    def validator(
        self,
        name: str,
        *,
        unknown_arguments: Literal["allow", "reject"] = "allow",
        assert_format: bool = False,
    ) -> Validator: ...

class Diagnostic:
    """One finding of lint."""

    @property
    def file(self) -> str: ...
    @property
    def code(self) -> str: ...
    @property
    def severity(self) -> Literal["critical", "warning", "info"]: ...
    @property
    def message(self) -> str: ...
    @property
    def tool(self) -> Optional[str]: ...
    @property
    def pointer(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def column(self) -> int: ...
    @property
    def fix(self) -> Optional[Literal["safe", "unsafe"]]: ...

def lint(
    catalog: CatalogLike,
    *,
    select: Optional[Sequence[str]] = None,
    ignore: Optional[Sequence[str]] = None,
    target: Optional[Sequence[str]] = None,
) -> List[Diagnostic]: ...
def fix(
    catalog_text: str,
    *,
    unsafe_fixes: bool = False,
    select: Optional[Sequence[str]] = None,
    ignore: Optional[Sequence[str]] = None,
    target: Optional[Sequence[str]] = None,
    file: str = "<input>",
) -> str: ...

class Adapted:
    """A catalog's tools written for a model provider."""

    @property
    def target(self) -> str: ...
    @property
    def tools(self) -> List[Dict[str, Any]]: ...
    @property
    def losses(self) -> List[Dict[str, Any]]: ...
    @property
    def names(self) -> Dict[str, str]: ...
    @property
    def failures(self) -> List[str]: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def restore(self, tool: str, arguments: Arguments) -> Tuple[str, Dict[str, Any]]: ...

def adapt(
    catalog: CatalogLike,
    target: Literal["openai", "openai-strict", "anthropic", "gemini", "gemini-openapi"],
) -> Adapted: ...

class Change:
    """One difference between two catalogs."""

    @property
    def tool(self) -> str: ...
    @property
    def class_(self) -> Literal["breaking", "security", "compatible"]: ...
    @property
    def code(self) -> str: ...
    @property
    def pointer(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def before(self) -> Optional[JSON]: ...
    @property
    def after(self) -> Optional[JSON]: ...

def diff(old: CatalogLike, new: CatalogLike) -> List[Change]: ...
def pin(catalog: CatalogLike, key: str, lock: Optional[str] = None) -> str: ...
def verify(catalog: CatalogLike, lock: str, key: str) -> List[Change]: ...
def validate_value(
    schema: Union[JSON, bytes],
    instance: Union[JSON, bytes],
    *,
    dialect: Optional[str] = None,
    documents: Optional[Dict[str, JSON]] = None,
) -> List[ArgumentError]: ...
