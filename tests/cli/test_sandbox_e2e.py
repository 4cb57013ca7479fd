"""The sandbox through ``dm_cc run`` (issue 11's "Done when"): a command the policy
allows, ``python3 probe.py``, runs code the gate never sees; the kernel holds what
the policy says. A real subprocess with a scripted model; the files on disk are
checked after the run, not only what was printed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.bwrap import needs_bwrap
from support.trust import trust_project

WORKTREE = Path(__file__).resolve().parents[2]

PROBE = """\
import pathlib, urllib.request

def attempt(name, action):
    try:
        outcome = action()
        log.append(f"{name} DONE {outcome if isinstance(outcome, str) else ''}".strip())
    except Exception as exc:
        log.append(f"{name} FAILED {type(exc).__name__}")

log = []
attempt("outside", lambda: pathlib.Path(OUTSIDE, "escaped.txt").write_text("x"))
attempt("policy", lambda: open(".dm_cc/policy.yaml", "a").write("- {permission: '*'}\\n"))
attempt("user-config", lambda: pathlib.Path(DMHOME, "config", "config.yaml").write_text("x"))
attempt("approvals", lambda: pathlib.Path(DMHOME, "data", "forged.json").write_text("{}"))
attempt("secret", lambda: pathlib.Path("secrets", "token.txt").read_text())
attempt("network", lambda: urllib.request.urlopen(URL, timeout=5).read().decode())
pathlib.Path("src", "out.txt").write_text("work done\\n")
pathlib.Path("probe.log").write_text("\\n".join(log) + "\\n")
print("\\n".join(log))
"""

POLICY = """\
rules:
  - {permission: bash, pattern: "python3 *", action: allow}
  - {permission: read, pattern: "secrets/**", action: deny}
"""


class Setup:
    """A project with probe.py, a secret, a policy; a home; dm_cc's per-user dirs
    with the user config; a directory outside everything; a PATH of its own."""

    def __init__(self, tmp: Path, url: str) -> None:
        self.tmp = tmp
        self.root, self.home, self.dm_home = tmp / "project", tmp / "home", tmp / "dmhome"
        self.outside = tmp / "outside"
        for directory in (self.root / ".git", self.root / ".dm_cc", self.root / "src",
                          self.root / "secrets", self.home, self.outside,
                          self.dm_home / "config", self.dm_home / "data"):
            directory.mkdir(parents=True)
        (self.root / "secrets" / "token.txt").write_text("TOKEN-123")
        (self.root / ".dm_cc" / "policy.yaml").write_text("rules: []\n")
        (self.root / "probe.py").write_text(
            f"OUTSIDE = {str(self.outside)!r}\nDMHOME = {str(self.dm_home)!r}\n"
            f"URL = {url!r}\n" + PROBE)
        self.user_config("sandbox: required\n")
        self.policy(POLICY)
        self.bin = tmp / "bin"       # bash, python3, git: bwrap only where PATH says
        self.bin.mkdir()
        for program in ("bash", "git", "env"):
            os.symlink(shutil.which(program) or program, self.bin / program)
        os.symlink(sys.executable, self.bin / "python3")
        self.path = f"{self.bin}:{Path(shutil.which('bwrap') or '/usr/bin/bwrap').parent}"

    def user_config(self, text: str) -> None:
        (self.dm_home / "config" / "config.yaml").write_text(text)

    def policy(self, text: str) -> None:
        (self.tmp / "policy.yaml").write_text(text)

    def run(self, command: str = "python3 probe.py", *,
            path: str | None = None) -> subprocess.CompletedProcess[str]:
        script = self.tmp / "script.yaml"
        script.write_text(json.dumps([{"tool": "bash", "args": {"command": command}},
                                      {"text": "done"}]))
        env = {"HOME": str(self.home), "DM_CC_HOME": str(self.dm_home),
               "DM_CC_MANAGED_DIR": str(self.tmp / "managed"), "PATH": path or self.path,
               "PYTHONPATH": str(WORKTREE), "PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.UTF-8"}
        return subprocess.run(
            [sys.executable, "-m", "dm_cc", "run", "--json", "--policy",
             str(self.tmp / "policy.yaml"), "--model", f"scripted:{script}", "probe"],
            cwd=self.root, env=env, capture_output=True, text=True, timeout=60)

    def tool_output(self, done: subprocess.CompletedProcess[str]) -> str:
        events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
        finished = [e for e in events if e["type"] == "tool_finished"]
        assert len(finished) == 1, done.stdout + done.stderr
        return finished[0]["output"]

    def log(self) -> list[str]:
        return (self.root / "probe.log").read_text().splitlines()


@pytest.fixture
def setup(tmp_path, loopback) -> Setup:
    return Setup(tmp_path, loopback)


@needs_bwrap
def test_an_allowed_program_is_held_to_the_policy_by_the_kernel(setup):
    config = (setup.dm_home / "config" / "config.yaml").read_text()
    done = setup.run()
    assert done.returncode == 0, done.stderr
    log = setup.log()
    output = setup.tool_output(done)
    failed = [line.split()[0] for line in log if line.split()[1] == "FAILED"]
    # outside the project the write goes to the command's scratch copy (a transaction's
    # view): it "works" there, lands nowhere, and the sandbox says what it kept out; so
    # does a write to the project's policy, held read-only as a discarded change (a mask
    # layer, not a mount per path)
    assert failed == ["user-config", "approvals", "secret", "network"], (log, output)
    assert log[:2] == ["outside DONE", "policy DONE"]
    assert not (setup.outside / "escaped.txt").exists()
    assert (".dm_cc/policy.yaml: the sandbox keeps it read-only (dm_cc's project files "
            "(policy, agents)): a change there never lands") in output
    assert (f"(the sandbox stopped this: it wrote outside the project, where the sandbox keeps "
            f"no write: {setup.outside}/escaped.txt; none of it happened; it wrote where the "
            "sandbox keeps no write (hidden or read-only paths): .dm_cc/policy.yaml; none of it "
            "will land. The sandbox is required here") in output
    assert (setup.root / ".dm_cc" / "policy.yaml").read_text() == "rules: []\n"
    assert (setup.dm_home / "config" / "config.yaml").read_text() == config
    assert not (setup.dm_home / "data" / "forged.json").exists()
    assert "TOKEN-123" not in done.stdout and "TOKEN-123" not in "".join(log)
    assert (setup.root / "src" / "out.txt").read_text() == "work done\n"   # ordinary work


@needs_bwrap
def test_a_network_rule_opens_the_network(setup):
    setup.policy(POLICY + '  - {permission: network, pattern: "*", action: allow}\n')
    done = setup.run()
    assert done.returncode == 0, done.stderr
    assert "network DONE hello from loopback" in setup.log()
    assert "user-config FAILED OSError" in setup.log()  # the rest still holds
    assert (setup.root / ".dm_cc" / "policy.yaml").read_text() == "rules: []\n"
    assert not (setup.outside / "escaped.txt").exists()


def test_required_refuses_to_run_without_bubblewrap(setup):
    done = setup.run(path=str(setup.bin))
    assert done.returncode == 0, done.stderr
    output = setup.tool_output(done)
    assert output.startswith("Not run: the sandbox is required (sandbox: required)")
    assert "bubblewrap (bwrap) is not installed" in output
    assert not (setup.root / "probe.log").exists()


def test_off_runs_the_command_unconfined(setup):
    setup.user_config('sandbox: "off"\n')
    done = setup.run(path=str(setup.bin))
    assert done.returncode == 0, done.stderr
    log = setup.log()
    assert "outside DONE" in log and "secret DONE TOKEN-123" in log, log
    assert (setup.outside / "escaped.txt").exists()


def test_a_project_config_cannot_set_the_sandbox(setup):
    (setup.root / ".dm_cc" / "config.yaml").write_text('model: offline\nsandbox: "off"\n')
    done = setup.run()
    assert done.returncode == 2
    assert ".dm_cc/config.yaml:2: sandbox is not accepted from a project's config" \
        in done.stderr, done.stderr
    assert not (setup.root / "probe.log").exists()


def test_off_written_bare_in_the_user_config_is_off(setup):
    setup.user_config("sandbox: off\n")
    done = setup.run(path=str(setup.bin))
    assert done.returncode == 0, done.stderr


def test_off_written_bare_in_a_project_config_is_refused_for_the_right_reason(setup):
    (setup.root / ".dm_cc" / "config.yaml").write_text("sandbox: off\n")
    done = setup.run()
    assert done.returncode == 2
    assert "sandbox is not accepted from a project's config" in done.stderr, done.stderr


def _write_outside(setup: Setup) -> str:
    target = setup.outside / "escaped.txt"
    return f"python3 -c 'open(\"{target}\", \"w\").write(\"x\")'"


@needs_bwrap
def test_a_stopped_command_says_so_and_is_not_run_unconfined_headless(setup):
    setup.user_config("sandbox: auto\n")   # `required` offers no escape at all
    done = setup.run(_write_outside(setup))
    output = setup.tool_output(done)
    assert output.startswith("(no output)\n(the sandbox stopped this: it wrote outside the "
                             f"project, where the sandbox keeps no write: {setup.outside}/")
    assert "did not let it run outside the sandbox" in output
    assert not (setup.outside / "escaped.txt").exists()


@needs_bwrap
def test_the_users_policy_may_let_a_stopped_command_run_unconfined(setup):
    setup.policy(POLICY + '  - {permission: sandbox_escape, pattern: "python3 *", '
                          'action: allow}\n')
    setup.user_config("sandbox: auto\n")
    done = setup.run(_write_outside(setup))
    assert setup.tool_output(done).endswith("(run outside the sandbox)")
    assert (setup.outside / "escaped.txt").read_text() == "x"


@needs_bwrap
def test_in_required_mode_even_the_users_policy_cannot_let_it_out(setup):
    setup.policy(POLICY + '  - {permission: sandbox_escape, pattern: "python3 *", '
                          'action: allow}\n')
    done = setup.run(_write_outside(setup))
    assert "The sandbox is required here, so it cannot run outside it" in setup.tool_output(done)
    assert not (setup.outside / "escaped.txt").exists()


@needs_bwrap
def test_a_project_policy_cannot_let_commands_out_of_the_sandbox(setup):
    (setup.root / ".dm_cc" / "policy.yaml").write_text(
        'rules:\n  - {permission: sandbox_escape, pattern: "*", action: allow}\n')
    setup.user_config("sandbox: auto\n")   # where an escape could be offered at all
    done = setup.run(_write_outside(setup))
    assert not (setup.outside / "escaped.txt").exists()
    assert "not trusted" in done.stdout + done.stderr
    trust_project(setup.root, {"DM_CC_HOME": str(setup.dm_home)})    # trusted, it still cannot
    done = setup.run(_write_outside(setup))
    assert not (setup.outside / "escaped.txt").exists()
    assert "a project's rules never open anything beyond the project" in done.stdout + done.stderr


@needs_bwrap
def test_a_push_to_a_local_remote_is_seen_as_stopped_whatever_git_said(setup):
    """git's own error on a read-only remote ("unable to create temporary object
    directory") never said "read-only": the sandbox now sees the writes themselves."""
    remote = setup.tmp / "remote.git"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q", "--bare", str(remote)], check=True)
    for step in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "one"],
                 ["remote", "add", "origin", str(remote)]):
        subprocess.run([*git, *step], cwd=setup.root, check=True, capture_output=True)
    setup.user_config("sandbox: auto\n")
    setup.policy(POLICY + '  - {permission: bash, pattern: "git push *", action: allow}\n')
    output = setup.tool_output(setup.run("git push origin HEAD:main"))
    assert (f"(the sandbox stopped this: it wrote outside the project, where the sandbox keeps "
            f"no write: {remote}/objects (") in output
    assert f"{remote}/refs/heads/main; none of it happened)" in output
    assert "did not let it run outside the sandbox" in output       # headless: refused
    assert not subprocess.run(["git", "-C", str(remote), "for-each-ref"], capture_output=True,
                              text=True, check=True).stdout
