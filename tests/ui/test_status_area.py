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
    assert "running bash 0.0s · turn 3.0s  (Ctrl-C to cancel)" in drawn[0]
    assert drawn[1].endswith("…") and len(drawn[1]) == 79 and drawn[1].startswith("  │ word")
    assert drawn[2] == "  │ short"


def test_the_spinner_counts_what_runs_from_when_it_began_and_the_turn_beside_it():
    """A command that began 2 s ago in a turn of 12 s (the model thought, a question
    waited) is not said to have run 12 s; a turn doing one thing shows one time."""
    out = io.StringIO()
    screen = Screen(PlainTextOutput(out))
    now = time.monotonic()
    screen.busy_since = now - 12
    screen.activity = "running bash"
    screen.tick(now + 2)
    assert "running bash 2.0s · turn 14.0s  (Ctrl-C to cancel)" in out.getvalue()
    screen.activity = "running bash"          # the same activity: its time goes on
    screen.tick(now + 3)
    assert "running bash 3.0s · turn 15.0s" in out.getvalue()
    out.truncate(0)
    screen = Screen(PlainTextOutput(out))
    screen.activity = "thinking"
    screen.busy_since = time.monotonic()
    screen.tick(screen.busy_since + 4)
    assert "thinking 4.0s  (Ctrl-C to cancel)" in out.getvalue()


def test_the_spinner_counts_down_to_a_retry_of_this_turn_only():
    out = io.StringIO()
    screen = Screen(PlainTextOutput(out))
    now = time.monotonic()
    screen.busy_since = now - 1
    screen.activity = "thinking"
    screen.wait("rate limited (429)", 8)
    screen.tick(now + 0.5)
    assert "rate limited (429), retrying in 8 s · " in out.getvalue()
    screen.tick(now + 6.2)
    assert "rate limited (429), retrying in 2 s · " in out.getvalue()
    out.truncate(0)
    screen.tick(now + 8.5)                      # the retry is made: thinking again
    assert "thinking" in out.getvalue() and "retrying" not in out.getvalue()
    screen.wait("overloaded (529)", 30)         # a turn cancelled during the wait …
    screen.busy_since = time.monotonic() + 1    # … and the next one: no countdown
    out.truncate(0)
    screen.tick(screen.busy_since + 1)
    assert "retrying" not in out.getvalue()
