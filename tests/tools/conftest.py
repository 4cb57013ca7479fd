from __future__ import annotations

from pathlib import Path

import pytest

from dm_cc.config.dirs import HostFilesystem
from dm_cc.permissions.paths import PathContextDirs
from dm_cc.tools.base import ToolContext


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "project"
    root.mkdir()
    return root


@pytest.fixture
def ctx(project: Path) -> ToolContext:
    home = project.parent / "home"
    home.mkdir()
    return ToolContext(PathContextDirs(project, project, home, HostFilesystem()),
                       session_id="s1", agent="build")
