"""A message sent before the session has loaded (issue 23, item 0), and MCP servers
starting while the REPL runs (item 5): on prompt_toolkit's pipe input, then in a
real terminal (tmux), where keys typed before the REPL takes over wait in the
terminal's own queue."""

from __future__ import annotations

import os
import pty
import sys
import termios
import time

import pytest
from support.mcp_servers import TOOLBOX, gone
from support.repl_driver import ENTER, SIGINT, drive
from support.tmux import TMUX, dm_cc_pane

from dm_cc.config import config_dir
from dm_cc.ui.early import give_back, keep_enter, typed_early
from dm_cc.ui.repl import WAITING

HELLO = [{"text": "Hello there."}, {"text": "Again."}]
READY = "/help lists commands"


def user_messages(run) -> list[str]:
    return [m.content for m in run.repl.loop.session.messages
            if m.role == "user" and not m.synthetic]


def test_a_message_sent_while_the_session_loads_waits_saying_so_and_is_sent_once(project):
    run = drive(project, HELLO, [(0.2, "hi" + ENTER), (WAITING, ""), ("Hello there.", "")],
                loading=1.0)
    assert not run.errors and run.code == 0, run.errors
    assert run.screen.index(WAITING) < run.screen.index(READY) < run.screen.index("Hello there.")
    assert user_messages(run) == ["hi"]


def test_ctrl_c_while_it_waits_keeps_the_message_unsent_and_gives_it_back(project):
    run = drive(project, HELLO, [(0.2, "hi" + ENTER), (WAITING, SIGINT),
                                 ("not sent: the session was still loading", ""),
                                 ("> hi", ENTER), ("Hello there.", "")], loading=1.0)
    assert not run.errors and run.code == 0, run.errors
    assert user_messages(run) == ["hi"]


def test_enter_typed_before_the_repl_takes_over_stays_enter():
    """A terminal in its ordinary mode turns Enter's carriage return into a newline as
    it queues it, and prompt_toolkit reads a newline as "insert a new line": the
    early prompt keeps it a carriage return until the REPL takes over; a key queued
    before then stays as typed."""
    main, side = pty.openpty()
    try:
        before = termios.tcgetattr(side)
        assert before[0] & termios.ICRNL
        keep_enter(side)
        assert not termios.tcgetattr(side)[0] & termios.ICRNL
        os.write(main, b"hi\r")
        time.sleep(0.2)                        # the terminal takes the keys in (a kernel worker)
        give_back()                            # the REPL takes over: settings as they were
        assert termios.tcgetattr(side) == before
        termios.tcsetattr(side, termios.TCSANOW, _raw(termios.tcgetattr(side)))
        assert os.read(side, 10) == b"hi\r"   # as typed: Enter
    finally:
        os.close(main)
        os.close(side)


def test_lines_typed_before_the_first_prompt_are_taken_with_enter_as_typed():
    """Typed ahead at the shell, before dm_cc drew its first prompt: the terminal
    queued each Enter as a newline. keep_enter takes the whole lines out, Enter
    back to a carriage return; a line not ended yet stays in the queue, after them."""
    main, side = pty.openpty()
    try:
        os.write(main, b"hi\rsecond\rmore")
        time.sleep(0.2)                        # the terminal takes the keys in
        keep_enter(side)
        assert typed_early() == "hi\rsecond\r" and typed_early() == ""
        give_back()
        termios.tcsetattr(side, termios.TCSANOW, _raw(termios.tcgetattr(side)))
        assert os.read(side, 10) == b"more"
    finally:
        os.close(main)
        os.close(side)


def _raw(attributes: list) -> list:
    """What prompt_toolkit sets: no echo, no line editing (and ICRNL left alone)."""
    attributes[3] &= ~(termios.ECHO | termios.ICANON)
    return attributes


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed")
def test_in_a_terminal_early_enter_sends_and_mcp_trouble_never_stops_the_repl(project):
    """Start 1: "hi" and Enter typed at the first prompt, before the REPL has taken
    over (a large policy makes the session load slowly): the message waits, saying so,
    and is sent once loaded; a typo in one MCP server's entry skips that server with
    its file:line. Start 2: a message waits for a server still starting, Ctrl-C
    cancels it, and Ctrl-D leaves while the server still starts: no traceback, and
    the server is stopped. (The second start is begun by Enter at the shell's
    `read`: the terminal's settings were put back.) Start 3: a message typed ahead
    at the shell, before dm_cc has drawn anything, is sent once it has loaded."""
    config = config_dir() / "config.yaml"
    config.parent.mkdir(parents=True)
    (config_dir() / "policy.yaml").write_text("rules:\n" + "".join(
        f"  - {{permission: bash, pattern: 'tool{n} --flag *', action: ask}}\n"
        for n in range(20000)))   # ~1 s to load: "hi" and Enter land before it is done
    config.write_text("mcp:\n  servers:\n    typo: {comand: mcp-server-typo}\n")
    log = project.parent / "starts.log"
    pane = dm_cc_pane(project, HELLO, width=200, starts=3)
    try:
        pane.wait_for("dm_cc>")
        pane.type("hi")
        pane.send("Enter")
        screen = pane.wait_for(WAITING)
        screen = pane.wait_for("Hello there.")
        assert f"! MCP server typo is skipped: {config}:3: mcp.servers.typo: unknown key " \
               "'comand'" in screen
        assert screen.index(READY) < screen.index("Hello there.")
        rows = pane.visible()     # the first prompt was drawn over, the message kept once
        assert [row.rstrip() for row in rows if row.endswith("> hi")] == ["dm_cc> hi"], rows
        assert "… " not in screen  # sent, not a new line in the input box
        config.write_text(f"sandbox: off\nmcp:\n  servers:\n    box: {{command: {sys.executable}, "
                          f"args: [{TOOLBOX}, stdio, --log, {log}, --start-delay, '30']}}\n")
        (config_dir() / "policy.yaml").write_text("rules: []\n")
        pane.send("C-d")

        pane.again()
        pane.wait_for(READY)
        pane.type("again")
        pane.send("Enter")
        pane.wait_for("! waiting for MCP server box to list its tools")
        deadline = time.monotonic() + 20
        while not log.exists():                  # its process runs (and sleeps)
            assert time.monotonic() < deadline
            time.sleep(0.05)
        pane.send("C-c")
        pane.wait_for("turn cancelled\nbuild>")   # the prompt is back: Ctrl-D reaches it
        pane.send("C-d")
        screen = pane.wait_for("[dm_cc exited 0]")
        assert "Traceback" not in screen and "Event loop is closed" not in screen, screen
        [pid] = map(int, log.read_text().split())
        assert gone(pid, within=1)

        config.write_text("sandbox: off\n")
        pane.again()                             # Enter at the shell's `read`, and at once …
        pane.type("typed ahead")                 # … a message typed before dm_cc has started
        pane.send("Enter")
        screen = pane.wait_for("Hello there.")
        assert "dm_cc> typed ahead\n" in screen and "… " not in screen   # sent, once
    finally:
        pane.close()
