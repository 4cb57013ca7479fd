"""Running the ``tests:`` of policy files against the effective policy."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dm_cc.agents.builtin import Agent
from dm_cc.errors import DmccError
from dm_cc.permissions.engine import Decision
from dm_cc.permissions.paths import PathContextDirs
from dm_cc.permissions.requests import args_from_input, requests_for
from dm_cc.policy.layers import Policy
from dm_cc.policy.loader import InlineTest


@dataclass(frozen=True, slots=True)
class TestResult:
    test: InlineTest
    actual: str | None
    decision: Decision | None = None
    error: str | None = None

    @property
    def passed(self) -> bool:
        return self.error is None and self.actual == self.test.expect


def run_inline_tests(policy: Policy, agent_named: Callable[[str], Agent],
                     where: PathContextDirs) -> list[TestResult]:
    """Every inline test of every loaded file, decided by the full layer stack."""
    results = []
    gates = {}
    for policy_file in policy.files:
        for test in policy_file.tests:
            name = test.agent or "build"
            try:
                if name not in gates:
                    gates[name] = policy.gate(agent_named(name))
                requests = requests_for(test.tool, args_from_input(test.tool, test.input), where)
            except (KeyError, ValueError, DmccError) as exc:
                results.append(TestResult(test, None, error=str(exc)))
                continue
            decision = gates[name].decide(requests)
            results.append(TestResult(test, decision.action, decision))
    return results
