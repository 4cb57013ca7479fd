"""The table of saved sessions (/sessions, dm_cc sessions list): columns that line up
and a title that takes what the terminal's width leaves."""

from __future__ import annotations

import time
from pathlib import Path

from dm_cc.session import SessionInfo, session_tree
from dm_cc.ui.sessions_text import session_table

NOW = time.time()


def info(number: int, *, agent: str = "build", title: str = "", parent: str | None = None,
         messages: int = 3, updated: float = NOW) -> SessionInfo:
    return SessionInfo(id=f"ses_01a2b3c4d5e{number}_0f1e2d3c", parent_id=parent, title=title,
                       agent=agent, project=Path("/src/shop"), created=updated, updated=updated,
                       messages=messages, path=Path("/nowhere"))


SESSIONS = [info(1, title="fix the failing tests in the payment module", messages=120),
            info(2, agent="explore", title="find auth (@explore)",
                 parent="ses_01a2b3c4d5e1_0f1e2d3c"),
            info(3, agent="general-purpose", title='say "hi"\x1b[2J', messages=1,
                 updated=NOW - 400 * 86400)]


def test_columns_line_up_under_the_header_whatever_the_indent_and_names():
    head, *rows = session_table(session_tree(SESSIONS), current=SESSIONS[0].id)
    assert head.split() == ["session", "last", "active", "agent", "msgs", "title"]
    assert rows[0].startswith("* ses_01a2b3c4d5e1_0f1e2d3c ")
    assert rows[1].startswith("   └ ses_01a2b3c4d5e2_0f1e2d3c ")
    assert rows[2].startswith("  ses_01a2b3c4d5e3_0f1e2d3c ")
    for word in ("last", "agent", "title"):      # every cell starts where its header does
        at = head.index(word)
        assert all(row[at - 1] == " " and row[at] != " " for row in rows), word
    right = head.index("msgs") + len("msgs")     # counts end where theirs does
    assert [row[:right].split()[-1] for row in rows] == ["120", "3", "1"]
    assert rows[0][head.index("agent"):].startswith("build ")
    assert rows[2][head.index("last"):].startswith(time.strftime(
        "%Y-%m-%d", time.localtime(NOW - 400 * 86400)))   # another year: with its year
    assert rows[0][head.index("last"):].startswith(time.strftime("%m-%d %H:%M", time.localtime(NOW)))
    assert rows[2].endswith('"say \\"hi\\"\\u001b[2J"')   # a control character is shown


def test_the_title_takes_what_the_width_leaves_and_columns_go_when_it_is_narrow():
    tree = session_tree(SESSIONS)
    wide = session_table(tree, width=200)
    assert all(len(line) <= 200 for line in wide)
    assert wide[1].endswith('"fix the failing tests in the payment module"')
    at_100 = session_table(tree, width=100)
    assert all(len(line) <= 100 for line in at_100) and "agent" in at_100[0]
    assert at_100[1].endswith("…")
    at_80 = session_table(tree, width=80)     # the agents' column goes first
    assert all(len(line) <= 80 for line in at_80)
    assert at_80[0].split() == ["session", "last", "active", "msgs", "title"]
    at_60 = session_table(tree, width=60)     # then the time
    assert at_60[0].split() == ["session", "msgs", "title"]
    assert all(len(line) <= 60 for line in at_60)
    assert at_60[1].split()[1:3] == ["120", '"fix']


def test_where_names_the_project_and_an_unlisted_parent():
    orphan = info(4, parent="ses_000000000000_deadbeef", title="lost")
    lines = session_table(session_tree([SESSIONS[0], orphan]), where=True)
    assert lines[1].endswith("(/src/shop)")
    assert lines[2].endswith('"lost"  (/src/shop; child of ses_000000000000_deadbeef)')
