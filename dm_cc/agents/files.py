"""Custom agents from Markdown files: YAML front matter, then the prompt.

```markdown
---
description: Reviews a change and reports problems; never edits.   # required
mode: subagent                  # primary | subagent | all (default all)
model: openai/gpt-4o-mini       # optional; temperature (0..2), max_turns (> 0) too
may: [read]                     # optional: what it may do at all (default: everything);
                                #   read, write, execute, network, delegate, switch, escape
permission:                     # opencode-style shorthand, added before rules:
  edit: deny
  bash: {"*": ask, "git diff *": allow}
rules:
  - {permission: webfetch, pattern: "*", action: deny, reason: "offline reviewer"}
---
You are a code reviewer. …
```

Files: ``<config_dir>/agents/*.md`` (user), then ``<project>/.dm_cc/agents/*.md``
(project); a project agent replaces a user agent of the same name. The name is the
file stem (lowercase letters, digits, ``-``, ``_``); naming a file like a built-in
agent is an error. Every error is an :class:`~dm_cc.errors.AgentFileError` naming
``file:line`` (the opening ``---`` is line 1) and every rule's source is
``file:line``. pydantic is imported only when there is a file to load.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from dm_cc.agents.builtin import BUILTIN_AGENTS, Agent
from dm_cc.config import agent_files_in, config_dir, display_path, load_yaml, project_dir, validation_error
from dm_cc.errors import AgentFileError, PolicyError
from dm_cc.permissions import EFFECTS, Effect
from dm_cc.policy import rules_from

if TYPE_CHECKING:  # pydantic is imported only when a file must be validated
    from pydantic import BaseModel

NAME = re.compile(r"[a-z0-9_-]+")

_HINTS = {
    "name": "the agent's name is the file name",
    "prompt": "the prompt is the Markdown after the front matter",
    "tools": "use permission: (e.g. {edit: deny}) or rules: to limit tools",
}


@cache
def _model() -> type[BaseModel]:
    from pydantic import BaseModel, ConfigDict, Field

    from dm_cc.policy import ActionName, RuleSpec

    class AgentFrontMatter(BaseModel):
        model_config = ConfigDict(strict=True, extra="forbid")

        description: str = Field(min_length=1)
        mode: Literal["primary", "subagent", "all"] = "all"
        model: str | None = Field(default=None, min_length=1)
        temperature: float | None = Field(default=None, ge=0, le=2)
        max_turns: int | None = Field(default=None, gt=0)
        may: list[Effect] | None = None
        permission: dict[str, ActionName | dict[str, ActionName]] = Field(default_factory=dict)
        rules: list[RuleSpec] = Field(default_factory=list)

    return AgentFrontMatter


def _split(text: str, shown: str) -> tuple[str, str]:
    """The front matter (with line 1 blanked, so YAML lines are file lines) and the body."""
    lines = text.removeprefix("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise AgentFileError(shown, 1, "no front matter: an agent file starts with a '---' "
                             "line, then YAML (description: …), then '---', then the prompt")
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            return "\n" + "".join(lines[1:end]), "".join(lines[end + 1:]).strip()
    raise AgentFileError(shown, 1, "unclosed front matter: no closing '---' line")


def parse_agent(text: str, name: str, shown: str) -> Agent:
    """Parse an agent file's text; ``shown`` names it in errors and rule sources."""
    front, prompt = _split(text, shown)
    data, lines = load_yaml(front, shown, AgentFileError)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise AgentFileError(shown, lines.get((), 2), "the front matter must be a mapping "
                             "(description: …, mode: …)")
    from pydantic import ValidationError

    model = _model()
    try:
        spec = model.model_validate(data).model_dump()
    except ValidationError as exc:
        error = validation_error(exc, shown, lines, schema=model.__pydantic_core_schema__)
        first, newline, more = error.message.partition("\n")
        detail = exc.errors()[0]
        if detail["type"] == "extra_forbidden" and detail["loc"][0] in _HINTS:
            first += f" ({_HINTS[detail['loc'][0]]})"
        raise AgentFileError(shown, error.line or 1, first + newline + more) from None
    try:
        rules = rules_from(spec["rules"], spec["permission"], (), shown, lines)
    except PolicyError as exc:
        raise AgentFileError(exc.path, exc.line, exc.message) from None
    temperature = spec["temperature"]
    return Agent(name=name, mode=spec["mode"], description=spec["description"], prompt=prompt,
                 rules=rules, model=spec["model"],
                 temperature=None if temperature is None else float(temperature),
                 max_turns=spec["max_turns"],
                 may=EFFECTS if spec["may"] is None else frozenset(spec["may"]),
                 source=f"{shown}:{lines.get(('may',), 1)}")


def load_agent_file(path: Path) -> Agent:
    shown = display_path(path)
    name = path.stem
    if not NAME.fullmatch(name):
        raise AgentFileError(shown, None, f"agent name {name!r} (the file name) may only hold "
                             "lowercase letters, digits, '-' and '_'")
    if name in BUILTIN_AGENTS:
        raise AgentFileError(shown, None, f"{name!r} is a built-in agent and cannot be "
                             "redefined; give the file another name")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AgentFileError(shown, None, f"cannot read agent file: {exc}") from None
    return parse_agent(text, name, shown)


def agent_files(root: Path, env: Mapping[str, str] = os.environ) -> list[Path]:
    """The agent files that :func:`load_agents` reads, in order (user, then project)."""
    return [*agent_files_in(config_dir(env) / "agents"), *agent_files_in(project_dir(root) / "agents")]


def load_agents(root: Path, env: Mapping[str, str] = os.environ,
                trusts: Callable[[Path], bool] = lambda path: False) -> dict[str, Agent]:
    """Built-in agents, then user agents, then project agents (a later file with the
    same name replaces an earlier one). The first bad file raises AgentFileError.
    ``trusts``: whether the person trusts a project agent file's content (else its
    agent is ``untrusted``: its rules may only tighten)."""
    agents: dict[str, Agent] = dict(BUILTIN_AGENTS)
    project_agents = project_dir(root) / "agents"
    for path in agent_files(root, env):
        agent = load_agent_file(path)
        if path.parent == project_agents:  # where it was found, not where a link points
            agent = replace(agent, origin="repository" if trusts(path) else "untrusted")
        else:
            agent = replace(agent, origin="person")
        agents[agent.name] = agent
    return agents
