"""Exceptions of DocAssist.

DocAssistError
 ├── ConfigurationError      bad settings (unknown backend, missing corpus)
 ├── ModelError              a model backend failed (after its retries)
 ├── StorageError            the database refused or failed
 │    └── ConcurrentUpdateError  state changed under us (version check)
 └── ToolError               a tool argument or state check failed
      ├── ToolValidationError    arguments invalid -> `invalid_arguments`
      └── ToolStateError         state lacks what the tool needs -> `clarification_needed`
"""


class DocAssistError(Exception):
    """Base of every error DocAssist raises on purpose."""


class ConfigurationError(DocAssistError):
    pass


class ModelError(DocAssistError):
    pass


class StorageError(DocAssistError):
    pass


class ConcurrentUpdateError(StorageError):
    pass


class ToolError(DocAssistError):
    """A tool check failed; `code` is stable and ends up in traces."""

    def __init__(self, code: str, detail: str = "") -> None:
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code
        self.detail = detail


class ToolValidationError(ToolError):
    pass


class ToolStateError(ToolError):
    pass
