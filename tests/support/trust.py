"""Trusting a test project's own files, as ``dm_cc trust`` does (docs/security.md)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from dm_cc.config import ProjectTrust, data_dir, project_root
from dm_cc.session import ApprovalStore


def trust_project(root: Path, env: Mapping[str, str] = os.environ) -> None:
    """Trust the project's own files (policy, agents, config) as they are now: write
    them first. ``env`` says where the data dir is (DM_CC_HOME)."""
    root = project_root(root)
    ApprovalStore.for_project(data_dir(env), root).trust_files(ProjectTrust.of(root).to_save())


def trusted_policy(root: Path, text: str, env: Mapping[str, str] = os.environ) -> None:
    """Write the project's own ``.dm_cc/policy.yaml`` and trust it, as a person who
    ran ``dm_cc trust`` after writing it would have."""
    (root / ".dm_cc").mkdir(exist_ok=True)
    (root / ".dm_cc" / "policy.yaml").write_text(text)
    trust_project(root, env)
