"""How attack cases are judged, shared by the corpus and variant tests: derive the
tool call's requests in a project, decide them under the case's rules only (after
the default ask), and compare with the expectation (deny | ask | allow | not-allow)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from dm_cc.config.dirs import HostFilesystem
from dm_cc.permissions import Decision, PathContext, Rule, Ruleset, decide
from dm_cc.permissions.paths import PathContextDirs
from dm_cc.tools.catalog import input_requests


def meets(action: str, expect: str) -> bool:
    return action != "allow" if expect == "not-allow" else action == expect


def judge(rules: Sequence[Rule], tool: str, text: str, where: PathContextDirs) -> Decision:
    context = PathContext(where.root.as_posix(), where.home.as_posix())
    return decide(input_requests(tool, text, where), Ruleset(rules, context))


def assert_meets(rules: Sequence[Rule], tool: str, text: str, expect: str,
                 where: PathContextDirs) -> None:
    decision = judge(rules, tool, text, where)
    trace = [(v.request.permission, v.request.pattern[:60], v.action, v.rule.source)
             for v in decision.verdicts]
    assert meets(decision.action, expect), trace


def A(pattern: str) -> Rule:
    return Rule("bash", pattern, "allow")


def D(pattern: str) -> Rule:
    return Rule("bash", pattern, "deny")


def R(permission: str, pattern: str, action: str) -> Rule:
    return Rule(permission, pattern, action)  # type: ignore[arg-type]


def project_in(tmp: Path) -> PathContextDirs:
    """A git project ``tmp/p`` worked in from its root, with the home ``tmp/h``."""
    project, home = tmp / "p", tmp / "h"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    return PathContextDirs(project, project, home, HostFilesystem())


def project_with_key(tmp: Path) -> PathContextDirs:
    """:func:`project_in` with a private key ``~/.ssh/id_rsa`` and a link to its directory
    in the project (``sshdir``)."""
    where = project_in(tmp)
    (where.home / ".ssh").mkdir()
    (where.home / ".ssh" / "id_rsa").write_text("k")
    (where.root / "sshdir").symlink_to(where.home / ".ssh")
    return where
