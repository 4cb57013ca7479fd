"""The policies that ship with dm_cc, addressable from anywhere as ``builtin:NAME``.

The YAML files beside this module are package data (pyproject's package-data
takes ``**/*.yaml``), so ``--policy builtin:readonly`` works after a plain
``pip install`` as well as in a checkout. A shipped file loads like any other,
under the name ``builtin:NAME``: its rules' sources read ``builtin:readonly:12``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from dm_cc.config import did_you_mean
from dm_cc.errors import UsageError
from dm_cc.policy.loader import PolicyFile, load_policy_file, parse_policy

SHIPPED_PREFIX = "builtin:"


def _files() -> dict[str, resources.abc.Traversable]:
    here = resources.files(__package__)
    return {f.name.removesuffix(".yaml"): f for f in here.iterdir() if f.name.endswith(".yaml")}


def shipped_names() -> tuple[str, ...]:
    """The shipped policies' names, sorted."""
    return tuple(sorted(_files()))


def shipped_text(name: str) -> str:
    """The text of the shipped policy ``name``; UsageError naming the shipped ones if none."""
    found = _files().get(name)
    if found is None:
        raise UsageError(f"{SHIPPED_PREFIX}{name}: no shipped policy of that name"
                         f"{did_you_mean(name, shipped_names())}; shipped: {', '.join(shipped_names())}")
    return found.read_text(encoding="utf-8")


def shipped_summary(name: str) -> str:
    """The first line of the shipped policy's opening comment."""
    lines = shipped_text(name).splitlines()
    return lines[0].removeprefix("#").strip() if lines else ""


def load_policy_arg(spec: str | Path) -> PolicyFile:
    """A ``--policy`` argument: ``builtin:NAME`` (a shipped policy) or a file's path."""
    text = str(spec)
    if text.startswith(SHIPPED_PREFIX):
        name = text.removeprefix(SHIPPED_PREFIX)
        return parse_policy(shipped_text(name), f"{SHIPPED_PREFIX}{name}")
    path = Path(spec)
    if not path.is_file():
        raise UsageError(f"--policy {path}: no such file"
                         + (f" (a shipped policy is builtin:NAME; shipped: {', '.join(shipped_names())})"
                            if "/" not in text and not path.suffix else ""))
    return load_policy_file(path)
