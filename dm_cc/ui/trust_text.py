"""A project's own files in words: what ``dm_cc trust --show`` prints, what the
REPL's question at start shows and what ``/trust`` says, so the person trusts what
they have read.

    trust_lines(world)      each file not trusted (new, changed since trusted, the
                            person said no, or changed since they did) with what
                            it would open once trusted; then what trust never opens
    trusted_lines(world)    each file and whether it is trusted now
    question_lines(world)   the REPL's question: a ``?`` line, trust_lines, and how
                            to change one's mind later
    session_lines(world)    what ``/trust`` says: as ``dm_cc trust --show``, and how
                            to change what the next session trusts
    untrusted(world)        the files not trusted that would open something once
                            trusted (none: the REPL says nothing about trust)
    notice_lines(world)     the REPL's notice under its first lines when there are
                            such files

Paragraphs are wrapped to ``width`` (an 80-column terminal by default), never cut
in a word. Plain text (no prompt_toolkit): ``dm_cc trust`` imports it.
"""

from __future__ import annotations

import json
import textwrap
from typing import TYPE_CHECKING

from dm_cc.errors import DmccError

if TYPE_CHECKING:
    from dm_cc.compose import World
    from dm_cc.config import ProjectFile

SHOWN_RULES = 12   # a file's rules shown before "… and N more"
WIDTH = 80         # columns, unless told
MAX_WIDTH = 100    # columns at most, however wide the terminal: lines stay readable

HEAD = ("This project ({root}) has its own dm_cc files, written by whoever wrote the "
        "repository. Once you trust them, what they allow happens without asking you; "
        "until then only their deny and ask rules apply (not their allow rules, agents "
        "or settings).")
LIMITS = ("Even trusted, they never open a path outside the project, the network, running "
          "outside the sandbox or dm_cc's own files, and never overrule your own policy.")
QUESTION = "? Trust this project's dm_cc files as they are now?"
LATER = ("Change your mind later: `dm_cc trust` trusts them, `dm_cc untrust` forgets them "
         "(/trust shows this).")
RESTART = ("This session runs without them. To trust them, run `dm_cc trust` in a shell "
           "and start dm_cc again (`dm_cc --trust-project` trusts them for one run), or type "
           "/permissions trust: their rules count at once, their agents and settings from "
           "the next start.")
FORGET = ("`dm_cc untrust` forgets them: sessions started afterwards run without them "
          "(/permissions untrust: this one too, from then on).")
SAVE = "`dm_cc trust` trusts them for later sessions too. So does /permissions trust."
STATE = {"new": "not trusted yet", "changed": "CHANGED since you trusted it",
         "declined": "not trusted: you said no", "refused": "CHANGED since you said no",
         "trusted": "trusted",
         "granted": "trusted for this run (--trust-project)"}


def _wrap(text: str, width: int, indent: str = "", then: str | None = None) -> list[str]:
    """``text`` in lines shorter than ``width`` (a line as wide as the terminal may
    wrap early), never cut in a word or a path."""
    return textwrap.wrap(text, max(width - 1, 40), initial_indent=indent,
                         subsequent_indent=indent if then is None else then,
                         break_long_words=False, break_on_hyphens=False)


def _state(world: World, file: ProjectFile, asked: dict[str, str]) -> str:
    """Where ``file`` stands: trusted (saved, or this run), or why it is not."""
    trust = world.trust
    pending = dict(trust.pending)
    if file not in pending:
        return "granted" if trust.granted and trust.saved.get(file.relative) != file.digest \
            else "trusted"
    if pending[file] == "new" and file.relative in asked:
        return "declined" if asked[file.relative] == file.digest else "refused"
    return pending[file]


def _asked(world: World) -> dict[str, str]:
    try:
        return world.approvals.asked_files()
    except DmccError:
        return {}


def trust_lines(world: World, width: int = WIDTH) -> list[str]:
    """Every file not trusted, what it would open, and what trust never opens."""
    trust = world.trust
    if trust.forbidden is not None:
        return _wrap(f"Trusting projects is turned off ({trust.forbidden}): the project's "
                     "deny and ask rules apply, nothing it allows does.", width)
    asked = _asked(world)
    lines = _wrap(HEAD.format(root=world.root), width)
    for file, _change in trust.pending:
        lines.append(f"  {_shown(file.relative)}  ({STATE[_state(world, file, asked)]})")
        changed = world.changes(file)
        if changed:
            lines += ["      what changed:", *(f"        {_shown(line)}" for line in changed),
                      "      what it would open now:"]
        said = world.opens(file) or ["(opens nothing: no allow rule)"]
        if len(said) > SHOWN_RULES:
            said = [*said[:SHOWN_RULES], f"… and {len(said) - SHOWN_RULES} more"]
        indent = " " * (8 if changed else 6)
        lines += [f"{indent}{_shown(line)}" for line in said]
    return [*lines, *_wrap(LIMITS, width)]


def question_lines(world: World, width: int = WIDTH) -> list[str]:
    """The REPL's question at start: what :func:`trust_lines` says, under a ``?`` line,
    and how to change one's mind afterwards."""
    return [QUESTION, *(f"  {line}" for line in trust_lines(world, width - 2)),
            *_wrap(LATER, width, "  ")]


def session_lines(world: World, width: int = WIDTH) -> list[str]:
    """What ``/trust`` shows: the files and what they would open, as ``dm_cc trust
    --show`` does, and how to change what the next session trusts."""
    trust = world.trust
    if not trust.files:
        return trusted_lines(world)
    if trust.forbidden is not None:
        return trust_lines(world, width)
    if trust.pending:
        return [*trust_lines(world, width), *_wrap(RESTART, width)]
    unsaved = any(trust.saved.get(file.relative) != file.digest for file in trust.files)
    return [*trusted_lines(world), *_wrap(SAVE if unsaved else FORGET, width)]


def trusted_lines(world: World) -> list[str]:
    """Each of the project's own files and whether it is trusted now."""
    trust = world.trust
    if not trust.files:
        return ["This project has no dm_cc files of its own (.dm_cc/): nothing to trust."]
    asked = _asked(world)
    return [f"This project's own dm_cc files ({world.root}):",
            *(f"  {_shown(file.relative)}  {STATE[_state(world, file, asked)]}"
              for file in trust.files)]


def notice_lines(world: World, width: int = WIDTH) -> list[str]:
    """``! the project's own files are not trusted …`` (:meth:`World.trust_notice`),
    wrapped; nothing when trusting would open nothing."""
    notice = world.trust_notice() if untrusted(world) else None
    return _wrap(f"! {notice}", width, "", "  ") if notice else []


def untrusted(world: World) -> frozenset[str]:
    """The files not trusted that would open something once trusted (absolute paths):
    only those are worth a word (the REPL's notice and toolbar)."""
    return frozenset(str(world.root / file.relative)
                     for file, _ in world.trust.pending if world.opens(file))


def _shown(text: str) -> str:
    """``text`` as it may reach a terminal: what a repository wrote (an agent's
    description, a config key) cannot move the cursor or colour the question."""
    return text if text.isprintable() else json.dumps(text, ensure_ascii=False)[1:-1]
