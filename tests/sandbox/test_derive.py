"""The spec derived from the policy (DESIGN.md §8), on real project trees and the
gates dm_cc builds from real policy files: no bubblewrap involved."""

from __future__ import annotations

import os
import subprocess
import time

import pytest
from support.sandbox_projects import RULES, WORKS, Project, covered, paths, rule

from dm_cc.compose import Options, open_world
from dm_cc.config.dirs import PROJECT_DIR
from dm_cc.permissions import Gate, Layer, PathContext, Rule
from dm_cc.sandbox.derive import PIN_LIMIT, PINNED, Private, spec_for
from dm_cc.sandbox.git import GITLINK
from dm_cc.sandbox.host import Sandbox
from dm_cc.sandbox.machine import KnownMachine, LocalMachine, TreeLister
from dm_cc.sandbox.spec import Mount


@pytest.fixture
def project(tmp_path) -> Project:
    return Project(tmp_path)


# --------------------------------------------------------------------------- writable

def test_writable_is_the_project_and_the_session_tmpdir(project):
    spec = project.files("src/a.py").spec()
    writable = {m.path for m in spec.writable if m.why != PINNED}
    assert writable == {project.root.as_posix(), spec.env["TMPDIR"]}
    assert not covered(project.home.as_posix(), spec.writable)
    assert spec.cwd == project.root.as_posix()


def test_a_worktree_git_dirs_are_writable_and_their_config_and_hooks_are_not(tmp_path):
    main = tmp_path / "main"
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", str(main)], check=True)
    (main / "f").write_text("x")
    subprocess.run([*git, "-C", str(main), "add", "f"], check=True)
    subprocess.run([*git, "-C", str(main), "commit", "-qm", "f"], check=True)
    subprocess.run([*git, "-C", str(main), "worktree", "add", "-q", str(tmp_path / "project")],
                   check=True)
    project = Project.__new__(Project)
    project.tmp, project.root, project.home = tmp_path, tmp_path / "project", tmp_path / "home"
    project.home.mkdir()
    project.env = {"HOME": str(project.home), "DM_CC_HOME": str(tmp_path / "dm"),
                   "DM_CC_MANAGED_DIR": str(tmp_path / "managed")}
    spec = project.spec()
    common = (main / ".git").resolve().as_posix()
    assert covered(common + "/objects/x", spec.writable)
    assert covered(common + "/worktrees/project/index", spec.writable)
    assert {common + "/config", common + "/hooks"} <= paths(spec.read_only)


# --------------------------------------------------------------------------- read-only

def test_dm_cc_git_config_and_hooks_are_read_only_the_rest_of_git_is_not(project):
    spec = project.spec()
    assert {project.path(".dm_cc"), project.path(".git/config"),
            project.path(".git/hooks")} <= paths(spec.read_only)
    assert not covered(project.path(".git/index"), spec.read_only)
    assert not covered(project.path(".git/objects/ab/cdef"), spec.read_only)


def test_every_git_dir_in_the_project_has_its_config_and_hooks_read_only(project):
    """A submodule's git dir (``.git/modules/x``) and a nested repository's run
    commands from their config and hooks too."""
    for git_dir in (".git/modules/lib", "vendor/tool/.git"):
        project.files(f"{git_dir}/HEAD", f"{git_dir}/config", f"{git_dir}/hooks/pre-commit.sample",
                      f"{git_dir}/objects/ab/cdef")
    read_only = paths(project.spec().read_only)
    for git_dir in (".git/modules/lib", "vendor/tool/.git"):
        assert {project.path(f"{git_dir}/config"), project.path(f"{git_dir}/hooks")} <= read_only


def test_directories_holding_a_read_only_path_are_pinned(project):
    """A mount point cannot be renamed: ``mv sub sub2 && mkdir sub`` would otherwise
    move a protected file aside with its directory and let a new one take its place."""
    project.files("a/b/c.lock", "top.lock")
    project.policy(RULES([rule("edit", "*.lock", "deny")]))
    spec = project.spec()
    pinned = {m.path for m in spec.writable if m.why == PINNED}
    assert pinned == {project.path(".git"), project.path("a"), project.path("a/b")}


def test_git_files_and_commondir_are_read_only(project):
    """A gitlink (``.git`` file of a submodule or worktree) and ``commondir`` say
    where git finds its config: rewritten, git would run another one."""
    project.files("vendor/lib/.git", ".git/commondir", ".git/worktrees/wt/HEAD",
                  ".git/worktrees/wt/commondir", ".git/worktrees/wt/config.worktree")
    read_only = {m.path: m.why for m in project.spec().read_only}
    assert read_only[project.path("vendor/lib/.git")] == GITLINK
    assert {project.path(".git/commondir"), project.path(".git/worktrees/wt/commondir"),
            project.path(".git/worktrees/wt/config.worktree")} <= set(read_only)


def test_a_git_dir_without_hooks_gets_an_empty_read_only_one(project):
    """Else a command could add ``.git/hooks/pre-commit``, which the person's next
    ``git commit`` would run outside the sandbox."""
    (project.root / ".git" / "hooks").rmdir()
    hooks = next(m for m in project.spec().hidden if m.path == project.path(".git/hooks"))
    assert hooks.directory and "none can be added" in hooks.why


def test_paths_an_edit_rule_denies_or_asks_about_by_name_are_read_only(project):
    project.files("x.lock", "sub/y.lock", "migrations/0001.sql", "src/a.py")
    project.policy(RULES([rule("edit", "*.lock", "deny"), rule("edit", "migrations/**", "ask")]))
    spec = project.spec()
    assert {project.path("x.lock"), project.path("sub/y.lock")} <= paths(spec.read_only)
    migrations = next(m for m in spec.read_only if m.path == project.path("migrations"))
    assert migrations.directory and "ask edit migrations/**" in migrations.why
    assert not covered(project.path("src/a.py"), spec.read_only)


@pytest.mark.parametrize("catch_all", ["*", "**"])
def test_the_catch_all_edits_ask_is_no_wall(project, catch_all):
    """Edits ask by default (and by a catch-all rule): that is the person's question
    for the edit tool, not a wall for the commands they allowed."""
    project.files("src/a.py", "README.md")
    assert not covered(project.path("src/a.py"), project.spec().read_only)
    project.policy(RULES([rule("edit", catch_all, "ask")]))
    spec = project.spec()
    assert not covered(project.path("src/a.py"), spec.read_only)
    assert not covered(project.path("README.md"), spec.read_only)


def test_an_allow_rule_after_a_deny_reopens(project):
    project.files("yarn.lock", "poetry.lock")
    project.policy(RULES([rule("edit", "*.lock", "deny"), rule("edit", "poetry.lock", "allow")]))
    spec = project.spec()
    assert project.path("yarn.lock") in paths(spec.read_only)
    assert not covered(project.path("poetry.lock"), spec.read_only)


def test_a_directory_with_one_entry_reopened_is_made_read_only_per_file(project):
    project.files("migrations/0001.sql", "migrations/0002.sql", "migrations/README.md")
    project.policy(RULES([rule("edit", "migrations/**", "deny"),
                          rule("edit", "migrations/README.md", "allow")]))
    spec = project.spec()
    assert project.path("migrations") not in paths(spec.read_only)
    assert {project.path("migrations/0001.sql"),
            project.path("migrations/0002.sql")} <= paths(spec.read_only)
    assert not covered(project.path("migrations/README.md"), spec.read_only)


# --------------------------------------------------------------------------- hidden

def test_env_files_are_hidden_at_any_depth(project):
    project.files(".env", "src/.env.local", "a/b/c/.env.production", "src/env.py")
    spec = project.spec()
    hidden = paths(spec.hidden)
    assert {project.path(".env"), project.path("src/.env.local"),
            project.path("a/b/c/.env.production")} <= hidden
    assert all(not m.directory for m in spec.hidden if m.path.startswith(project.path("")))
    assert not covered(project.path("src/env.py"), spec.hidden)
    assert "builtin:defaults" in next(m.why for m in spec.hidden if m.path == project.path(".env"))


def test_a_denied_directory_is_one_mount(project):
    project.files("secrets/a.key", "secrets/deep/b.key", "src/a.py")
    project.policy(RULES([rule("read", "secrets/**", "deny")]))
    spec = project.spec()
    mounts = [m for m in spec.hidden if m.path.startswith(project.path("secrets"))]
    assert mounts == [Mount(project.path("secrets"), mounts[0].why, True)]
    assert "deny read secrets/**" in mounts[0].why and "policy.yaml:2" in mounts[0].why


def test_a_denied_directory_with_a_part_reopened_is_hidden_per_file(project):
    project.files("secrets/a.key", "secrets/deep/b.key", "secrets/public/README.md")
    project.policy(RULES([rule("read", "secrets/**", "deny"),
                          rule("read", "secrets/public/**", "allow")]))
    spec = project.spec()
    assert project.path("secrets") not in paths(spec.hidden)
    assert covered(project.path("secrets/a.key"), spec.hidden)
    assert covered(project.path("secrets/deep/b.key"), spec.hidden)
    assert not covered(project.path("secrets/public/README.md"), spec.hidden)


def test_a_directory_whose_new_files_are_readable_is_hidden_per_file(project):
    """Every file in keys/ is denied, but a new one would not be: the directory
    itself stays, its files are hidden one by one."""
    project.files("keys/a.pem", "keys/b.pem")
    project.policy(RULES([rule("read", "*.pem", "deny")]))
    spec = project.spec()
    assert project.path("keys") not in paths(spec.hidden)
    assert {project.path("keys/a.pem"), project.path("keys/b.pem")} <= paths(spec.hidden)


def test_home_paths_a_read_rule_names_are_hidden(project):
    """(Not secret stores, which are hidden anyway: tests/sandbox/test_secret_stores.py.)"""
    (project.home / "keys").mkdir()
    (project.home / "keys" / "id_ed25519").write_text("KEY")
    (project.home / "cloud").mkdir()
    (project.home / "cloud" / "credentials").write_text("AWS")
    (project.home / "cloud" / "config").write_text("[default]")
    project.policy(RULES([rule("read", "~/keys/**", "deny"),
                          rule("read", "~/cloud/credentials", "deny"),
                          rule("read", "~/clusters/**", "deny")]))
    spec = project.spec()
    home = project.home.as_posix()
    assert Mount(home + "/keys", next(m.why for m in spec.hidden if m.path == home + "/keys"),
                 True) in spec.hidden
    assert Mount(home + "/cloud/credentials", next(
        m.why for m in spec.hidden if m.path == home + "/cloud/credentials"), False) \
        in spec.hidden
    assert not covered(home + "/cloud/config", spec.hidden)
    assert not covered(home + "/clusters", spec.hidden)      # missing: nothing to mount


def test_dm_cc_per_user_directories_are_hidden(project):
    for kind in ("config", "data", "state", "cache"):
        (project.dm_home / kind).mkdir(parents=True)
    hidden = paths(project.spec().hidden)
    assert {(project.dm_home / kind).as_posix() for kind in ("config", "data", "state",
                                                             "cache")} <= hidden


def test_a_symlink_to_a_hidden_file_leads_to_a_hidden_file(project):
    project.files(".env", "secrets/k.pem")
    os.symlink(".env", project.root / "settings")
    os.symlink(project.root / "secrets" / "k.pem", project.root / "key")
    (project.home / ".ssh").mkdir()
    (project.home / ".ssh" / "id_rsa").write_text("KEY")
    os.symlink(project.home / ".ssh" / "id_rsa", project.root / "id")
    project.policy(RULES([rule("read", "secrets/**", "deny"), rule("read", "~/.ssh/**", "deny")]))
    spec = project.spec()
    for link in ("settings", "key", "id"):
        path = project.path(link)
        assert covered(path, spec.hidden) or covered(os.path.realpath(path), spec.hidden), link


# --------------------------------------------------------------------------- approvals

def test_a_saved_approval_makes_a_file_visible(project):
    project.files(".env", "src/.env.local")
    world = project.world()
    world.approvals.add("read", ".env", agent="build")
    gate = world.gate(world.agent("build"), world.approvals.rules_for("build"))
    hidden = paths(project.spec(gate).hidden)
    assert project.path(".env") not in hidden
    assert project.path("src/.env.local") in hidden


def test_an_approval_never_beats_a_configured_deny(project):
    project.files(".env")
    project.policy(RULES([rule("read", ".env", "deny")]))
    gate = project.gate(approvals=(Rule("read", ".env", "allow", source="approval"),))
    assert project.path(".env") in paths(project.spec(gate).hidden)


# --------------------------------------------------------------------------- subagents

def test_a_subagent_spec_is_at_least_as_strict_as_its_parent(project):
    project.files("docs/a.md", "src/a.py", "src/b.lock", "notes/n.txt", ".env")
    project.policy("""
agents:
  build:
    rules:
      - {permission: read, pattern: 'docs/**', action: deny}
      - {permission: edit, pattern: '*.lock', action: deny}
      - {permission: read, pattern: .env, action: allow}
  general:
    rules:
      - {permission: read, pattern: 'notes/**', action: deny}
""")
    parent = project.spec(project.gate("build"))
    child = project.spec(project.gate("general", under=("build",)))
    for mount in parent.hidden:
        assert covered(mount.path, child.hidden), mount
    for mount in parent.read_only:
        assert covered(mount.path, child.read_only + child.hidden), mount
    assert covered(project.path("notes/n.txt"), child.hidden)
    assert not covered(project.path("notes/n.txt"), parent.hidden)
    assert not covered(project.path(".env"), parent.hidden)   # build's own rule allows it
    assert covered(project.path(".env"), child.hidden)        # general's rules do not


# --------------------------------------------------------------------------- network

@pytest.mark.parametrize(("rules", "proxy", "network"), [
    ((), False, "off"),
    ((("*", "allow"),), False, "on"),
    ((("pypi.org", "allow"),), False, "off"),
    ((("pypi.org", "allow"),), True, "proxy"),
    ((("*", "allow"), ("evil.example", "deny")), True, "proxy"),
    ((("*", "allow"), ("evil.example", "deny")), False, "off"),
    ((("*", "deny"),), True, "off"),
])
def test_network(project, rules, proxy, network):
    project.policy(RULES([rule("network", host, action) for host, action in rules])
                   if rules else "")
    world = project.world()
    tree = TreeLister().list(project.root.as_posix())
    spec = spec_for(project.gate(), world.where, tree,
                    Private(tmpdir=str(project.tmp), own_dir=PROJECT_DIR, network_proxy=proxy),
                    LocalMachine())
    assert spec.network == network, spec.network_why


# --------------------------------------------------------------------------- environment

def test_secret_variables_and_the_ssh_agent_are_unset(project):
    env = {**project.env, "OPENAI_API_KEY": "k", "GITHUB_TOKEN": "t", "DB_PASSWORD": "p",
           "AWS_SECRET_ACCESS_KEY": "s", "SSH_AUTH_SOCK": "/tmp/agent.sock", "LANG": "C"}
    spec = project.spec(env=env)
    assert {"OPENAI_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "AWS_SECRET_ACCESS_KEY",
            "SSH_AUTH_SOCK"} <= set(spec.unset)
    assert not {"PATH", "HOME", "LANG"} & set(spec.unset)


def test_the_spec_is_pure_given_the_tree(project):
    """spec_for reads nothing but what it is given: the same inputs, the same spec."""
    project.files(".env", "secrets/a")
    project.policy(RULES([rule("read", "secrets/**", "deny")]))
    world, gate = project.world(), project.gate()
    tree = TreeLister().list(project.root.as_posix())
    private, machine = Private(tmpdir="/t", own_dir=PROJECT_DIR), LocalMachine()
    assert spec_for(gate, world.where, tree, private, machine) == \
        spec_for(gate, world.where, tree, private, machine)
    bare = Gate([Layer("user", ())], PathContext(project.root.as_posix(), project.home.as_posix()))
    assert spec_for(bare, world.where, tree, private, machine).hidden == ()


def test_what_lies_outside_the_project_is_what_the_machine_given_says(project, tmp_path):
    """Outside the tree the spec knows only what its machine answers: a directory a
    rule names that exists only in the machine described is hidden, and is not
    where the real machine has nothing."""
    elsewhere = (tmp_path / "elsewhere").as_posix()          # never made on the disk
    project.policy(RULES([rule("read", f"{elsewhere}/**", "deny")]))
    world = project.world()
    tree = TreeLister().list(project.root.as_posix())
    private = Private(tmpdir=str(project.tmp), own_dir=PROJECT_DIR)
    known = KnownMachine(files=frozenset({f"{elsewhere}/keys/id"}),
                         directories=frozenset({elsewhere, f"{elsewhere}/keys"}))
    described = spec_for(project.gate(), world.where, tree, private, known)
    assert [(m.path, m.directory) for m in described.hidden] == [(elsewhere, True)]
    real = spec_for(project.gate(), world.where, tree, private, LocalMachine())
    assert not covered(elsewhere, real.hidden)


def test_working_in_the_home_directory_still_hides_home_secrets(tmp_path):
    """Run from ``~`` (the project is the home): ``~/.ssh/**`` names project paths."""
    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("KEY")
    (home / "notes.txt").write_text("n")
    (tmp_path / "policy.yaml").write_text(RULES([rule("read", "~/.ssh/**", "deny")]))
    env = {"HOME": str(home), "DM_CC_HOME": str(tmp_path / "dm"),
           "DM_CC_MANAGED_DIR": str(tmp_path / "managed")}
    world = open_world(Options(policies=(str(tmp_path / "policy.yaml"),)), cwd=home, env=env)
    sandbox = Sandbox("auto", world.where, env, probe=WORKS)
    spec = sandbox.spec(world.gate(world.agent("build")))
    assert covered((home / ".ssh" / "id_ed25519").as_posix(), spec.hidden)
    assert not covered((home / "notes.txt").as_posix(), spec.hidden)


def test_a_home_rule_never_hides_the_directory_holding_the_project(tmp_path):
    """``read ~/** deny`` with the project under ~: the home is not hidden whole
    (the project is mounted inside it), its files are, as the gate says."""
    home = tmp_path / "home"
    root = home / "src" / "project"
    (root / ".git").mkdir(parents=True)
    (root / "a.py").write_text("a")
    (home / ".netrc").write_text("secret")
    (home / "src" / "other").mkdir()
    (home / "src" / "other" / "b.py").write_text("b")
    (tmp_path / "policy.yaml").write_text(RULES([rule("read", "~/**", "deny"),
                                                 rule("read", f"{root}/a.py", "allow")]))
    env = {"HOME": str(home), "DM_CC_HOME": str(tmp_path / "dm"),
           "DM_CC_MANAGED_DIR": str(tmp_path / "managed")}
    world = open_world(Options(policies=(str(tmp_path / "policy.yaml"),)), cwd=root, env=env)
    spec = Sandbox("auto", world.where, env, probe=WORKS).spec(world.gate(world.agent("build")))
    for holder in (home, home / "src", root):
        assert holder.as_posix() not in paths(spec.hidden)
    assert covered((home / ".netrc").as_posix(), spec.hidden)
    assert covered((home / "src" / "other" / "b.py").as_posix(), spec.hidden)
    assert not covered((root / "a.py").as_posix(), spec.hidden)


def test_a_rule_the_sandbox_cannot_hold_says_so(project):
    project.policy(RULES([rule("read", "/**/id_rsa", "deny")]))
    notes = project.spec().notes
    assert any("/**/id_rsa" in note and "gate only" in note for note in notes), notes


def test_the_spec_is_kept_while_the_tree_is_unchanged_and_derived_again_after(project):
    project.files("src/a.py")
    time.sleep(TreeLister.RACY_NS / 1e9 + 0.01)   # listings old enough to be kept
    world = project.world()
    sandbox = Sandbox("auto", world.where, project.env, probe=WORKS)
    gate = project.gate()
    first = sandbox.spec(gate)
    assert sandbox.spec(gate) is first
    project.files("src/.env")
    again = sandbox.spec(gate)
    assert project.path("src/.env") in paths(again.hidden)
    assert sandbox.spec(project.gate()) is not again       # another gate: derived anew


def test_a_denied_directory_holding_tmpdir_is_not_hidden_whole(project):
    """TMPDIR is mounted writable inside it: hidden whole, bwrap could not."""
    scratch = project.tmp / "scratch"
    (scratch / "session").mkdir(parents=True)
    (scratch / "other.log").write_text("x")
    project.policy(RULES([rule("read", f"{scratch}/**", "deny")]))
    world = project.world()
    tree = TreeLister().list(project.root.as_posix())
    private = Private(tmpdir=(scratch / "session").as_posix(), own_dir=PROJECT_DIR)
    spec = spec_for(project.gate(), world.where, tree, private, LocalMachine())
    assert scratch.as_posix() not in paths(spec.hidden)
    assert covered((scratch / "other.log").as_posix(), spec.hidden)
    assert (scratch / "session").as_posix() in paths(spec.writable)
    assert not covered((scratch / "session").as_posix(), spec.hidden)


def test_a_directory_outside_that_edit_rules_open_is_writable(project):
    (project.home / ".npm" / "_cache").mkdir(parents=True)
    (project.home / ".cargo").mkdir()
    project.policy(RULES([rule("edit", "~/.npm/**", "allow"),
                          rule("external_directory", "~/.npm/**", "allow"),
                          rule("edit", "~/.cargo/**", "allow")]))   # its directory still asks
    writable = paths(project.spec().writable)
    assert (project.home / ".npm").as_posix() in writable
    assert (project.home / ".cargo").as_posix() not in writable


def test_pins_for_paths_rules_protect_are_bounded_and_said(project):
    """Every mount slows every command: past PIN_LIMIT directories, the paths rules
    protect are left unpinned (and the notes say so), git's never."""
    project.files(*(f"pkg{n}/sub/x.lock" for n in range(PIN_LIMIT)))
    project.policy(RULES([rule("edit", "*.lock", "deny")]))
    spec = project.spec()
    pinned = {m.path for m in spec.writable if m.why == PINNED}
    assert project.path(".git") in pinned
    assert len(pinned) == 1 + PIN_LIMIT
    assert any("could be moved aside" in note for note in spec.notes), spec.notes


def test_home_paths_a_read_rule_names_with_braces_are_hidden(project):
    """``~/{.ssh,.aws,.config/gh}/**`` (as builtin:team-strict writes it) names each
    directory: all are hidden, as the gate denies reading them (a pattern with braces
    was passed over whole, and the credentials stayed readable to every command)."""
    for name in (".ssh/id_ed25519", ".aws/credentials", ".config/gh/hosts.yml", ".netrc",
                 ".config/other"):
        (project.home / name).parent.mkdir(parents=True, exist_ok=True)
        (project.home / name).write_text("SECRET")
    project.policy(RULES([rule("read", "~/{.ssh,.aws,.config/gh}/**", "deny"),
                          rule("read", "~/{.netrc,.pypirc}", "ask")]))
    spec = project.spec()
    home = project.home.as_posix()
    for name in (".ssh", ".aws", ".config/gh", ".netrc"):
        assert covered(f"{home}/{name}", spec.hidden), (name, spec.hidden)
    assert not covered(f"{home}/.config/other", spec.hidden)
