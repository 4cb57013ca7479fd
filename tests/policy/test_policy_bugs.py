"""Issue 10's three policy bugs, tried as a new user would:

1. the guardrails stop the catastrophic commands exactly (`rm -rf /`, `/*`, `~` …, in
   every flag spelling) and nothing else: `rm -rf /abs/project/build` is the user's call;
2. `dm_cc policy lint` reports a narrow rule silenced by a later, broader rule of
   another action (`ask git push *` then `allow git *`), in a file and across files;
3. an unknown permission (`reed`, `Bash`) stops dm_cc with file:line and a suggestion;
   an unknown agent name under `agents:` is a lint finding and a warning at load.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from dm_cc.agents.builtin import BUILTIN_AGENTS
from dm_cc.agents.files import parse_agent
from dm_cc.compose import Options, open_world
from dm_cc.errors import AgentFileError, PolicyError
from dm_cc.permissions import Rule
from dm_cc.policy import lint
from dm_cc.policy.lint import lint_rules
from dm_cc.policy.loader import parse_policy
from dm_cc.tools.catalog import entry


class World:
    """A project with .git, an isolated user config dir, managed dir and home."""

    def __init__(self, tmp_path: Path) -> None:
        self.project = tmp_path / "project"
        (self.project / ".git").mkdir(parents=True)
        self.user = tmp_path / "dmcc-home" / "config"
        self.managed = tmp_path / "managed"
        self.managed.mkdir()
        self.home = tmp_path / "home"
        self.home.mkdir()
        self.env = {"DM_CC_HOME": str(tmp_path / "dmcc-home"),
                    "DM_CC_MANAGED_DIR": str(self.managed), "HOME": str(self.home)}

    def write(self, path: Path, text: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
        return path

    def decision(self, command: str, agent: str = "build"):
        world = open_world(Options(), cwd=self.project, env=self.env)
        gate = world.gate(BUILTIN_AGENTS[agent])
        return gate.decide(entry("bash").requests({"command": command}, world.where))

    def decide(self, command: str, agent: str = "build") -> str:
        return self.decision(command, agent).action


@pytest.fixture
def world(tmp_path) -> World:
    return World(tmp_path)


ALLOW_EVERYTHING = "permission:\n  '*': allow\n"

# --------------------------------------------------------------------------- 1. guardrails

CATASTROPHIC = [
    "rm -rf /", "rm -rf /*", "rm -rf ~", "rm -rf ~/", "rm -rf ~/*",
    "rm -fr /", "rm -r -f /", "rm --recursive --force /", "rm -R -f /*", "rm -rf -- /",
    "rm -fr ~/*", "rm --recursive --force ~", "rm -rf --no-preserve-root /",
    "rm --no-preserve-root -rf /", "rm -r --no-preserve-root /*", "rm -r /*", "rm -r ~",
    "sudo rm -rf /", "rm -rf / --no-preserve-root",
    "mkfs /dev/sda1", "mkfs.ext4 /dev/sda1", "mkfs.vfat -F 32 /dev/sdb",
    "dd if=/dev/zero of=/dev/sda", "dd if=x.img of=/dev/nvme0n1 bs=4M",
    "chmod -R 777 /", "chmod --recursive 000 /", "chown -R me /", "chown -R me:me /",
    "chmod -R 777 ~", "chown -R nobody ~/", "chmod -R u+w / x", "chgrp -R staff ~",
    "rm -rf ~/.*", "rm -rf build ~", "rm -rf build / dist", "rm -rf //",
    "mkfs.ext4 -L data /dev/nvme0n1p1", "dd of=/dev/sda if=x.img",
]

USER_DECIDES = [
    "rm -rf /home/me/project/build", "rm -fr /tmp/scratch", "rm -r -f /opt/app/cache",
    "rm -rf ~/project/build", "rm -rf ~/.cache/pip",
    "chmod -R 755 /srv/www", "chown -R me /home/me/project", "chmod -R 644 ./dist",
    "dd if=/dev/zero of=/tmp/disk.img bs=1M count=10", "dd if=/dev/zero of=/dev/null bs=1M",
    "mkfs.ext4 disk.img", "rm -rf ./~",
]


@pytest.mark.parametrize("agent", sorted(BUILTIN_AGENTS))
@pytest.mark.parametrize("command", CATASTROPHIC)
def test_catastrophic_commands_are_denied_under_an_allow_everything_policy(world, command, agent):
    world.write(world.user / "policy.yaml", ALLOW_EVERYTHING)
    assert world.decide(command, agent) == "deny"


@pytest.mark.parametrize("command", CATASTROPHIC)
def test_catastrophic_commands_are_denied_without_a_policy(world, command):
    assert world.decide(command) == "deny"


@pytest.mark.parametrize("spelling", ["{home}", "{home}/", "{home}/*", "x {home}"])
def test_the_home_directory_spelled_out_is_denied_too(world, spelling):
    world.write(world.user / "policy.yaml", ALLOW_EVERYTHING)
    home = world.home.as_posix()
    assert world.decide("rm -rf " + spelling.format(home=home)) == "deny"
    assert world.decide("chmod -R 000 " + spelling.format(home=home)) == "deny"
    assert world.decide(f"rm -rf {home}/project/build") == "allow"
    assert world.decide(f"rm -rf {home}x") == "allow"


@pytest.mark.parametrize("command", USER_DECIDES)
def test_an_ordinary_absolute_path_is_decided_by_the_users_rules(world, command):
    assert world.decide(command) == "ask"
    world.write(world.user / "policy.yaml", ALLOW_EVERYTHING)
    assert world.decide(command) == "allow"


def test_a_user_allow_for_a_build_directory_works(world):
    world.write(world.user / "policy.yaml", """
        rules:
          - {permission: bash, pattern: "rm -rf /home/me/project/build", action: allow}
    """)
    def shell_verdict(command):
        return [v.action for v in world.decision(command).verdicts
                if v.request.permission == "bash"]

    assert shell_verdict("rm -rf /home/me/project/build") == ["allow"]
    assert shell_verdict("rm -rf /home/me/project/src") == ["ask"]


def test_an_escaped_star_is_a_literal_star_in_a_shell_rule():
    from support.requests import evaluate

    from dm_cc.permissions import Ruleset

    rules = Ruleset([Rule("bash", r"rm -rf /\*", "deny")])
    assert evaluate("bash", "rm -rf /*", rules).action == "deny"
    assert evaluate("bash", "rm -rf /etc", rules).action == "ask"
    assert evaluate("bash", "rm -rf /x*", rules).action == "ask"
    assert evaluate("bash", r"rm -rf /\x", rules).action == "ask"
    literal_q = Ruleset([Rule("bash", r"echo a\?", "allow")])
    assert evaluate("bash", "echo a?", literal_q).action == "allow"
    assert evaluate("bash", "echo ab", literal_q).action == "ask"
    backslash = Ruleset([Rule("bash", r"echo a\\*", "allow")])
    assert evaluate("bash", "echo a\\bc", backslash).action == "allow"


# --------------------------------------------------------------------------- 2. lint

def _rules(*specs: tuple[str, str, str, str]) -> list[Rule]:
    return [Rule(p, pat, a, None, src) for p, pat, a, src in specs]


SILENCED = {
    "ask-push-then-allow-git": (("bash", "git push *", "ask", "p.yaml:3"),
                                ("bash", "git *", "allow", "p.yaml:7")),
    "deny-then-allow-all-bash": (("bash", "rm -rf *", "deny", "p.yaml:2"),
                                 ("bash", "*", "allow", "p.yaml:3")),
    "deny-force-then-allow-git": (("bash", "git push --force *", "deny", "p.yaml:2"),
                                  ("bash", "git *", "allow", "p.yaml:5")),
    "ask-literal-then-allow-npm": (("bash", "npm publish", "ask", "p.yaml:2"),
                                   ("bash", "npm *", "allow", "p.yaml:3")),
    "path-ask-then-allow-everything": (("edit", "src/generated/**", "ask", "p.yaml:2"),
                                       ("edit", "**/*", "allow", "p.yaml:3")),
    "path-allow-then-deny-dir": (("edit", "src/generated/**", "allow", "p.yaml:2"),
                                 ("edit", "src/**", "deny", "p.yaml:3")),
    "path-allow-file-then-ask": (("read", "src/a.txt", "allow", "p.yaml:2"),
                                 ("read", "src/*", "ask", "p.yaml:3")),
    "webfetch-deny-then-allow-host": (("webfetch", "https://example.com/private/*", "deny",
                                       "p.yaml:2"),
                                      ("webfetch", "https://example.com/*", "allow", "p.yaml:3")),
}


@pytest.mark.parametrize("earlier, later", SILENCED.values(), ids=SILENCED.keys())
def test_lint_reports_a_narrow_rule_silenced_by_a_later_broader_one(earlier, later):
    findings = [f for f in lint_rules(_rules(earlier, later)) if f.kind == "shadowed"]
    assert len(findings) == 1, findings
    text = str(findings[0])
    assert text.startswith(f"{earlier[3]}: shadowed: ")
    assert earlier[3] in text and later[3] in text
    assert repr(earlier[1]) in text and repr(later[1]) in text
    assert "after" in text  # how to fix: put the narrower rule after the broader one


NOT_SILENCED = {
    "allow-git-then-ask-push": (("bash", "git *", "allow", "p.yaml:2"),
                                ("bash", "git push *", "ask", "p.yaml:3")),
    "ask-push-then-allow-git-status": (("bash", "git push *", "ask", "p.yaml:2"),
                                       ("bash", "git status *", "allow", "p.yaml:3")),
    # the ask also catches `git -C x push`, which `allow git push *` does not match
    "ask-push-then-allow-push-star": (("bash", "git push *", "ask", "p.yaml:2"),
                                      ("bash", "git push origin *", "allow", "p.yaml:3")),
    "deny-rm-then-allow-other": (("bash", "rm -rf *", "deny", "p.yaml:2"),
                                 ("bash", "rmdir *", "allow", "p.yaml:3")),
    "other-permission": (("bash", "git push *", "ask", "p.yaml:2"),
                         ("edit", "*", "allow", "p.yaml:3")),
    "path-dir-then-narrower": (("edit", "src/**", "allow", "p.yaml:2"),
                               ("edit", "src/generated/**", "ask", "p.yaml:3")),
    # the deny/ask also decides other letter cases (SRC/generated/x); the allow does not
    "path-ask-then-allow-dir": (("edit", "src/generated/**", "ask", "p.yaml:2"),
                                ("edit", "src/**", "allow", "p.yaml:3")),
    "path-ask-then-allow-home": (("read", "~/.ssh/**", "ask", "p.yaml:2"),
                                 ("read", "~/**", "allow", "p.yaml:3")),
    "path-sibling": (("edit", "srcx/**", "ask", "p.yaml:2"),
                     ("edit", "src/**", "allow", "p.yaml:3")),
    "wildcard-in-the-middle": (("bash", "git * --force", "deny", "p.yaml:2"),
                               ("bash", "git push *", "allow", "p.yaml:3")),
}


@pytest.mark.parametrize("earlier, later", NOT_SILENCED.values(), ids=NOT_SILENCED.keys())
def test_lint_does_not_report_rules_in_the_right_order(earlier, later):
    assert [f for f in lint_rules(_rules(earlier, later)) if f.kind == "shadowed"] == []


def test_lint_reports_a_user_allow_silencing_a_project_rule():
    project = parse_policy('rules:\n  - {permission: bash, pattern: "git push *", '
                           'action: ask}\n', ".dm_cc/policy.yaml")
    user = parse_policy('permission:\n  bash:\n    "git *": allow\n', "~/.config/policy.yaml")
    findings = [f for f in lint.lint_files([project, user]) if f.kind == "shadowed"]
    assert len(findings) == 1, findings
    assert ".dm_cc/policy.yaml:2" in str(findings[0])
    assert "~/.config/policy.yaml:3" in str(findings[0])
    assert lint.lint_files([user, project]) == []


# --------------------------------------------------------------------------- 3. unknown names

@pytest.mark.parametrize("text, line, name, hint", [
    ('rules:\n  - {permission: reed, pattern: "*", action: allow}\n', 2, "reed", "read"),
    ('rules:\n  - {permission: Bash, pattern: "*", action: allow}\n', 2, "Bash", "bash"),
    ('permission:\n  edt: ask\n', 2, "edt", "edit"),
    ('permission:\n  webfech:\n    "*": deny\n', 2, "webfech", "webfetch"),
    ('agents:\n  plan:\n    rules:\n      - {permission: eddit, pattern: "*", action: allow}\n',
     4, "eddit", "edit"),
    ('rules:\n  - {permission: write, pattern: "*", action: allow}\n', 2, "write", "edit"),
])
def test_an_unknown_permission_stops_loading_with_a_suggestion(text, line, name, hint):
    with pytest.raises(PolicyError) as caught:
        parse_policy(text, "p.yaml")
    message = str(caught.value)
    assert message.startswith(f"p.yaml:{line}:"), message
    assert repr(name) in message and hint in message


@pytest.mark.parametrize("permission", ["*", "mcp__*", "mcp__git__push", "mcp__git__*",
                                        "read", "external_directory", "doom_loop", "e*"])
def test_known_permissions_and_wildcards_load(permission):
    parse_policy(f'rules:\n  - {{permission: "{permission}", pattern: "*", action: ask}}\n',
                 "p.yaml")


def test_an_unknown_permission_in_an_agent_file_stops_loading():
    text = "---\ndescription: x\npermission:\n  reed: allow\n---\nbody\n"
    with pytest.raises(AgentFileError) as caught:
        parse_agent(text, "docs", "docs.md")
    assert "docs.md:4:" in str(caught.value) and "read" in str(caught.value)


def test_an_unknown_agent_name_is_a_lint_finding_with_a_suggestion():
    policy = parse_policy('agents:\n  paln:\n    rules:\n'
                          '      - {permission: edit, pattern: "*", action: allow}\n', "p.yaml")
    findings = [f for f in lint.lint_files([policy], known_agents=set(BUILTIN_AGENTS))
                if f.kind == "unknown-agent"]
    assert len(findings) == 1
    assert str(findings[0]).startswith("p.yaml:2: unknown-agent: ")
    assert "plan" in str(findings[0])
    assert lint.lint_files([parse_policy('agents:\n  plan: {rules: []}\n', "q.yaml")],
                      known_agents=set(BUILTIN_AGENTS)) == []


def test_backslashes_escape_only_in_shell_patterns():
    from support.requests import evaluate

    from dm_cc.permissions import Ruleset

    # JSON and URLs keep a backslash as plain text (JSON spells one as `\\`)
    rules = Ruleset([Rule("mcp__fs__read", '{"path": "C:\\\\*', "deny"),
                     Rule("webfetch", "https://x/a\\*", "deny")])
    assert evaluate("mcp__fs__read", '{"path": "C:\\\\Users\\\\me"}', rules).action == "deny"
    assert evaluate("webfetch", "https://x/a\\b", rules).action == "deny"
    assert evaluate("webfetch", "https://x/a*", rules).action == "ask"
