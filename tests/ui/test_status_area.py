"""The status area under the spinner: a running command's last lines (Tail), each
fit to the terminal's width."""

from __future__ import annotations

import io
import time

from prompt_toolkit.output.plain_text import PlainTextOutput

from dm_cc.ui.screen import TAIL_CHARS, Screen, Tail


def test_a_tail_is_the_last_lines_as_a_terminal_leaves_them():
    tail = Tail()
    tail.add("one\ntwo\n\x1b[31mred\x1b[0m \x1b]0;title\x07\n")
    tail.add("progress 10%\rprogress 60%\r")
    tail.add("\n\n\tindented\n   \n")
    assert tail.lines(3) == ["red", "progress 60%", "    indented"]
    assert tail.lines() == ["one", "two", "red", "progress 60%", "    indented"]
    tail.add("é" * 3)                    # a line still being printed is shown too
    assert tail.lines(1) == ["ééé"]


def test_a_tail_keeps_only_the_end_of_what_was_printed():
    tail = Tail()
    tail.add("first\n" + "x" * (TAIL_CHARS * 3))
    assert tail.lines() == ["x" * TAIL_CHARS]
    assert Tail().lines() == []


def test_the_lines_under_the_spinner_are_cut_to_the_width():
    out = io.StringIO()
    screen = Screen(PlainTextOutput(out))
    screen.busy_since = time.monotonic() - 3
    screen.activity = "running bash"
    line = "  │ " + "word " * 40 + "\x08"
    screen.tick(time.monotonic(), [line, "  │ short"])
    drawn = out.getvalue().replace("\r", "").replace("\x1b[K", "").split("\n")
    assert "running bash 3.0s  (Ctrl-C to cancel)" in drawn[0]
    assert drawn[1].endswith("…") and len(drawn[1]) == 79 and drawn[1].startswith("  │ word")
    assert drawn[2] == "  │ short"
