"""Saved sessions as a table: what ``/sessions`` and ``dm_cc sessions list`` print.

      session                      last active  agent    msgs  title
    * ses_01a2b3c4d5e6_0f1e2d3c    01-02 10:00  build      12  "fix the tests"
       └ ses_01a2b3c4d5e7_1a2b3c4d 01-02 10:01  explore     3  "find auth (@explore)"

Each column is as wide as its widest cell (a subagent's session indented under the
one that started it), so they line up whatever the agents' names; the title takes
what is left of ``width`` and is cut with ``…`` (None: never cut, for a pipe). Where
that would leave the title fewer than :data:`MIN_TITLE` characters, the agent
column goes, then the time. A time of this year is shown without its year.
Titles are quoted as JSON strings: a title is the start of a message, and a control
character in it is shown, never sent to the terminal.
Plain text (no prompt_toolkit): ``dm_cc sessions list`` imports it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from dm_cc.ui.describe import tree_indent

if TYPE_CHECKING:
    from dm_cc.session import SessionInfo

HEAD = ("session", "last active", "agent", "msgs", "title")
RIGHT = {3}               # columns aligned right (counts)
DROPPED = (2, 1)          # the columns left out, in turn, when the title has too little room
MIN_TITLE = 24            # characters of a title that make dropping a column worth it


def session_table(tree: Sequence[tuple[int, SessionInfo]], width: int | None = None,
                  current: str | None = None, where: bool = False) -> list[str]:
    """The header and one line per session of ``tree`` (``session_tree``'s order and
    depths); ``current`` is marked ``*``; with ``where`` each title is followed by
    the session's project (``child of`` its parent when that is not listed)."""
    this_year = time.localtime().tm_year
    rows = [HEAD, *(_cells(info, depth, where, this_year) for depth, info in tree)]
    marks = ["  ", *("* " if info.id == current else "  " for _depth, info in tree)]
    widths = [max(len(row[column]) for row in rows) for column in range(len(HEAD))]
    kept = list(range(len(HEAD)))
    for column in DROPPED:
        if width is None or width - _fixed(widths, kept) >= MIN_TITLE:
            break
        kept.remove(column)
    room = None if width is None else max(width - _fixed(widths, kept), MIN_TITLE // 2)
    lines = []
    for mark, row in zip(marks, rows, strict=True):
        cells = [f"{row[c]:>{widths[c]}}" if c in RIGHT else f"{row[c]:<{widths[c]}}"
                 for c in kept[:-1]]
        lines.append(mark + "  ".join([*cells, _cut(row[-1], room)]))
    return lines


def _fixed(widths: Sequence[int], kept: Sequence[int]) -> int:
    """The characters a line takes before its title: the mark and the other columns."""
    return 2 + sum(widths[column] + 2 for column in kept[:-1])


def _cells(info: SessionInfo, depth: int, where: bool, this_year: int) -> tuple[str, ...]:
    title = json.dumps(info.title, ensure_ascii=False) if info.title else "(untitled)"
    if where:
        orphan = info.parent_id is not None and depth == 0
        title += f"  ({info.project}" + (f"; child of {info.parent_id}" if orphan else "") + ")"
    when = time.localtime(info.updated)
    shown = time.strftime("%m-%d %H:%M" if when.tm_year == this_year else "%Y-%m-%d %H:%M", when)
    return tree_indent(depth) + info.id, shown, info.agent, str(info.messages), title


def _cut(text: str, limit: int | None) -> str:
    return text if limit is None or len(text) <= limit else text[: limit - 1] + "…"
