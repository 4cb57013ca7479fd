"""The policies that ship with dm_cc, addressable from anywhere as ``builtin:NAME``.

Their one copy is ``policies/`` at the top of the repository: the shipped policies
(``builtin:readonly``) and, in ``policies/examples/``, example team policies for
common stacks (``builtin:examples/python-service``). A build puts that directory
into the package, as ``policies/`` beside this module (setup.py), so ``--policy
builtin:readonly`` works after a plain ``pip install``; a checkout (an editable
install, PYTHONPATH) has no such copy and reads the repository's own. A shipped file
loads like any other, under the name ``builtin:NAME``: its rules' sources read
``builtin:readonly:12``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dm_cc.config import did_you_mean
from dm_cc.errors import UsageError
from dm_cc.policy.loader import PolicyFile, load_policy_file, parse_policy

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

SHIPPED_PREFIX = "builtin:"


def _directory() -> Traversable:
    """Where the shipped policies are: in the package when it was built (a wheel),
    else in the checkout this module runs from (``policies/`` at its top)."""
    from importlib import resources  # only --policy builtin:NAME reads them

    built = resources.files(__package__).joinpath("policies")
    if built.is_dir():
        return built
    checkout = Path(__file__).resolve().parents[3] / "policies"
    if not checkout.is_dir():
        raise UsageError(f"dm_cc's shipped policies are missing (neither {built} nor {checkout} "
                         "exists): reinstall dm_cc")
    return checkout


def _files() -> dict[str, Traversable]:
    """Each shipped policy by name: its path under ``policies/`` without ``.yaml``."""
    found: dict[str, Traversable] = {}

    def walk(directory: Traversable, prefix: str) -> None:
        for entry in directory.iterdir():
            if entry.is_dir():
                walk(entry, f"{prefix}{entry.name}/")
            elif entry.name.endswith(".yaml"):
                found[prefix + entry.name.removesuffix(".yaml")] = entry

    walk(_directory(), "")
    return found


def shipped_names() -> tuple[str, ...]:
    """The shipped policies' names, sorted: the shipped policies, then the examples."""
    return tuple(sorted(_files(), key=lambda name: (name.count("/"), name)))


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
