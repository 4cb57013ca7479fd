"""Shared fixtures: an isolated project and per-user environment for each test."""

from __future__ import annotations

import pytest


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A git project in tmp_path with HOME, DM_CC_HOME and DM_CC_MANAGED_DIR pointing
    at empty temporary dirs (the real /etc and ~/.config are never read) and no
    model configured from the environment."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DM_CC_HOME", str(tmp_path / "dmhome"))
    monkeypatch.setenv("DM_CC_MANAGED_DIR", str(tmp_path / "managed"))
    for variable in ("DM_CC_MODEL", "DM_CC_API_BASE", "OPENAI_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    return root
