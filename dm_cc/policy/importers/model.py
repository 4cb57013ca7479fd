"""What an importer produces: plain data, rendered by render.py; and what every
importer raises for a source rule it cannot express (:class:`Unexpressible`)."""

from __future__ import annotations

from dataclasses import dataclass, field


class Unexpressible(Exception):
    """A source rule dm_cc cannot say; the message says why. Raised and caught
    inside an importer, which reports the rule as not imported and goes on."""


@dataclass(frozen=True, slots=True)
class Entry:
    """A rule, or (``permission`` None) a comment standing where a source rule that
    dm_cc cannot express was. ``comment`` names the source rule either way."""

    permission: str | None
    pattern: str = "*"
    action: str = "ask"
    comment: str | None = None


@dataclass(frozen=True, slots=True)
class InlineTestEntry:
    tool: str
    input: str
    expect: str
    agent: str | None = None
    name: str | None = None


@dataclass(slots=True)
class Imported:
    """A policy read from another tool's file."""

    source: str                       # the file, as shown
    kind: str                         # "claude", "opencode"
    header: list[str] = field(default_factory=list)     # comment lines at the top
    rules: list[Entry] = field(default_factory=list)
    agents: dict[str, list[Entry]] = field(default_factory=dict)
    tests: list[InlineTestEntry] = field(default_factory=list)
    #: what was not imported (or imported only approximately), one line each
    dropped: list[str] = field(default_factory=list)

    def drop(self, entries: list[Entry], message: str) -> None:
        """Keep ``message`` as a comment in place and in the report."""
        self.dropped.append(message)
        entries.append(Entry(None, comment=f"NOT IMPORTED: {message}"))

    def approximate(self, message: str) -> None:
        self.dropped.append(message)
