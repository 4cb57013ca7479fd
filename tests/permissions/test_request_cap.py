"""A line built to multiply its requests (CDPATH entries × operands) names at most
MAX_REFERENCES paths and commands: past that it asks, saying why, and costs the
person no more than a line that names that many (issue 22, "Bounded cost")."""

from __future__ import annotations

from pathlib import Path

from dm_cc.config import HostFilesystem
from dm_cc.permissions import PathContextDirs, Rule, decide
from dm_cc.permissions.requests import shell_requests
from dm_cc.permissions.shell import analyse
from dm_cc.permissions.shell.judge import MAX_REFERENCES

CDPATH = "CDPATH=" + ":".join(f"/{i}" for i in range(200))


def multiplied(copies: int) -> str:
    return " ; ".join([CDPATH] * copies) + "; cd x; cat " + " ".join(f"f{i}" for i in range(60))


def test_a_line_past_the_cap_asks_and_says_why():
    found = analyse(multiplied(5))
    assert len(found.files) <= MAX_REFERENCES
    assert any(f.dynamic for f in found.files)  # past 64 CDPATH entries: `cd` leads anywhere
    found = analyse("cat " + " ".join(f"f{i}" for i in range(MAX_REFERENCES + 10)))
    assert len(found.files) <= MAX_REFERENCES
    assert any(c.dynamic and c.note and "too many to judge one by one" in c.note
               for c in found.commands)


def test_an_ordinary_line_is_not_touched():
    found = analyse("git status && pytest -q tests/unit && cat README.md | head -5")
    assert not any(c.dynamic for c in found.commands)


def test_a_deny_met_before_the_cap_still_denies():
    rules = [Rule("bash", "*", "allow", source="me"), Rule("bash", "rm *", "deny", source="me")]
    root = Path("/nonexistent-project")
    where = PathContextDirs(root=root, cwd=root, home=Path("/nonexistent-home"),
                            fs=HostFilesystem())
    requests = shell_requests("bash", "rm -rf build; " + multiplied(5), where)
    assert decide(requests, rules).action == "deny"
