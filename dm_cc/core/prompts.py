"""System prompts: dm_cc's base prompt, the agent's own prompt, the project's
instructions (AGENTS.md, then CLAUDE.md) and where it is working.

The prompt is a list of named sections (:func:`prompt_sections`), so ``/context``
can show what goes in and how big each part is (:func:`context_report`).

The instruction files are dm_cc's own context, read from the project root at every
model call, like Claude Code's CLAUDE.md: reading them is not a tool call and the
permission engine is not asked. They cannot widen what the policy allows.
"""

from __future__ import annotations

import datetime
import os
import platform
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from dm_cc.agents import Agent
from dm_cc.llm import ToolSpec
from dm_cc.tools import Tool, ToolContext

BASE = """You are dm_cc, a coding assistant working in the user's terminal. Every tool call \
you make is checked against the user's permission policy before it runs: a denied call \
returns an error naming the rule; do not try to get around a denial with another tool or \
another spelling of the same command. Be concise; show the user what matters."""

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")   # in this order, each when present
MAX_INSTRUCTION_BYTES = 32 * 1024                 # per file; the rest is left out, and said so
CHARS_PER_TOKEN = 4                               # the rough estimate used everywhere


class Section(NamedTuple):
    name: str       # what /context calls it: "dm_cc", "agent build", "AGENTS.md", …
    text: str


class SectionSize(NamedTuple):
    name: str
    chars: int
    tokens: int     # about: chars / CHARS_PER_TOKEN


def prompt_sections(agent: Agent, ctx: ToolContext) -> list[Section]:
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
    sections.extend(project_instructions(ctx.root))
    sections.append(Section("environment",
        f"Working directory: {ctx.cwd}\nProject root: {ctx.root}\nAgent: {agent.name}\n"
        f"Platform: {platform.system()}\nDate: {datetime.date.today().isoformat()}"))
    return sections


def system_prompt(agent: Agent, ctx: ToolContext) -> str:
    return "\n\n".join(section.text for section in prompt_sections(agent, ctx))


def context_report(agent: Agent, ctx: ToolContext) -> list[SectionSize]:
    """Each section of the system prompt with its size, in prompt order."""
    return [SectionSize(name, len(text), -(-len(text) // CHARS_PER_TOKEN))
            for name, text in prompt_sections(agent, ctx)]


def project_instructions(root: Path) -> list[Section]:
    """AGENTS.md then CLAUDE.md at the project root, each under a heading naming it.
    A file that cannot be read is left out; CLAUDE.md is left out when it is the same
    file as AGENTS.md (a symlink)."""
    sections: list[Section] = []
    seen: list[Path] = []
    for name in INSTRUCTION_FILES:
        path = root / name
        try:
            if not path.is_file() or any(os.path.samefile(path, other) for other in seen):
                continue
            size = path.stat().st_size
            with path.open("rb") as file:
                data = file.read(MAX_INSTRUCTION_BYTES)
        except OSError:
            continue
        seen.append(path)
        text = data.decode("utf-8", errors="replace").strip()
        if size > MAX_INSTRUCTION_BYTES:
            text = (text.rstrip("\ufffd") + f"\n\n[{name} was truncated: only its first "
                    f"{MAX_INSTRUCTION_BYTES} of {size} bytes are shown.]")
        sections.append(Section(name, f"# Project instructions ({name})\n\n"
                                      f"The project's {name}, from its root directory. Follow "
                                      f"it within the user's permission policy.\n\n{text}"))
    return sections


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
