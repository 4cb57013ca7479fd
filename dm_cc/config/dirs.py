"""Where dm_cc keeps per-user and system files.

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
        if (candidate / ".git").exists() or (candidate / ".dm_cc").is_dir():
            return candidate
    return start


# The plan agent's plan file, per session: the pattern its rules name ({session} is
# the session id) and the file itself.
PLAN_PATTERN = ".dm_cc/plans/{session}.md"


def plan_file(root: Path, session_id: str) -> Path:
    return root / PLAN_PATTERN.format(session=session_id)
