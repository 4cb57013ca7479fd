"""The REPL's output: streamed text, whole styled lines, and a status area (the
spinner, and under it a line per running subagent and a running command's last
lines, :class:`Tail`) that is erased before anything else is written.

Everything goes to prompt_toolkit's output of the current app session (a real
terminal, or the pipe/plain-text output tests create), never to ``print``.
Control characters are shown, never acted on (:func:`visible`: a backspace is
``^H``): the model's reply, a file's name or a diff of what a command wrote cannot
move the cursor back over what was printed, nor restyle the terminal (the output
itself only turns an ESC into ``?``: a backspace or a carriage return went through).
While a prompt or question is on screen, lines are printed above it; while a
question is open (:meth:`Screen.hold`), what others write (a subagent's calls, a
background answer) waits until it is answered, so nothing comes between the
question and its keys.

The model's thinking (:meth:`Screen.think`) is not printed as it streams: the status
area shows its last line, dimmed, under the spinner; when anything else is written
(the answer's text, a tool call, the turn's end: :meth:`Screen.fold`) it becomes one
dim line, ``✻ thought for 3.2 s · Ctrl-O shows it`` (:mod:`dm_cc.ui.thinking`).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Sequence

from prompt_toolkit.application import get_app_or_none, run_in_terminal
from prompt_toolkit.application.current import get_app_session
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.output import Output
from prompt_toolkit.shortcuts import print_formatted_text
from prompt_toolkit.styles import Style
from prompt_toolkit.utils import get_cwidth

STYLE = Style.from_dict({
    "dim": "#888888",
    "tool": "bold",
    "allow": "#5fae5f",
    "deny": "#d75f5f bold",
    "ask": "#d7af5f bold",
    "add": "#5fae5f",
    "del": "#d75f5f",
    "hunk": "#5f87af",
    "error": "#d75f5f",
    "notice": "#d7af5f",
    "agent": "#af87d7 bold",
    "task": "#5fafaf",
    "key": "bold",
    "bottom-toolbar": "noreverse bg:#303030 #c0c0c0",
})

Fragments = Sequence[tuple[str, str]]

# What a terminal acts on instead of showing: the C0 controls but the newline and the
# tab (a backspace or a carriage return moves the cursor back over what was printed),
# DEL, the C1 controls, and the bidirectional overrides (they reorder what follows).
_SHOWN = str.maketrans({
    **{chr(code): f"^{chr(code + 64)}" for code in range(32) if chr(code) not in "\t\n"},
    "\x7f": "^?", **{chr(code): "?" for code in range(0x80, 0xA0)},
    **{chr(code): "?" for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}})


def visible(text: str) -> str:
    """``text`` as a terminal shows it, every character there to see (see above)."""
    return text.translate(_SHOWN)


SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
STATUS_LINES = 10      # at most: the spinner and the running subagents under it
THINKING = "✻ "        # leads the thinking's line under the spinner, and its folded line
FOLDED = THINKING + "thought for {seconds:.1f} s · Ctrl-O shows it"
TAIL_LINES = 5         # a running command's last lines under the spinner
TAIL_CHARS = 8192      # of its output kept for them
# What a terminal would take as a command rather than text: CSI (colours, cursor
# moves) and OSC (titles, links) sequences, and any other escape and its next char.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b.?")


class Tail:
    """The last lines a running command printed, as the status area shows them: its
    colours and cursor moves dropped, each line as a terminal would leave it after a
    carriage return (a progress bar redrawn in place is its last state), blank
    lines skipped. Only the end of the output is kept."""

    def __init__(self) -> None:
        self._text = ""

    def add(self, text: str) -> None:
        self._text = (self._text + text)[-TAIL_CHARS:]

    def lines(self, count: int = TAIL_LINES) -> list[str]:
        shown = []
        for line in reversed(_ESCAPES.sub("", self._text).split("\n")):
            line = _after_return(line).expandtabs(4).rstrip()
            if line.strip():
                shown.append(line)
                if len(shown) == count:
                    break
        return shown[::-1]


def _after_return(line: str) -> str:
    """What is left of ``line`` on screen after its carriage returns (the text after
    the last one that has text after it)."""
    parts = [part for part in line.split("\r") if part]
    return parts[-1] if parts else ""


class Screen:
    """Writes to the terminal; keeps track of the cursor column and the status line."""

    def __init__(self, output: Output | None = None) -> None:
        self._output = output
        self.at_line_start = True
        self._status_lines = 0                  # how many lines the status area holds
        self.busy_since: float | None = None   # a turn is running: the spinner may show
        self._activity = ("thinking", 0.0)      # what the turn does now, since when
        self.paused = False                     # a question is on screen: no spinner
        self._last_write = 0.0
        self._held: list[Callable[[], None]] | None = None  # writes kept back by hold()
        self._thought: tuple[float, list[str]] | None = None  # thinking since when, not folded
        self._waiting: tuple[str, float, float] | None = None  # a retry: why, since, until

    @property
    def activity(self) -> str:
        """What the turn does now (``running bash``, ``thinking``): the spinner counts
        its time from when it began, and the turn's beside it once they differ."""
        return self._activity[0]

    @activity.setter
    def activity(self, text: str) -> None:
        if text != self._activity[0]:
            self._activity = (text, time.monotonic())

    def wait(self, reason: str, delay: float) -> None:
        """A model call is retried in ``delay`` seconds: the spinner counts down to it."""
        now = time.monotonic()
        self._waiting = (reason, now, now + delay)

    def _doing(self, now: float) -> str:
        """What the spinner says the turn does: ``rate limited (429), retrying in 6 s ·``
        until this turn's retry is made, else the activity."""
        if self._waiting is not None:
            reason, since, until = self._waiting
            if self.busy_since is not None and since >= self.busy_since and now < until:
                return f"{reason}, retrying in {math.ceil(until - now)} s ·"
        return self.activity

    @property
    def output(self) -> Output:
        return self._output or get_app_session().output

    # ------------------------------------------------------------------ writing

    def stream(self, text: str) -> None:
        """A piece of the model's answer, as it arrives."""
        if not text:
            return
        if self._held is not None:
            self._held.append(lambda: self.stream(text))
            return
        self.fold()
        self.clear_status()
        self.output.write(visible(text.replace("\r\n", "\n")))
        self.output.flush()
        self.at_line_start = text.endswith("\n")
        self._last_write = time.monotonic()

    def line(self, fragments: Fragments | str = "", style: str = "", *,
             now: bool = False) -> None:
        """One whole line (on a line of its own), above any prompt on screen; kept
        back while a question is open, unless ``now`` (the question's own lines)."""
        if self._held is not None and not now:
            self._held.append(lambda: self.line(fragments, style))
            return
        self.fold(now=now)
        parts = [(style, fragments)] if isinstance(fragments, str) else list(fragments)
        if not self.at_line_start:
            parts.insert(0, ("", "\n"))
        self.at_line_start = True
        self._last_write = time.monotonic()
        app = get_app_or_none()
        if app is not None and app.is_running:
            run_in_terminal(lambda: self._print(parts))
        else:
            self.clear_status()
            self._print(parts)

    def think(self, text: str) -> None:
        """A piece of the model's thinking: its last line shows under the spinner."""
        if text:
            since, pieces = self._thought or (time.monotonic(), [])
            self._thought = (since, [*pieces, text])

    def fold(self, *, now: bool = False) -> None:
        """The thinking streamed so far, as one folded line (the whole is in the session);
        ``now``: above a question's lines, as they are."""
        thought, self._thought = self._thought, None
        if thought is not None and "".join(thought[1]).strip():
            self.line(FOLDED.format(seconds=time.monotonic() - thought[0]), "class:dim",
                      now=now)

    def lines(self, texts: Sequence[str], style: str = "") -> None:
        for text in texts:
            self.line(text, style)

    def hold(self) -> None:
        """Keep back what others write until :meth:`release` (a question is open)."""
        if self._held is None:
            self._held = []

    def release(self) -> None:
        """Write what was kept back, in order."""
        held, self._held = self._held or [], None
        for write in held:
            write()

    def _print(self, parts: Fragments) -> None:
        print_formatted_text(FormattedText([(style, visible(text)) for style, text, *_ in parts]),
                             style=STYLE, output=self.output)

    # ------------------------------------------------------------------ the status area

    def tick(self, now: float, below: Sequence[str] = ()) -> None:
        """Draw the spinner, and the lines ``below`` it (running subagents, a running
        command's last lines), each cut to the width, when a turn has been quiet for
        a moment."""
        if self.busy_since is None or self.paused or not self.at_line_start \
                or now - self._last_write < 0.25:
            return
        elapsed = now - self.busy_since
        own = now - max(self.busy_since, self._activity[1])
        took = f"{own:.1f}s · turn {elapsed:.1f}s" if elapsed - own >= 1 else f"{elapsed:.1f}s"
        frame = SPINNER[int(elapsed * 10) % len(SPINNER)]
        size = self.output.get_size()
        thought = self._thinking_line()   # the model's thinking, its last line, dimmed
        room = max(1, min(STATUS_LINES, size.rows - 2) - 1 - bool(thought))
        if len(below) > room:
            below = [*below[: room - 1], f"  … and {len(below) - room + 1} more"]
        if thought:
            below = [thought, *below]
        lines = [f"{frame} {self._doing(now)} {took}  (Ctrl-C to cancel)", *below]
        self.clear_status()
        self.output.write_raw("\r\x1b[K")
        for number, line in enumerate(lines):
            if number:
                self.output.write_raw("\r\n\x1b[K")
            dim = bool(thought) and number == 1
            if dim:
                self.output.set_attributes(STYLE.get_attrs_for_style_str("class:dim"),
                                           self.output.get_default_color_depth())
            self.output.write(fit(visible(line), size.columns - 1))   # a wrapped line would stay
            if dim:
                self.output.reset_attributes()
        self.output.flush()
        self._status_lines = len(lines)

    def _thinking_line(self) -> str:
        """``✻ thinking: <its last line>`` while the model thinks, else ""."""
        if self._thought is None:
            return ""
        lines = [line for line in "".join(self._thought[1]).splitlines() if line.strip()]
        return f"  {THINKING}thinking: {lines[-1].strip()}" if lines else ""

    def clear_status(self) -> None:
        """Erase the status area; the cursor goes back to where it began."""
        if self._status_lines:
            up = f"\x1b[{self._status_lines - 1}A" if self._status_lines > 1 else ""
            self.output.write_raw(f"\r{up}\x1b[J")
            self.output.flush()
            self._status_lines = 0


def fit(line: str, columns: int) -> str:
    """``line`` cut to ``columns`` terminal cells (wide characters take two)."""
    if get_cwidth(line) <= columns:
        return line
    cells, kept = 1, []           # one cell for the ellipsis
    for char in line:
        cells += get_cwidth(char)
        if cells > columns:
            break
        kept.append(char)
    return "".join(kept) + "…"
