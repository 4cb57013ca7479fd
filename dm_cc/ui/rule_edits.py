"""How ``/permissions add`` reads a rule, and what a change to the rules says.

    parse_add(["--user", "ask", "bash", "git", "push", "*"], files)   # ("user", NewRule)
    changed_lines(changed, width)     # what /permissions add|remove did (or why not)
    refused_lines(message, width)     # why add saved nothing; the command is back

Plain text (no prompt_toolkit); lines are ``(text, style)`` pairs narrower than the
terminal (rule_table.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from dm_cc.errors import UsageError
from dm_cc.policy import PROJECT_LAYER, USER_LAYER
from dm_cc.ui.rule_table import Line, line_of, shown, wrapped

if TYPE_CHECKING:
    from dm_cc.policy import Changed, NewRule

WIDTH = 80
ACTIONS = ("allow", "ask", "deny")
LAYERS = (PROJECT_LAYER, USER_LAYER)    # whose file a rule goes in (World.rule_file)
BACK = ("(nothing was saved; the command is back at the prompt to correct, Ctrl-C clears "
        "it; or edit the file by hand)")
USAGE = ("usage: /permissions add --project|--user allow|ask|deny PERMISSION PATTERN "
         "[# REASON]")


def parse_add(args: Sequence[str], files: Mapping[str, str]) -> tuple[str, NewRule]:
    """``add [--project|--user] ACTION PERMISSION PATTERN [# REASON]``: the layer and
    the rule. The pattern is the words after the permission (or a quoted string, when
    it holds `` # ``); the reason what follows a lone ``#``. ``files``: where each
    layer's rules go (for the message when none is named). UsageError if malformed."""
    from dm_cc.policy import NewRule

    words = list(args)
    layer = None
    while words and words[0].startswith("--"):
        flag = words.pop(0)
        if flag.removeprefix("--") not in LAYERS or layer is not None:
            raise UsageError(f"{flag}: say --project or --user, once; {USAGE}")
        layer = flag.removeprefix("--")
    if layer is None:
        raise UsageError("say whose file the rule goes in: /permissions add --user … (your "
                         f"own, {files.get('user')}: every project) or --project … (this "
                         f"project's, {files.get('project')}: shared with whoever uses it)")
    if len(words) < 3 or words[0] not in ACTIONS:
        raise UsageError(USAGE)
    action, permission, rest = words[0], words[1], " ".join(words[2:])
    pattern, reason = _pattern_and_reason(rest)
    return layer, NewRule(action, permission, pattern, reason)


def _pattern_and_reason(text: str) -> tuple[str, str | None]:
    quoted = re.fullmatch(r"""(["'])(.*?)\1(?:\s+#(?:\s+(.*))?)?""", text)
    if quoted:
        pattern, reason = quoted.group(2), quoted.group(3)
    elif (mark := re.search(r"(?:^|\s)#(?:\s|$)", text)) is not None:
        pattern, reason = text[:mark.start()].strip(), text[mark.end():]
    else:
        pattern, reason = text.strip(), None
    if not pattern:
        raise UsageError("the rule needs a pattern: * for every request of the permission")
    return pattern, (reason or "").strip() or None


def changed_lines(changed: Changed, width: int = WIDTH) -> list[Line]:
    """What ``/permissions add`` or ``remove`` did: the file and the lines added or
    removed, what the lint found, what became of the file's trust; or, not saved, why."""
    edit = changed.edit
    added = edit.before is None or len(edit.after) > len(edit.before)
    if not changed.saved:
        lines = wrapped(f"not saved: the lint finds a problem the rule would bring "
                        f"({edit.shown} is unchanged):", width, "class:error")
        for finding in changed.findings:
            lines += wrapped(str(finding), width, "class:error", "    ", "  ")
        return lines + wrapped(BACK, width, "class:dim", "  ")
    where = f"{edit.shown}:{line_of(edit.rule)}"
    lines = wrapped(f"{'added to' if added else 'removed from'} {where}" +
                    (":" if changed.unread else ", in force from now on:"), width, "class:tool")
    for line in edit.lines:
        lines += wrapped(shown(line), width, "class:add" if added else "class:del", "      ", "")
    if changed.trust:
        lines += wrapped(f"{edit.shown}: {changed.trust}", width, "class:dim", "  ")
    for finding in changed.findings:
        lines += wrapped(f"! {finding}", width, "class:notice", "  ")
    if changed.unread:
        lines += wrapped(f"! saved, but the policy could not be read again ({changed.unread}): "
                         "this session keeps the rules it had until that is fixed", width,
                         "class:error", "  ")
    return lines


def said_lines(text: str, width: int = WIDTH, style: str = "") -> list[Line]:
    """A sentence wrapped to the terminal, its lines after the first indented."""
    return wrapped(text, width, style, "  ", "")


def refused_lines(message: str, width: int = WIDTH) -> list[Line]:
    """Why ``/permissions add`` saved nothing, and that the command is back to correct."""
    return wrapped(message, width, "class:error", "  ", "") + \
        wrapped(BACK, width, "class:dim", "  ")
