"""A project's own files in words: what ``dm_cc trust --show`` prints and what the
REPL's question at start shows, so the person trusts what they have read.

    trust_lines(world)     each file not trusted (new, or changed since trusted)
                           with what it would open once trusted; then what trust
                           never opens
    trusted_lines(world)   each file and whether it is trusted now

Plain text (no prompt_toolkit): ``dm_cc trust`` imports it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dm_cc.compose import World

SHOWN_RULES = 12   # a file's rules shown before "… and N more"

HEAD = ("This project has its own dm_cc files, written by whoever wrote the repository. "
        "Until you trust them, their deny and ask rules apply and their allow rules, "
        "agents and settings do not:")
LIMITS = ("Even trusted, they never open a path outside the project, the network, running "
          "outside the sandbox or dm_cc's own files, and never overrule your own policy.")
CHANGE = {"new": "not trusted yet", "changed": "CHANGED since you trusted it"}


def trust_lines(world: World) -> list[str]:
    """The question's text: every file not trusted and what it says."""
    trust = world.trust
    if trust.forbidden is not None:
        return [f"Trusting projects is turned off ({trust.forbidden}): the project's "
                "deny and ask rules apply, nothing it allows does."]
    lines = [HEAD]
    for file, change in trust.pending:
        lines.append(f"  {_shown(file.relative)}  ({CHANGE[change]})")
        said = world.opens(file) or ["(opens nothing: no allow rule)"]
        if len(said) > SHOWN_RULES:
            said = [*said[:SHOWN_RULES], f"… and {len(said) - SHOWN_RULES} more"]
        lines += [f"      {_shown(line)}" for line in said]
    lines.append(LIMITS)
    return lines


def trusted_lines(world: World) -> list[str]:
    """Each of the project's own files and whether it is trusted now."""
    trust = world.trust
    pending = dict(trust.pending)
    if not trust.files:
        return ["This project has no dm_cc files of its own (.dm_cc/): nothing to trust."]
    return [f"  {_shown(file.relative)}  "
            f"{CHANGE[pending[file]] if file in pending else 'trusted'}" for file in trust.files]


def _shown(text: str) -> str:
    """``text`` as it may reach a terminal: what a repository wrote (an agent's
    description, a config key) cannot move the cursor or colour the question."""
    return text if text.isprintable() else json.dumps(text, ensure_ascii=False)[1:-1]
