"""A shell command as the approval question shows it: each line of shell code led by
``$``, a here-document's body as data -- under its command, in a gutter, never led
by ``$`` -- and its delimiter line as written:

    $ cat > run.sh <<'EOF'
      │ #!/bin/sh
      │ make test
      EOF
    $ chmod +x run.sh

Where the bodies are is the shell analysis' own reading of the line
(:func:`dm_cc.permissions.heredoc_bodies`, the scan the judge parses after), not a
pattern of ours: what is shown as data is what was judged as data, and a line that
reading does not place in a body is code. A body's text keeps its full contrast
(``bash <<EOF`` makes it a script); only the gutter is dim. Lines are split where
bash splits them, at newlines only (a carriage return is shown as ``^M``).

A long body shows its first :data:`BODY_HEAD` and last :data:`BODY_TAIL` lines, a
long command its first and last lines, and each says how many are hidden and that
``v`` views all (the question's pager shows every line: ``whole``).
"""

from __future__ import annotations

from collections.abc import Iterator

from dm_cc.permissions import heredoc_bodies
from dm_cc.ui.render import Line

BODY_HEAD = 8        # a long here-document body: its first lines …
BODY_TAIL = 3        # … and its last ones
COMMAND_HEAD = 40    # a long command (once its bodies are cut): its first lines …
COMMAND_TAIL = 10    # … and its last ones
VIEW = "v views all"


def command_lines(command: str, *, whole: bool = False) -> Iterator[Line]:
    """``command`` as the question shows it (see the module docstring); ``whole``: every
    line, nothing cut."""
    rows = _rows(command, whole)
    if whole or len(rows) <= COMMAND_HEAD + COMMAND_TAIL + 1:
        yield from rows
        return
    yield from rows[:COMMAND_HEAD]
    yield [("class:dim", f"  … {len(rows) - COMMAND_HEAD - COMMAND_TAIL} more lines: {VIEW}")]
    yield from rows[-COMMAND_TAIL:]


def _rows(command: str, whole: bool) -> list[Line]:
    lines = command.split("\n")
    if len(lines) > 1 and not lines[-1]:
        lines.pop()                       # the newline that ends the last line
    try:
        bodies = heredoc_bodies(command)
    except Exception:  # noqa: BLE001 - for display only: every line shown as code then
        bodies = []
    rows: list[Line] = []
    at = 0
    for body in bodies:
        if body.first < at or body.first > len(lines):   # not as expected: code it is
            continue
        rows += [_code(text) for text in lines[at:body.first]]
        data = lines[body.first:body.end]
        cut = not whole and len(data) > BODY_HEAD + BODY_TAIL + 1
        shown = [*data[:BODY_HEAD], None, *data[-BODY_TAIL:]] if cut else data
        for text in shown:
            rows.append([("class:dim", "    │ "), ("", text)] if text is not None else
                        [("class:dim", f"    │ … {len(data) - BODY_HEAD - BODY_TAIL} more "
                                       f"lines: {VIEW}")])
        at = body.end
        if body.closed and body.end < len(lines):
            rows.append([("class:dim", "    "), ("class:dim", lines[body.end])])
            at += 1
    rows += [_code(text) for text in lines[at:]]
    return rows or [_code("")]


def _code(text: str) -> Line:
    return [("class:tool", f"  $ {text}")]
