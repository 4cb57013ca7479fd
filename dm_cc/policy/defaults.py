"""The built-in default rules: the first layer, safe like Claude Code's default mode.

Reads inside the project are allowed (``.env*`` asks), edits ask, shell commands
ask except a small read-only set, anything outside the project asks (through
``external_directory``). Every later layer can change any of this.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from dm_cc.permissions import Action, Rule

SOURCE = "builtin:defaults"

READ_ONLY_COMMANDS = (
    "ls *", "pwd", "echo *", "cat *", "head *", "tail *", "wc *", "which *", "whoami",
    "date", "uname *", "file *", "stat *", "du *", "df *", "tree *", "basename *", "dirname *",
    "realpath *", "readlink *", "grep *", "rg *", "find *", "sort *", "uniq *", "cut *",
    "diff *", "true", "false",
    "git status *", "git diff *", "git log *", "git show *", "git branch", "git branch --list *",
    "git branch --show-current", "git rev-parse *", "git remote -v", "git ls-files *",
    "git blame *",
)


def _rule(permission: str, pattern: str, action: Action, reason: str | None = None) -> Rule:
    return Rule(permission, pattern, action, reason, SOURCE)


DEFAULT_RULES: tuple[Rule, ...] = (
    _rule("*", "*", "ask", "not covered by a more specific rule"),
    _rule("read", "**", "allow", "reading inside the project"),
    _rule("list", "**", "allow", "listing inside the project"),
    _rule("glob", "**", "allow", "searching inside the project"),
    _rule("grep", "**", "allow", "searching inside the project"),
    _rule("read", ".env*", "ask", "environment files often hold secrets"),
    _rule("external_directory", "*", "ask", "outside the project"),
    *(_rule("bash", command, "allow", "read-only command") for command in READ_ONLY_COMMANDS),
    _rule("todo", "*", "allow"),
    _rule("task", "*", "allow", "subagents never get more rights than their parent"),
    _rule("plan_enter", "*", "allow"),
    _rule("plan_exit", "*", "ask", "leaving plan mode starts editing"),
    _rule("doom_loop", "*", "ask", "the same call three times in a row"),
    _rule("sandbox_escape", "*", "ask",
          "run again outside the sandbox: only the rules hold it there, not the kernel"),
    _rule("redirect", "*", "allow",
          "a redirection's files are judged as the reads and edits they are"),
)

# Accept-edits (Shift+Tab in the REPL: build → accept edits → auto → plan): edits
# inside the project without asking, for this session only (never saved). Its layer
# comes right after these defaults, so it changes only what they decide (edits
# ask): every rule a file says about an edit (a deny, an ask, the organisation's)
# still decides; `**` names nothing outside the project; a protected path's edit
# still asks (only a rule naming it exactly opens one); an agent that may not edit
# (plan, explore) still may not.
ACCEPT_EDITS_SOURCE = "builtin:accept-edits"
ACCEPT_EDITS_RULES: tuple[Rule, ...] = (
    Rule("edit", "**", "allow", "accept edits: edits inside the project, this session only",
         ACCEPT_EDITS_SOURCE),
)

# A child session (the task tool) keeps no todo list, starts no subagents of its own
# and does not switch agents, unless its agent's rules, or a policy file's override
# for it, allow them.
SUBAGENT_RULES: tuple[Rule, ...] = (
    Rule("todo", "*", "deny", "a subagent keeps no todo list unless its rules allow one",
         "builtin:subagent"),
    Rule("task", "*", "deny", "a subagent starts no subagents unless its rules allow it",
         "builtin:subagent"),
    Rule("plan_enter", "*", "deny", "a subagent does not switch agents", "builtin:subagent"),
    Rule("plan_exit", "*", "deny", "a subagent does not switch agents", "builtin:subagent"),
)

GUARDRAIL_SOURCE = "builtin:guardrails"
CATASTROPHIC = "irreversible damage to the whole machine or home directory"

# Denied after every user-configurable layer (only managed enforced rules come
# later): no policy file, agent or approval can allow these, so they must name the
# catastrophe exactly and nothing else (`rm -rf /home/me/project/build` is the
# user's call). A `*` that is part of the command is written `\*` (a literal star:
# the shell glob `rm -rf /*`), a bare `*` is "any other operands". Deny rules also
# match other flag spellings (`rm -fr /`, `rm -r -f /`, `rm --recursive --force /`),
# so naming `-r` covers `-rf` too.
ROOT_OR_HOME = ("/", "//", "/\\*", "~", "~/", "~/\\*", "~/.\\*")
# `dd of=/dev/null` (or stdout, a tty) is everyday use; these are disks and memory.
BLOCK_DEVICES = ("sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "md", "dm-",
                 "mapper/", "loop", "mem", "kmem", "port")


def _anywhere(command: str, target: str) -> tuple[str, ...]:
    """``command`` with ``target`` among its operands: alone, first, or after others."""
    return (f"{command} {target} *", f"{command} * {target} *")


def _against(targets: Sequence[str]) -> tuple[str, ...]:
    """Recursive deletes and ownership or mode changes of each of ``targets``."""
    return (
        *(p for target in targets for p in _anywhere("rm -r", target)),
        *(p for target in targets for command in ("chmod -R *", "chown -R *", "chgrp -R *")
          for p in _anywhere(command, target)),
    )


GUARDRAIL_PATTERNS: tuple[str, ...] = (
    *_against(ROOT_OR_HOME),
    "rm -r --no-preserve-root *",  # only ever needed to delete `/`
    "mkfs* /dev/*", "mkfs* * /dev/*",  # formatting a device (a disk image file is fine)
    *(f"dd * of=/dev/{device}*" for device in BLOCK_DEVICES),
    *(f"dd of=/dev/{device}*" for device in BLOCK_DEVICES),
)


def _guardrail(pattern: str) -> Rule:
    return Rule("bash", pattern, "deny", CATASTROPHIC, GUARDRAIL_SOURCE)


GUARDRAIL_RULES: tuple[Rule, ...] = tuple(_guardrail(p) for p in GUARDRAIL_PATTERNS)


def escape(text: str) -> str:
    """``text`` as a shell-command pattern matching exactly itself."""
    return "".join("\\" + ch if ch in "*?\\" else ch for ch in text)


@lru_cache(maxsize=8)
def guardrail_rules(home: str | None = None) -> tuple[Rule, ...]:
    """The guardrails, and the same for the home directory spelled out (``rm -rf
    /home/me`` as well as ``rm -rf ~``)."""
    home = home.rstrip("/") if home else None
    if not home:
        return GUARDRAIL_RULES
    spelled = escape(home)
    return GUARDRAIL_RULES + tuple(_guardrail(p) for p in _against(
        (spelled, f"{spelled}/", f"{spelled}/\\*", f"{spelled}/.\\*")))
