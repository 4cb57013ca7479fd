"""The example policies in policies/ load, lint clean and pass their own tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from dm_cc.cli import main

POLICIES = sorted((Path(__file__).resolve().parents[2] / "policies").glob("*.yaml"))


def test_there_are_shipped_policies():
    assert len(POLICIES) >= 3


@pytest.mark.parametrize("path", POLICIES, ids=lambda p: p.name)
def test_shipped_policy_passes_its_tests_and_lints_clean(path, project, monkeypatch, capsys):
    monkeypatch.chdir(project)
    assert main(["policy", "test", "--policy", str(path)]) == 0, capsys.readouterr().out
    assert "0 failed" in capsys.readouterr().out
    assert main(["policy", "lint", str(path)]) == 0, capsys.readouterr().out
