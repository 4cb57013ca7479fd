"""Where dm_cc keeps per-user and system files.

Per-user directories come from platformdirs; ``DM_CC_HOME`` relocates all of them
(``$DM_CC_HOME/config``, ``data``, ``state``, ``cache``) for tests and isolation.
The managed (organisation) directory is ``/etc/dm_cc`` unless
``DM_CC_MANAGED_DIR`` names another.
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


def project_root(start: Path) -> Path:
    """The nearest ancestor of ``start`` holding ``.git`` or ``.dm_cc``, else ``start``."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists() or (candidate / ".dm_cc").is_dir():
            return candidate
    return start
