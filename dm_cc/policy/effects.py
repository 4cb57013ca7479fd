"""Rights derived from effects: what an agent that may only read is allowed, worked
out from what each permission does, never from a list of tools to deny.

    capabilities = Capabilities(effects={"read": {"read"}, "edit": {"write"}, …},
                                agents={"explore": {"read"}, "build": EFFECTS, …})
    rules = limit_rules(plan, capabilities)   # a ceiling's rules, for a limited agent

Each permission's effects come from the tool catalog (``effects`` of each entry),
the engine's own permissions and, in a session, the MCP tools' annotations; an
agent declares what it ``may`` do (the built-in plan, explore and reviewer, and any
agent file with ``may: [read]``, only read). For an agent that may not do
everything, the policy bounds its gate by a ceiling of these rules (last match
wins within them; a ceiling only ever tightens):

* everything is denied, then each permission whose effects it may have is
  allowed, so a permission nobody described (an MCP tool of unknown effects, a
  tool added later) is denied, not forgotten;
* a shell command (``bash``, whose effect is to execute) counts by what the
  analysis finds it does: the read-only commands (:data:`READ_ONLY_COMMANDS`) are
  allowed, and their redirects and file arguments are judged as the edits and
  reads they are;
* ``task NAME`` starts agent NAME: allowed when NAME may do no more than this one;
* switching the session's agent (``plan_exit``) is left to the person: at most
  asked, so no rule leaves a read-only agent for them (a decision hook of their
  own may answer that question, as it may any other ask);
* the agent's own files (``may_edit``: the plan agent's plan file) may be edited.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple, Protocol

from dm_cc.permissions import EFFECTS, Effect, Rule
from dm_cc.policy.defaults import READ_ONLY_COMMANDS


class Limited(Protocol):
    """What the rights of an agent are derived from (``dm_cc.agents.Agent`` is one)."""

    @property
    def name(self) -> str: ...

    @property
    def may(self) -> frozenset[Effect]: ...

    @property
    def may_edit(self) -> tuple[str, ...]: ...

    @property
    def source(self) -> str: ...


class Capabilities(NamedTuple):
    """What each permission does and what each agent may do."""

    effects: Mapping[str, frozenset[Effect]]       # permission → its effects
    agents: Mapping[str, frozenset[Effect]] = {}   # subagent name → what it may do

    def with_effects(self, more: Mapping[str, frozenset[Effect]]) -> Capabilities:
        """These capabilities and ``more`` permissions' effects (a session's MCP tools)."""
        return self._replace(effects={**self.effects, **more})


# Each effect as what it does, in this order when several are named.
DOES: dict[Effect, str] = {
    "read": "read files", "write": "change files", "execute": "run programs",
    "network": "reach the network", "delegate": "start other agents",
    "switch": "switch the agent in charge", "escape": "leave the sandbox",
}


def describe(effects: Iterable[Effect]) -> str:
    """What ``effects`` do, as words: ``read files``, ``run programs and leave the
    sandbox`` …"""
    named = [words for effect, words in DOES.items() if effect in set(effects)]
    if not named:
        return "do nothing but answer"
    return named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]


def limited(agent: Limited) -> bool:
    """Whether ``agent`` may do less than everything (its gate then has a ceiling)."""
    return not agent.may >= EFFECTS


def limit_rules(agent: Limited, capabilities: Capabilities) -> tuple[Rule, ...]:
    """The ceiling's rules for ``agent`` (see the module docstring); ``{session}`` in a
    ``may_edit`` pattern is left for the policy to fill, as in agent rules."""
    source = agent.source
    why = f"the {agent.name} agent may only {describe(agent.may)}"

    def rule(permission: str, pattern: str, action: str, reason: str = why) -> Rule:
        return Rule(permission, pattern, action, reason, source)  # type: ignore[arg-type]

    rules = [rule("*", "*", "deny", f"{why}, and what this does is not known")]
    for permission, effects in sorted(capabilities.effects.items()):
        if effects <= agent.may:
            rules.append(rule(permission, "*", "allow"))
            continue
        beyond = describe(effects - agent.may)
        if effects == {"switch"}:
            rules.append(rule(permission, "*", "ask",
                              f"leaving the {agent.name} agent is the person's call"))
            continue
        if effects == {"delegate"}:
            rules.append(rule(permission, "*", "deny",
                              f"{why}: it starts only agents that may do no more"))
        else:
            rules.append(rule(permission, "*", "deny", f"{why}; {permission} may {beyond}"))
        if effects == {"execute"}:
            rules += [rule(permission, command, "allow",
                           "a read-only command: what the shell analysis finds it does")
                      for command in READ_ONLY_COMMANDS]
        elif effects == {"delegate"}:
            rules += [rule(permission, name, "allow",
                           f"the {name} agent may do no more than the {agent.name} agent")
                      for name, may in sorted(capabilities.agents.items()) if may <= agent.may]
    rules += [rule("edit", pattern, "allow", f"the {agent.name} agent's own file")
              for pattern in agent.may_edit]
    return tuple(rules)
