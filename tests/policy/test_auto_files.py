"""Auto mode through the composition root: where the auto layer's rules come from
(the shipped policy for the auto agent, ``--policy builtin:auto`` and ``auto:`` in
the person's own files for every agent; never a project's file), which stack
judges what (a command's gate where commands run as transactions; an MCP server's
gate without the layer), and what a World says when auto mode is not in effect."""

from __future__ import annotations

import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
from support.trust import trust_project

from dm_cc.compose import Options, open_world
from dm_cc.errors import PolicyError
from dm_cc.policy import AUTO_LAYER, lint_files, load_policy_arg, parse_policy


class Where:
    """A project with .git, an isolated user config dir and managed dir."""

    def __init__(self, tmp_path: Path) -> None:
        self.project = tmp_path / "project"
        (self.project / ".git").mkdir(parents=True)
        self.dm_cc_home = tmp_path / "dmcc-home"
        self.managed = tmp_path / "managed"
        self.managed.mkdir()
        self.env = {"DM_CC_HOME": str(self.dm_cc_home), "DM_CC_MANAGED_DIR": str(self.managed),
                    "HOME": str(tmp_path / "home")}

    def write(self, path: Path, text: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
        return path

    def user_policy(self, text: str) -> Path:
        return self.write(self.dm_cc_home / "config" / "policy.yaml", text)

    def user_config(self, text: str) -> Path:
        return self.write(self.dm_cc_home / "config" / "config.yaml", text)

    def open(self, *policies: str, transactions: bool | None = True):
        return open_world(Options(policies=policies, transactions=transactions),
                          cwd=self.project, env=self.env)

    def decide(self, tool: str, text: str, agent: str = "auto", *policies: str,
               transactions: bool | None = True):
        return self.open(*policies, transactions=transactions).decide(tool, text, agent)[1]


@pytest.fixture
def where(tmp_path) -> Where:
    return Where(tmp_path)


def layer_of(decision) -> str | None:
    return decision.verdicts[0].layer


# ---------------------------------------------------------------------- where the rules come from


def test_the_auto_agent_has_the_shipped_rules_build_has_none(where):
    decision = where.decide("bash", "npm install")
    assert decision.action == "allow" and layer_of(decision) == AUTO_LAYER
    assert decision.verdicts[0].rule.source.startswith("builtin:auto:")
    assert where.decide("bash", "npm install", "build").action == "ask"


def test_policy_builtin_auto_goes_in_the_auto_layer_so_a_users_deny_still_denies(where):
    where.user_policy("""
        rules:
          - {permission: bash, pattern: "rm *", action: deny, reason: "no deletes"}
    """)
    install = where.decide("bash", "npm install", "build", "builtin:auto")
    assert install.action == "allow" and layer_of(install) == AUTO_LAYER
    removed = where.decide("bash", "rm -rf build", "build", "builtin:auto")
    assert removed.action == "deny" and removed.verdicts[0].rule.reason == "no deletes"
    gate = where.open("builtin:auto").gate(where.open().agent("build"))
    extra = next(layer for layer in gate.layers if layer.name == "--policy")
    assert not extra.rules                        # the file's auto: rules are not --policy rules
    # named twice (the auto agent and --policy), the shipped rules are there once
    gate = where.open("builtin:auto").gate(where.open().agent("auto"))
    assert len(next(layer for layer in gate.layers if layer.name == AUTO_LAYER).rules) == 2


def test_auto_rules_in_the_persons_own_file_apply_to_every_agent(where):
    where.user_policy("""
        auto:
          rules:
            - {permission: bash, pattern: "npm *", action: allow}
          permission:
            edit: {"docs/**": allow}
    """)
    assert where.decide("bash", "npm install", "build").action == "allow"
    assert where.decide("edit", "docs/a.md", "build").action == "allow"
    assert where.decide("bash", "make", "build").action == "ask"
    assert where.decide("bash", "npm install", "build", transactions=False).action == "ask"


def test_delete_rules_hold_unless_your_own_auto_rules_lift_them(where):
    where.user_policy("""
        rules:
          - {permission: delete, pattern: "**", action: ask}
    """)
    world = where.open()
    gate = world.gate(world.agent("auto"))
    edited = [r for r in world.requests("edit", "build/out.o") if r.permission == "edit"]
    deleting = [replace(r, permission="delete") for r in edited]   # as a command's removal
    assert gate.decide(edited).action == "allow" and gate.decide(deleting).action == "ask"
    where.user_policy("""
        rules:
          - {permission: delete, pattern: "**", action: ask}
        auto:
          rules:
            - {permission: delete, pattern: "build/**", action: allow}
    """)
    world = where.open()
    assert world.gate(world.agent("build")).decide(deleting).action == "allow"


def test_an_ask_in_auto_rules_keeps_auto_mode_from_lifting_it(where):
    where.user_policy("""
        auto:
          rules:
            - {permission: bash, pattern: "git push *", action: ask, reason: "pushes: I look"}
    """)
    push = where.decide("bash", "git push origin main")
    assert push.action == "ask" and push.verdicts[0].rule.reason == "pushes: I look"
    assert where.decide("bash", "git commit -m x").action == "allow"


def test_a_projects_file_may_not_say_auto(where):
    path = where.write(where.project / ".dm_cc" / "policy.yaml", """
        rules:
          - {permission: read, pattern: "**", action: allow}
        auto:
          rules: [{permission: bash, pattern: "*", action: allow}]
    """)
    trust_project(where.project, where.env)
    with pytest.raises(PolicyError) as raised:
        where.open().policy   # noqa: B018 - loading is the test
    assert raised.value.line == 3 and str(path.name) in str(raised.value)
    assert "auto: is not accepted from a project's policy" in str(raised.value)


def test_auto_rules_name_only_what_a_transaction_judges(where):
    for permission in ("webfetch", "network", "read", "sandbox_escape", "*", "mcp__git__*"):
        with pytest.raises(PolicyError) as raised:
            parse_policy(textwrap.dedent(f"""
                auto:
                  rules:
                    - {{permission: bash, pattern: "*", action: allow}}
                    - {{permission: "{permission}", pattern: "*", action: allow}}
            """).lstrip(), "mine.yaml")
        assert raised.value.line == 4, permission
        assert "auto: rules may name only bash, edit, delete" in str(raised.value)


def test_auto_rules_are_linted(where):
    shadowed = parse_policy(textwrap.dedent("""
        auto:
          rules:
            - {permission: bash, pattern: "npm *", action: ask}
            - {permission: bash, pattern: "*", action: allow}
    """).lstrip(), "mine.yaml")
    assert [f.kind for f in lint_files([shadowed])] == ["shadowed"]
    assert lint_files([load_policy_arg("builtin:auto")]) == []


# ---------------------------------------------------------------------- where it is in effect


def test_the_world_asks_the_sandbox_whether_commands_run_as_transactions(where):
    where.user_config('sandbox: "off"\n')
    world = where.open(transactions=None)
    assert not world.transactional
    assert world.decide("bash", "npm install", "auto")[1].action == "ask"
    notice = world.auto_notice(world.agent("auto"))
    assert notice is not None and notice.startswith("auto mode is not in effect: ")
    assert world.sandbox.transactions().reason in notice     # why: the sandbox's word
    assert notice.endswith("commands and edits ask as in build")
    assert world.auto_notice(world.agent("build")) is None   # nothing to do with build
    assert world.auto_mode(world.agent("build")) is None


def test_an_mcp_servers_gate_has_no_auto_layer(where):
    world = where.open()
    assert world.transactional
    server = world.server_gate("auto")
    assert not next(layer for layer in server.layers if layer.name == AUTO_LAYER).rules
    assert next(layer for layer in world.gate(world.agent("auto")).layers
                if layer.name == AUTO_LAYER).rules
