"""``dm_cc sandbox status|run`` as real processes: bubblewrap found (or hidden from
PATH), the mode from the user's config, commands run in and out of the sandbox."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from support.trust import trust_project

from dm_cc.sandbox.host import availability

needs_bwrap = pytest.mark.skipif(not availability().usable,
                                 reason=f"bubblewrap cannot confine here: {availability().reason}")

POLICY = """\
rules:
  - {permission: read, pattern: "secrets/**", action: deny, reason: "keys stay out"}
  - {permission: edit, pattern: "vendor/**", action: deny}
  - {permission: bash, pattern: "touch *", action: deny}
"""


@pytest.fixture
def project(project: Path, tmp_path: Path) -> Path:
    """A project with a .env file at two depths, a denied secrets/ directory and a
    vendor/ directory edits may not touch."""
    (project / "src" / "deep").mkdir(parents=True)
    (project / ".env").write_text("TOKEN=1\n")
    (project / "src" / "deep" / ".env.local").write_text("TOKEN=2\n")
    (project / "secrets").mkdir()
    (project / "secrets" / "id_rsa").write_text("key\n")
    (project / "vendor").mkdir()
    (project / "vendor" / "lib.py").write_text("x = 1\n")
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(POLICY)
    trust_project(project)
    return project


def dm_cc(project: Path, *argv: str, path: str | None = None,
          timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    if path is not None:
        env["PATH"] = path
    return subprocess.run([sys.executable, "-m", "dm_cc", *argv], cwd=project, env=env,
                          capture_output=True, text=True, timeout=timeout)


def set_mode(mode: str, quote: str = '"') -> Path:
    config = Path(os.environ["DM_CC_HOME"]) / "config" / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"sandbox: {quote}{mode}{quote}\n")
    return config


@pytest.fixture
def no_bwrap(tmp_path: Path) -> str:
    """A PATH with bash and the few programs the tests run, and no bwrap."""
    bin_dir = tmp_path / "bin-without-bwrap"
    bin_dir.mkdir()
    for name in ("bash", "sh", "cat", "touch", "ls"):
        found = shutil.which(name)
        assert found is not None
        (bin_dir / name).symlink_to(found)
    return str(bin_dir)


# ---------------------------------------------------------------------- status


def test_status_shows_each_path_with_its_reason(project):
    done = dm_cc(project, "sandbox", "status")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    lines = out.splitlines()
    assert lines[1] == "mode: auto (the default): " + (
        "shell commands run confined, as below" if availability().usable
        else "shell commands run unconfined (bubblewrap cannot confine them here); "
             "below is what would hold them")
    section = {title: out.split(title, 1)[1].split("\n\n", 1)[0]
               for title in ("writable:", "read-only:", "hidden (")}
    assert "./ " in section["writable:"] and "the project" in section["writable:"]
    assert "$TMPDIR " in section["writable:"]
    assert ".dm_cc/ " in section["read-only:"]
    assert "vendor/ " in section["read-only:"]
    assert "deny edit vendor/** (" in section["read-only:"]
    hidden = section["hidden ("].splitlines()
    # paths inside the project are relative; the two .env files share their reason
    env_at = next(i for i, line in enumerate(hidden) if line.lstrip().startswith(".env "))
    assert "ask read .env* (builtin:defaults)" in hidden[env_at]
    assert hidden[env_at + 1].strip() == "src/deep/.env.local"
    assert any(line.lstrip().startswith("secrets/ ") and "keys stay out" not in line
               and "deny read secrets/** (" in line for line in hidden)
    assert str(project) + "/" not in out
    assert "network: off (no network rule allows it)" in out
    assert "removed (they may hold secrets): OPENAI_API_KEY" in out


def test_status_json_gives_the_spec_availability_and_mode(project):
    config = set_mode("required")
    done = dm_cc(project, "sandbox", "status", "--json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["mode"] == "required"
    assert found["mode_source"].endswith(f"{config.name}:1")
    assert found["bubblewrap"]["usable"] is availability().usable
    assert found["agent"] == "build" and found["cwd"] == str(project)
    hidden = {entry["path"]: entry["why"] for entry in found["hidden"]}
    assert hidden[str(project / ".env")] == "ask read .env* (builtin:defaults)"
    assert str(project / "src" / "deep" / ".env.local") in hidden
    assert [w["why"] for w in found["writable"]][:2] == ["the project", "the session's TMPDIR"]
    assert found["network"] == "off" and "OPENAI_API_KEY" in found["unset"]


def test_status_follows_the_agent_and_extra_policies(project, tmp_path):
    extra = tmp_path / "net.yaml"
    extra.write_text("rules:\n  - {permission: network, pattern: \"*\", action: allow}\n")
    done = dm_cc(project, "sandbox", "status", "--policy", str(extra), "--json")
    found = json.loads(done.stdout)
    assert found["network"] == "on" and "net.yaml:2" in found["network_why"]
    done = dm_cc(project, "sandbox", "status", "--agent", "nobody")
    assert done.returncode == 2 and "unknown agent 'nobody'" in done.stderr


def test_status_without_bubblewrap_says_why_and_what_it_would_hold(project, no_bwrap):
    done = dm_cc(project, "sandbox", "status", path=no_bwrap)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()[:2]
    assert first.startswith("bubblewrap: not usable: bubblewrap (bwrap) is not installed")
    assert "sudo apt install bubblewrap" in first
    assert "shell commands run unconfined" in second and "what would hold them" in second
    assert ".env " in done.stdout and "vendor/ " in done.stdout
    set_mode("required")
    done = dm_cc(project, "sandbox", "status", path=no_bwrap)
    assert "the bash tool refuses to run commands" in done.stdout.splitlines()[1]


# ---------------------------------------------------------------------- run


@needs_bwrap
def test_run_confines_the_command_and_passes_its_output_and_status_through(project, tmp_path):
    outside = tmp_path / "outside.txt"
    done = dm_cc(project, "sandbox", "run", "--",
                 f"echo inside > made.txt; cat .env; echo x > {outside}; exit 7")
    assert done.returncode == 7
    assert "confined by bubblewrap" in done.stderr
    assert (project / "made.txt").read_text() == "inside\n"
    assert not outside.exists()
    assert "Read-only file system" in done.stdout
    assert "TOKEN" not in done.stdout                       # .env is hidden
    assert "the sandbox may have stopped this" in done.stderr


@needs_bwrap
def test_run_joins_several_words_and_is_not_judged_by_the_gate(project):
    # `touch *` is denied for the model's bash calls; the person's own command runs.
    done = dm_cc(project, "sandbox", "run", "--", "touch", "a file.txt")
    assert done.returncode == 0, done.stderr
    assert (project / "a file.txt").exists()
    done = dm_cc(project, "sandbox", "run", "--", "touch", "vendor/new.py")
    assert done.returncode == 1 and not (project / "vendor" / "new.py").exists()


def test_run_refuses_when_required_and_bubblewrap_is_missing(project, no_bwrap):
    set_mode("required")
    done = dm_cc(project, "sandbox", "run", "--", "touch made.txt", path=no_bwrap)
    assert done.returncode == 126
    assert "Not run: the sandbox is required" in done.stderr
    assert "bubblewrap (bwrap) is not installed" in done.stderr
    assert not (project / "made.txt").exists()


def test_run_unconfined_says_why(project, no_bwrap, tmp_path):
    done = dm_cc(project, "sandbox", "run", "--", "cat .env", path=no_bwrap)
    assert done.returncode == 0 and done.stdout == "TOKEN=1\n"
    assert "not confined: bubblewrap (bwrap) is not installed" in done.stderr
    config = set_mode("off")
    done = dm_cc(project, "sandbox", "run", "--", "cat .env")
    assert done.stdout == "TOKEN=1\n"
    assert "not confined: the sandbox is off (sandbox: off, set at " in done.stderr
    assert f"{config.name}:1)" in done.stderr


def test_an_unquoted_off_turns_the_sandbox_off(project):
    set_mode("off", quote="")
    done = dm_cc(project, "sandbox", "status", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["mode"] == "off"


def test_run_needs_a_command_and_a_timeout_above_zero(project):
    done = dm_cc(project, "sandbox", "run")
    assert done.returncode == 2 and "no command; give it after --" in done.stderr
    done = dm_cc(project, "sandbox", "run", "--timeout", "0", "--", "true")
    assert done.returncode == 2 and "not a number of seconds above 0" in done.stderr


def test_run_times_out(project):
    done = dm_cc(project, "sandbox", "run", "--timeout", "0.5", "--", "sleep 30")
    assert done.returncode == 124 and "timed out after 0.5 s" in done.stderr


def test_help_says_the_command_is_not_judged(project):
    done = dm_cc(project, "sandbox", "run", "--help")
    assert "the policy does not\njudge it" in done.stdout


# ---------------------------------------------------------------------- dm_cc run


def test_run_says_once_on_stderr_that_commands_are_not_confined(project, no_bwrap):
    script = project / ".script.yaml"
    script.write_text("- {text: done}\n")
    done = dm_cc(project, "run", "--model", f"scripted:{script}", "hi", path=no_bwrap)
    assert done.returncode == 0 and done.stdout == "done\n"
    assert done.stderr.count("dm_cc: sandbox: commands run unconfined: bubblewrap (bwrap) is "
                             "not installed") == 1
    set_mode("off")
    done = dm_cc(project, "run", "--model", f"scripted:{script}", "hi", path=no_bwrap)
    assert "sandbox" not in done.stderr


@needs_bwrap
def test_run_with_bubblewrap_says_nothing_about_it(project):
    script = project / ".script.yaml"
    script.write_text("- {text: done}\n")
    done = dm_cc(project, "run", "--model", f"scripted:{script}", "hi")
    assert done.returncode == 0 and "sandbox" not in done.stderr


@needs_bwrap
def test_run_refuses_an_escape_headless_and_says_why_on_one_line(project, tmp_path):
    target = tmp_path / "outside.txt"
    script = project / ".script.yaml"
    command = f"python3 -c \"open('{target}', 'w')\""
    script.write_text(yaml.safe_dump([{"tool": "bash", "args": {"command": command}},
                                      {"text": "done"}]))
    extra = tmp_path / "python.yaml"
    extra.write_text("rules:\n  - {permission: bash, pattern: 'python3 *', action: allow}\n")
    done = dm_cc(project, "run", "--model", f"scripted:{script}", "--policy", str(extra), "go")
    assert done.returncode == 0 and not target.exists()
    first, second = done.stderr.splitlines()[:2]
    assert first == f"dm_cc: bash {command} → allow"
    assert second.startswith(f"dm_cc: bash {command} → the sandbox stopped it: it wrote outside")
    assert second.endswith("; run outside the sandbox → ask → refused by --on-ask deny "
                           '(ask sandbox_escape "*" at builtin:defaults: run again outside the '
                           "sandbox: only the rules hold it there, not the kernel)")


@needs_bwrap
def test_run_holds_what_a_hostile_repository_says_of_its_git_dir(project, tmp_path):
    """``dm_cc sandbox run`` in a repository whose ``.git`` file names its parent as
    the git directory, with a protected file and a hooks manager: the parent is not
    made writable, the protected files stay as they were, and a repository the
    command makes is set aside."""
    shutil.rmtree(project / ".git")
    (project / ".git").write_text("gitdir: ..\n")
    (project / ".envrc").write_text("export A=1\n")
    (project / ".husky").mkdir()
    (project / ".husky" / "pre-commit").write_text("npm test\n")
    done = dm_cc(project, "sandbox", "run", "--", "sh", "-c",
                 "touch ../escaped; echo x >> .envrc; echo x >> .husky/pre-commit; "
                 "git init -q sub; echo finished")
    assert "finished" in done.stdout, done.stdout + done.stderr
    assert not (project.parent / "escaped").exists()
    assert (project / ".envrc").read_text() == "export A=1\n"
    assert (project / ".husky" / "pre-commit").read_text() == "npm test\n"
    assert not (project / "sub" / ".git").exists()
    assert "set aside" in done.stdout + done.stderr
