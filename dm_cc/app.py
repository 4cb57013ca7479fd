"""Composition: settings, policy, agents, model, tools and session → a Loop.

Shared by ``dm_cc run`` (headless) and the interactive session. Everything heavy
(litellm through the model factory, pydantic tool models) is imported here, never
by ``dm_cc policy …``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from dm_cc import dirs
from dm_cc.agents.files import load_agents
from dm_cc.approval import Approver
from dm_cc.errors import UsageError
from dm_cc.events import Event
from dm_cc.llm.base import OnStream
from dm_cc.llm.factory import make_model
from dm_cc.loop import Loop, Runtime
from dm_cc.policy.layers import load_policy
from dm_cc.session.store import SessionStore
from dm_cc.settings import load_settings
from dm_cc.tools.plan import PlanEnterTool, PlanExitTool
from dm_cc.tools.registry import BUILTIN_TOOLS

NO_MODEL = (
    "no model is configured. Pass --model (any litellm model string, e.g. "
    "anthropic/claude-sonnet-4-5 or openai/gpt-4.1, with --api-base for an "
    "OpenAI-compatible server), set DM_CC_MODEL, or put `model:` in "
    ".dm_cc/config.yaml. To try policies without an LLM, use --model offline.")


@dataclass(frozen=True, slots=True)
class Options:
    """What the command line says about a session."""

    agent: str | None = None
    model: str | None = None
    api_base: str | None = None
    policies: tuple[str, ...] = ()
    continue_last: bool = False
    resume: str | None = None
    max_turns: int | None = None


def all_tools() -> list:
    return [cls() for cls in BUILTIN_TOOLS] + [PlanEnterTool(), PlanExitTool()]


def open_loop(options: Options, approver: Approver, *, cwd: Path | None = None,
              env: Mapping[str, str] = os.environ,
              on_event: Callable[[Event], None] = lambda event: None,
              on_stream: OnStream | None = None) -> Loop:
    """Load everything (any malformed file raises a DmccError naming file:line)
    and open or create the session."""
    cwd = (cwd or Path(os.getcwd())).resolve()
    policy = load_policy(cwd, env, [Path(p) for p in options.policies])
    settings = load_settings(policy.root, env, model=options.model, api_base=options.api_base)
    agents = load_agents(policy.root, env)
    store = SessionStore(dirs.data_dir(env) / "sessions")
    if options.resume:
        session = store.load(options.resume)
    elif options.continue_last and (latest := store.latest(policy.root)) is not None:
        session = store.load(latest.id)
    else:
        session = None
    if session is not None and not options.agent:
        from dm_cc.session.messages import agent_in_charge

        in_charge = agent_in_charge(session.messages, session.info.agent)
        if in_charge not in agents:
            raise UsageError(f"session {session.info.id}'s agent {in_charge!r} no longer "
                             "exists; continue it with --agent NAME")
    agent_name = options.agent or settings.default_agent or "build"
    agent = agents.get(agent_name)
    if agent is None:
        raise UsageError(f"unknown agent {agent_name!r} (known: {', '.join(agents)})")
    if agent.mode == "subagent":
        raise UsageError(f"{agent_name!r} is a subagent; it runs only through the task tool")
    model_name = agent.model or settings.model
    if not model_name:
        raise UsageError(NO_MODEL)
    if session is None:
        session = store.create(policy.root, agent=agent.name)
    runtime = Runtime(policy=policy, agents=agents, tools=all_tools(),
                      model=make_model(model_name, settings.api_base), approver=approver,
                      cwd=cwd, on_event=on_event, on_stream=on_stream)
    requested = agent.name if (options.agent or not session.messages) else None
    return Loop(session, runtime, max_turns=options.max_turns, agent=requested)
