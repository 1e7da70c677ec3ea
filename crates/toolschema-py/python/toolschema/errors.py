"""The exceptions toolschema raises.

Every one derives from :class:`Error`. Each also derives from the built-in exception a Python
program would expect (``ValueError`` for bad input, ``LookupError`` for an unknown tool), so
code that catches those keeps working.
"""

from typing import List, Optional


class Error(Exception):
    """Base class of every toolschema exception."""


class JSONError(Error, ValueError):
    """A JSON text that is not JSON.

    ``file``, ``line`` and ``column`` (1-based, in characters) say where; ``str()`` reads
    ``file:line:column: invalid JSON: ...``, as the command prints it.
    """

    file: str
    line: int
    column: int

    def __init__(self, message: str, file: str = "", line: int = 0, column: int = 0) -> None:
        super().__init__(message)
        self.file = file
        self.line = line
        self.column = column


class NotJSONError(Error, TypeError, ValueError):
    """A Python value that has no JSON form: a set, a float NaN or infinity, a dict key that is
    not a string, a string that is not Unicode, or nesting past the depth JSON is read to
    (which a list holding itself reaches)."""


class CatalogError(Error, ValueError):
    """A catalog that cannot be read, or a tool of it that breaks a rule.

    ``file`` names the catalog; ``line`` and ``column`` say where, when known.
    """

    file: str
    line: Optional[int]
    column: Optional[int]

    def __init__(
        self,
        message: str,
        file: str = "",
        line: Optional[int] = None,
        column: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        self.file = file
        self.line = line
        self.column = column


class UnknownToolError(Error, LookupError):
    """A tool name the catalog does not have; ``suggestion`` is the closest one it does."""

    name: str
    suggestion: Optional[str]

    def __init__(self, message: str, name: str = "", suggestion: Optional[str] = None) -> None:
        super().__init__(message)
        self.name = name
        self.suggestion = suggestion

    def __str__(self) -> str:
        # LookupError would quote the message as a key.
        return str(self.args[0]) if self.args else ""


class SchemaError(Error, ValueError):
    """A schema that cannot be compiled, such as one whose ``$ref`` names a document that is
    not in the catalog: nothing is ever fetched."""


class UncheckedError(Error):
    """A value that could not be checked at all: neither valid nor invalid.

    For example a schema that compares numbers exactly, and a number past what can be compared.
    A caller must not treat it as valid.
    """


class InvalidArgumentsError(Error, ValueError):
    """Arguments that break their schema where a valid call is needed (see ``Adapted.restore``).

    ``errors`` holds the reasons.
    """

    errors: List[object]

    def __init__(self, message: str, errors: Optional[List[object]] = None) -> None:
        super().__init__(message)
        self.errors = list(errors or [])


class UsageError(Error, ValueError):
    """An option value toolschema does not know: a rule code, a provider profile."""


class LockError(Error, ValueError):
    """A lock file that cannot be read, or that has no pins under the key given."""
