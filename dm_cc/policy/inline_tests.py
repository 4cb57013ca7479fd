"""Running the ``tests:`` of policy files against the effective policy."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from dm_cc.errors import DmccError
from dm_cc.permissions import Decision
from dm_cc.policy.loader import InlineTest, PolicyFile


@dataclass(frozen=True, slots=True)
class TestResult:
    __test__ = False  # not a pytest class

    test: InlineTest
    actual: str | None
    decision: Decision | None = None
    error: str | None = None

    @property
    def passed(self) -> bool:
        return self.error is None and self.actual == self.test.expect


def run_inline_tests(files: Iterable[PolicyFile],
                     decide: Callable[[InlineTest], Decision]) -> list[TestResult]:
    """Every inline test of ``files``, each decided by ``decide`` (the full layer
    stack of the test's agent); a test that cannot be decided fails with the reason."""
    results = []
    for policy_file in files:
        for test in policy_file.tests:
            try:
                decision = decide(test)
            except (LookupError, ValueError, DmccError) as exc:
                results.append(TestResult(test, None, error=str(exc.args[0] if exc.args else exc)))
                continue
            results.append(TestResult(test, decision.action, decision))
    return results
