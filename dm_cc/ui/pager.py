"""A full-screen pager inside the REPL, for what the screen showed only part of: a
question's whole command and diff (``v`` at the question), a trimmed output
(``/expand``), the model's thinking (Ctrl-O, ``/thinking``).

    await page(lines, "the whole question")     # returns when q or Esc is pressed

Keys: Up/Down or j/k a line, PgUp/PgDn (b/Space) a screen, g/Home the top, G/End
the bottom, q, Esc or Ctrl-C back. Lines are wrapped to the terminal's width, so
nothing is cut off at the right edge; the bottom line says where you are (``lines
161-203 of 254``). It draws on the terminal's alternate screen: what was on screen
before (the question) is there again when it ends. In-process (prompt_toolkit)
rather than ``$PAGER``: it works wherever the REPL does, needs no program that may
be missing, and what it shows goes to no other program.
"""

from __future__ import annotations

from collections.abc import Sequence

from prompt_toolkit.application import Application, get_app
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.key_binding.key_processor import KeyPressEvent
from prompt_toolkit.layout import HSplit, Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.styles import Style, merge_styles
from prompt_toolkit.utils import get_cwidth

from dm_cc.ui.screen import STYLE, visible

Line = list[tuple[str, str]]
BARS = 2            # rows the title and the position line take
# the way out first: on a narrow terminal the bar is cut at its end
KEYS = "q Esc back · ↑↓ j k line · PgUp PgDn b Space screen · g G top/bottom"
_STYLE = merge_styles([STYLE, Style.from_dict({"pager-bar": "reverse"})])


def wrap(line: Sequence[tuple[str, str]], width: int) -> list[Line]:
    """``line`` as the rows of at most ``width`` cells it takes on screen (an empty line
    is one empty row); control characters shown (:func:`visible`), tabs expanded."""
    rows: list[Line] = [[]]
    used = 0
    for style, text, *_ in line:
        piece: list[str] = []
        for char in visible(text).expandtabs(8):
            cells = get_cwidth(char)
            if used + cells > width and used:
                if piece:
                    rows[-1].append((style, "".join(piece)))
                rows.append([])
                piece, used = [], 0
            piece.append(char)
            used += cells
        if piece:
            rows[-1].append((style, "".join(piece)))
    return rows


class View:
    """What the pager shows: ``lines`` wrapped to a width, and the first row on screen."""

    def __init__(self, lines: Sequence[Sequence[tuple[str, str]]]) -> None:
        self.lines = lines
        self.top = 0
        self._wrapped: tuple[int, list[Line]] = (0, [])

    def rows(self, width: int) -> list[Line]:
        if self._wrapped[0] != width:
            self._wrapped = (width, [row for line in self.lines
                                     for row in wrap(line, max(1, width))])
        return self._wrapped[1]

    def scroll(self, by: int, width: int, height: int) -> None:
        """Move ``by`` rows (down when positive), never past either end."""
        last = max(0, len(self.rows(width)) - height)
        self.top = max(0, min(self.top + by, last))

    def screen(self, width: int, height: int) -> list[Line]:
        """The rows on screen, ``top`` first (kept in range as the terminal resizes)."""
        self.scroll(0, width, height)
        return self.rows(width)[self.top:self.top + height]

    def position(self, width: int, height: int) -> str:
        total = len(self.rows(width))
        if not total:
            return "empty"
        return f"lines {self.top + 1}-{min(self.top + height, total)} of {total}"


async def page(lines: Sequence[Sequence[tuple[str, str]]], title: str) -> None:
    """Show ``lines`` full screen until q, Esc or Ctrl-C."""
    view = View(lines)

    def size() -> tuple[int, int]:
        got = get_app().output.get_size()
        return got.columns, max(1, got.rows - BARS)

    def body() -> FormattedText:
        rows = view.screen(*size())
        shown: Line = []
        for number, row in enumerate(rows):
            shown += [("", "\n")] if number else []
            shown += row
        return FormattedText(shown)

    def bottom() -> FormattedText:
        return FormattedText([("class:pager-bar", f" {view.position(*size())} · {KEYS}")])

    keys = KeyBindings()
    moves = {("down",): 1, ("j",): 1, ("c-n",): 1, ("enter",): 1, ("up",): -1, ("k",): -1,
             ("c-p",): -1}
    screens = {("pagedown",): 1, (" ",): 1, ("c-f",): 1, ("pageup",): -1, ("b",): -1,
               ("c-b",): -1}
    ends = {("g",): -1, ("home",): -1, ("G",): 1, ("end",): 1}
    for sequence, rows in moves.items():
        keys.add(*sequence)(lambda event, rows=rows: view.scroll(rows, *size()))
    for sequence, sign in screens.items():
        keys.add(*sequence)(lambda event, sign=sign: view.scroll(sign * size()[1], *size()))
    for sequence, sign in ends.items():
        keys.add(*sequence)(lambda event, sign=sign: view.scroll(sign * 10**9, *size()))

    @keys.add("q", eager=True)
    @keys.add("escape", eager=True)
    @keys.add("c-c", eager=True)
    def back(event: KeyPressEvent) -> None:
        event.app.exit()

    layout = Layout(HSplit([
        Window(FormattedTextControl(lambda: FormattedText([("class:pager-bar", f" {title}")])),
               height=1, style="class:pager-bar"),
        Window(FormattedTextControl(body), wrap_lines=False),
        Window(FormattedTextControl(bottom), height=1, style="class:pager-bar"),
    ]))
    app: Application[None] = Application(layout=layout, key_bindings=keys, style=_STYLE,
                                         full_screen=True)
    app.ttimeoutlen = 0.05   # a lone Esc goes back at once
    await app.run_async(handle_sigint=False)
