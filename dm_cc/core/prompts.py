"""System prompts: dm_cc's base prompt, the agent's own prompt, the project's
instructions (AGENTS.md, then CLAUDE.md) and where it is working.

The prompt is a list of named sections (:func:`build_prompt`), so ``/context``
can show what goes in and how big each part is (:func:`context_report`).

The instruction files are read from the project root at every model call, like
Claude Code's CLAUDE.md, through the read rules of the agent in charge (the
context's ``may_read``) and only inside the project (core/instructions.py); those
left out are in the prompt's ``left_out``, for the loop to tell the person. They
cannot widen what the policy allows.
"""

from __future__ import annotations

import datetime
import json
import platform
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from dm_cc.agents import Agent
from dm_cc.core.instructions import LeftOut, read_instructions
from dm_cc.llm import ToolSpec
from dm_cc.permissions import is_mcp_permission
from dm_cc.tools import Tool, ToolContext

BASE = """You are dm_cc, a coding assistant working in the user's terminal. Every tool call \
you make is checked against the user's permission policy before it runs: a denied call \
returns an error naming the rule; do not try to get around a denial with another tool or \
another spelling of the same command. Be concise; show the user what matters."""

CHARS_PER_TOKEN = 4                               # the rough estimate used everywhere


class Section(NamedTuple):
    name: str       # what /context calls it: "dm_cc", "agent build", "AGENTS.md", …
    text: str


class SectionSize(NamedTuple):
    """One part of a model call's prompt and its size (``/context``)."""

    name: str
    chars: int
    tokens: int     # about: chars / CHARS_PER_TOKEN
    left_out: str = ""   # an instruction file not loaded: why (chars and tokens 0)
    group: str = "system prompt"   # or "tools", "messages"


class Prompt(NamedTuple):
    sections: list[Section]
    left_out: list[LeftOut]     # instruction files present but not loaded, and why

    @property
    def text(self) -> str:
        return "\n\n".join(section.text for section in self.sections)


def build_prompt(agent: Agent, ctx: ToolContext) -> Prompt:
    sections = [Section("dm_cc", BASE)]
    if agent.prompt:
        sections.append(Section(f"agent {agent.name}", agent.prompt.strip()))
    if agent.name == "plan" and ctx.plan_file is not None:
        try:
            shown = ctx.plan_file.relative_to(ctx.root).as_posix()
        except ValueError:
            shown = str(ctx.plan_file)
        sections.append(Section("plan file", f"Your plan file is {shown}. It is the only file "
                                "you may write; call plan_exit when the plan is ready for the "
                                "user's approval."))
    found = read_instructions(ctx.where, ctx.may_read)
    sections.extend(Section(name, f"# Project instructions ({name})\n\n"
                                  f"The project's {name}, from its root directory. Follow "
                                  f"it within the user's permission policy.\n\n{text}")
                    for name, text in found.loaded)
    sections.append(Section("environment",
        f"Working directory: {ctx.cwd}\nProject root: {ctx.root}\nAgent: {agent.name}\n"
        f"Platform: {platform.system()}\nDate: {datetime.date.today().isoformat()}"))
    return Prompt(sections, found.left_out)


def system_prompt(agent: Agent, ctx: ToolContext) -> str:
    return build_prompt(agent, ctx).text


def context_report(agent: Agent, ctx: ToolContext) -> list[SectionSize]:
    """Each section of the system prompt with its size, in prompt order; then each
    instruction file left out, with why."""
    prompt = build_prompt(agent, ctx)
    return [*(SectionSize(name, len(text), -(-len(text) // CHARS_PER_TOKEN))
              for name, text in prompt.sections),
            *(SectionSize(name, 0, 0, why) for name, why in prompt.left_out)]


def spec_chars(spec: ToolSpec) -> int:
    """What a tool costs in a prompt: its name, description and JSON schema."""
    return len(spec.name) + len(spec.description) + len(json.dumps(spec.parameters))


def tool_sizes(specs: Sequence[ToolSpec]) -> list[SectionSize]:
    """The tools a model call offers, their schemas' size: dm_cc's own, then the MCP
    servers' (``mcp__…``), each group with how many tools it holds."""
    groups: dict[str, list[ToolSpec]] = {}
    for spec in specs:
        groups.setdefault("MCP" if is_mcp_permission(spec.name) else "built-in", []).append(spec)
    return [SectionSize(f"{name} ({len(group)})", sum(spec_chars(s) for s in group),
                        sum(-(-spec_chars(s) // CHARS_PER_TOKEN) for s in group), group="tools")
            for name, group in sorted(groups.items(), key=lambda item: item[0] != "built-in")]


def tool_specs(tools: Iterable[Tool[Any]], ctx: ToolContext | None = None) -> list[ToolSpec]:
    """Each tool as the model sees it (name, description -- as ``ctx`` has it, when
    given -- and JSON schema of its arguments), in order. ValueError when two tools
    share a name."""
    specs = [ToolSpec(tool.name, tool.describe(ctx) if ctx is not None else tool.description,
                      tool.input_schema) for tool in tools]
    names = [spec.name for spec in specs]
    if duplicates := sorted({name for name in names if names.count(name) > 1}):
        raise ValueError(f"two tools are named {', '.join(duplicates)}")
    return specs
