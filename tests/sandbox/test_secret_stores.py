"""The person's secret stores (dm_cc.permissions.secrets) in the sandbox spec: every
existing one hidden, in the person's home and in the other homes, whatever the
policy allows; one the person's own rule opens whole stays; one holding the project
is said, not hidden. Then with the real bubblewrap: a linked store, read by
spellings the gate never sees."""

from __future__ import annotations

import pytest
from support.bwrap import needs_bwrap
from support.sandbox_projects import RULES, Project, covered, rule

from dm_cc.config.dirs import PROJECT_DIR
from dm_cc.sandbox.derive import SECRET_STORE, Private, spec_for
from dm_cc.sandbox.machine import KnownMachine, TreeLister, other_homes

EVERYTHING = RULES([rule("'*'", "*", "allow"), rule("read", "~/**", "allow"),
                    rule("external_directory", "*", "allow")])


@pytest.fixture
def project(tmp_path) -> Project:
    return Project(tmp_path)


def spec(project: Project, machine: KnownMachine, homes: tuple[str, ...] = ()):
    world = project.world()
    tree = TreeLister().list(project.root.as_posix())
    private = Private(tmpdir="/tmp/t", own_dir=PROJECT_DIR, homes=homes)
    return spec_for(project.gate(), world.where, tree, private, machine)


def test_every_existing_store_is_hidden_in_every_home_whatever_is_allowed(project):
    home = project.home.as_posix()
    machine = KnownMachine(
        files=frozenset({f"{home}/.netrc", f"{home}/.docker/config.json", f"{home}/notes",
                         "/home/bob/.aws/credentials", "/root/.git-credentials",
                         "/home/bob/.bashrc"}),
        directories=frozenset({f"{home}/.ssh", f"{home}/.docker", "/home/bob/.aws",
                               "/root/.gnupg"}))
    project.policy(EVERYTHING)
    hidden = spec(project, machine, ("/root", "/home/bob")).hidden
    for path in (f"{home}/.ssh", f"{home}/.netrc", f"{home}/.docker/config.json",
                 "/home/bob/.aws", "/root/.gnupg", "/root/.git-credentials"):
        [mount] = [m for m in hidden if m.path == path]
        assert mount.why.startswith(SECRET_STORE), mount
    for path in (f"{home}/notes", f"{home}/.docker", "/home/bob/.bashrc", f"{home}/.aws"):
        assert not covered(path, hidden), path      # not stores, or not there
    assert {m.path for m in hidden if m.path == f"{home}/.ssh"} and \
        [m for m in hidden if m.path == f"{home}/.ssh"][0].directory


def test_a_store_your_own_read_rule_opens_whole_stays_without_external_directory(project):
    home = project.home.as_posix()
    machine = KnownMachine(directories=frozenset({f"{home}/.ssh"}))
    project.policy(RULES([rule("read", "~/.ssh/**", "allow")]))
    assert not covered(f"{home}/.ssh", spec(project, machine).hidden)


def test_a_store_your_own_rule_opens_whole_stays(project):
    home = project.home.as_posix()
    machine = KnownMachine(directories=frozenset({f"{home}/.ssh", f"{home}/.aws"}))
    project.policy(EVERYTHING + rule("read", "~/.ssh/**", "allow")
                   + rule("read", f"{home}/.aws/config", "allow"))
    hidden = spec(project, machine).hidden
    assert not covered(f"{home}/.ssh", hidden)
    assert covered(f"{home}/.aws", hidden)      # a file of it opened: the store stays hidden


def test_a_later_wildcard_in_an_opened_store_keeps_the_files_it_matches_hidden(project):
    """``~/.ssh/** allow`` opens the store, a later ``~/.ssh/id* allow`` decides the
    keys and is withheld (a wildcard that is not the store): a new file is readable,
    the keys are not, so they stay hidden one by one."""
    home = project.home.as_posix()
    machine = KnownMachine(files=frozenset({f"{home}/.ssh/id_ed25519", f"{home}/.ssh/config"}),
                           directories=frozenset({f"{home}/.ssh"}))
    project.policy(RULES([rule("read", "~/.ssh/**", "allow"), rule("read", "~/.ssh/id*", "allow")]))
    hidden = spec(project, machine).hidden
    assert covered(f"{home}/.ssh/id_ed25519", hidden)
    assert not covered(f"{home}/.ssh/config", hidden)
    assert not covered(f"{home}/.ssh", hidden)


def test_an_opened_store_too_large_to_check_file_by_file_is_hidden_whole_and_said(project):
    from dm_cc.sandbox.derive import OUTSIDE_LIMIT
    home = project.home.as_posix()
    keys = frozenset(f"{home}/.ssh/k{i}" for i in range(OUTSIDE_LIMIT + 1))
    machine = KnownMachine(files=keys, directories=frozenset({f"{home}/.ssh"}))
    project.policy(RULES([rule("read", "~/.ssh/**", "allow"), rule("read", "~/.ssh/k1*", "allow")]))
    made = spec(project, machine)
    assert covered(f"{home}/.ssh", made.hidden)
    assert any("hidden whole" in note and f"{home}/.ssh" in note for note in made.notes)


def test_a_store_holding_the_project_is_not_hidden_and_is_said(tmp_path):
    project = Project(tmp_path, root=tmp_path / "home" / ".password-store")
    home = project.home.as_posix()
    machine = KnownMachine(directories=frozenset({f"{home}/.password-store"}))
    derived = spec(project, machine)
    assert not covered(f"{home}/.password-store", derived.hidden)
    assert any(".password-store" in note and "holds the project" in note
               for note in derived.notes), derived.notes


def test_other_homes_are_root_and_those_under_home(tmp_path):
    homes = other_homes("/root")
    assert "/root" not in homes and all(h.startswith("/home/") for h in homes)
    assert "/root" in other_homes(tmp_path.as_posix())


@needs_bwrap
def test_a_confined_command_reads_no_store_by_any_spelling(project):
    """``~/.ssh`` a link to elsewhere in the home, ``~/.aws`` a directory: read by a
    path through /proc/self/root, by ``..`` from the project, with HOME changed,
    through a link in the project, and listed by find: nothing of them shows."""
    dotfiles = project.home / "dotfiles" / "ssh"
    dotfiles.mkdir(parents=True)
    (dotfiles / "id_rsa").write_text("KEY-CANARY\n")
    (project.home / ".ssh").symlink_to(dotfiles)
    (project.home / ".aws").mkdir()
    (project.home / ".aws" / "credentials").write_text("AWS-CANARY\n")
    (project.root / "link").symlink_to(project.home / ".aws" / "credentials")
    project.policy(RULES([rule("bash", "*", "allow")]))
    home = project.home.as_posix()
    ran = project.run(
        f"cat /proc/self/root{home}/.ssh/id_rsa; cat ../home/.aws/credentials; "
        f"HOME=/ cat {home}/.ssh/id_rsa; cat link; cat {home}/dotfiles/ssh/id_rsa; "
        f"find {home} -name id_rsa -o -name credentials; ls -a {home}/.ssh; echo finished")
    assert "finished" in ran.text, ran
    assert "CANARY" not in ran.text, ran.text
    assert "id_rsa\n" not in ran.text and "/credentials\n" not in ran.text, ran.text


def test_a_store_made_during_the_session_is_hidden_from_the_next_command(project):
    project.policy(RULES([rule("bash", "*", "allow")]))
    sandbox, gate = project.sandbox(), project.gate()
    home = project.home.as_posix()
    assert not covered(f"{home}/.aws", sandbox.spec(gate).hidden)
    (project.home / ".aws").mkdir()                 # `aws configure`, in another terminal
    assert covered(f"{home}/.aws", sandbox.spec(gate).hidden)
