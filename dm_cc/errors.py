"""Every error dm_cc reports on purpose, in one tree.

    DmccError                     anything dm_cc reports without a traceback
     ├── ConfigError              a file dm_cc reads is wrong; names file:line
     │    ├── PolicyError         a policy file (YAML, schema, inline test, pattern)
     │    ├── AgentFileError      an agent definition (.dm_cc/agents/*.md)
     │    └── SettingsError       a settings file (config.yaml)
     ├── SessionError             a session cannot be found or read
     ├── ApprovalStoreError       the saved approvals cannot be read or changed; names the file
     ├── AuditLogError            the audit log cannot be read or written; names the file
     ├── UndoError                the previous state of a path cannot be kept for undo
     └── UsageError               the command line asks for something impossible

The CLI turns any of these into a message on stderr and exit status 2: dm_cc
refuses to start rather than run with half a policy.
"""

from __future__ import annotations

__all__ = [
    "AgentFileError",
    "ApprovalStoreError",
    "AuditLogError",
    "ConfigError",
    "DmccError",
    "PolicyError",
    "SessionError",
    "SettingsError",
    "UndoError",
    "UsageError",
]


class DmccError(Exception):
    """Base of all errors dm_cc reports as a message rather than a traceback."""


class ConfigError(DmccError):
    """A configuration file is malformed; the message starts with ``file:line``
    (``file:line:column`` where the column says more, as in a YAML syntax error)."""

    def __init__(self, path: str, line: int | None, message: str,
                 column: int | None = None) -> None:
        self.path = path
        self.line = line
        self.column = column
        self.message = message
        where = path if line is None else f"{path}:{line}" if column is None \
            else f"{path}:{line}:{column}"
        super().__init__(f"{where}: {message}")


class PolicyError(ConfigError):
    """A policy file cannot be loaded; nothing of it is used."""


class AgentFileError(ConfigError):
    """An agent definition file cannot be loaded."""


class SettingsError(ConfigError):
    """A settings file (``config.yaml``) cannot be loaded."""


class SessionError(DmccError):
    """A session is unknown or its file is unreadable (a bad line is only a warning)."""


class ApprovalStoreError(DmccError):
    """The saved-approvals file is damaged (it has been moved aside, and the message
    says where), cannot be read or written, or has no approval with a given id. The
    message starts with the file (``file:line`` where JSON gives a line)."""

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.message = message
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")


class AuditLogError(DmccError):
    """The audit log cannot be read or written; the message starts with the file."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}")


class UndoError(DmccError):
    """The undo store cannot keep a path's previous state (a path outside the project,
    a parent that is a symlink, a kind of file it cannot keep, the store's size bound,
    a disk error), or cannot save a step; the message names the path or the file."""


class UsageError(DmccError):
    """The command line is inconsistent (unknown agent, missing file …)."""
