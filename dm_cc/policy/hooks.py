"""A policy file's ``hooks:``: external commands that see a matching request before
it is decided (docs/hooks.md). This module only reads them; running them is I/O,
so it is the core's (:mod:`dm_cc.core.hooks`).

    hooks:
      - {permission: bash, pattern: "git push *", command: [./check-push.py], timeout: 5}

A hook names a program and its arguments (no shell). A program written as a
relative path with a ``/`` in it (``./check.py``, ``bin/check``) is found beside
the policy file that names it; ``~/`` is the home directory; a bare name is looked
up on PATH when it runs. A project's own policy files may name no hook
(:func:`refuse_project_hooks`): a cloned repository must not run commands.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dm_cc.config import line_of
from dm_cc.errors import PolicyError
from dm_cc.permissions import Rule

if TYPE_CHECKING:
    from dm_cc.config import LinePath

DEFAULT_TIMEOUT = 5.0
SHOWN_COMMAND = 80   # characters of a hook's command line shown in a trace


@dataclass(frozen=True, slots=True)
class Hook:
    """One hook: which requests it sees (a permission wildcard and a pattern in
    that permission's language, as a rule's), the command, its timeout in seconds,
    where it is written (``file:line``) and the layer of that file (``user``,
    ``--policy``, ``managed``, ``enforced``; ``project`` is refused at load)."""

    permission: str
    pattern: str
    command: tuple[str, ...]
    timeout: float = DEFAULT_TIMEOUT
    source: str = "inline"
    layer: str = ""

    @property
    def shown(self) -> str:
        """``hook ./check.py (policy.yaml:7)``: how a trace names it."""
        text = shlex.join(self.command)
        if len(text) > SHOWN_COMMAND:
            text = text[: SHOWN_COMMAND - 1] + "…"
        return f"hook {text} ({self.source})"

    def as_rule(self) -> Rule:
        """A rule with the hook's permission and pattern (what matches it)."""
        return Rule(self.permission, self.pattern, "deny", source=self.source)


def _program(program: str, directory: Path | None) -> str:
    if program.startswith("~/"):
        return str(Path(program).expanduser())
    if directory is not None and "/" in program and not program.startswith("/"):
        return str((directory / program).resolve())
    return program


def hooks_from(specs: Sequence[dict], shown: str, lines: dict[LinePath, int],
               directory: Path | None) -> tuple[Hook, ...]:
    """Hooks from a validated ``hooks:`` list, with ``file:line`` sources (the loader
    checks each one's permission and pattern as a rule's: :meth:`Hook.as_rule`)."""
    hooks = []
    for index, spec in enumerate(specs):
        line = line_of(lines, ("hooks", index))
        if not spec["command"][0].strip():
            raise PolicyError(shown, line_of(lines, ("hooks", index, "command")),
                              f"hooks[{index}].command: the program name is empty")
        command = (_program(spec["command"][0], directory), *spec["command"][1:])
        hooks.append(Hook(spec["permission"], spec.get("pattern", "*"), command,
                          float(spec.get("timeout", DEFAULT_TIMEOUT)), f"{shown}:{line}"))
    return tuple(hooks)


def hooks_line(source: str) -> tuple[str, int | None]:
    """``("f.yaml", 7)`` from ``f.yaml:7``."""
    path, _, line = source.rpartition(":")
    return (path, int(line)) if line.isdigit() else (source, None)


def refuse_project_hooks(files: Sequence[object]) -> None:
    """PolicyError naming the first hook a project's policy file names: a cloned
    repository must not run commands when dm_cc loads it or decides a request."""
    for policy_file in files:
        hooks: tuple[Hook, ...] = getattr(policy_file, "hooks", ())
        if hooks:
            path, line = hooks_line(hooks[0].source)
            raise PolicyError(path, line, (
                "hooks: a project's policy file may not name hooks (a cloned repository "
                "must not run commands); put the hook in your user config's policy.yaml "
                "or a file you pass with --policy"))
