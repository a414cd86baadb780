"""Exceptions of DocAssist.

DocAssistError
 ├── ConfigurationError      bad settings (unknown backend, missing corpus)
 ├── ReplayMissError         a recorded model session has no answer for a request
 ├── ModelError              a model backend failed
 │    ├── ModelUnavailableError  refused, timed out or 5xx after bounded retries -> handoff
 │    └── ModelResponseError     an answer that is not what the API promises (never retried)
 ├── StorageError            the database refused or failed
 │    ├── StoreClosedError       the store was closed (the process is ending)
 │    ├── ConcurrentUpdateError  state changed under us (version check)
 │    ├── DuplicateEventError    the platform event was already answered
 │    └── StorageUnavailableError  writes are impossible now -> "can't save" reply, nothing runs
 │         ├── StorageBusyError      another writer held the lock past the bounded wait
 │         │    └── AckDeadlineError  an event not stored within the platform's ack time
 │         ├── StorageReadOnlyError  the file or connection is read-only
 │         └── StorageFullError      no space: disk full or the database's page limit
 └── ToolError               a tool argument or state check failed
      ├── ToolValidationError    arguments invalid -> `invalid_arguments`
      └── ToolStateError         state lacks what the tool needs -> `clarification_needed`
"""


class DocAssistError(Exception):
    """Base of every error DocAssist raises on purpose."""


class ConfigurationError(DocAssistError):
    pass


class ReplayMissError(DocAssistError):
    """Not a ModelError on purpose: a miss must surface, never turn into a polite handoff."""


class ModelError(DocAssistError):
    pass


class ModelUnavailableError(ModelError):
    pass


class ModelResponseError(ModelError):
    """`body` is what the server sent, kept so a selector can record it as a parse error."""

    def __init__(self, message: str, body: str = "") -> None:
        super().__init__(message)
        self.body = body


class StorageError(DocAssistError):
    pass


class StoreClosedError(StorageError):
    """Raised by a store used after `close()` (the process is ending: background threads
    stop), so callers outside storage need not know the driver's own exception for it
    (sqlite3.ProgrammingError, psycopg's)."""


class ConcurrentUpdateError(StorageError):
    pass


class DuplicateEventError(StorageError):
    pass


class StorageUnavailableError(StorageError):
    """The database cannot take writes right now; a turn that cannot be recorded must not act."""


class StorageBusyError(StorageUnavailableError):
    pass


class AckDeadlineError(StorageBusyError):
    """The event was not stored in time to acknowledge it (the platform gets a 503 and
    retries). Its write goes on: stored later, it is answered; a retry is then a duplicate."""


class StorageReadOnlyError(StorageUnavailableError):
    pass


class StorageFullError(StorageUnavailableError):
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
