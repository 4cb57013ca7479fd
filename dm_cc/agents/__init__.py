"""Agents as data: who may do what, with which prompt and model.

    builtin.py   the built-in agents (build, auto, plan, explore, reviewer, general), their
                 rules, the "agent rules" layer of DESIGN.md §3; ``named_agent``,
                 ``mentioned``: the subagent a message starts with (``@explore …``),
                 and ``configured``: the built-in subagents as the settings set them
    files.py     custom agents from Markdown files (user, then project): YAML front
                 matter, then the prompt; ``load_agents``

The front door imports both modules: every command that needs one agent needs them all.
"""

from dm_cc.agents.builtin import (
    BUILTIN_SUBAGENTS,
    DEFAULT_MAX_TURNS,
    Agent,
    configured,
    mentioned,
    named_agent,
)
from dm_cc.agents.files import load_agents

__all__ = ["BUILTIN_SUBAGENTS", "DEFAULT_MAX_TURNS", "Agent", "configured", "load_agents",
           "mentioned", "named_agent"]
