"""The layer stack (DESIGN.md section 3): discovery, order, agents, approvals, enforced."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from support.requests import Request
from support.trust import trust_project

from dm_cc.agents.builtin import BUILTIN_AGENTS
from dm_cc.compose import Options, open_world
from dm_cc.errors import PolicyError, UsageError
from dm_cc.permissions import Rule
from dm_cc.tools.catalog import entry


class World:
    """A project with .git, an isolated user config dir and managed dir."""

    def __init__(self, tmp_path: Path) -> None:
        self.project = tmp_path / "project"
        (self.project / ".git").mkdir(parents=True)
        (self.project / "src").mkdir()
        self.dm_cc_home = tmp_path / "dmcc-home"
        self.user = self.dm_cc_home / "config"
        self.managed = tmp_path / "managed"
        self.managed.mkdir()
        self.home = tmp_path / "home"
        self.home.mkdir()
        self.env = {"DM_CC_HOME": str(self.dm_cc_home), "DM_CC_MANAGED_DIR": str(self.managed),
                    "HOME": str(self.home)}

    def write(self, path: Path, text: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
        return path

    def project_policy(self, text: str, name: str = "policy.yaml") -> Path:
        where = self.project / ".dm_cc"
        return self.write(where / name if name == "policy.yaml" else where / "policies" / name,
                          text)

    def user_policy(self, text: str) -> Path:
        return self.write(self.user / "policy.yaml", text)

    def trust(self) -> None:
        """Trust the project's own files as they are now (``dm_cc trust``)."""
        trust_project(self.project, self.env)

    def open(self, extra=(), cwd: Path | None = None):
        """The composition root, as dm_cc builds it in ``cwd``."""
        return open_world(Options(policies=tuple(str(p) for p in extra)),
                          cwd=cwd or self.project, env=self.env)

    def load(self, extra=(), cwd: Path | None = None):
        return self.open(extra, cwd).policy

    def decide(self, tool: str, args: dict, agent: str = "build", approvals=(), extra=(),
               cwd: Path | None = None):
        world = self.open(extra, cwd)
        gate = world.gate(BUILTIN_AGENTS[agent], approvals=approvals)
        return gate.decide(entry(tool).requests(args, world.where))


@pytest.fixture
def world(tmp_path) -> World:
    return World(tmp_path)


def bash(command: str) -> tuple[str, dict]:
    return "bash", {"command": command}


def read(path: str) -> tuple[str, dict]:
    return "read", {"path": path}


def edit(path: str) -> tuple[str, dict]:
    return "edit", {"path": path}


# --------------------------------------------------------------------------- built-in defaults


@pytest.mark.parametrize("call, expected, source", [
    (read("src/main.py"), "allow", "builtin:defaults"),
    (read("README.md"), "allow", "builtin:defaults"),
    (read(".env"), "ask", "builtin:defaults"),
    (read("config/.env.production"), "ask", "builtin:defaults"),
    (edit("src/main.py"), "ask", "builtin:defaults"),
    (("write", {"path": "new.txt"}), "ask", "builtin:defaults"),
    (bash("git status"), "allow", "builtin:defaults"),
    (bash("ls -la"), "allow", "builtin:defaults"),
    (bash("npm install"), "ask", "builtin:defaults"),
    (bash("git push origin main"), "ask", "builtin:defaults"),
    (("webfetch", {"url": "https://example.com"}), "ask", "builtin:defaults"),
    (("list", {"path": "src"}), "allow", "builtin:defaults"),
])
def test_builtin_defaults_are_like_claude_code_default_mode(world, call, expected, source):
    decision = world.decide(*call)
    assert decision.action == expected
    assert {v.rule.source for v in decision.deciding} == {source}


def test_reading_outside_the_project_asks_through_external_directory(world):
    decision = world.decide(*read("/etc/hosts"))
    assert decision.action == "ask"
    by_permission = {v.request.permission: v for v in decision.verdicts}
    assert set(by_permission) == {"read", "external_directory"}
    assert by_permission["external_directory"].request.pattern == "/etc"
    assert by_permission["external_directory"].action == "ask"


def test_guardrails_deny_catastrophe_whatever_the_policy_says(world):
    world.user_policy("""
        permission:
          bash: allow
    """)
    assert world.decide(*bash("npm install")).action == "allow"
    decision = world.decide(*bash("rm -rf /"))
    assert decision.action == "deny"
    assert decision.verdicts[0].rule.source == "builtin:guardrails"


# --------------------------------------------------------------------------- discovery


def test_project_root_is_found_from_a_subdirectory(world):
    world.project_policy("""
        rules:
          - {permission: bash, pattern: "make *", action: allow}
    """)
    sub = world.project / "src" / "deep"
    sub.mkdir(parents=True)
    policy = world.load(cwd=sub)
    assert policy.root == world.project.resolve()
    assert [r.pattern for f in policy.project for r in f.rules] == ["make *"]


def test_project_policies_dir_is_loaded_sorted_after_policy_yaml(world):
    world.project_policy("rules: [{permission: bash, pattern: 'a', action: allow}]\n")
    world.project_policy("rules: [{permission: bash, pattern: 'c', action: allow}]\n",
                         name="20-c.yaml")
    world.project_policy("rules: [{permission: bash, pattern: 'b', action: allow}]\n",
                         name="10-b.yml")
    world.project_policy("rules: [oops this is not loaded\n", name="notes.txt")
    policy = world.load()
    assert [r.pattern for f in policy.project for r in f.rules] == ["a", "b", "c"]
    assert [Path(f.path).name for f in policy.project] == ["policy.yaml", "10-b.yml", "20-c.yaml"]


def test_sorted_order_decides_between_project_files(world):
    world.project_policy("rules: [{permission: bash, pattern: 'make *', action: deny}]\n",
                         name="b.yaml")
    world.project_policy("rules: [{permission: bash, pattern: 'make *', action: allow}]\n",
                         name="a.yaml")
    decision = world.decide(*bash("make test"))
    assert decision.action == "deny"
    assert decision.verdicts[0].rule.source.endswith("b.yaml:1")


def test_user_policy_lives_in_dm_cc_home_config(world):
    path = world.user_policy("rules: [{permission: bash, pattern: 'make *', action: allow}]\n")
    assert path == world.dm_cc_home / "config" / "policy.yaml"
    policy = world.load()
    assert [r.pattern for f in policy.user for r in f.rules] == ["make *"]
    assert world.decide(*bash("make test")).action == "allow"


def test_user_policies_dir_is_loaded_too(world):
    world.write(world.user / "policies" / "x.yaml",
                "rules: [{permission: bash, pattern: 'cargo *', action: allow}]\n")
    assert world.decide(*bash("cargo build")).action == "allow"


def test_managed_policy_and_policies_dir_are_loaded(world):
    world.write(world.managed / "policy.yaml",
                "rules: [{permission: bash, pattern: 'make *', action: allow}]\n")
    world.write(world.managed / "policies" / "a.yaml",
                "rules: [{permission: bash, pattern: 'cargo *', action: allow}]\n")
    assert world.decide(*bash("make x")).action == "allow"
    assert world.decide(*bash("cargo x")).action == "allow"
    assert len(world.load().managed) == 2


def test_dm_cc_managed_dir_through_the_process_environment(world, monkeypatch):
    world.write(world.managed / "enforced.yaml",
                "rules: [{permission: bash, pattern: 'ls *', action: deny}]\n")
    for name, value in world.env.items():
        monkeypatch.setenv(name, value)
    policy = open_world(cwd=world.project).policy
    assert [r.pattern for f in policy.enforced for r in f.rules] == ["ls *"]


def test_nothing_configured_means_only_builtin_layers(world):
    policy = world.load()
    assert policy.files == ()


def test_missing_extra_policy_file_is_a_usage_error(world, tmp_path):
    with pytest.raises(UsageError) as caught:
        world.load(extra=[tmp_path / "missing.yaml"])
    assert "missing.yaml" in str(caught.value)


def test_a_malformed_layer_file_fails_the_whole_load(world):
    world.project_policy("rules: [{permission: bash, pattern: 'ls', action: allow}]\n")
    world.user_policy("rules:\n  - {permission: bash, pattern: x, action: nope}\n")
    with pytest.raises(PolicyError) as caught:
        world.load()
    assert caught.value.line == 2
    assert caught.value.path.endswith("config/policy.yaml")


# --------------------------------------------------------------------------- later layers win


def test_user_policy_beats_project_policy(world):
    world.project_policy("rules: [{permission: bash, pattern: 'make *', action: allow}]\n")
    world.user_policy("rules: [{permission: bash, pattern: 'make *', action: deny}]\n")
    decision = world.decide(*bash("make test"))
    assert decision.action == "deny"
    assert "config/policy.yaml" in decision.verdicts[0].rule.source


def test_a_trusted_project_policy_opens_the_builtin_floor_never_the_managed_base(world):
    world.write(world.managed / "policy.yaml",
                "rules: [{permission: bash, pattern: 'make *', action: deny}]\n")
    world.project_policy("rules: [{permission: bash, pattern: '*', action: allow}]\n")
    world.trust()
    assert world.decide(*bash("npm test")).action == "allow"
    decision = world.decide(*bash("make test"))
    assert decision.action == "deny"
    assert "cannot overrule your own files or the managed policy" in decision.verdicts[0].note


def test_extra_policy_beats_user_policy_and_later_extras_win(world, tmp_path):
    world.user_policy("rules: [{permission: bash, pattern: 'make *', action: deny}]\n")
    first = world.write(tmp_path / "first.yaml",
                        "rules: [{permission: bash, pattern: 'make *', action: allow}]\n")
    second = world.write(tmp_path / "second.yaml",
                         "rules: [{permission: bash, pattern: 'make test', action: ask}]\n")
    assert world.decide(*bash("make build"), extra=[first]).action == "allow"
    decision = world.decide(*bash("make test"), extra=[first, second])
    assert decision.action == "ask"
    assert decision.verdicts[0].rule.source.endswith("second.yaml:1")
    assert world.decide(*bash("make test"), extra=[second, first]).action == "allow"


def test_builtin_defaults_can_be_changed_by_any_layer(world):
    world.project_policy("""
        permission:
          read:
            ".env*": deny
          edit:
            "src/**": allow
          bash:
            "git status *": deny
    """)
    world.trust()
    assert world.decide(*read(".env")).action == "deny"
    assert world.decide(*edit("src/a.py")).action == "allow"
    assert world.decide(*edit("docs/a.md")).action == "ask"
    assert world.decide(*bash("git status")).action == "deny"


def test_global_edit_allow_does_not_open_the_plan_agent(world):
    world.user_policy("permission:\n  edit: allow\n")
    assert world.decide(*edit("src/a.py")).action == "allow"
    decision = world.decide(*edit("src/a.py"), agent="plan")
    assert decision.action == "deny"
    assert decision.verdicts[0].rule.source == "builtin:plan"   # what the plan agent may do at all
    # the plan agent may still write its plan file (named exactly in a session: a
    # protected path, .dm_cc/, opens only to a rule naming it)
    gate = world.open().gate(BUILTIN_AGENTS["plan"], session_id="p")
    assert gate.decide(entry("edit").requests({"path": ".dm_cc/plans/p.md", "old": "",
                                                "new": "x"}, world.open().where)).action == "allow"


def test_global_bash_allow_does_not_open_plan_or_explore(world):
    world.user_policy("permission:\n  bash: allow\n")
    assert world.decide(*bash("npm install")).action == "allow"
    assert world.decide(*bash("npm install"), agent="plan").action == "deny"
    assert world.decide(*bash("npm install"), agent="explore").action == "deny"
    assert world.decide(*bash("git status"), agent="plan").action == "allow"


def test_agents_override_opens_an_agent(world):
    world.user_policy("""
        agents:
          general:
            rules:
              - {permission: edit, pattern: "docs/**/*.md", action: allow}
    """)
    decision = world.decide(*edit("docs/guide/a.md"), agent="general")
    assert decision.action == "allow"
    assert decision.verdicts[0].rule.source.endswith("config/policy.yaml:4")
    assert world.decide(*edit("src/a.py"), agent="general").action == "ask"


def test_an_override_cannot_open_a_read_only_agent_beyond_reading(world):
    world.user_policy("""
        permission:
          edit: allow
          bash: allow
          webfetch: allow
        agents:
          plan:
            rules:
              - {permission: "*", pattern: "*", action: allow}
              - {permission: edit, pattern: "docs/**/*.md", action: allow}
    """)
    for call in (edit("docs/guide/a.md"), bash("npm test"), ("webfetch", {"url": "https://a.example/"})):
        decision = world.decide(*call, agent="plan")
        assert decision.action == "deny", call
        assert decision.deciding[0].rule.source == "builtin:plan"
    assert world.decide(*bash("git status"), agent="plan").action == "allow"
    # its plan file is not denied (the override's catch-all asks for it: an edit in
    # .dm_cc/ is allowed only by a rule that names it, as the plan agent's own does)
    assert world.decide(*edit(".dm_cc/plans/p.md"), agent="plan").action == "ask"


def test_agents_override_for_one_agent_does_not_leak_to_another(world):
    world.project_policy("""
        agents:
          general:
            permission:
              bash: allow
    """)
    world.trust()
    assert world.decide(*bash("npm test"), agent="general").action == "allow"
    assert world.decide(*bash("npm test"), agent="explore").action == "deny"
    assert world.decide(*bash("npm test"), agent="build").action == "ask"


def test_agents_overrides_follow_file_order(world, tmp_path):
    world.project_policy("agents: {general: {permission: {bash: allow}}}\n")
    world.user_policy("agents: {general: {permission: {bash: deny}}}\n")
    assert world.decide(*bash("npm test"), agent="general").action == "deny"
    extra = world.write(tmp_path / "x.yaml", "agents: {general: {permission: {bash: allow}}}\n")
    assert world.decide(*bash("npm test"), agent="general", extra=[extra]).action == "allow"


def test_enforced_beats_everything(world, tmp_path):
    world.write(world.managed / "enforced.yaml", """
        rules:
          - {permission: bash, pattern: "git status *", action: deny, reason: "org rule"}
        agents:
          plan:
            permission:
              edit: deny
    """)
    world.user_policy("""
        rules:
          - {permission: bash, pattern: "git status *", action: allow}
        agents:
          plan:
            permission:
              edit: allow
    """)
    extra = world.write(tmp_path / "x.yaml",
                        "rules: [{permission: bash, pattern: '*', action: allow}]\n")
    approvals = [Rule("bash", "git status *", "allow", source="approval:session")]
    decision = world.decide(*bash("git status"), extra=[extra], approvals=approvals)
    assert decision.action == "deny"
    assert decision.verdicts[0].rule.reason == "org rule"
    assert decision.verdicts[0].rule.source.endswith("enforced.yaml:2")
    assert world.decide(*edit("docs/a.md"), agent="plan").action == "deny"
    assert world.decide(*bash("git status"), agent="plan").action == "deny"


def test_layers_are_in_the_documented_order(world):
    policy = world.load()
    names = [layer.name for layer in policy.layers(BUILTIN_AGENTS["plan"])]
    assert names[0] == "builtin" and names[-1] == "enforced"
    order = ["builtin", "managed", "project", "user", "--policy", "agent:plan", "agents.plan",
             "approvals", "enforced"]
    assert list(dict.fromkeys(n for n in names if n in order)) == order


# --------------------------------------------------------------------------- approvals


def test_approval_turns_ask_into_allow(world):
    approval = Rule("bash", "npm install *", "allow", source="approval:session")
    assert world.decide(*bash("npm install")).action == "ask"
    decision = world.decide(*bash("npm install"), approvals=[approval])
    assert decision.action == "allow"
    assert decision.verdicts[0].rule is approval


def test_approval_never_overrides_a_configured_deny(world):
    world.project_policy("""
        rules:
          - {permission: bash, pattern: "npm publish *", action: deny, reason: "CI publishes"}
    """)
    approvals = [Rule("bash", "npm *", "allow", source="approval:persisted")]
    assert world.decide(*bash("npm install"), approvals=approvals).action == "allow"
    decision = world.decide(*bash("npm publish"), approvals=approvals)
    assert decision.action == "deny"
    assert decision.verdicts[0].rule.reason == "CI publishes"


def test_approval_never_overrides_a_managed_ask_but_does_a_project_one(world):
    world.write(world.managed / "policy.yaml", """
        rules:
          - {permission: bash, pattern: "git push *", action: ask, reason: "org: pushes are reviewed"}
    """)
    world.project_policy("""
        rules:
          - {permission: bash, pattern: "npm publish *", action: ask}
    """)
    approvals = [Rule("bash", "git push *", "allow", source="approval:apr_1"),
                 Rule("bash", "npm publish *", "allow", source="approval:apr_2")]
    pushed = world.decide(*bash("git push origin main"), approvals=approvals)
    assert pushed.action == "ask" and pushed.verdicts[0].rule.reason == "org: pushes are reviewed"
    assert world.decide(*bash("npm publish"), approvals=approvals).action == "allow"


def test_approval_never_overrides_an_agent_deny(world):
    approvals = [Rule("bash", "npm install *", "allow", source="approval:session")]
    decision = world.decide(*bash("npm install"), agent="plan", approvals=approvals)
    assert decision.action == "deny"
    assert decision.verdicts[0].rule.source == "builtin:plan"


def test_approval_never_overrides_a_case_insensitive_deny(world):
    world.project_policy("rules: [{permission: read, pattern: 'secrets/**', action: deny}]\n")
    approvals = [Rule("read", "SECRETS/**", "allow", source="approval:session")]
    assert world.decide(*read("SECRETS/key"), approvals=approvals).action == "deny"


def test_approval_does_not_allow_an_unallowable_request(world):
    approvals = [Rule("bash", "*", "allow", source="approval:session")]
    policy = world.load()
    gate = policy.gate(BUILTIN_AGENTS["build"], approvals=approvals)
    decision = gate.decide([Request("bash", "$X y", allowable=False)])
    assert decision.action == "ask"
    assert gate.decide([Request("bash", "make")]).action == "allow"


def test_gate_decides_an_empty_request_set_as_ask(world):
    gate = world.load().gate(BUILTIN_AGENTS["build"])
    assert gate.decide([]).action == "ask"


# --------------------------------------------------------------------------- the sandbox's openers

OPENERS = """
rules:
  - {permission: network, pattern: "*", action: allow}
  - {permission: sandbox_escape, pattern: "*", action: allow}
"""


def judge_openers(world: World, agent: str = "build", extra=(), approvals=()) -> dict[str, str]:
    gate = world.open(extra).gate(BUILTIN_AGENTS[agent], approvals=approvals)
    return {permission: gate.judge(Request(permission, pattern)).action
            for permission, pattern in (("network", "*"), ("network", "pypi.org"),
                                        ("sandbox_escape", "make test"))}


@pytest.mark.parametrize("trusted", [False, True])
def test_a_projects_policy_cannot_open_the_sandbox(world, trusted):
    world.project_policy(OPENERS)
    if trusted:
        world.trust()
    assert set(judge_openers(world).values()) == {"ask"}
    gate = world.open().gate(BUILTIN_AGENTS["build"])
    verdict = gate.judge(Request("network", "*"))
    if trusted:   # (untrusted, its allow rules say nothing at all)
        assert "never open anything beyond the project" in (verdict.note or "")


def test_the_users_own_files_and_answers_open_it(world, tmp_path):
    world.project_policy(OPENERS)
    extra = world.write(tmp_path / "mine.yaml", OPENERS)
    assert set(judge_openers(world, extra=[extra]).values()) == {"allow"}
    world.user_policy(OPENERS)
    assert set(judge_openers(world).values()) == {"allow"}


def test_an_answer_opens_what_it_names_even_in_a_project_that_tried(world):
    world.project_policy(OPENERS)
    approval = Rule("sandbox_escape", "make test", "allow", source="approval:session")
    assert judge_openers(world, approvals=[approval])["sandbox_escape"] == "allow"


def test_a_project_may_still_close_the_sandbox_tighter(world):
    world.user_policy(OPENERS)
    world.project_policy("""
        rules:
          - {permission: network, pattern: "pypi.org", action: deny}
        """)
    gate = world.open().gate(BUILTIN_AGENTS["build"])
    assert gate.judge(Request("network", "pypi.org")).action == "allow"  # user's file is later
    world.project_policy("""
        rules:
          - {permission: sandbox_escape, pattern: "*", action: deny}
        """)
    world.user_policy("rules: []\n")
    assert judge_openers(world)["sandbox_escape"] == "deny"


def test_other_permissions_keep_the_projects_rules(world):
    world.project_policy("""
        rules:
          - {permission: bash, pattern: "make *", action: allow}
        """)
    assert world_decides(world, bash("make test")) == "ask"    # until the person trusts it
    world.trust()
    assert world_decides(world, bash("make test")) == "allow"


def world_decides(world: World, call: tuple[str, dict]) -> str:
    return world.decide(*call).action
