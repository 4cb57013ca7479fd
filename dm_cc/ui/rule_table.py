"""Rules in columns that fit the terminal: what ``/permissions`` lists them with.

    rule_rows(rules, width, numbers={rule: 1}, home="/home/ana", files=True)
    wrapped("a sentence", width, "class:dim", "  ")

A column is as wide as its widest cell; the permission's at most
:data:`PERMISSION_AT_MOST` (a longer name puts the pattern on the next line, under
it); what does not fit after the pattern (the rule's line in its file, its reason)
goes under the pattern, wrapped. No line is as wide as ``width``: a word too long
for a line (a path, a pattern) is cut rather than left to the terminal to wrap.
What a file brings is escaped when it is not printable (:func:`shown`). Lines are
``(text, style)`` pairs; plain text, no prompt_toolkit.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dm_cc.permissions import Rule

Line = tuple[str, str]          # (text, style)

PERMISSION_AT_MOST = 16   # the permission column's width at most
NUMBER = 4                # the number column (``  12``)
TAIL = 12                 # room kept after the pattern column for the line and a reason


def rule_rows(rules: Sequence[Rule], width: int, *, numbers: Mapping[Rule, int] = {},
              home: str = "", files: bool = False) -> list[Line]:
    """``rules`` in columns: number (``numbers``), action, permission, pattern, then
    ``:line`` and ``# reason``. Rules in a row that share a reason have it once, above
    them; ``files``: rules from several files, each file named above its rules (its
    ``home`` written ``~``)."""
    if not rules:
        return []
    permission = min(max(len(shown(r.permission)) for r in rules), PERMISSION_AT_MOST)
    head = NUMBER + 1 + 5 + 1 + permission + 1
    widest = max(width - 1 - head - TAIL, 16)   # a longer pattern leaves its column
    pattern = max((len(text) for r in rules if len(text := quoted(r)) <= widest), default=0)
    lines: list[Line] = []
    last_file = None
    for run in _runs(rules):
        file = file_of(run[0])
        if files and file != last_file:
            lines += wrapped(at_home(shown(file), home), width, "class:dim", "  ")
        last_file = file
        shared = run[0].reason if len(run) > 1 else None
        if shared:
            lines += wrapped(f"# {shown(shared)}", width, "class:dim", " " * (NUMBER + 2))
        for rule in run:
            lines += _row(rule, numbers.get(rule), permission, pattern, width,
                          reason=None if shared else rule.reason)
    return lines


def _runs(rules: Sequence[Rule]) -> list[list[Rule]]:
    """Rules grouped as they come: one group per file and reason."""
    runs: list[list[Rule]] = []
    for rule in rules:
        if runs and (runs[-1][0].reason, file_of(runs[-1][0])) == (rule.reason, file_of(rule)):
            runs[-1].append(rule)
        else:
            runs.append([rule])
    return runs


def _row(rule: Rule, number: int | None, permission: int, pattern: int, width: int, *,
         reason: str | None) -> list[Line]:
    name = shown(rule.permission)
    cells = f"{number or '':>{NUMBER}} {rule.action:<5} {name:<{permission}} "
    tail = "  ".join(part for part in (f":{line_of(rule)}" if line_of(rule) else "",
                                       f"# {shown(reason)}" if reason else "") if part)
    style = f"class:{rule.action}"
    if len(cells) > width // 2:   # a long permission: the pattern under it
        return [(cells.rstrip(), style)] + \
            _rest(" " * (NUMBER + 7), quoted(rule), tail, 0, width, style)
    return _rest(cells, quoted(rule), tail, pattern, width, style)


def _rest(lead: str, text: str, tail: str, pattern: int, width: int, style: str) -> list[Line]:
    """A row from its pattern on (``lead``: what comes before it): the pattern in its
    column, then the tail; what does not fit goes under the pattern, wrapped."""
    under = " " * len(lead)
    if not tail:
        return wrapped(text, width, style, under, lead)
    for row in (f"{lead}{text:<{pattern}}  {tail}", f"{lead}{text}  {tail}"):
        if len(row) < width:
            return [(row, style)]
    return wrapped(f"{text}  {tail}", width, style, under, lead)


# ---------------------------------------------------------------------- text

def file_of(rule: Rule) -> str:
    """The file a rule comes from (its source without ``:line``), or its source
    (``builtin:defaults``, ``approval:apr_…``)."""
    return rule.source.rsplit(":", 1)[0] if line_of(rule) else rule.source


def line_of(rule: Rule) -> str:
    """The rule's line in its file; "" when it comes from none."""
    tail = rule.source.rsplit(":", 1)[-1]
    return tail if tail.isdigit() and ":" in rule.source else ""


def shown(text: str) -> str:
    """``text`` as it may reach a terminal: what is not printable escaped, so that a
    repository's reason cannot break a column or move the cursor."""
    return text if text.isprintable() else json.dumps(text, ensure_ascii=False)[1:-1]


def quoted(rule: Rule) -> str:
    return f'"{shown(rule.pattern)}"'


def at_home(path: str, home: str) -> str:
    """``path`` with the home directory written ``~``."""
    return "~" + path[len(home):] if home and path.startswith(home + "/") else path


def wrapped(text: str, width: int, style: str = "", indent: str = "",
            first: str | None = None) -> list[Line]:
    """``text`` in lines narrower than ``width``: the first led by ``first`` (default
    ``indent``), the others by ``indent``; a word too long for a line is cut."""
    lines = textwrap.wrap(text, max(width - 1, 20),
                          initial_indent=indent if first is None else first,
                          subsequent_indent=indent, break_long_words=True,
                          break_on_hyphens=False) if text else [""]
    return [(line, style) for line in lines]
