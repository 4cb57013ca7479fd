"""Where dm_cc keeps per-user, system and project files.

A project keeps dm_cc's files in :data:`PROJECT_DIR` (``.dm_cc``) at its root:
policy, agents, settings, and the plan agent's plan files (:func:`plan_file`).
Per-user directories come from platformdirs; ``DM_CC_HOME`` relocates all of them
(``$DM_CC_HOME/config``, ``data``, ``state``, ``cache``) for tests and isolation.
The managed (organisation) directory is ``/etc/dm_cc`` unless
``DM_CC_MANAGED_DIR`` names another. :class:`HostFilesystem` is the machine's
filesystem as the permission engine's path canonicalisation asks for it
(``dm_cc.permissions.paths.Filesystem``): the engine is handed it, never does I/O.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

APP = "dm_cc"
MANAGED_DEFAULT = Path("/etc/dm_cc")

PROJECT_DIR = ".dm_cc"        # at the project root: policy, agents, settings, plans
GIT_DIR = ".git"
PLANS_DIR = f"{PROJECT_DIR}/plans"              # relative to the project root
#: The plan agent's plan file, as its rule's pattern (``{session}``: the session id).
PLAN_FILE_PATTERN = f"{PLANS_DIR}/{{session}}.md"


def _user_dir(kind: str, env: Mapping[str, str]) -> Path:
    home = env.get("DM_CC_HOME")
    if home:
        return Path(home) / kind
    import platformdirs

    finder = {
        "config": platformdirs.user_config_dir,
        "data": platformdirs.user_data_dir,
        "state": platformdirs.user_state_dir,
        "cache": platformdirs.user_cache_dir,
    }[kind]
    return Path(finder(APP, appauthor=False))


def config_dir(env: Mapping[str, str] = os.environ) -> Path:
    return _user_dir("config", env)


def data_dir(env: Mapping[str, str] = os.environ) -> Path:
    return _user_dir("data", env)


def state_dir(env: Mapping[str, str] = os.environ) -> Path:
    return _user_dir("state", env)


def cache_dir(env: Mapping[str, str] = os.environ) -> Path:
    return _user_dir("cache", env)


def managed_dir(env: Mapping[str, str] = os.environ) -> Path:
    return Path(env.get("DM_CC_MANAGED_DIR") or MANAGED_DEFAULT)


def home_dir(env: Mapping[str, str] = os.environ) -> Path:
    """The user's home directory: ``HOME``, else what the system says."""
    return Path(env.get("HOME") or os.path.expanduser("~"))


class HostFilesystem:
    """Symlinks and ``~user`` resolved on this machine."""

    def realpath(self, path: str) -> str:
        return os.path.realpath(path)

    def home_of(self, user: str) -> str | None:
        expanded = os.path.expanduser("~" + user)
        return None if expanded.startswith("~") else expanded


def project_root(start: Path) -> Path:
    """The nearest ancestor of ``start`` holding ``.git`` or ``.dm_cc``, else ``start``."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / GIT_DIR).exists() or project_dir(candidate).is_dir():
            return candidate
    return start


def project_dir(root: Path) -> Path:
    """The project's own dm_cc directory (``<root>/.dm_cc``)."""
    return root / PROJECT_DIR


def policy_files(directory: Path) -> list[Path]:
    """The policy files of a layer's directory (managed, user, a project's
    ``.dm_cc``): ``policy.yaml``, then ``policies/*.yaml`` (and ``.yml``) sorted."""
    found = []
    if (directory / "policy.yaml").is_file():
        found.append(directory / "policy.yaml")
    extra = directory / "policies"
    if extra.is_dir():
        found.extend(sorted(p for p in extra.iterdir() if p.suffix in (".yaml", ".yml")))
    return found


def agent_files_in(directory: Path) -> list[Path]:
    """The agent files of a directory (``<config>/agents``, ``.dm_cc/agents``), sorted."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.suffix == ".md" and p.is_file())


def project_files(root: Path) -> list[Path]:
    """What a project says to dm_cc in its own files, each trusted or not by the
    person (``dm_cc.config.trust``): its policy files, agent files and config."""
    own = project_dir(root)
    found = [*policy_files(own), *agent_files_in(own / "agents")]
    if (own / "config.yaml").is_file():
        found.append(own / "config.yaml")
    return found


def plan_file(root: Path, session_id: str) -> Path:
    """The plan agent's plan file in the session ``session_id``."""
    return root / PLAN_FILE_PATTERN.replace("{session}", session_id)
