"""A command's changes as the REPL asks about them (a command run as a transaction,
:mod:`dm_cc.core.effects`): the question's heading and answers, the list and
the diffs.

    ? The command changed the project. Apply the changes marked ?
        modified README.md
      ? deleted old.txt  (asked about by rule `ask delete **` at ~/.config/dm_cc/policy.yaml:4)
      ✗ deleted keep/a.txt  (denied by rule `deny delete keep/**` at …)
      --- a/old.txt
      +++ /dev/null
      -old

The list is the core's text (``ApprovalRequest.changes``): every change, marked --
``? `` asked, ``✗ `` not applied whatever the answer, two spaces: applied whatever
the answer -- then a unified diff of each text file asked about, and of those that
land whatever the answer (for context), from the first line that is not a
change's. A long list shows the marked changes first and counts the rest; the
diffs are cut to the question's limit.
"""

from __future__ import annotations

from collections.abc import Iterator

from dm_cc.ui.render import Line

QUESTION = "The command changed the project. Apply the changes marked ?"
YES = " apply them  "                            # the legend's y and n (f as usual)
NO = " no, discard them and stop {stops}  "
SAID = {"once": ("class:allow", "applied"), "reject": ("class:deny", "discarded"),
        "cancel": ("class:deny", "discarded")}   # the answer, once given
LIST_LINES = 20    # changes listed by name in the question
MARKS = {"? ": "class:notice", "✗ ": "class:deny"}
CHANGE_MARKS = (*MARKS, "  ")   # a line of the list; the diffs start at the first other


def split(changes: str) -> tuple[list[str], str]:
    """The list (after the core's header line) and the diffs of ``changes``."""
    _header, *lines = changes.splitlines()
    for at, line in enumerate(lines):
        if line[:2] not in CHANGE_MARKS:
            return lines[:at], "\n".join(lines[at:])
    return lines, ""


def list_lines(listed: list[str], limit: int = LIST_LINES) -> Iterator[Line]:
    """Each change with its mark styled: the marked ones (``?``, ``✗``) before those
    that land whatever the answer when they do not all fit in ``limit``."""
    more = [line for line in listed if line.startswith("  … ")]   # the core's own count
    listed = [line for line in listed if line not in more]
    shown = listed
    if len(listed) > limit:
        marked = [line for line in listed if line[:2] in MARKS]
        shown = marked[:limit]
        if len(marked) > limit:
            shown.append(f"  … and {len(marked) - limit} more marked ? or ✗")
        rest = len(listed) - len(marked)
        if rest:
            shown.append(f"  … and {rest} more, landing whatever you answer")
    shown += more
    for line in shown:
        style = MARKS.get(line[:2])
        if style is None:
            yield [("class:dim", f"  {line}")]
            continue
        text, why = (line[2:].split("  (", 1) + [""])[:2]
        yield [(style, f"  {line[:2]}"), ("", text),
               *([("class:dim", f"  ({why}")] if why else [])]

