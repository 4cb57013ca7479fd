"""An import's own inline tests, decided by the policy it wrote, before it is written.

Each test an importer writes pins what the SOURCE tool decides. The import may be
stricter than its source (a deny written wider, an ask Claude Code asks before its
allows), never looser; so a test the import decides more strictly would fail
``dm_cc policy test`` right after the import. :func:`settle_tests` decides every test
as dm_cc will and:

* the same decision: the test stays as it is;
* stricter: the test keeps its place but expects what dm_cc decides, its comment
  saying what the source decides and which rule makes dm_cc stricter;
* looser: a bug of the importer. It is returned, and the import fails rather than
  write a policy looser than its source.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import NamedTuple

from dm_cc.permissions import STRICTNESS
from dm_cc.policy.importers.model import Imported, InlineTestEntry

#: How the imported policy decides a test: (its action, what decided it, as words)
Decide = Callable[[InlineTestEntry], tuple[str, str]]

#: The source tools as a person names them (the ``kind`` of an import)
SOURCE_NAMES = {"claude": "Claude Code", "opencode": "opencode", "codex": "Codex",
                "gemini": "Gemini CLI"}


class Settled(NamedTuple):
    """What :func:`settle_tests` found, one line per test."""

    stricter: list[str]    # now expecting what dm_cc decides
    looser: list[str]      # the import must fail


def settle_tests(imported: Imported, decide: Decide) -> Settled:
    """Make ``imported``'s tests expect what the imported policy decides where that is
    stricter than the source; say which, and which it decides more loosely."""
    source = SOURCE_NAMES.get(imported.kind, imported.kind)
    settled = Settled([], [])
    for index, test in enumerate(imported.tests):
        got, why = decide(test)
        if got == test.expect:
            continue
        line = f"{shown(test)}: {source} decides {test.expect}, the imported policy {got} " \
               f"({why})"
        if STRICTNESS[got] < STRICTNESS[test.expect]:
            settled.looser.append(line)
        else:
            settled.stricter.append(line)
            imported.tests[index] = replace(test, expect=got, comment=(
                f"{source} decides {test.expect} (stricter here because {why})"))
    return settled


def shown(test: InlineTestEntry) -> str:
    """A test as the report names it."""
    agent = f" (agent {test.agent})" if test.agent else ""
    name = f" [{test.name}]" if test.name else ""
    return f"test {test.tool} {test.input!r}{agent}{name}"
