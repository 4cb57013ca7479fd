"""A stage for the importers' properties: one project and home for every example
(hypothesis cannot take a function-scoped fixture), and a policy file's text decided
by dm_cc's whole engine there (defaults, guardrails, the requests a call derives:
shell analysis included)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from dm_cc.compose import Options, World, open_world


class Stage:
    def __init__(self, base: Path) -> None:
        self.root = base / "project"
        (self.root / ".git").mkdir(parents=True)
        (self.root / "src").mkdir()
        self.home = base / "home"
        self.home.mkdir()

    def world(self, policy_text: str, name: str = "imported.yaml") -> World:
        policy = self.root / name
        policy.write_text(policy_text)
        return open_world(Options(policies=(str(policy),)), cwd=self.root)


@pytest.fixture(scope="module")
def stage(tmp_path_factory) -> Iterator[Stage]:
    base = tmp_path_factory.mktemp("import-stage")
    made = Stage(base)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(made.home))
        patch.setenv("DM_CC_HOME", str(base / "dmhome"))
        patch.setenv("DM_CC_MANAGED_DIR", str(base / "managed"))
        for variable in [v for v in os.environ if v.startswith("DM_CC_")]:
            if variable not in ("DM_CC_HOME", "DM_CC_MANAGED_DIR"):
                patch.delenv(variable)
        yield made
