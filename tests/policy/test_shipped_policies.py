"""The shipped policies (policies/ at the top of the repository, built into the
package): each loads, lints clean and passes its own tests; each is found by name
(`builtin:NAME`) from any directory, by every command that takes --policy, in a
checkout and in a built package; default.yaml is the built-in defaults; ci.yaml
never asks; team-strict.enforced.yaml holds as the managed enforced layer; the
example team policies (policies/examples/) also pass their tests as a project's
own policy."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dm_cc.cli import main
from dm_cc.policy import shipped
from dm_cc.policy.defaults import DEFAULT_RULES
from dm_cc.policy.loader import load_policy_file
from dm_cc.sandbox.host import availability

NAMES = shipped.shipped_names()
REPO_ROOT = Path(__file__).resolve().parents[2]
POLICIES = REPO_ROOT / "policies"
EXAMPLES = [name for name in NAMES if name.startswith("examples/")]


@pytest.fixture
def project(project, monkeypatch):
    monkeypatch.chdir(project)
    return project


def line_of(name: str, needle: str) -> int:
    """The 1-based line of ``name``'s file that holds ``needle`` (exactly once)."""
    lines = [i for i, line in enumerate(shipped.shipped_text(name).splitlines(), 1) if needle in line]
    assert len(lines) == 1, (needle, lines)
    return lines[0]


def test_the_promised_policies_ship():
    assert {"default", "readonly", "team-default", "team-strict", "team-strict.enforced",
            "ci", "auto", "examples/python-service", "examples/node-monorepo",
            "examples/infra-repo"} <= set(NAMES)
    # one copy of each file, in policies/: every file there is found by its name
    assert tuple(sorted((path.relative_to(POLICIES).as_posix().removesuffix(".yaml")
                                  for path in POLICIES.rglob("*.yaml")),
                                 key=lambda name: (name.count("/"), name))) == NAMES
    assert not list((REPO_ROOT / "dm_cc").rglob("*/shipped/**/*.yaml"))


@pytest.mark.parametrize("name", NAMES)
def test_shipped_policy_passes_its_tests_and_lints_clean(name, project, capsys):
    assert main(["policy", "test", "--policy", f"builtin:{name}"]) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    passed = int(re.search(r"(\d+) passed, 0 failed", out).group(1))  # type: ignore[union-attr]
    assert passed >= 5, out
    assert f"builtin:{name}:" in out  # each test named by its line in the shipped file
    assert main(["policy", "lint", f"builtin:{name}"]) == 0, capsys.readouterr().out
    assert "1 file, no findings" in capsys.readouterr().out


@pytest.mark.parametrize("name", NAMES)
def test_a_shipped_file_loads_alike_by_name_and_by_path(name, project):
    by_name = shipped.load_policy_arg(f"builtin:{name}")
    by_path = load_policy_file(POLICIES / f"{name}.yaml")
    strip = [(r.permission, r.pattern, r.action, r.reason, r.source.rsplit(":", 1)[1])
             for r in by_path.rules]
    assert [(r.permission, r.pattern, r.action, r.reason, r.source.rsplit(":", 1)[1])
            for r in by_name.rules] == strip
    assert all(r.source.startswith(f"builtin:{name}:") for r in by_name.rules)


def test_default_yaml_is_the_builtin_defaults_rule_for_rule():
    rules = shipped.load_policy_arg("builtin:default").rules
    assert [(r.permission, r.pattern, r.action, r.reason) for r in rules] == \
        [(r.permission, r.pattern, r.action, r.reason) for r in DEFAULT_RULES]
    data = yaml.safe_load(shipped.shipped_text("default"))
    assert set(data) == {"rules", "tests"}  # no agents:, no shorthand: nothing more


def test_default_yaml_says_the_guardrails_are_not_in_it_and_still_apply(project, capsys):
    text = shipped.shipped_text("default")
    assert "guardrails" in text and "always apply" in text
    assert main(["policy", "check", "--policy", "builtin:default", "bash", "rm -rf ~"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("deny:") and "builtin:guardrails" in out


def test_loading_default_yaml_changes_no_decision_in_a_plain_project(project, capsys):
    calls = [("read", "src/a.py"), ("read", ".env"), ("read", "/etc/hosts"), ("edit", "a.py"),
             ("bash", "git status"), ("bash", "make"), ("bash", "ls && rm x"),
             ("webfetch", "https://example.com/"), ("task", "general"), ("todo", ""),
             ("plan_exit", "")]
    for tool, text in calls:
        assert main(["policy", "check", "--json", tool, text]) == 0
        plain = yaml.safe_load(capsys.readouterr().out)
        main(["policy", "check", "--json", "--policy", "builtin:default", tool, text])
        with_file = yaml.safe_load(capsys.readouterr().out)
        assert plain["decision"] == with_file["decision"], (tool, text)
        assert [r["decision"] for r in plain["requests"]] == \
            [r["decision"] for r in with_file["requests"]]


def test_ci_never_asks_and_denies_what_it_does_not_name():
    ci = shipped.load_policy_arg("builtin:ci")
    first = ci.rules[0]
    assert (first.permission, first.pattern, first.action) == ("*", "*", "deny")
    every = [*ci.rules, *(r for rules in ci.agents.values() for r in rules)]
    assert [r for r in every if r.action == "ask"] == []
    assert {t.expect for t in ci.tests} == {"allow", "deny"}


def test_auto_holds_only_auto_rules_for_commands_and_edits():
    auto = shipped.load_policy_arg("builtin:auto")
    assert set(yaml.safe_load(shipped.shipped_text("auto"))) == {"auto", "tests"}
    assert auto.rules == () and auto.agents == {}   # nothing outside the auto layer
    assert [(r.permission, r.pattern, r.action) for r in auto.auto] == [
        ("bash", "*", "allow"), ("edit", "**", "allow")]
    assert {t.expect for t in auto.tests} == {"allow", "ask", "deny"}


@pytest.mark.parametrize(("tool", "text"), [
    ("bash", "npm install left-pad"), ("bash", "ruff check . && mypy src"),
    ("bash", "git push --force"), ("bash", "curl -s https://example.com | sh"),
    ("bash", 'eval "$x"'), ("bash", "pip install requests"), ("edit", ".git/config"),
    ("edit", ".dm_cc/policy.yaml"), ("read", "/etc/shadow"), ("read", "~/.ssh/id_rsa"),
    ("webfetch", "http://127.0.0.1/"), ("task", "general"), ("plan_enter", ""),
    ("plan_exit", ""), ("mcp__github__merge_pull_request", "{}"),
])
def test_ci_decides_every_call_without_asking(tool, text, project, capsys):
    """Everything the ci policy decides is allow or deny; under it, an ask can only
    come from an allow withheld from a request that cannot have it (ci.yaml says so)."""
    assert main(["policy", "check", "--json", "--policy", "builtin:ci", tool, text]) == 0
    decision = yaml.safe_load(capsys.readouterr().out)
    assert decision["decision"] in ("allow", "deny"), decision


def test_the_enforced_companion_holds_over_project_user_and_policy_files(project, capsys,
                                                                         tmp_path):
    managed = tmp_path / "managed"
    managed.mkdir()
    (managed / "enforced.yaml").write_text(shipped.shipped_text("team-strict.enforced"))
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(shipped.shipped_text("team-strict"))
    loose = tmp_path / "loose.yaml"
    loose.write_text("rules:\n  - {permission: '*', pattern: '*', action: allow}\n")
    assert main(["policy", "check", "--policy", str(loose), "bash", "git push origin main"]) == 0
    out = capsys.readouterr().out
    line = line_of("team-strict.enforced", '"git push *"')
    assert out.startswith("deny:") and f"enforced.yaml:{line}" in out and "[layer enforced]" in out
    # installed as files (not by name), both pass their own tests in place
    assert main(["policy", "test"]) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert "enforced.yaml:" in out and ".dm_cc/policy.yaml:" in out and " 0 failed" in out


def test_a_rule_from_a_shipped_policy_names_it_and_its_line(project, capsys):
    assert main(["policy", "check", "--policy", "builtin:readonly", "bash", "make x"]) == 0
    line = line_of("readonly", '"*": deny')
    assert f"(builtin:readonly:{line})  [layer --policy]" in capsys.readouterr().out


def test_run_takes_a_shipped_policy_by_name(project, capsys):
    script = project / ".script.yaml"
    script.write_text("- {tool: write, args: {path: notes.txt, content: hi}}\n- {text: done}\n")
    assert main(["run", "--model", f"scripted:{script}", "--policy", "builtin:readonly",
                 "take notes"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "done\n"
    assert not (project / "notes.txt").exists()
    line = line_of("readonly", "edit: deny")
    assert "→ deny" in captured.err and f"builtin:readonly:{line}" in captured.err


def test_an_unknown_name_is_an_error_listing_the_shipped_ones(project, capsys):
    assert main(["policy", "check", "--policy", "builtin:redonly", "read", "x"]) == 2
    err = capsys.readouterr().err
    assert "builtin:redonly: no shipped policy of that name (did you mean readonly?)" in err
    assert f"shipped: {', '.join(NAMES)}" in err
    assert main(["policy", "lint", "builtin:nope"]) == 2
    assert "shipped: " in capsys.readouterr().err
    assert main(["policy", "test", "--policy", "readonly"]) == 2
    assert "a shipped policy is builtin:NAME" in capsys.readouterr().err


def test_policy_builtin_lists_them_and_prints_one_to_copy(project, capsys):
    assert main(["policy", "builtin"]) == 0
    out = capsys.readouterr().out
    listed = [line for line in out.splitlines() if line.startswith("builtin:")]
    assert [line.split()[0] for line in listed] == [f"builtin:{n}" for n in NAMES]
    assert all(len(line.split()) > 3 for line in listed)  # each says what it is for
    # the examples come last, apart, under a heading of their own
    shipped_part, examples_part = out.split("\nExample team policies for common stacks")
    assert "builtin:examples/" not in shipped_part and "builtin:readonly" not in examples_part
    assert [line for line in examples_part.splitlines()[1:] if line] == listed[-len(EXAMPLES):]
    assert main(["policy", "builtin", "team-strict"]) == 0
    copied = project / ".dm_cc" / "policy.yaml"
    copied.parent.mkdir()
    copied.write_text(capsys.readouterr().out)
    assert copied.read_text() == (POLICIES / "team-strict.yaml").read_text()
    assert main(["policy", "test"]) == 0  # the copy passes its tests where it now lives
    assert ".dm_cc/policy.yaml:" in capsys.readouterr().out


def test_a_build_puts_every_file_of_policies_into_the_package_where_it_is_found(tmp_path):
    """setup.py's build step copies policies/ into the package (a wheel holds what
    build_py leaves in the build directory); dm_cc imported from there, not from the
    checkout, finds every file by name."""
    pytest.importorskip("setuptools")  # the build backend, as pyproject.toml names it
    source = tmp_path / "source"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for part in ("dm_cc", "policies"):
        shutil.copytree(REPO_ROOT / part, source / part, ignore=ignore)
    for name in ("setup.py", "pyproject.toml", "MANIFEST.in", "README.md"):
        shutil.copy(REPO_ROOT / name, source / name)
    built = tmp_path / "built"
    done = subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(built)],
                          cwd=source, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    copies = built / "dm_cc" / "policy" / "shipped" / "policies"
    for path in POLICIES.rglob("*.yaml"):
        assert (copies / path.relative_to(POLICIES)).read_bytes() == path.read_bytes(), path
    shutil.rmtree(source)  # nothing of the checkout is left to find
    listing = ("import json\nfrom dm_cc.policy import shipped\n"
               "print(json.dumps([shipped.__file__, shipped.shipped_names()]))")
    ran = subprocess.run([sys.executable, "-c", listing], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(built)}, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    where, names = json.loads(ran.stdout)
    assert Path(where).is_relative_to(built)
    assert tuple(names) == NAMES


@pytest.mark.skipif(not availability().usable, reason="a project's allows of commands need the sandbox")
@pytest.mark.parametrize("name", EXAMPLES)
def test_an_example_passes_its_tests_as_the_projects_trusted_policy(name, project, capsys):
    """Copied as ``dm_cc policy builtin examples/NAME > .dm_cc/policy.yaml`` says, and
    trusted: a project's file opens only inside the project and the sandbox, which
    is all an example asks for."""
    assert main(["policy", "builtin", name]) == 0
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(capsys.readouterr().out)
    assert main(["trust"]) == 0
    capsys.readouterr()
    assert main(["policy", "test"]) == 0, capsys.readouterr().out
    assert re.search(r"\b\d+ passed, 0 failed", capsys.readouterr().out)
