"""System prompts: the agent's own prompt plus where it is working."""

from __future__ import annotations

import datetime
import platform

from dm_cc.agents.builtin import Agent
from dm_cc.tools.base import ToolContext

BASE = """You are dm_cc, a coding assistant working in the user's terminal. Every tool call \
you make is checked against the user's permission policy before it runs: a denied call \
returns an error naming the rule; do not try to get around a denial with another tool or \
another spelling of the same command. Be concise; show the user what matters."""


def system_prompt(agent: Agent, ctx: ToolContext) -> str:
    parts = [BASE]
    if agent.prompt:
        parts.append(agent.prompt.strip())
    if agent.name == "plan" and ctx.plan_file is not None:
        try:
            shown = ctx.plan_file.relative_to(ctx.root).as_posix()
        except ValueError:
            shown = str(ctx.plan_file)
        parts.append(f"Your plan file is {shown}. It is the only file you may write; "
                     "call plan_exit when the plan is ready for the user's approval.")
    parts.append(
        f"Working directory: {ctx.cwd}\nProject root: {ctx.root}\nAgent: {agent.name}\n"
        f"Platform: {platform.system()}\nDate: {datetime.date.today().isoformat()}")
    return "\n\n".join(parts)
